"""Live updates by polling, and the table view for a tablet or TV.

A match page gets every change pushed on its event stream (``companion.play.push``);
it polls every 2 s only while it has no stream (a server with threads, a proxy that
buffers, a blocked URL), and the stream pushes the same regions a poll answers with.
A poll costs one small query while nothing changed (204). When something did, the answer is
made of pieces rendered once (from the version's shared replay, ``state.current_state``),
compacted, and served from memory to the other phones of the table: the live regions
once per table version, view, access level and language, and the "Entered:" line, the
only part hidden cards change, once per version and language. A phone that shows the
current table version gets that line alone. Only each phone's CSRF token, poller and
(when its form key changed) entry form are its own: the shared render is given a slot
for the token (its forms' ``csrf``), which each phone's answer fills with its own.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from flask import abort, make_response, request, session
from flask_babel import get_locale
from flask_wtf.csrf import generate_csrf

from companion.memo import Memo
from companion.play.board import (
    entry_view,
    match_view,
    others_choice,
    phone_form_key,
    repeated_notes,
    table_key,
)
from companion.state import MatchState, current_state, match_stamp
from companion.web.access import LINKS, PLAYER, access, level_for, me
from companion.web.htmx import render

CSRF_SLOT = "\x00csrf\x00"  # the token a shared render's forms carry: each phone's own
ENTERED_SLOT = "\x00entered\x00"  # stands for a version's "Entered:" line in the regions
SCORE_SLOT = "\x00score\x00"  # between the live table and the live score, where a page
# puts its entry forms
OOB = ' hx-swap-oob="true"'  # the regions' mark in a poll's answer: swapped by their ids
REGIONS_SHOWN = Memo("live_regions", 512)  # regions of a table version, by view, level, language
ENTERED_LINES = Memo("live_entered", 512)  # a version's "Entered:" line, by language, part
# What a poll answer holds: every live region, the line alone, or the news and the line.
ALL, ENTERED, NEWS = "all", "entered", "news"


class RegionsShown(NamedTuple):
    """The live regions of one table version, with slots for the token and the line."""

    html: str
    csrf: bool  # whether ``html`` holds the CSRF slot (forms), to fill for each phone


class PageRegions(NamedTuple):
    """The live regions as the match page holds them, around its entry forms."""

    table: str
    score: str


class EnteredLine(NamedTuple):
    """Who has sent a card at one version, and what each phone's form key is made of."""

    html: str  # within the regions (ALL), or alone and swapped out of band (ENTERED)
    entered: frozenset[int]
    table_key: str
    repeated: frozenset[int]  # the players who typed the same card, once every card is in


def poll(match_id: int):
    """What changed since version ``since``: 204 when nothing did, else the live regions.

    A phone whose poll says it shows the current ``table`` version differs only by the
    hidden cards entered since (or by derived rows no region shows, a round's luck
    without a chance said): it gets the "Entered:" line alone. Plain clients may
    poll with If-None-Match instead and get 304 while nothing changes.
    """
    stamp = match_stamp(match_id)
    if stamp is None:
        abort(404)
    version, table_version, player_token, watch_token = stamp
    if request.args.get("since") == str(version):
        return "", 204
    view = view_named(request.args.get("view"))
    part = ENTERED if request.args.get("table") == str(table_version) else ALL
    level = level_for(player_token, watch_token, session.get(LINKS, {}).get(str(match_id)))
    mine = me(match_id)
    etag = f"{version}-{view}-{part}-{level}-{mine}-{get_locale()}"
    if shown_already(etag):
        return "", 304, {"ETag": f'"{etag}"'}
    html = regions(match_id, stamp, request.args.get("table"), request.args.get("form"), view).html
    return make_response(html, 200, {"ETag": f'"{etag}"', "Cache-Control": "no-cache"})


def shown_already(etag: str) -> bool:
    """Whether the poll's If-None-Match names ``etag``, as sent or as compression made it
    (Flask-Compress adds the encoding: "...:br")."""
    return any(tag.split(":")[0] == etag for tag in request.if_none_match)


