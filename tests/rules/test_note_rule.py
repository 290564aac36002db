"""A match's note: one rule for the forms and the backup's import (``rules.match_note``)."""

import pytest

from companion import rules

# Issue 55: a note refuses what a name refuses (``rules.player_name``).
INVISIBLE = (
    "A note cannot contain invisible characters (such as a zero-width space or a text "
    "direction mark)."
)
STACKED = "A note has at most 3 accents on one letter."


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("Oma’s 80th", "Oma’s 80th"),
        ("  at  the\tlake \n", "at the lake"),  # one line, its spaces tidied
        ("", None),
        ("   ", None),
        ("e\u0301" * 100, "é" * 100),  # NFC: an accent and its letter are one character
        ("🎂" * rules.MAX_NOTE, "🎂" * rules.MAX_NOTE),
        ("Tiếng Việt, שָּׁ, སྒྲུ", "Tiếng Việt, שָּׁ, སྒྲུ"),  # 3 marks on a letter at most
    ],
)
def test_a_note_is_stored_tidied(typed, stored):
    assert rules.match_note(typed) == stored


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("x" * (rules.MAX_NOTE + 1), "A note has at most 200 characters."),
        ("Oma\x00", "A note cannot contain control characters."),
        ("\ud800", "A note cannot contain control characters."),  # no database stores it
        (80, "A note must be text."),
        *((f"Oma{char}s", INVISIBLE) for char in "\u202e\u200b\ufeff\u2066\u2067\u2068\u2069"),
        ("zero width joiner 👩\u200d👧", INVISIBLE),  # as a name refuses it
        ("a" + "\u0301" * 199, STACKED),  # the finding: 199 marks on one letter
        ("Ome\u0301\u0302\u0303\u0304", STACKED),  # é and 3 more: counted decomposed
        (None, "A note must be text."),
    ],
)
def test_a_bad_note_is_refused_with_the_rules_message(typed, message):
    with pytest.raises(rules.RuleError) as refused:
        rules.match_note(typed, "note")
    assert refused.value.message() == message
    assert refused.value.subject == "note"
