"""Player names: one rule wherever a name comes in (players page, new match, renaming,
resolver form, JSON API, backup files); and a match's note, which comes in the same ways.

A name is text of 1 to 30 characters in Unicode's NFKC form (fullwidth letters are
stored as plain ones), its runs of spaces made one. It may not hold what would make two
players look the same: control characters (Cc), invisible format characters (Cf: zero
width spaces, joiners, bidi overrides such as U+202E) and more than ``MAX_MARKS``
combining marks on one letter. Two names are the same player when their keys are equal
(``name_key``: Unicode's NFKC_Casefold, then its confusable skeleton, UTS #39): "Anna",
"ANNA", a fullwidth "anna" and "Anna" with a Cyrillic A (U+0410) are one person, in the database
too (``Player.name_key``, unique).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from disarm import skeleton_key

from companion.rules.cards import N_, Gettext, _identity
from companion.rules.checks import RuleError

MAX_NAME = 30
# Combining marks on one letter, counted decomposed (NFD: "é" is e + 1 mark). Real names
# need up to 3: Vietnamese "ệ" has 2, Thai a vowel and a tone mark (2), a Tibetan
# stack "སྒྲུ" and a pointed Hebrew "שָּׁ" 3. Stacked "Zalgo" text has tens, and
# spills over the rows above and below it, hiding the names there.
MAX_MARKS = 3
# Refused: Cc control, Cf format (invisible: U+200B, U+200D, U+202E, U+FEFF, …) and Cs
# (a lone surrogate, which no database can store). Cf also holds the zero width joiner
# of emoji families and the tags of regional flags: a name may still use a plain emoji.
REFUSED = frozenset({"Cc", "Cf", "Cs"})
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): drawn as nothing.
# The ones that are not Cf (variation selectors, the combining grapheme joiner, Hangul
# fillers) pass the rule above, so the key leaves them out as NFKC_Casefold does:
# "Anna" + U+FE0F is the same player as "Anna".
IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def player_name(value: Any, subject: Any = None) -> str:
    """``value`` as a player's name, NFKC and its spaces tidied; RuleError if it is not one."""
    if not isinstance(value, str):
        raise RuleError(N_("A player's name must be text."), subject)
    name = " ".join(unicodedata.normalize("NFKC", value).split())
    if not name:
        raise RuleError(N_("Enter a name."), subject)
    if len(name) > MAX_NAME:
        raise RuleError(N_("A name has at most %(max)d characters."), subject, max=MAX_NAME)
    categories = {unicodedata.category(char) for char in name}
    if "Cc" in categories:
        raise RuleError(N_("A name cannot contain control characters."), subject)
    if categories & REFUSED:
        raise RuleError(
            N_(
                "A name cannot contain invisible characters (such as a zero-width space "
                "or a text direction mark)."
            ),
            subject,
        )
    if not name_key(name):  # nothing visible: variation selectors, a Hangul filler
        raise RuleError(N_("Enter a name."), subject)
    if most_marks(name) > MAX_MARKS:
        raise RuleError(
            N_("A name has at most %(max)d accents on one letter."), subject, max=MAX_MARKS
        )
    return name


def most_marks(name: str) -> int:
    """The most combining marks on one character of ``name``, decomposed."""
    most = run = 0
    for char in unicodedata.normalize("NFD", name):
        run = run + 1 if unicodedata.category(char).startswith("M") else 0
        most = max(most, run)
    return most


def name_key(name: str) -> str:
    """The key under which names are the same player, whatever their case, width,
    invisible characters or letters of another script drawn alike (Unicode's
    NFKC_Casefold, then its confusable skeleton: UTS #39, by disarm; spaces tidied).
    Digits stay digits: "Player 1" is not "Player l"."""
    text = IGNORABLE.sub("", unicodedata.normalize("NFKC", name))
    folded = unicodedata.normalize("NFKC", text.casefold())  # casefold can un-normalise
    return " ".join(skeleton_key(folded).split())


MAX_NOTE = 200  # a match's note: "Oma's 80th", a place, who brought the cake


def match_note(value: Any, subject: Any = None) -> str | None:
    """``value`` as a match's note, NFC and its spaces tidied (one line), or None when
    it is empty; RuleError when it is longer than ``MAX_NOTE`` or holds what a name may
    not: a control or invisible character, more than ``MAX_MARKS`` marks on one letter
    (a note shows beside the names, so it must not hide or turn them either). Unlike a
    name, it may look like anything visible: it names nobody."""
    if not isinstance(value, str):
        raise RuleError(N_("A note must be text."), subject)
    note = " ".join(unicodedata.normalize("NFC", value).split())
    if len(note) > MAX_NOTE:
        raise RuleError(N_("A note has at most %(max)d characters."), subject, max=MAX_NOTE)
    categories = {unicodedata.category(char) for char in note}
    if categories & {"Cc", "Cs"}:
        raise RuleError(N_("A note cannot contain control characters."), subject)
    if categories & REFUSED:
        raise RuleError(
            N_(
                "A note cannot contain invisible characters (such as a zero-width space "
                "or a text direction mark)."
            ),
            subject,
        )
    if most_marks(note) > MAX_MARKS:
        raise RuleError(
            N_("A note has at most %(max)d accents on one letter."), subject, max=MAX_MARKS
        )
    return note or None


def clean_name(raw: str | None, gettext: Gettext = _identity) -> tuple[str, str | None]:
    """The tidied name, and why it cannot be a name (in ``gettext``'s language) or None."""
    try:
        return player_name(raw or ""), None
    except RuleError as error:
        return " ".join((raw or "").split()), error.message(gettext)
