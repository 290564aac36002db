"""Each database's own code, in one room: ``sqlite`` and ``postgresql``, the import's
differences (``imports``) and the live streams' feed of matches' stamps (``feed``).

Which database the app runs on is asked here alone: the rest of the app calls the named
functions below and never looks at a dialect. Nothing above ``companion.store`` imports
this package but ``store`` and the start-up (the import-linter contract says so).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext
from functools import partial

from flask import Flask
from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool

from companion.db import db
from companion.storage import postgresql, sqlite


def is_sqlite(bind: Connection | Engine) -> bool:
    """True when this connection or engine is SQLite's."""
    return bind.dialect.name == "sqlite"


def is_postgresql(bind: Connection | Engine) -> bool:
    """True when this connection or engine is PostgreSQL's."""
    return bind.dialect.name == "postgresql"


def sqlite_uri(uri: str | URL) -> bool:
    """True when a database URI names SQLite (a file, or in memory): before any engine."""
    return make_url(uri).get_backend_name() == "sqlite"


def server_connection(uri: str | URL, wait: float) -> Callable[[], None]:
    """The start's check of a database server: a function that connects once and lets
    go, waiting ``wait`` seconds at most on PostgreSQL. Raises ImportError at once when
    the driver is missing; the function raises the driver's error (DBAPIError)."""
    url = make_url(uri)
    options = {"connect_timeout": wait} if url.get_backend_name() == "postgresql" else {}
    engine = create_engine(url, poolclass=NullPool, connect_args=options)

    def connect() -> None:
        try:
            engine.connect().close()
        finally:
            engine.dispose()

    return connect


def sqlite_connect_args(uri: str | URL) -> tuple[list, dict]:
    """What SQLite's driver is given for this URI: the file (or ``file:`` URI), options."""
    url = make_url(uri)
    return url.get_dialect()().create_connect_args(url)


def sqlite_file_of(uri: str | URL) -> str | None:
    """The SQLite file a database URI names (None in memory, or on another database)."""
    url = make_url(uri)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return url.database


def init_app(app: Flask) -> None:
    """Bind the database's own hooks to the app's engines (SQLite's; PostgreSQL has none)."""
    with app.app_context():
        engines = list(db.engines.values())
    for engine in engines:
        if is_sqlite(engine):
            sqlite.bind_hooks(engine)


def lock_rows(session, match_ids, every_match: bool, wait: float) -> None:
    """Queue a write behind the others of the same matches (PostgreSQL's row locks).

    SQLite has one writer at a time: there the writer lock holds every match.
    """
    if is_postgresql(session.connection()):
        postgresql.lock_rows(session, match_ids, every_match, wait)


def in_commit_order(connection: Connection) -> None:
    """Before adding match rows: on PostgreSQL, wait for the turn to add them, until commit.
    (SQLite has one writer at a time.)"""
    if is_postgresql(connection):
        postgresql.in_commit_order(connection)


def keys_kept_while_migrating(connection: Connection):
    """The migrations run on ``connection`` (migrations/env.py): on SQLite with its foreign
    keys off, checked after (``sqlite.foreign_keys_off``): Alembic's batch mode copies a
    table and drops the old one, and with the keys on the drop deletes every row that
    refers to it (every seat and game of the matches). PostgreSQL alters in place."""
    return sqlite.foreign_keys_off(connection) if is_sqlite(connection) else nullcontext()


def migrating_alone(engine: Engine):
    """Servers starting together on one PostgreSQL migrate one after the other.
    (SQLite serves one machine, started once: nothing to wait for.)"""
    return postgresql.migrating_alone(engine) if is_postgresql(engine) else nullcontext()


def checkpoint_in_background(app: Flask) -> threading.Thread | None:
    """A server process checkpoints SQLite's write-ahead log from a thread of its own
    (``sqlite.checkpoint_in_background``). Another database: no thread."""
    with app.app_context():
        engine = db.engine
    return sqlite.checkpoint_in_background(engine) if is_sqlite(engine) else None


def follower(engine: Engine, every: float | None = None) -> Callable:
    """How the live streams' watcher follows this database's changes (``feed.Feed``):
    on SQLite a look at its data_version every ``every`` seconds (None: ``SQLITE_EVERY``,
    a stream's), on PostgreSQL its notifications."""
    if is_postgresql(engine):
        return postgresql.listen
    return partial(sqlite.follow_data_version, every=every or sqlite.SQLITE_EVERY)
