"""A new player's name as a form takes it: cleaned, and checked against the household's
players (the players page, ``companion.household.players``, and the new-match form,
``companion.play.setup``)."""

from __future__ import annotations

from flask_babel import gettext
from sqlalchemy import select

from companion.db import db
from companion.models import Player
from companion.rules.names import clean_name, name_key


def name_taken(name: str, except_id: int | None = None) -> str | None:
    """The name of another player whose name looks the same as this one (in any case,
    width or script), or None."""
    query = select(Player.name).where(Player.name_key == name_key(name))
    if except_id is not None:
        query = query.where(Player.id != except_id)
    return db.session.scalar(query)


def check_new_name(raw: str | None, except_id: int | None = None) -> tuple[str, str | None]:
    """Return a usable, unused name and an error message if it is not: it names the
    player already there, who may be spelt otherwise (Anna, for a Cyrillic A in "Anna")."""
    name, error = clean_name(raw, gettext)
    if error is None and (taken := name_taken(name, except_id)) is not None:
        error = gettext("There is already a player called %(name)s.", name=taken)
    return name, error
