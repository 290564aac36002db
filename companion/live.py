"""Live updates: phones poll a match every 2 s; the table view for a tablet or TV.

A poll costs one tiny query while nothing changed (204). When something did, the live
regions are rendered once per match version, view, access level and language, and
served from memory to the other phones of the table; only each phone's CSRF token and
poller are its own.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock
from typing import NamedTuple

from flask import Blueprint, abort, current_app, request, session
from flask_babel import get_locale
from flask_wtf.csrf import generate_csrf
from sqlalchemy import select

from companion.db import db
from companion.htmx import render
from companion.links import LINKS, level_for, me
from companion.matches import board, get_match, phone_form_key, table_key
from companion.models import Match
from companion.state import MatchState, match_state

bp = Blueprint("live", __name__, url_prefix="/matches/<int:match_id>")

CSRF_SLOT = "\x00csrf\x00"  # stands for the asking phone's token in a shared render
CACHE_SIZE = 512


class Regions(NamedTuple):
    """The shared part of a poll answer, and what each phone's form key is made of."""

    html: str
    table_key: str
    entered: frozenset[int]


_cache_lock = Lock()


@bp.get("/live")
def poll(match_id: int):
    """What changed since version ``since``: 204 when nothing did, else the live regions.

    Plain clients may poll with If-None-Match instead and get 304 while nothing changes.
    """
    row = db.session.execute(
        select(Match.version, Match.player_token, Match.watch_token).where(Match.id == match_id)
    ).first()
    if row is None:
        abort(404)
    version, player_token, watch_token = row
    if request.args.get("since") == str(version):
        return "", 204
    view = "table" if request.args.get("view") == "table" else "match"
    level = level_for(player_token, watch_token, session.get(LINKS, {}).get(str(match_id)))
    mine = me(match_id)
    etag = f'"{version}-{view}-{level}-{mine}-{get_locale()}"'
    if request.if_none_match.contains(etag.strip('"')):
        return "", 304, {"ETag": etag}
    key = (match_id, version, view, level, str(get_locale()))
    state = None  # replayed only when this answer needs it, and then once
    regions = cached(key)
    if regions is None:
        state = match_state(get_match(match_id))
        regions = remember(key, render_regions(state, view))
    form_key = phone_form_key(regions.table_key, level, mine, regions.entered)
    entry = ""
    if view == "match" and request.args.get("form") != form_key:
        state = state or match_state(get_match(match_id))
        entry = render("matches/_entry.html", **board(state), form={}, errors={}, oob=True)
    poller = render("matches/_poll.html", match_id=match_id, version=version,
                    form_key=form_key, view=view)
    html = regions.html.replace(CSRF_SLOT, generate_csrf()) + entry + poller
    return html, 200, {"ETag": etag, "Cache-Control": "no-cache"}


@bp.get("/table")
def table_view(match_id: int):
    """The big-screen view for a tablet or TV: rows, last steps and score, updating live."""
    state = match_state(get_match(match_id))
    return render("matches/table.html", **board(state, "table"), form={}, errors={})


def render_regions(state: MatchState, view: str) -> Regions:
    """Render the live regions for this version, with the CSRF token left as a slot."""
    context = board(state, view)
    html = render("matches/live.html", **context, form={}, errors={})
    current = state.current
    return Regions(html.replace(generate_csrf(), CSRF_SLOT), table_key(state),
                   frozenset(current.entered) if current else frozenset())


def app_cache() -> OrderedDict[tuple, Regions]:
    """This app's renders (each app has its own database, so its own cache)."""
    return current_app.extensions.setdefault("live_regions", OrderedDict())


def cached(key: tuple) -> Regions | None:
    """A shared render of this version, if one is in memory."""
    with _cache_lock:
        cache = app_cache()
        regions = cache.get(key)
        if regions is not None:
            cache.move_to_end(key)
        return regions


def remember(key: tuple, regions: Regions) -> Regions:
    """Keep a render for the table's other phones; forget the oldest past the limit."""
    with _cache_lock:
        cache = app_cache()
        cache[key] = regions
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)
    return regions