class Update(NamedTuple):
    """What a phone is sent, the form key and the input version it then shows, and the
    form key of entry forms it is sent next (``forms_apart``)."""

    html: str
    form_key: str
    inputs: int
    form_next: str | None = None


def regions(
    match_id: int,
    stamp: tuple,
    shown_table,
    shown_form,
    view: str,
    shown_inputs=None,
    forms_apart: bool = False,
) -> Update:
    """What a phone showing table version ``shown_table`` (of input version
    ``shown_inputs``, when its stream knows it) and entry form ``shown_form`` needs to
    show the match at ``stamp``: the live regions (the "Entered:" line alone at the same
    table version; the news above the rows beside it at the same inputs, ``part_for``),
    its entry forms when they changed, and its poller; with the phone's form key. A poll
    answers with it, a stream pushes it (``play.push``). ``forms_apart``: entry forms
    that changed are left for ``forms_after``, so what happened reaches the phone first
    (a stream's two events)."""
    _version, table_version, player_token, watch_token = stamp
    replay = partial(current_state, match_id, stamp)
    part = part_for(shown_table, shown_inputs, table_version, replay)
    level = level_for(player_token, watch_token, session.get(LINKS, {}).get(str(match_id)))
    mine = me(match_id)
    line = entered_line_shown(match_id, stamp, ALL if part == ALL else ENTERED, replay)
    if part == ENTERED:
        shared = line.html
    else:
        context = lambda: match_view(replay(), view)  # noqa: E731
        shown = regions_shown(match_id, stamp, level, view, replay, context, part == NEWS)
        shared = filled(shown, line).replace(SCORE_SLOT, "")
        if part == NEWS:
            shared += line.html
    form_key = phone_form_key(line.table_key, level, mine, line.entered, line.repeated)
    changed_form = view == "match" and shown_form != form_key
    inputs = replay().input_version
    if changed_form and forms_apart and shown_form is not None:
        shown_poller = poller(match_id, stamp, shown_form, view)
        return Update(shared + shown_poller, shown_form, inputs, form_key)
    entry = entry_forms(replay()) if changed_form else ""
    return Update(shared + entry + poller(match_id, stamp, form_key, view), form_key, inputs)


def forms_after(match_id: int, stamp: tuple, form_key: str) -> str:
    """This phone's entry forms at ``stamp`` and its poller, once ``regions`` left them
    (``forms_apart``): the second event of a stream's change."""
    return entry_forms(current_state(match_id, stamp)) + poller(match_id, stamp, form_key, "match")


def poller(match_id: int, stamp: tuple, form_key: str, view: str) -> str:
    """The phone's poller: what it shows, for the poll that follows when no stream does."""
    version, table_version, _player_token, _watch_token = stamp
    return compact(
        render(
            "matches/_poll.html",
            match_id=match_id,
            version=version,
            table_version=table_version,
            form_key=form_key,
            view=view,
        )
    )


def part_for(shown_table, shown_inputs, table_version: int, replay) -> str:
    """What of the live regions a phone needs: the "Entered:" line alone when it shows
    the current table version (only hidden cards changed); the news above the rows
    (``_live_news.html``) and the line when it shows the same inputs of an open game,
    whose derived rows show nowhere else (a round's luck: the chance said beside an
    improbable take; ``derived.play_luck.seen_at_table``), 1.9 ms of the server's CPU
    against 3.1 for every region (issue 59); else all of them."""
    if shown_table == str(table_version):
        return ENTERED
    if shown_inputs is not None and shown_inputs == replay().input_version and replay().current:
        return NEWS
    return ALL


def regions_shown(
    match_id: int, stamp: tuple, level, view: str, replay, context, news: bool = False
) -> RegionsShown:
    """The live regions of the table version in ``stamp`` (or their ``news`` alone) as
    phones at ``level`` see them, in this language: rendered from ``context()``, the
    ``view`` of ``replay()``, by the first who asks, shared after."""
    _version, table_version, player_token, _watch_token = stamp
    # A row choice looks two ways to players' phones: the chooser's (and the phone
    # for everybody's) with its buttons, another player's with them behind a tap.
    others = level == PLAYER and others_choice(replay(), me(match_id))
    key = (match_id, player_token, table_version, view, level, str(get_locale()), others, news)
    return REGIONS_SHOWN.through(key, lambda: render_regions(context(), news))


