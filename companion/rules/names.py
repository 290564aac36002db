"""Player names: one rule wherever a name comes in (players page, new match, resolver form,
JSON API, backup files).

A name is text of 1 to 30 characters without control characters, its runs of spaces
made one. Two names are the same player when they differ only in case or width (NFKC,
casefold): "Anna" and "ANNA" are one person, in the database too (``Player.name_key``).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from companion.rules.cards import N_, Gettext, _identity
from companion.rules.checks import RuleError

MAX_NAME = 30


def player_name(value: Any, subject: Any = None) -> str:
    """``value`` as a player's name, its spaces tidied; RuleError if it is not one."""
    if not isinstance(value, str):
        raise RuleError(N_("A player's name must be text."), subject)
    name = " ".join(value.split())
    if not name:
        raise RuleError(N_("Enter a name."), subject)
    if len(name) > MAX_NAME:
        raise RuleError(N_("A name has at most %(max)d characters."), subject, max=MAX_NAME)
    if any(unicodedata.category(char) == "Cc" for char in name):
        raise RuleError(N_("A name cannot contain control characters."), subject)
    return name


def name_key(name: str) -> str:
    """The key under which names are the same player, whatever their case."""
    return unicodedata.normalize("NFKC", name).casefold()


def clean_name(raw: str | None, gettext: Gettext = _identity) -> tuple[str, str | None]:
    """The tidied name, and why it cannot be a name (in ``gettext``'s language) or None."""
    try:
        return player_name(raw or ""), None
    except RuleError as error:
        return " ".join((raw or "").split()), error.message(gettext)
