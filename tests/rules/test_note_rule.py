"""A match's note: one rule for the forms and the backup's import (``rules.match_note``)."""

import pytest

from companion import rules


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("Oma’s 80th", "Oma’s 80th"),
        ("  at  the\tlake \n", "at the lake"),  # one line, its spaces tidied
        ("", None),
        ("   ", None),
        ("e\u0301" * 100, "é" * 100),  # NFC: an accent and its letter are one character
        ("🎂" * rules.MAX_NOTE, "🎂" * rules.MAX_NOTE),
        ("zero\u200bwidth joiner 👩\u200d👧", "zero\u200bwidth joiner 👩\u200d👧"),
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
        (None, "A note must be text."),
    ],
)
def test_a_bad_note_is_refused_with_the_rules_message(typed, message):
    with pytest.raises(rules.RuleError) as refused:
        rules.match_note(typed, "note")
    assert refused.value.message() == message
    assert refused.value.subject == "note"
