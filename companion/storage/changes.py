"""Which matches changed, for the live streams of this server process.

A stream (``companion.play.push``) watches one match and waits for its stamp (version,
table version, link tokens) to move. One watcher per process follows the database for
every watched match, whichever process, server or command wrote it, in the database's
own way (``companion.storage.follower``):

- PostgreSQL: a trigger on ``match`` sends ``NOTIFY companion_match, '<id>'`` inside the
  writing transaction, so it is heard at the commit; the watcher LISTENs on a connection
  of its own and reads the stamps of the matches named (``storage.postgresql.listen``).
- SQLite: the watcher asks ``PRAGMA data_version`` on a connection of its own every
  ``SQLITE_EVERY`` seconds (it moves when any other connection commits) and then reads
  the stamps of the watched matches (``storage.sqlite.follow_data_version``).
  (``flask restore``, which puts another file in place, waits for the server to stop.)

The watcher is a thread, and a greenlet under gevent's monkey-patching (the server's
worker): it runs only while some stream watches, and each stream waits on an event of
its match's own, so a change wakes only that match's streams.
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

logger = logging.getLogger(__name__)

RETRY_AFTER = 1.0  # seconds before a watcher whose database failed tries again

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
        self.streams = 0

    def moved(self, stamp: tuple | None) -> None:
        """Take a new stamp; wake the streams waiting when it differs."""
        if stamp == self.stamp:
            return
        self.stamp = stamp
        woken, self.event = self.event, threading.Event()
        woken.set()

    def changed(self, version: int | None, timeout: float) -> tuple | None:
        """The stamp once its version is not ``version`` (or ``timeout`` passed)."""
        deadline = time.monotonic() + timeout
        while self.stamp is not None and self.stamp[0] == version:
            left = deadline - time.monotonic()
            if left <= 0 or not self.event.wait(left):
                break
        return self.stamp


class Feed:
    """The watched matches of this process, and the watcher that keeps their stamps."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.watches: dict[int, Watch] = {}
        self.lock = threading.Lock()
        self.watcher: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(self, match_id: int) -> Iterator[Watch]:
        """Watch a match while the block runs; its stamp is read first."""
        with self.lock:
            watch = self.watches.setdefault(match_id, Watch())
            watch.streams += 1
            if self.watcher is None:
                self.watcher = threading.Thread(target=self.run, daemon=True, name="match-changes")
                self.watcher.start()
        try:
            watch.moved(self.read([match_id]).get(match_id))
            yield watch
        finally:
            with self.lock:
                watch.streams -= 1
                if not watch.streams:
                    self.watches.pop(match_id, None)

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
        follow = follower(self.engine)
        while True:
            with self.lock:
                if not self.watches:
                    self.watcher = None
                    return
            try:
                follow(self)
            except Exception as error:  # the database went away: try again shortly
                logger.warning("following match changes failed: %s", error)
                time.sleep(RETRY_AFTER)


def feed_of(app) -> Feed:
    """The app's feed, made on first use."""
    feed = app.extensions.get("companion.changes")
    if feed is None:
        with app.app_context():
            feed = app.extensions.setdefault("companion.changes", Feed(db.engine))
    return feed
