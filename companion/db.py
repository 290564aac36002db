"""Flask extensions, created unbound and attached to the app in create_app()."""

import sqlite3
import threading

from flask import has_request_context, request
from flask_babel import Babel
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData, event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase

# Named constraints let Alembic's SQLite batch mode drop and alter them later.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of every model; declare columns as Mapped[...] attributes."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


db = SQLAlchemy(model_class=Base)
migrate = Migrate()
csrf = CSRFProtect()
babel = Babel()


@event.listens_for(Engine, "connect")
def _configure_sqlite(dbapi_connection, _connection_record) -> None:
    """Foreign keys on (SQLite ignores them unless asked per connection), and WAL.

    Write-ahead logging lets phones read the match while another phone writes, and
    commits with one sync instead of two; it stays durable (synchronous stays FULL).
    """
    if isinstance(dbapi_connection, sqlite3.Connection):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.close()
        # Let SQLAlchemy say BEGIN itself (below) instead of the driver's own guess.
        dbapi_connection.isolation_level = None


@event.listens_for(Engine, "begin")
def _begin_sqlite(connection) -> None:
    """Start write requests with BEGIN IMMEDIATE, so they take the write lock up front.

    A request checks its input against what it reads, then writes. With a deferred
    BEGIN, two phones could both read the same round and one would fail to upgrade to
    a writer ("database is locked"); IMMEDIATE makes the second wait its turn instead,
    then read the first one's result. Reads keep a plain BEGIN and never wait.
    """
    if connection.dialect.name != "sqlite":
        return
    immediate = (has_request_context() and request.method not in ("GET", "HEAD", "OPTIONS")
                 and not connection.get_execution_options().get(READ_FIRST))
    if not immediate:
        connection.exec_driver_sql("BEGIN")
        return
    # Writers of this process queue on a lock first: SQLite's own wait polls in sleeps
    # of up to 100 ms, which makes a busy table feel slow. Other processes (the CLI)
    # still meet SQLite's lock.
    connection.info["writer"] = WRITER.acquire(timeout=WRITER_WAIT)
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    except Exception:
        _release_writer(connection)
        raise


READ_FIRST = "companion_read_first"


def read_first() -> None:
    """Begin the session's next transaction as a plain read, even in a write request.

    For writes that check first and then store in a short transaction of their own,
    which confirms that nothing changed meanwhile (``games.write``): the check then
    does not hold the write lock that every other phone's write waits for. Call it
    before the transaction's first query.
    """
    db.session.connection(execution_options={READ_FIRST: True})


WRITER = threading.Lock()
WRITER_WAIT = 30  # seconds; past that, leave the waiting to SQLite


@event.listens_for(Engine, "commit")
@event.listens_for(Engine, "rollback")
def _release_writer(connection) -> None:
    """Let the next writer in once a write transaction ends."""
    if connection.info.pop("writer", False):
        WRITER.release()
