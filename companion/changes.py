"""Which matches changed, for the live streams of this server process.

A stream (``companion.play.push``) watches one match and waits for its stamp (version,
table version, link tokens) to move. One watcher per process follows the database for
every watched match, whichever process, server or command wrote it:

- PostgreSQL: a trigger on ``match`` sends ``NOTIFY companion_match, '<id>'`` inside the
  writing transaction, so it is heard at the commit; the watcher LISTENs on a connection
  of its own and reads the stamps of the matches named.
- SQLite: the watcher asks ``PRAGMA data_version`` on a connection of its own every
  ``SQLITE_EVERY`` seconds (it moves when any other connection commits) and then reads
  the stamps of the watched matches. (``flask restore``, which puts another file in
  place, waits for the server to stop.)

The watcher is a thread, and a greenlet under gevent's monkey-patching (the server's
worker): it runs only while some stream watches, and each stream waits on an event of
its match's own, so a change wakes only that match's streams.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator

from sqlalchemy import DDL, event, select
from sqlalchemy.engine import Engine

from companion.db import db
from companion.models import Match

logger = logging.getLogger(__name__)

CHANNEL = "companion_match"
SQLITE_EVERY = 0.02  # seconds between SQLite's data_version checks (a few µs each)
LISTEN_WAIT = 1.0  # seconds the PostgreSQL watcher waits for a notification at a time
RETRY_AFTER = 1.0  # seconds before a watcher whose database failed tries again
STAMPS = select(Match.id, Match.version, Match.table_version, Match.player_token, Match.watch_token)

# The trigger, made with the table (tests, create_all) and by the migration 0a6d3c1e2f47.
NOTIFY_FUNCTION = f"""
CREATE OR REPLACE FUNCTION companion_match_changed() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('{CHANNEL}', OLD.id::text);
    ELSE
        PERFORM pg_notify('{CHANNEL}', NEW.id::text);
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""
NOTIFY_TRIGGER = """
CREATE TRIGGER match_changed AFTER INSERT OR UPDATE OR DELETE ON match
FOR EACH ROW EXECUTE FUNCTION companion_match_changed()
"""
for statement in (NOTIFY_FUNCTION, NOTIFY_TRIGGER):
    event.listen(Match.__table__, "after_create", DDL(statement).execute_if(dialect="postgresql"))


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
        follow = listen if self.engine.dialect.name == "postgresql" else poll_sqlite
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


def poll_sqlite(feed: Feed) -> None:
    """SQLite: read the watched stamps whenever the file's data_version moves."""
    path = feed.engine.url.database
    connection = sqlite3.connect(path, isolation_level=None, timeout=5)
    try:
        seen = None
        while feed.watches:
            version = connection.execute("PRAGMA data_version").fetchone()[0]
            if version != seen:
                seen = version
                feed.refresh()
            time.sleep(SQLITE_EVERY)
    finally:
        connection.close()


def listen(feed: Feed) -> None:
    """PostgreSQL: LISTEN, and read the stamps of the watched matches notified."""
    url = feed.engine.url.set(drivername="postgresql")
    import psycopg  # only on PostgreSQL (the driver is an extra)

    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as connection:
        connection.execute(f"LISTEN {CHANNEL}")
        feed.refresh()  # what changed before the LISTEN, or while it was down
        while feed.watches:
            # Back at the first notification; LISTEN_WAIT bounds the wait, so the
            # watcher stops soon after its last stream.
            notes = connection.notifies(timeout=LISTEN_WAIT, stop_after=1)
            ids = {int(note.payload) for note in notes}
            if ids:
                feed.refresh(ids)


def feed_of(app) -> Feed:
    """The app's feed, made on first use."""
    feed = app.extensions.get("companion.changes")
    if feed is None:
        with app.app_context():
            feed = app.extensions.setdefault("companion.changes", Feed(db.engine))
    return feed
