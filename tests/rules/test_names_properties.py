"""Invariants of the name rule over random text (hypothesis)."""

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from companion.rules import RuleError
from companion.rules.names import MAX_MARKS, MAX_NAME, most_marks, name_key, player_name

# Any text, weighted towards what makes lookalikes: marks, format characters, wide forms.
TRICKY = "Aa \u0301\u0308\u0336\u200b\u200d\u202e\ufe0f\u034f\uff21\u3164\u00df\u0130\ufb03"
texts = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(TRICKY)), max_size=40)


def accepted(text: str) -> str | None:
    """The stored name for ``text``, or None when the rule refuses it."""
    try:
        return player_name(text)
    except RuleError:
        return None


@given(texts)
def test_a_stored_name_is_accepted_as_it_is(text):
    """A name the rule stored is one it takes unchanged: a backup of it restores."""
    name = accepted(text)
    if name is not None:
        assert player_name(name) == name
        assert unicodedata.is_normalized("NFKC", name)


@given(texts)
def test_a_stored_name_holds_nothing_invisible_and_fits_its_columns(text):
    name = accepted(text)
    if name is not None:
        assert not {unicodedata.category(char) for char in name} & {"Cc", "Cf", "Cs"}
        assert 1 <= len(name) <= MAX_NAME and most_marks(name) <= MAX_MARKS
        assert 1 <= len(name_key(name)) <= 90  # Player.name_key is a String(90)


@given(texts, texts)
def test_names_with_one_key_are_one_player_in_any_spelling(first, second):
    """The key does not change under the rule's own tidying, case or width."""
    name = accepted(first + second)
    if name is not None:
        assert name_key(name) == name_key(first + second)
        assert name_key(name_key(name)) == name_key(name)
        assert name_key(name.casefold()) == name_key(name)
