"""What an import does differently on SQLite and on PostgreSQL, each behind its own name.

Everything else in the import is SQLAlchemy Core and runs the same on both. What is
here either does not exist on the other database, or exists there differently:

- SQLite has one writer at a time for the whole file. The phones' writes queue on the
  app's writer lock (``storage.sqlite.writer_lock``), so the copy takes its turn there too; and
  during the copy it turns off the foreign-key checks of its own connection, which
  would double the time the phones wait (every id it writes is one it has just
  written, or a player's it read in the same transaction). The neutral way, checks
  on, is what PostgreSQL runs, and what the tests also run on SQLite.
- PostgreSQL lets the phones go on writing during the copy. The import keeps the ids
  it hands out free beforehand (a short lock of those tables while their sequences
  are moved past them), so the copy holds nobody up and no "quiet moment" is needed;
  and it stages its rows with COPY, PostgreSQL's bulk load.
- One import at a time: SQLite's is a file lock beside the database, PostgreSQL's an
  advisory lock; either is released when the process dies.
- "Somebody is playing" (SQLite): every write touches the write-ahead log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy import Connection, DateTime, Table, func, insert, select

from companion.db import DatabaseBusy
from companion.private import file_turn
from companion.storage import is_postgresql, is_sqlite
from companion.storage.postgresql import IMPORT_LOCK_KEY, lock_timeout
from companion.storage.sqlite import IN_ITS_TURN, writer_lock


class AnotherImport(Exception):
    """Another import holds the lock."""


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
def turn_to_write(connection: Connection, wait: float) -> Iterator[None]:
    """Around the copy's transaction: on SQLite, the writers' queue and no key checks;
    on PostgreSQL, a lock waited for ``wait`` seconds at most (then DatabaseBusy)."""
    if is_postgresql(connection):
        connection.exec_driver_sql(lock_timeout(wait, local=False))
        connection.commit()
        try:
            yield
        finally:
            connection.exec_driver_sql("RESET lock_timeout")
            connection.commit()
        return
    if not is_sqlite(connection):
        yield
        return
    writer = writer_lock(connection.engine.url.database)
    if not writer.acquire(timeout=wait):  # the phones' writes: send again later (503)
        raise DatabaseBusy(f"another write held the writer lock for {wait:g} s")
    keys_off = SQLITE_SHORTCUTS["foreign_keys_off"]
    driver = connection.connection.driver_connection
    # The commit would copy the whole log into the database file as well (SQLite's
    # automatic checkpoint, for a log past 1,000 pages: the copy's is 15,000), while
    # the phones wait. It is done after, outside the writers' queue.
    (checkpoint_after,) = driver.execute("PRAGMA wal_autocheckpoint").fetchone()
    driver.execute("PRAGMA wal_autocheckpoint=0")
    driver.execute(f"PRAGMA busy_timeout = {wait * 1000:.0f}")  # another program: the same wait
    connection.info[IN_ITS_TURN] = True  # the copy begins as a write: BEGIN IMMEDIATE
    try:
        if keys_off:  # only outside a transaction does SQLite take this
            driver.execute("PRAGMA foreign_keys=OFF")
        yield
    finally:
        connection.info.pop(IN_ITS_TURN, None)
        if keys_off:
            driver.execute("PRAGMA foreign_keys=ON")
        writer.release()
        driver.execute(f"PRAGMA wal_autocheckpoint={int(checkpoint_after)}")
        if checkpoint_after:  # a server process checkpoints in a thread of its own
            driver.execute("PRAGMA wal_checkpoint(PASSIVE)")


def postgresql_reserve_ids(
    connection: Connection, counts: dict[Table, int], wait: float
) -> dict | None:
    """PostgreSQL: the id each table's new rows start after, kept free for them.

    In a short transaction of its own, with the tables locked against other writers
    (readers go on; the lock is waited for ``wait`` seconds at most), the id sequences
    are moved past the ids the import will write;
    phones that write meanwhile get ids after them. Then the copy holds nobody up. A
    sequence never goes back, so an import that fails after this leaves a gap in the
    ids and nothing else. None on other databases: the copy reads the largest ids
    itself, holding the write lock.
    """
    if not is_postgresql(connection):
        return None
    quote = connection.dialect.identifier_preparer.quote
    offsets = {}
    with connection.begin():
        connection.exec_driver_sql(lock_timeout(wait))
        names = ", ".join(quote(table.name) for table in counts)
        connection.exec_driver_sql(f"LOCK TABLE {names} IN SHARE ROW EXCLUSIVE MODE")
        for table, count in counts.items():
            offsets[table] = top = connection.scalar(select(func.coalesce(func.max(table.c.id), 0)))
            if top + count:  # a sequence starts at 1
                sequence = func.pg_get_serial_sequence(quote(table.name), "id")
                connection.execute(select(func.setval(sequence, top + count)))
    return offsets


def postgresql_copy(connection: Connection, table: Table, rows: list[tuple]) -> bool:
    """PostgreSQL with psycopg: rows into a table with COPY, its bulk load; else False.

    An INSERT per row costs a round trip to the server each, COPY streams them:
    staging 5,000 matches takes a tenth of the time.
    """
    driver = connection.connection.driver_connection
    if not is_postgresql(connection) or not hasattr(driver, "cursor"):
        return False
    cursor = driver.cursor()
    if not hasattr(cursor, "copy"):  # psycopg 2 has no copy(): the plain inserts
        return False
    quote = connection.dialect.identifier_preparer.quote
    columns = ", ".join(quote(column.name) for column in table.c)
    with cursor, cursor.copy(f"COPY {quote(table.name)} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    return True


def copy_holds_up_writers(connection: Connection) -> bool:
    """True where the copy's transaction makes every other writer wait (SQLite)."""
    return is_sqlite(connection)


