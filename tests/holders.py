"""Another program or another worker holding the app's database, as the fault tests
provoke it: a write transaction of its own (on PostgreSQL, table locks), or SQLite's
writer lock file."""

import contextlib
import fcntl
import os
import sqlite3

import pytest
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from companion.db import db


def database_path(app) -> str:
    """The app's SQLite file."""
    with app.app_context():
        return db.engine.url.database


@contextlib.contextmanager
def held_by_another_program(app):
    """Hold a write transaction on the app's database from another connection."""
    with app.app_context():
        url = db.engine.url
    if url.get_backend_name() == "postgresql":
        with locked_by_psql(url):
            yield
        return
    other = sqlite3.connect(database_path(app), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


@contextlib.contextmanager
def held_by_another_worker(app):
    """Hold the writer lock file that the server's worker processes queue on."""
    descriptor = os.open(database_path(app) + ".writer", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def locked_by_psql(url):
    """PostgreSQL: another program's transaction locks every table against writers."""
    engine = create_engine(url, poolclass=NullPool)
    tables = ", ".join(f'"{table.name}"' for table in db.metadata.sorted_tables)
    try:
        with engine.connect() as other:
            other.exec_driver_sql(f"LOCK TABLE {tables} IN EXCLUSIVE MODE")  # reads go on
            yield
            other.rollback()
    finally:
        engine.dispose()


HOLDERS = [
    held_by_another_program,
    pytest.param(held_by_another_worker, marks=pytest.mark.sqlite_only("the writer lock file")),
]
