"""What SQLite needs, and only SQLite: ``init_app`` binds its hooks to an SQLite app's
engine, and no other.

- Each connection: foreign keys on, write-ahead logging (phones read while one writes),
  and a connection opened while the file could not be written is replaced once it can.
- A write transaction (``companion.store.writing`` sets ``db.WRITE``) begins with BEGIN
  IMMEDIATE, after queueing on a writer lock: threads on a thread lock, the server's
  worker processes on a file lock beside the database, each for WRITE_WAIT at most.
- Server processes checkpoint the write-ahead log from a thread of their own.
- The live streams' watcher follows ``PRAGMA data_version`` (``follow_data_version``).
- ``flask restore`` tells a running server by its shared lock on ``<database>.serving``.
"""

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator

from filelock import FileLock, Timeout
from flask import current_app
from sqlalchemy import Connection, Engine, event
from sqlalchemy.exc import DisconnectionError

from companion.db import WRITE, WRITE_WAIT, DatabaseBusy, DatabaseUnavailable
from companion.private import file_turn

try:
    import fcntl
except ImportError:  # Windows: no way to tell a running server (restore's prompt says)
    fcntl = None

logger = logging.getLogger(__name__)


def bind_hooks(engine: Engine) -> None:
    """Attach SQLite's connection and transaction hooks to this engine (an SQLite one)."""
    event.listen(engine, "connect", _configure_sqlite)
    event.listen(engine, "checkout", _reopen_once_writable)
    event.listen(engine, "begin", _begin_sqlite)
    event.listen(engine, "commit", _release_writer)
    event.listen(engine, "rollback", _release_writer)


def _configure_sqlite(dbapi_connection, connection_record) -> None:
    """Foreign keys on (SQLite ignores them unless asked per connection), and WAL.

    Write-ahead logging lets phones read the match while another phone writes, and
    commits with one sync instead of two; it stays durable (synchronous stays FULL).
    """
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    if _checkpoints["background"]:
        cursor.execute("PRAGMA wal_autocheckpoint=0")
    path = cursor.execute("PRAGMA database_list").fetchone()[2]
    cursor.close()
    # Let SQLAlchemy say BEGIN itself (below) instead of the driver's own guess.
    dbapi_connection.isolation_level = None
    if path and not writable(path):
        connection_record.info[OPENED_READ_ONLY] = path


OPENED_READ_ONLY = "companion_opened_read_only"


@contextlib.contextmanager
def foreign_keys_off(connection: Connection) -> Iterator[None]:
    """Foreign keys off on ``connection`` while the block runs (SQLite takes the pragma only
    outside a transaction: before the block's first), on again after; once the block is
    through, a row that refers to no row stops it with the tables named."""
    driver = connection.connection.driver_connection
    driver.execute("PRAGMA foreign_keys=OFF")
    try:
        yield
        broken = driver.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            tables = sorted({(table, parent) for table, _rowid, parent, _key in broken})
            named = ", ".join(f"{table} to {parent}" for table, parent in tables)
            raise sqlite3.IntegrityError(f"rows refer to no row: {named}")
    finally:
        driver.execute("PRAGMA foreign_keys=ON")


