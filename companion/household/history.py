"""Match history: every match newest first, and deleting a match entered by mistake."""

from __future__ import annotations

from math import ceil

from flask import Blueprint, abort, redirect, request, session, url_for
from sqlalchemy import func, select

from companion import rules
from companion.db import db
from companion.derived.timing import match_times
from companion.models import MAX_ID, Match
from companion.store import delete_match
from companion.web.access import PLAYER, access
from companion.web.htmx import render
from companion.web.listing import Entry, entries

bp = Blueprint("history", __name__)

PER_PAGE = 20
DELETED_KEY = "history_deleted"


def page_number(value: str, pages: int) -> int:
    """The page asked for, 1 to ``pages``; anything else is a page that does not exist."""
    page = rules.whole_number(value, 1, pages)
    if page is None:
        abort(404)
    return page


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
