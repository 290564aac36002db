"""Live pushes: each match page (player phone, watch link, TV) keeps one event stream.

``GET /matches/<id>/events`` is a stream of Server-Sent Events (htmx's SSE extension on
the page). When the match changes, in whatever process, server or command it was
written (``companion.storage.feed``), the stream sends what the page's poll would have got:
the live regions, shared by every phone of the table at that version, and this phone's
own entry forms only when what it can enter changed (a card being typed survives), in an
event of their own after the regions: every phone gets what happened first. The
stream also knows the inputs it last sent: when only derived rows changed since, in an
open game (a round's luck saying a chance), it sends the news above the rows alone.

Each event's id says what the phone now shows (version, table version, form key):
EventSource sends it back as Last-Event-ID when it reconnects, and the stream goes on
from there, so nothing is missed. An "alive" event every ``LIVE_HEARTBEAT`` seconds keeps
proxies and phones from dropping a quiet stream, and tells the page the stream still
works. A server that cannot hold streams open (one with threads, such as waitress)
answers 204, and the page polls as before.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from flask import Flask, Response, abort, current_app, request

from companion.models import MAX_ID
from companion.play.live import forms_after, regions, view_named
from companion.rules import whole_number
from companion.store import stamp_feed

# A comment would keep proxies from dropping the stream too, but EventSource never tells
# a page of one: an event lets table.js notice a stream gone silent (a sleeping access
# point, a half-dead NAT) and open a new one.
ALIVE = "event: alive\ndata: \n\n"
RETRY_MS = 1000  # how soon EventSource reconnects after a dropped stream
# ... after a stream closed because its client or match held too many: the oldest of
# them, a tab left open, say. Its page polls every 2 s meanwhile (table.js), and a client
# that opens streams without end (a stuck script) comes back once in 5 minutes, not at once.
CLOSED_RETRY_MS = 300_000


class Shown(NamedTuple):
    """What a phone shows: the match version, its table version, its entry form's key."""

    version: str | None
    table: str | None
    form: str | None

    @property
    def event_id(self) -> str:
        """The id of the event that brought this: EventSource returns it on reconnect."""
        return f"{self.version} {self.table} {self.form}"


def shown_by(request) -> Shown:
    """What the phone shows: the last event's id on a reconnect, else the page's own."""
    last = request.headers.get("Last-Event-ID", "").split(" ", 2)
    if len(last) == 3:
        return Shown(*last)
    args = request.args
    return Shown(args.get("since"), args.get("table"), args.get("form"))


def events(match_id: int):
    """The match's changes as they happen (text/event-stream), or 204 without push.

    The stream is counted and the match's stamp read here, before the answer starts:
    404 when there is no such match (EventSource stops), one read of the database at
    most, none when the match is watched already. The server's closing of the answer
    (WSGI's ``close``, after the last chunk or a dropped phone) ends the stream."""
    if not current_app.config.get("LIVE_PUSH"):
        return "", 204  # EventSource stops; the page polls
    app = current_app._get_current_object()
    view, shown = view_named(request.args.get("view")), shown_by(request)
    feed = stamp_feed(app)
    stream = feed.open(match_id, request.remote_addr or "")
    if stream.stamp is None:
        feed.leave(stream)
        abort(404)
    response = Response(
        event_stream(app, request.environ, stream, shown, view),
        mimetype="text/event-stream",
        # A buffering proxy (nginx) would hold the events back: it must pass them on.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.call_on_close(lambda: feed.leave(stream))
    return response


def event_stream(app: Flask, environ: dict, stream, shown: Shown, view: str):
    """The stream (the feed's, ``store.stamp_feed``): what changed since ``shown``, then
    each change as it comes.

    Each change is rendered in a request context of its own, made from the stream's
    request (its session, language and token): nothing, a database connection least of
    all, is held while the stream waits.
    """
    yield f"retry: {RETRY_MS}\n\n"
    heartbeat = float(app.config["LIVE_HEARTBEAT"])
    inputs = None  # the input version of what this stream sent (a reconnect knows none)
    while True:
        stamp = stream.changed(whole(shown.version), heartbeat)
        if stream.ended:  # the server stops: the phone reconnects at once, elsewhere
            return
        if stream.closed:  # too many streams of the match were open
            yield f"retry: {CLOSED_RETRY_MS}\n\n"
            return
        if stamp is None:
            return  # the match is gone: the page's next request says so
        if str(stamp[0]) == shown.version:
            yield ALIVE
            continue
        with app.request_context(environ):
            update = regions(stream.match_id, stamp, shown.table, shown.form, view, inputs, True)
        shown, inputs = Shown(str(stamp[0]), str(stamp[1]), update.form_key), update.inputs
        yield message("change", update.html, shown.event_id)
        if update.form_next is not None:
            time.sleep(0)  # the other phones' news first (a green thread's turn), then forms
            with app.request_context(environ):
                html = forms_after(stream.match_id, stamp, update.form_next)
            shown = shown._replace(form=update.form_next)
            yield message("change", html, shown.event_id)


def whole(text: str | None) -> int | None:
    """A version as sent back by the phone, or None when it is not one: ASCII digits
    with a bound, as route ids are ("²" or 5,000 digits would fail ``int``)."""
    return whole_number(text or "", 0, MAX_ID)


def message(name: str, data: str, event_id: str) -> str:
    """One Server-Sent Event: its name, id and data, a line of data per line."""
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])
    return f"event: {name}\nid: {event_id}\n{lines}\n"
