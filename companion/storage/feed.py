"""The feed of matches' stamps, for the live streams of this server process.

A stream (``companion.play.push``) watches one match and waits for its stamp (version,
table version, link tokens) to move. One watcher per process follows the database for
every watched match, whichever process, server or command wrote it, in the database's
own way (``companion.storage.follower``):

- PostgreSQL: a trigger on ``match`` sends ``NOTIFY companion_match, '<id>'`` inside the
  writing transaction, so it is heard at the commit; the watcher LISTENs on a connection
  of its own and reads the stamps of the matches named (``storage.postgresql.listen``).
- SQLite: the watcher asks ``PRAGMA data_version`` on a connection of its own every
  ``SQLITE_EVERY`` seconds (``SQLITE_EVERY_ALONE`` in a server of one worker, whose
  rounds are all its own writes; it moves when any other connection commits) and reads
  the stamps of the watched matches (``storage.sqlite.follow_data_version``); a write
  of this process wakes it at once (``Feed.nudge``, from ``store.writing``).
  (``flask restore``, which puts another file in place, waits for the server to stop.)

The watcher is a thread, and a greenlet under gevent's monkey-patching (the server's
worker): it runs only while some stream watches, and each stream waits on an event of
its match's own, so a change wakes only that match's streams.

Each stream costs a greenlet, a socket and a wake per change, so a process holds at most
``PER_CLIENT`` streams of one match from one client address, ``PER_MATCH`` of one match
in all, and ``PER_ADDRESS`` from one client address over every match (8,300 streams
spread over many matches from one address starved every other phone, issue 42). A new
stream past a bound closes the oldest one it shares the bound with, and is never
refused: a phone's reconnect always gets through, and a phone whose stream was closed
reconnects by itself. A whole table behind one proxy (Caddy, a club's) comes from one
address: a club behind a proxy without ProxyFix raises ``STREAMS_PER_ADDRESS``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Engine

from companion.db import db
from companion.models import Match
from companion.storage import follower
from companion.storage.sqlite import SQLITE_EVERY_ALONE

logger = logging.getLogger(__name__)

RETRY_AFTER = 1.0  # seconds before a watcher whose database failed tries again
WATCHER_NAME = "match-stamps"  # the watcher thread's (the tests wait for it to stop)
# Open streams of one match a process holds: from one client address, and in all. A
# table has at most 10 phones and a TV; a phone holds one stream a page.
PER_CLIENT = 20
PER_MATCH = 100
# Open streams from one client address over every match: a household's phones each have
# an address of their own, and five tables behind one proxy hold 55.
PER_ADDRESS = 60

# A match's stamp: its versions and link tokens, read by the replay (``state``), the
# live polls (before Flask, too) and the watcher here; one statement for one match, one
# for many.
STAMP = (Match.version, Match.table_version, Match.player_token, Match.watch_token)
MATCH_STAMP = select(*STAMP).where(Match.id == bindparam("match_id"))
STAMPS = select(Match.id, *STAMP)


class Watch:
    """One watched match: its latest stamp, and the event its streams wait on."""

    def __init__(self):
        self.stamp: tuple | None = None
        self.event = threading.Event()
        self.streams: list[Stream] = []  # open, oldest first

    def moved(self, stamp: tuple | None) -> None:
        """Take a new stamp; wake the streams waiting when it differs."""
        if stamp == self.stamp:
            return
        self.stamp = stamp
        woken, self.event = self.event, threading.Event()
        woken.set()

    def changed(self, version: int | None, timeout: float, stream=None) -> tuple | None:
        """The stamp once its version is not ``version``, or ``timeout`` passed, or
        ``stream`` was closed."""
        deadline = time.monotonic() + timeout
        while self.stamp is not None and self.stamp[0] == version:
            left = deadline - time.monotonic()
            if (stream and stream.closed) or left <= 0 or not self.event.wait(left):
                break
        return self.stamp

    def wake(self) -> None:
        """Wake every stream of the match: one was closed, the others wait on."""
        woken, self.event = self.event, threading.Event()
        woken.set()


class Stream:
    """One open stream of a watched match, from one client address."""

    def __init__(self, watch: Watch, client: str, match_id: int):
        self.watch, self.client, self.match_id = watch, client, match_id
        self.closed = False  # past a bound: its phone comes back in a while
        self.ended = False  # the server stops: its phone comes back at once, elsewhere

    @property
    def stamp(self) -> tuple | None:
        """The match's latest stamp."""
        return self.watch.stamp

    def changed(self, version: int | None, timeout: float) -> tuple | None:
        """The match's stamp once its version is not ``version``, after ``timeout``, or
        at once when this stream is closed (``closed`` then says so)."""
        return self.watch.changed(version, timeout, self)

    def close(self) -> None:
        """Close the stream: it ends at once, its phone reconnects."""
        self.closed = True
        self.watch.wake()

    def end(self) -> None:
        """End the stream at once because the server stops (``closed`` too, so a wait
        returns): its phone reconnects as after any drop, to the server that comes next."""
        self.ended = True
        self.close()