@contextmanager
def only_import(connection: Connection) -> Iterator[None]:
    """Hold the import lock of every server process (and server) for this database."""
    path = sqlite_file(connection)
    if path is not None:
        with file_turn(f"{path}.import", wait=False) as held:
            if not held:
                raise AnotherImport
            yield
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


def date_converter(connection: Connection) -> Callable[[datetime], object]:
    """A time as this database's driver takes it (SQLite: SQLAlchemy's text form).

    On SQLite that text is ``isoformat`` with a space and microseconds, for every year
    a backup may hold (1900-2999), made in C: five times as fast as SQLAlchemy's own
    formatting, which a file's 140,000 round times would pass through one by one.
    """
    if connection.dialect.name == "sqlite":
        return sqlite_text
    convert = DateTime().dialect_impl(connection.dialect).bind_processor(connection.dialect)
    return convert or (lambda moment: moment)


def sqlite_text(moment: datetime) -> str:
    """A time as SQLAlchemy stores it on SQLite: "2026-12-02 09:58:00.123456"."""
    return moment.isoformat(" ", "microseconds")


def insert_rows(connection: Connection, table: Table, rows: list[tuple]) -> None:
    """Plain tuples into a table, in its column order, the fastest way this database
    takes them: COPY on PostgreSQL, else the driver's executemany (SQLAlchemy's handles
    each row in Python: 4.9 s against 0.6 s for 600,000 plays)."""
    if rows and not postgresql_copy(connection, table, rows):
        insert_plain_rows(connection, table, rows)


def insert_plain_rows(connection: Connection, table: Table, rows: list[tuple]) -> None:
    """Plain tuples into a table with the driver's executemany, in this database's
    statement and parameter style (PostgreSQL's drivers take named parameters)."""
    statement = insert(table).compile(dialect=connection.dialect)
    if not connection.dialect.positional:
        keys = [column.key for column in table.c]
        rows = [dict(zip(keys, row, strict=True)) for row in rows]
    connection.exec_driver_sql(statement.string, rows)
