"""Another program or another worker holding the app's SQLite database, as the fault
tests provoke it: a write transaction of its own, or the writer lock file."""

import contextlib
import fcntl
import os
import sqlite3

from companion.db import db


def database_path(app) -> str:
    """The app's SQLite file."""
    with app.app_context():
        return db.engine.url.database


@contextlib.contextmanager
def held_by_another_program(app):
    """Hold a write transaction on the app's database from another connection."""
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


HOLDERS = [held_by_another_program, held_by_another_worker]