def entered_line_shown(match_id: int, stamp: tuple, part: str, replay) -> EnteredLine:
    """The "Entered:" line of the version in ``stamp`` (``part``: in the regions or
    alone), in this language: rendered from ``replay()`` by the first who asks, shared
    after."""
    version, _table_version, player_token, _watch_token = stamp
    key = (match_id, player_token, version, str(get_locale()), part)
    return ENTERED_LINES.through(key, lambda: entered_line(replay(), part))


def page_regions(state: MatchState, context: dict) -> PageRegions:
    """The match page's live table and live score at the state's version (``context``,
    its ``match_view``): the render the table's phones share (``regions``), in place
    rather than out of band. The sending phone's page after a write, and the pushes to
    the others, render them once."""
    match = state.match
    stamp = (state.version, state.table_version, match.player_token, match.watch_token)
    shown = regions_shown(match.id, stamp, access(match), "match", lambda: state, lambda: context)
    line = entered_line_shown(match.id, stamp, ALL, lambda: state)
    table, score = filled(shown, line).split(SCORE_SLOT)
    # Each part's own tag comes first: its out-of-band mark is the part's first.
    return PageRegions(table.replace(OOB, "", 1), score.replace(OOB, "", 1))


def compact(html: str) -> str:
    """The HTML with every run of ASCII whitespace made one space, none at its ends: the
    runs between and inside tags that template indentation leaves, collapsed once in each
    live piece, for it also travels in event streams, which go uncompressed. The bytes'
    split, which leaves a no-break space alone ("11\u00a0bulls", French punctuation), at
    a third of a regular expression's CPU (issue 59)."""
    return b" ".join(html.encode().split()).decode()


def view_named(name: str | None) -> str:
    """The view a live page asks for: the TV's table view, else the match page."""
    return "table" if name == "table" else "match"


def table_view(match_id: int):
    """The big-screen view for a tablet or TV: rows, last steps and score, updating live."""
    return render(
        "matches/table.html", **match_view(current_state(match_id), "table"), form={}, errors={}
    )


def render_regions(context: dict, news: bool = False) -> RegionsShown:
    """Render the live regions of a table version (``context``, a state's ``match_view``),
    or their ``news`` alone, with slots for the CSRF token and for the "Entered:" line,
    the only part that changes with hidden cards. Nothing in them is a phone's own (its
    "I am", its cards sent) but what ``regions_shown`` keys them by, so any phone's
    context will do."""
    slots = {"csrf": CSRF_SLOT, "entered_slot": ENTERED_SLOT, "score_slot": SCORE_SLOT}
    template = "matches/_live_news.html" if news else "matches/live.html"
    html = compact(render(template, **context, form={}, errors={}, news_oob=news, **slots))
    return RegionsShown(html, CSRF_SLOT in html)


def entry_forms(state: MatchState) -> str:
    """This phone's entry forms, swapped out of band (what it can enter has changed)."""
    context = entry_view(state)
    return compact(render("matches/_entry.html", **context, form={}, errors={}, oob=True))


def filled(shown: RegionsShown, line: EnteredLine) -> str:
    """A table version's regions with this version's line and this phone's token."""
    html = shown.html.replace(ENTERED_SLOT, line.html)
    return html.replace(CSRF_SLOT, generate_csrf()) if shown.csrf else html


def entered_line(state: MatchState, part: str) -> EnteredLine:
    """Render the state's "Entered:" line for the regions (ALL) or alone (ENTERED)."""
    current = state.current
    html = ""
    notes = repeated_notes(state)
    if current and current.table:
        context = {"state": state, "current": current, "entered_oob": part == ENTERED}
        html = compact(render("matches/_entered.html", **context, repeated=notes))
    entered = frozenset(current.entered) if current else frozenset()
    return EnteredLine(html, entered, table_key(state), frozenset(notes))
