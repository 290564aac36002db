"""The home page: the matches being played (game, round, who leads, Continue) apart from
the finished ones (winner, Rematch)."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import select

from companion.db import db
from companion.models import Match
from companion.state import current_state
from companion.web.access import access
from companion.web.htmx import render
from companion.web.listing import Entry, entries


class Playing(NamedTuple):
    """A match still being played, as the home page lists it."""

    entry: Entry
    game: int  # the game being played, or the next one to start
    round: int  # the round to enter next in it; 0 before its starting cards


def home():
    """Say what the companion is, the matches being played and the finished ones."""
    items = entries(recent_matches())
    finished = [item for item in items if item.standing.over]
    return render(
        "pages/home.html",
        block="content",
        playing=[playing(item) for item in items if not item.standing.over],
        finished=finished,
        levels={item.match.id: access(item.match) for item in finished},  # who may rematch
    )


def playing(item: Entry) -> Playing:
    """Where a match being played stands: its game and round (the shared replay)."""
    current = current_state(item.match.id).current
    if current is None:
        return Playing(item, item.games + 1, 0)
    return Playing(item, current.number, current.rounds_played + (current.pending is None))


def recent_matches(limit: int = 20) -> list[Match]:
    """The newest matches first."""
    return list(db.session.scalars(select(Match).order_by(Match.id.desc()).limit(limit)))
