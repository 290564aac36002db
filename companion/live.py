"""Live updates: phones poll a match every 2 s; the table view for a tablet or TV.

A poll costs one tiny query while nothing changed (204). When something did, the match
is replayed once per version, and the live regions are rendered once per version, view,
access level and language, and served from memory to the other phones of the table;
only each phone's CSRF token, poller and (when its form key changed) entry form are
its own, and the entry form is rendered from the same replay.
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
CACHE_SIZE = 512  # live renders kept; a table needs a few per version
STATES_KEPT = 256  # replayed versions kept: more than the tables a house plays at once


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
    regions = cached(key)
    if regions is None:
        regions = remember(key, render_regions(replayed(match_id, version), view))
    form_key = phone_form_key(regions.table_key, level, mine, regions.entered)
    entry = ""
    if view == "match" and request.args.get("form") != form_key:
        entry = render("matches/_entry.html", **board(replayed(match_id, version)), form={},
                       errors={}, oob=True)
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


def replayed(match_id: int, version: int) -> MatchState:
    """The match at this version, replayed once and then shared by the table's phones.

    A version never changes once written (every stored input raises it), so a replay
    read in this request's transaction at ``version`` stays true. The shared state is
    only read afterwards: every attribute a render needs is loaded by the replay.
    """
    state = cached((match_id, version), "live_states")
    if state is None:
        state = match_state(get_match(match_id))
        remember((match_id, state.match.version), state, "live_states", STATES_KEPT)
    return state


def app_cache(name: str) -> OrderedDict:
    """One of this app's caches (each app has its own database, so its own cache)."""
    return current_app.extensions.setdefault(name, OrderedDict())


def cached(key: tuple, name: str = "live_regions"):
    """A shared render or replay of this version, if one is in memory."""
    with _cache_lock:
        cache = app_cache(name)
        value = cache.get(key)
        if value is not None:
            cache.move_to_end(key)
        return value


def remember(key: tuple, value, name: str = "live_regions", size: int = CACHE_SIZE):
    """Keep a render or replay for the table's other phones; forget the oldest past size."""
    with _cache_lock:
        cache = app_cache(name)
        cache[key] = value
        while len(cache) > size:
            cache.popitem(last=False)
    return value
