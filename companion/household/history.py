"""Match history: every match newest first, and deleting a match entered by mistake."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from math import ceil
from typing import NamedTuple

from flask import Blueprint, abort, redirect, request, session, url_for
from sqlalchemy import func, select

from companion import rules
from companion.db import db
from companion.derived import GameResult
from companion.derived.timing import match_times
from companion.models import MAX_ID, Game, Match
from companion.store import delete_match
from companion.web import present
from companion.web.access import PLAYER, access
from companion.web.htmx import render

bp = Blueprint("history", __name__)

PER_PAGE = 20
DELETED_KEY = "history_deleted"


class Entry(NamedTuple):
    """One match as the history lists it."""

    match: Match
    names: list[str]
    games: int  # finished games
    standing: rules.Standing
    winners: str  # names, once the match is over
    leaders: str  # names, while it is played
    house_rules: str


def page_number(value: str, pages: int) -> int:
    """The page asked for, 1 to ``pages``; anything else is a page that does not exist."""
    page = rules.whole_number(value, 1, pages)
    if page is None:
        abort(404)
    return page


def entries(matches: Sequence[Match]) -> list[Entry]:
    """The matches with their finished games' totals and winners (one query for all)."""
    results: dict[int, dict[int, dict[int, int]]] = defaultdict(dict)
    query = (
        select(Game.match_id, Game.id, GameResult.player_id, GameResult.bulls)
        .join(GameResult, GameResult.game_id == Game.id)
        .where(Game.match_id.in_([match.id for match in matches]))
        .order_by(Game.match_id, Game.number)
    )
    for match_id, game_id, player_id, bulls in db.session.execute(query):
        results[match_id].setdefault(game_id, {})[player_id] = bulls
    return [entry(match, list(results[match.id].values())) for match in matches]


def entry(match: Match, games: list[dict[int, int]]) -> Entry:
    """One match's line in the history."""
    names = {seat.player_id: seat.player.name for seat in match.seats}
    end = rules.EndCondition(match.end_kind, match.end_value)
    standing = rules.standing(list(names), games, end)
    house_rules = present.house_rules(end, match.pro)
    return Entry(
        match,
        list(names.values()),
        len(games),
        standing,
        ", ".join(names[player] for player in standing.winners),
        ", ".join(names[player] for player in standing.leaders),
        house_rules,
    )


@bp.get("/history")
def index():
    """Every match, newest first, twenty to a page (?page=2 for older ones)."""
    total = db.session.scalar(select(func.count(Match.id)))
    pages = max(1, ceil(total / PER_PAGE))
    page = page_number(request.args.get("page", "1"), pages)
    query = (
        select(Match)
        .order_by(Match.created_at.desc(), Match.id.desc())
        .offset((page - 1) * PER_PAGE)
        .limit(PER_PAGE)
    )
    shown = entries(db.session.scalars(query).all())
    return render(
        "history/index.html",
        "history",
        entries=shown,
        times=match_times([item.match.id for item in shown]),
        page=page,
        pages=pages,
        total=total,
        deleted=session.pop(DELETED_KEY, None),
    )


def may_delete(item: Entry) -> bool:
    """A match being played belongs to the phones with its player link; a finished one
    is the household's history, which any phone may tidy up (as it may import)."""
    return item.standing.over or access(item.match) == PLAYER


@bp.get("/matches/<id:match_id>/delete")
def confirm_delete(match_id: int):
    """Ask before deleting a match (a plain form: works without JavaScript)."""
    item = entries([db.get_or_404(Match, match_id)])[0]
    return render(
        "history/delete.html", "delete", entry=item, allowed=may_delete(item), stale=False
    )


@bp.post("/matches/<id:match_id>/delete")
def delete(match_id: int):
    """Delete a match with its games and everything derived from them; players stay."""
    item = entries([db.get_or_404(Match, match_id)])[0]
    if not may_delete(item):
        abort(403)
    if not delete_match(match_id, confirmed_version(request.form.get("version", ""))):
        item = entries([db.get_or_404(Match, match_id)])[
            0
        ]  # changed since confirming: as it is now
        return render("history/delete.html", "delete", entry=item, allowed=True, stale=True), 409
    session[DELETED_KEY] = match_id
    return redirect(url_for("history.index"), code=303)


def confirmed_version(value: str) -> int | None:
    """The version a deletion was confirmed at, as the form sent it (None if it is not
    one a page wrote: a version is a database integer, like an id, written plainly)."""
    version = rules.whole_number(value, 0, MAX_ID)
    return version if str(version) == value else None
