"""Storing a checked entry: a short write transaction that confirms nothing changed.

``games`` checks a form against the match read without the write lock and turns it
into an ``Entry`` of new rows; ``store`` writes them only if the match is still at the
checked version, raising ``version`` (and ``table_version`` unless the entry is only
hidden cards). ``save`` commits what an undo changed in the session. Both refresh the
derived results and statistics when a game may have finished or reopened; an entry
that ends its match sends ``match_finished`` once it is stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from blinker import Namespace
from flask import current_app
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from companion.db import db
from companion.derived import PlayerMatchStat, refresh_match
from companion.models import Game, Match, PendingCard
from companion.state import MatchState, game_state, sync_results

# Sent (with the app and match_id) once an entry has ended a match: the automatic
# backup copies the database (companion.backup.copies).
match_finished = Namespace().signal("match-finished")

MOVED_ON = "moved on"  # store() found the match changed since the check
RACED = "raced"  # a unique key tripped: another phone stored the same entry just before


@dataclass
class Entry:
    """What a checked form adds to a match: new rows, not yet in the session."""

    rows: list
    clear_hidden: int | None = None  # game id whose hidden cards the new round replaces
    hidden: bool = False  # only hidden cards: the match's table_version stays
    # Only the last round of a game and score-only games can finish one (undo can
    # reopen one): everything else skips the replay of results and statistics.
    results: bool = False


def store(match_id: int, version: int, player_ids: list[int], entry: Entry) -> str | None:
    """Store a checked entry if the match is still at ``version``; None when stored.

    MOVED_ON when another phone wrote first, RACED when a unique key trips; either way
    nothing is stored.
    """
    try:
        bumped = db.session.execute(
            update(Match)
            .where(Match.id == match_id, Match.version == version)
            .values(
                version=Match.version + 1,
                table_version=Match.table_version + (0 if entry.hidden else 1),
            )
            .execution_options(synchronize_session=False)
        ).rowcount
        if not bumped:
            db.session.rollback()
            return MOVED_ON
        if entry.clear_hidden is not None:
            db.session.execute(delete(PendingCard).where(PendingCard.game_id == entry.clear_hidden))
        db.session.add_all(entry.rows)
        db.session.flush()
        finished = entry.results and refresh_results(match_id, player_ids)
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return RACED
    if finished:
        match_finished.send(current_app._get_current_object(), match_id=match_id)
    return None


def save(state: MatchState) -> str | None:
    """Commit what an undo changed in the session, with results; None, or RACED."""
    try:
        db.session.flush()
        refresh_results(state.match.id, state.player_ids)
        state.match.version += 1
        state.match.table_version += 1
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return RACED
    return None


def refresh_results(match_id: int, player_ids: list[int]) -> bool:
    """Replay the last game for its results, and the match's statistics (in the write).

    True when the match is over now.
    """
    last = db.session.scalars(
        select(Game).where(Game.match_id == match_id).order_by(Game.number.desc())
    ).first()
    if last is not None:  # only the last game can have changed
        sync_results(game_state(last, player_ids))
    refresh_match(match_id)  # the statistics tables (companion.derived)
    return bool(
        db.session.scalar(
            select(PlayerMatchStat.finished).where(PlayerMatchStat.match_id == match_id).limit(1)
        )
    )