class Feed:
    """The watched matches of this process, and the watcher that keeps their stamps."""

    due = False  # a stream's stamps change only with the database: no look without one

    def __init__(
        self,
        engine: Engine,
        per_client: int = PER_CLIENT,
        per_match: int = PER_MATCH,
        per_address: int = PER_ADDRESS,
        every: float | None = None,
    ):
        self.engine = engine
        self.every = every  # seconds between looks at SQLite (None: ``SQLITE_EVERY``)
        self.per_client, self.per_match, self.per_address = per_client, per_match, per_address
        self.watches: dict[int, Watch] = {}
        self.by_client: dict[str, list[Stream]] = {}  # open, oldest first, over every match
        self.lock = threading.Lock()
        self.ending = False  # the server stops: every stream ends (``end_all``)
        self.watcher: threading.Thread | None = None
        self.woken = threading.Event()  # a write of this process: look at once (``nudge``)

    @contextlib.contextmanager
    def watching(self, match_id: int, client: str = "") -> Iterator[Stream]:
        """A stream of a match from ``client`` while the block runs (``open``, ``leave``)."""
        stream = self.open(match_id, client)
        try:
            yield stream
        finally:
            self.leave(stream)

    def open(self, match_id: int, client: str = "") -> Stream:
        """A new stream of a match from ``client``, until ``leave``. The match's stamp is
        read once the stream is counted (a change meanwhile is not missed), unless the
        match is watched already (the watcher keeps its stamp: no read for each phone of
        a table); ``stream.stamp`` is None when there is no such match. Past a bound,
        the oldest stream it shares the bound with is closed."""
        with self.lock:
            watch = self.watches.get(match_id)
            known = watch is not None and watch.stamp is not None
            if watch is None:
                watch = self.watches[match_id] = Watch()
            stream = Stream(watch, client, match_id)
            stream.ended = stream.closed = self.ending
            watch.streams.append(stream)
            self.close_the_oldest(watch, client)
            self.by_client.setdefault(client, []).append(stream)
            self.close_past_the_address(client)
        if not known:
            try:
                watch.moved(self.read_one(match_id))
            except BaseException:
                self.leave(stream)
                raise
        if stream.stamp is not None:  # no watcher for a match that is not there (a 404)
            self.keep_watching()
        return stream

    def nudge(self) -> None:
        """This process committed a write: the watcher looks now, not at its next turn
        (SQLite's ``data_version`` is looked at SQLITE_EVERY seconds; a table served
        by one worker then gets its round at once, however rarely that is)."""
        self.woken.set()

    def pause(self, seconds: float) -> None:
        """The watcher's wait between two looks at the database: ``seconds``, or until a
        ``nudge``."""
        self.woken.wait(seconds)
        self.woken.clear()

    def keep_watching(self) -> None:
        """Start the watcher unless it runs. Its first look reads every watched stamp, so
        a change between a stream's own read and this start is not missed."""
        with self.lock:
            if self.watcher is None:
                self.watcher = threading.Thread(target=self.run, daemon=True, name=WATCHER_NAME)
                self.watcher.start()

    def leave(self, stream: Stream) -> None:
        """The stream ended: no longer counted; its match unwatched when it was the last
        (twice is as once)."""
        with self.lock:
            watch = stream.watch
            if stream in watch.streams:
                watch.streams.remove(stream)
            if not watch.streams and self.watches.get(stream.match_id) is watch:
                self.watches.pop(stream.match_id)
            self.forget(stream)

    def end_all(self) -> None:
        """The server stops: end every open stream and each one opened from now on, which
        would otherwise hold its worker until the graceful timeout. Their phones reconnect
        by themselves, to the server that comes next."""
        with self.lock:
            self.ending = True
            streams = [stream for watch in self.watches.values() for stream in watch.streams]
        for stream in streams:
            stream.end()

    def close_the_oldest(self, watch: Watch, client: str) -> None:
        """Close the match's oldest streams past the bounds: from ``client``, then in all."""
        from_client = [stream for stream in watch.streams if stream.client == client]
        closing = from_client[: max(0, len(from_client) - self.per_client)]
        left = [stream for stream in watch.streams if stream not in closing]
        closing += left[: max(0, len(left) - self.per_match)]
        for stream in closing:
            watch.streams.remove(stream)
            stream.close()
            self.forget(stream)

    def close_past_the_address(self, client: str) -> None:
        """Close the client's oldest streams over every match past ``per_address``."""
        streams = self.by_client[client]
        for stream in streams[: max(0, len(streams) - self.per_address)]:
            if stream in stream.watch.streams:
                stream.watch.streams.remove(stream)
            stream.close()
            streams.remove(stream)

    def forget(self, stream: Stream) -> None:
        """A stream that ended, no longer counted for its client address."""
        streams = self.by_client.get(stream.client, [])
        if stream in streams:
            streams.remove(stream)
        if not streams:
            self.by_client.pop(stream.client, None)

    def read_one(self, match_id: int) -> tuple | None:
        """The stamp of one match, or None when it is gone (one cached statement)."""
        with self.engine.connect() as connection:
            row = connection.execute(MATCH_STAMP, {"match_id": match_id}).first()
            return tuple(row) if row else None

    def read(self, ids) -> dict[int, tuple]:
        """The stamps of these matches (a match that is gone is left out)."""
        with self.engine.connect() as connection:
            rows = connection.execute(STAMPS.where(Match.id.in_(list(ids))))
            return {row[0]: tuple(row[1:]) for row in rows}

    def refresh(self, ids=None) -> None:
        """Read the stamps of the watched matches (or of ``ids`` among them) again."""
        wanted = [match_id for match_id in list(self.watches) if ids is None or match_id in ids]
        if not wanted:
            return
        stamps = self.read(wanted)
        for match_id in wanted:
            watch = self.watches.get(match_id)
            if watch is not None:
                watch.moved(stamps.get(match_id))

    def run(self) -> None:
        """Follow the database until no stream watches; start again after a failure.

        The watcher leaves under the lock, so a stream that comes meanwhile either
        keeps it running or finds none and starts the next."""
        follow = follower(self.engine, self.every)
        while True:
            with self.lock:
                if not self.watches:
                    self.watcher = None
                    return
            try:
                follow(self)
            except Exception as error:  # the database went away: try again shortly
                logger.warning("following the matches' stamps failed: %s", error)
                time.sleep(RETRY_AFTER)


def nudge(app) -> None:
    """This process committed a write: its feed's watcher, if it has one, looks now."""
    feed = app.extensions.get("companion.feed")
    if feed is not None:
        feed.nudge()


def feed_of(app) -> Feed:
    """The app's feed, made on first use."""
    feed = app.extensions.get("companion.feed")
    if feed is None:
        with app.app_context():
            bounds = (
                app.config["STREAMS_PER_CLIENT"],
                app.config["STREAMS_PER_MATCH"],
                app.config["STREAMS_PER_ADDRESS"],
            )
            # A lone worker's watcher waits only for other processes' derived rows.
            alone = app.config.get("WORKERS") == 1
            every = SQLITE_EVERY_ALONE if alone else None
            feed = app.extensions.setdefault(
                "companion.feed", Feed(db.engine, *bounds, every=every)
            )
    return feed