def writable(path: str) -> bool:
    """True when this process may write the database file and its folder (for the WAL)."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(path) or ".", os.W_OK)


def _reopen_once_writable(_dbapi_connection, connection_record, _proxy) -> None:
    """Replace a connection opened while the database could not be written, once it can.

    SQLite opens such a file read-only, for good: kept in the pool, that connection would
    refuse every write (503) long after the folder is writable again.
    """
    path = connection_record.info.get(OPENED_READ_ONLY)
    if path and writable(path):
        raise DisconnectionError("the database can be written again: reconnect")


def _begin_sqlite(connection) -> None:
    """Begin a write transaction with BEGIN IMMEDIATE, so it takes the write lock up front.

    Only a transaction asked for as a write (``companion.store.writing``) does: with a
    deferred BEGIN, two phones could both read the same round and one would fail to
    upgrade to a writer ("database is locked"); IMMEDIATE makes the second wait its
    turn instead, then read the first one's result. Reads keep a plain BEGIN and never
    wait.

    The wait is bounded by the WRITE_WAIT setting: past it, ``DatabaseBusy`` (a 503
    asking to send again, ``companion.web.faults``) rather than a phone left hanging.
    """
    if connection.info.get(IN_ITS_TURN):  # the import's copy: the writer lock is held
        # Still BEGIN IMMEDIATE: the writer before let the lock go as its commit began
        # (SQLAlchemy's commit hook runs first), and a deferred BEGIN would read before
        # that commit landed and then be refused the write at once (503), where this one
        # waits for it (the busy timeout the turn set).
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        return
    if not connection.get_execution_options().get(WRITE):
        if connection.info.pop(SHORTENED, False):  # a write before shortened SQLite's wait
            connection.exec_driver_sql(f"PRAGMA busy_timeout = {READ_WAIT * 1000:.0f}")
        connection.exec_driver_sql("BEGIN")
        return
    wait = float(current_app.config.get("WRITE_WAIT", WRITE_WAIT))
    deadline = time.monotonic() + wait
    # Writers queue on a lock first: SQLite's own wait polls in sleeps of up to 100 ms,
    # which makes a busy table feel slow. Other programs (the CLI) meet SQLite's lock.
    writer = writer_lock(connection.engine.url.database)
    try:
        acquired = writer.acquire(timeout=wait)
    except OSError as error:  # the lock file cannot be opened: a read-only or full disk
        raise DatabaseUnavailable(str(error)) from error
    if not acquired:
        raise DatabaseBusy(f"another write held the writer lock for {wait:g} s")
    connection.info["writer"] = writer
    try:
        # What is left of the wait is SQLite's, for a writer outside this server.
        left = max(0, round((deadline - time.monotonic()) * 1000))
        connection.exec_driver_sql(f"PRAGMA busy_timeout = {left}")
        connection.info[SHORTENED] = True
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    except Exception:
        _release_writer(connection)
        raise


# Set on a connection whose writer lock is held around its transaction (the import's copy:
# ``companion.storage.imports.turn_to_write``), which begins it as a write.
IN_ITS_TURN = "companion_in_its_turn"


READ_WAIT = 5  # seconds SQLite waits for a read (the driver's default), rarely needed in WAL


SHORTENED = "companion_busy_timeout_shortened"


FLOCK_POLL = 0.002  # seconds between tries of another process's writer lock


class WriterLock:
    """Where one database's writers queue, each waiting until a deadline at most.

    Threads of a process queue on a thread lock, woken the moment the writer before is
    done; the server's worker processes then on a file lock beside the database
    (``filelock``'s ``flock``, which the kernel releases if a process dies), tried again
    every FLOCK_POLL seconds until the deadline: the lock is held for milliseconds.
    """

    def __init__(self, path: str | None):
        self.threads = threading.Lock()
        # Not thread-local: the thread lock already lets one thread at a time in.
        self.file = (
            FileLock(f"{path}.writer", mode=0o600, thread_local=False)
            if path and path != ":memory:"
            else None
        )

    def acquire(self, timeout: float) -> bool:
        """Wait for the turn to write; False after ``timeout`` seconds in all.

        The file is opened for each write and closed after it (filelock closes it on
        release): a test run opens hundreds of databases, and an idle process keeps no
        descriptor.
        """
        deadline = time.monotonic() + timeout
        if not self.threads.acquire(timeout=timeout):
            return False
        if self.file is not None:
            try:
                left = max(0.0, deadline - time.monotonic())
                self.file.acquire(timeout=left, poll_interval=FLOCK_POLL)
            except Timeout:
                self.threads.release()
                return False
            except OSError:
                self.threads.release()
                raise
        return True

    def release(self) -> None:
        """Let the next writer in (closing the file releases its lock)."""
        if self.file is not None and self.file.is_locked:
            self.file.release()
        self.threads.release()


_writers: dict[str | None, WriterLock] = {}


_writers_lock = threading.Lock()


def writer_lock(path: str | None) -> WriterLock:
    """The writer lock of the database at ``path``, one per process."""
    with _writers_lock:
        if path not in _writers:  # made once: a FileLock registers itself for fork
            _writers[path] = WriterLock(path)
        return _writers[path]


def _forget_writer_locks() -> None:
    """A forked worker opens its own lock files: a shared one would not exclude."""
    _writers.clear()


def _release_writer(connection) -> None:
    """Let the next writer in once a write transaction ends."""
    writer = connection.info.pop("writer", None)
    if writer is not None:
        writer.release()


_checkpoints = {"background": False}


CHECKPOINT_EVERY = 1.0  # seconds between checkpoints of a server process


def checkpoint_in_background(engine: Engine) -> threading.Thread:
    """Copy the write-ahead log into the database from a thread of its own (the server).

    By default SQLite checkpoints inside the commit that takes the log past 1,000
    pages. While phones read all the time the log cannot start over, so every commit
    then tried again: inside the write lock that the other phones' writes wait for.
    A server process instead checkpoints once a second, outside any write; the other
    processes (the CLI, tests) keep SQLite's default.
    """
    _checkpoints["background"] = True
    thread = threading.Thread(
        target=_checkpoint_forever, args=(engine,), daemon=True, name="checkpoints"
    )
    thread.start()
    return thread


def _checkpoint_forever(engine) -> None:
    """Checkpoint every CHECKPOINT_EVERY seconds, as far as the readers allow (PASSIVE)."""
    failing = None
    while True:
        time.sleep(CHECKPOINT_EVERY)
        try:
            checkpoint(engine)
        except Exception as error:  # a busy, read-only or full database: try again later
            if str(error) != failing:  # once per kind of failure, not every second
                logger.warning("checkpoint failed: %s", error)
            failing = str(error)
        else:
            failing = None


def checkpoint(engine) -> None:
    """One PASSIVE checkpoint, outside any transaction (it waits for nobody)."""
    connection = engine.raw_connection()
    try:
        connection.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        connection.close()


os.register_at_fork(after_in_child=_forget_writer_locks)


def sqlite_write_undone(args, options: dict) -> None:
    """The start's check: a write, rolled back, without waiting (raises sqlite3.Error).

    SQLite itself is asked, so a read-only file, folder or file system, or a full disk,
    is found as SQLite will meet it, whoever the user is (root included).
    """
    connection = sqlite3.connect(*args, **{**options, "timeout": 0}, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        connection.execute(f"PRAGMA user_version = {int(version)}")  # a write, undone
        connection.execute("ROLLBACK")
    finally:
        connection.close()


# Seconds between a stream's watcher's data_version checks. Each wakes the worker for
# about a quarter of a millisecond (5.5 ms a second at 20 looks, with a stream open);
# 50 a second were a fifth of a Pi Zero's share of a core (10 %, bench.push, issue 59)
# spent idle. A write of the worker's own wakes it at once (``feed.Feed.nudge``): only
# another process's waits for the next look.
SQLITE_EVERY = 0.05
# ... in a server of one worker (a machine of 1 GB or less): the table's rounds are all
# its own writes, another process writes only a round's luck and a game's review (the
# background process's, which come a moment after the round anyway) or an import.
SQLITE_EVERY_ALONE = 0.25


def follow_data_version(feed, every: float = SQLITE_EVERY) -> None:
    """The live streams' watcher: read the watched stamps whenever data_version moves
    (looked at every ``every`` seconds), or when the feed asks for a look with nothing
    changed (``due``).

    ``feed`` is a ``companion.storage.feed.Feed`` (or the background process's
    ``Matches``); its connection is of its own, so every other connection's commit moves
    the number.
    """
    connection = sqlite3.connect(feed.engine.url.database, isolation_level=None, timeout=5)
    pause = getattr(feed, "pause", time.sleep)  # a Feed's wait ends at its process's write
    try:
        seen = None
        while feed.watches:
            version = connection.execute("PRAGMA data_version").fetchone()[0]
            if version != seen or feed.due:
                seen = version
                feed.refresh()
            pause(every)
    finally:
        connection.close()


@contextlib.contextmanager
def serving_lock(database) -> Iterator[bool]:
    """Yield True when no server process runs on ``database`` (and none can start)."""
    if fcntl is None:  # no server process holds a shared lock (below) to be found
        yield True
        return
    with file_turn(f"{database}.serving", wait=False) as free:  # refused while one is held shared
        yield free


_serving: list[int] = []


def hold_serving_lock(database) -> None:
    """In a server process: say "I am running" to ``restore`` until the process ends.

    A shared ``flock`` by hand: every worker holds it at once, and ``serving_lock``'s
    exclusive try (filelock's, the same ``flock``) fails while any does. filelock has
    no shared lock of that kind (its ReadWriteLock is an SQLite database of its own).
    """
    if fcntl is None or database is None or _serving:
        return
    descriptor = os.open(f"{database}.serving", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_SH)
    _serving.append(descriptor)  # kept open: the kernel lets go when the process ends
