"""What an import does differently on SQLite and on PostgreSQL, each behind its own name.

Everything else in the import is SQLAlchemy Core and runs the same on both. What is
here either does not exist on the other database, or exists there differently:

- SQLite has one writer at a time for the whole file. The phones' writes queue on the
  app's writer lock (``db.writer_lock``), so the copy takes its turn there too; and
  during the copy it turns off the foreign-key checks of its own connection, which
  would double the time the phones wait (every id it writes is one it has just
  written, or a player's it read in the same transaction). The neutral way, checks
  on, is what PostgreSQL runs, and what the tests also run on SQLite.
- PostgreSQL lets the phones go on writing during the copy, so the tables whose ids
  the import hands out are locked against other writers (readers go on), and their id
  sequences are moved past the new ids afterwards.
- One import at a time: SQLite's is a file lock beside the database, PostgreSQL's an
  advisory lock; either is released when the process dies.
- "Somebody is playing": SQLite's write-ahead log is written by every write; other
  databases are asked when a match, game or round last began.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlalchemy import Connection, Table, func, select

try:
    import fcntl
except ImportError:  # Windows: one server process, the thread lock is enough
    fcntl = None

from companion.db import WRITER_WAIT, writer_lock
from companion.models import Game, Match, Round, utcnow

# Any number that other parts of the app do not use as an advisory lock key.
IMPORT_LOCK_KEY = 61041000


class Busy(Exception):
    """The database stayed busy: the copy could not take its turn to write."""


class AnotherImport(Exception):
    """Another import holds the lock."""


def is_sqlite(connection: Connection) -> bool:
    """True on SQLite."""
    return connection.dialect.name == "sqlite"


def is_postgresql(connection: Connection) -> bool:
    """True on PostgreSQL."""
    return connection.dialect.name == "postgresql"


def sqlite_file(connection: Connection) -> str | None:
    """The SQLite database file (None in memory, or on another database)."""
    path = connection.engine.url.database
    return path if is_sqlite(connection) and path and path != ":memory:" else None


def sqlite_temp_on_disk(connection: Connection) -> None:
    """SQLite: temporary tables in a file, not in the process's memory (before staging)."""
    if is_sqlite(connection):
        connection.connection.driver_connection.execute("PRAGMA temp_store=FILE")


# Which SQLite-only speed-ups the copy uses; the tests turn them off to run the neutral way.
SQLITE_SHORTCUTS = {"foreign_keys_off": True}


@contextmanager
def turn_to_write(connection: Connection) -> Iterator[None]:
    """Around the copy's transaction: on SQLite, the writers' queue and no key checks."""
    if not is_sqlite(connection):
        yield
        return
    writer = writer_lock(connection.engine.url.database)
    if not writer.acquire(timeout=WRITER_WAIT):
        raise Busy
    keys_off = SQLITE_SHORTCUTS["foreign_keys_off"]
    driver = connection.connection.driver_connection
    try:
        if keys_off:  # only outside a transaction does SQLite take this
            driver.execute("PRAGMA foreign_keys=OFF")
        yield
    finally:
        if keys_off:
            driver.execute("PRAGMA foreign_keys=ON")
        writer.release()


def postgresql_lock_ids(connection: Connection, tables: Sequence[Table]) -> None:
    """PostgreSQL: nobody else adds rows to ``tables`` until the copy commits.

    The import gives these tables' rows ids past the largest there; a phone's insert
    meanwhile would take one of them from the sequence. Readers are not held up.
    """
    if is_postgresql(connection):
        quote = connection.dialect.identifier_preparer.quote
        names = ", ".join(quote(table.name) for table in tables)
        connection.exec_driver_sql(f"LOCK TABLE {names} IN SHARE ROW EXCLUSIVE MODE")


def postgresql_follow_sequences(connection: Connection, tables: Sequence[Table]) -> None:
    """PostgreSQL: each table's id sequence goes on after the largest id now there."""
    if not is_postgresql(connection):
        return
    quote = connection.dialect.identifier_preparer.quote
    for table in tables:
        following = select(func.coalesce(func.max(table.c.id), 0) + 1).scalar_subquery()
        sequence = func.pg_get_serial_sequence(quote(table.name), "id")
        connection.execute(select(func.setval(sequence, following, False)))


def seconds_since_last_write(connection: Connection) -> float:
    """How long nobody has written (SQLite), or begun a match, game or round (others)."""
    path = sqlite_file(connection)
    if path is not None:
        for name in (f"{path}-wal", path):
            try:
                return time.time() - os.stat(name).st_mtime
            except FileNotFoundError:
                continue
        return float("inf")
    newest = [
        connection.scalar(select(func.max(model.created_at))) for model in (Match, Game, Round)
    ]
    newest = [moment for moment in newest if moment is not None]
    return (utcnow() - max(newest)).total_seconds() if newest else float("inf")


@contextmanager
def only_import(connection: Connection) -> Iterator[None]:
    """Hold the import lock of every server process (and server) for this database."""
    path = sqlite_file(connection)
    if path is not None and fcntl is not None:
        descriptor = os.open(f"{path}.import", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise AnotherImport from None
            yield
        finally:
            os.close(descriptor)  # closing releases the lock
        return
    if is_postgresql(connection):
        locked = connection.scalar(select(func.pg_try_advisory_lock(IMPORT_LOCK_KEY)))
        connection.commit()  # the lock is the session's, not the transaction's
        if not locked:
            raise AnotherImport
        try:
            yield
        finally:
            connection.scalar(select(func.pg_advisory_unlock(IMPORT_LOCK_KEY)))
            connection.commit()
        return
    yield
