"""Site pages that belong to no feature: the home page and the health check."""

from __future__ import annotations

from typing import NamedTuple

from flask import Blueprint, current_app, send_from_directory
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from companion.db import db
from companion.history import Entry, entries
from companion.htmx import HTMX_COPY, render
from companion.matches import recent_matches
from companion.state import current_state

bp = Blueprint("pages", __name__)


class Playing(NamedTuple):
    """A match still being played, as the home page lists it."""

    entry: Entry
    game: int  # the game being played, or the next one to start
    round: int  # the round to enter next in it; 0 before its starting cards


@bp.get("/")
def home():
    """Say what the companion is, the matches being played and the finished ones."""
    items = entries(recent_matches())
    return render(
        "pages/home.html",
        block="content",
        playing=[playing(item) for item in items if not item.standing.over],
        finished=[item for item in items if item.standing.over],
    )


def playing(item: Entry) -> Playing:
    """Where a match being played stands: its game and round (the shared replay)."""
    current = current_state(item.match.id).current
    if current is None:
        return Playing(item, item.games + 1, 0)
    return Playing(item, current.number, current.rounds_played + (current.pending is None))


@bp.get("/vendor/htmx.min.js")
def htmx_copy():
    """The pinned htmx file, for phones that cannot reach its CDN (404 until installed).

    Its URL carries the version (?v=), so a phone may keep it for a year.
    """
    return send_from_directory(HTMX_COPY, "htmx.min.js", max_age=365 * 24 * 60 * 60)


@bp.get("/healthz")
def healthz():
    """Report 200 when the app can reach its database, 503 when it cannot."""
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        current_app.logger.exception("Health check: database unreachable")
        return {"status": "unavailable"}, 503
    return {"status": "ok"}
