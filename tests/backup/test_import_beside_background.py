"""An import beside the background process's writes (issue 55): just after a 3,000-match
import, 2 of 20 small imports got 503 while the background caught up. The import waits
for the background's write, as a table's round does, and goes through.

The test holds a background write at its last moment, its commit, until the import
waits for it: on SQLite the writer lock is let go there, before SQLite's own lock,
so the import's copy met a commit landing inside its transaction and failed at once.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import pytest
from backups import backup_file, upload
from driver import add_players, enter_round, start_game, start_match
from sqlalchemy import event, func, select, text

from companion import background
from companion.db import db
from companion.models import Match
from companion.storage.sqlite import writer_lock

pytestmark = [pytest.mark.database, pytest.mark.app_config(LUCK_APART=True)]

WAIT = 30  # seconds a step may take at most before the test says which did not come


@pytest.fixture
def round_for_the_background(client):
    """A round whose luck the background has yet to write (LUCK_APART)."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [10, 30, 50, 70]).status_code == 303
    assert enter_round(client, match_id, {ids[0]: 11, ids[1]: 31}).status_code == 303


class HeldCommit:
    """The background's next commit held (after SQLAlchemy's ``commit`` hooks, so on SQLite
    after the writer lock is let go) until ``go``; ``held`` once it waits, ``done`` once its
    look is over."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.held, self.go, self.done = threading.Event(), threading.Event(), threading.Event()

    def commit(self, connection) -> None:
        if threading.current_thread() is self.thread and not self.held.is_set():
            self.held.set()
            assert self.go.wait(WAIT), "the import never waited for the background's write"


@contextmanager
def background_write_held(app):
    """A look of the background process (here in a thread), its first write held at its
    commit while the block runs; the look is over after the block."""
    hold = HeldCommit()
    failed = []

    def look() -> None:
        try:
            with app.app_context():
                background.Matches(db.engine, os.getppid(), quiet=0).refresh()
        except BaseException as error:
            failed.append(error)
        finally:
            hold.done.set()

    with app.app_context():
        engine = db.engine
    event.listen(engine, "commit", hold.commit)
    hold.thread = threading.Thread(target=look)
    hold.thread.start()
    try:
        assert hold.held.wait(WAIT), "the background wrote nothing"
        yield hold
    finally:
        hold.go.set()
        hold.thread.join(WAIT)
        event.remove(engine, "commit", hold.commit)
    assert not failed and hold.done.is_set()


@contextmanager
def going_on_once_the_copy_waits(app, hold: HeldCommit, importing: threading.Thread):
    """SQLite: the held commit goes on once the import's copy, in its turn, asks SQLite for
    the write (``BEGIN IMMEDIATE``, which waits for a commit still landing) or reads in a
    transaction begun before it landed; then that read's transaction goes on after it."""
    with app.app_context():
        engine = db.engine
        writer = writer_lock(engine.url.database)

    def in_the_copy() -> bool:
        return threading.current_thread() is importing and writer.threads.locked()

    def before(conn, cursor, statement, *args) -> None:
        if in_the_copy() and statement.startswith("BEGIN IMMEDIATE"):
            hold.go.set()

    def after(conn, cursor, statement, *args) -> None:
        if in_the_copy() and not statement.startswith("BEGIN") and not hold.go.is_set():
            hold.go.set()
            assert hold.done.wait(WAIT), "the background's write never ended"

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)


def import_beside(app, hold: HeldCommit) -> int:
    """Import a small file (another phone) while the background's write is held; let the
    write go on once the import waits for it. The import's status."""
    answers = []

    def post() -> None:
        phone = app.test_client()
        answers.append(upload(phone, backup_file()).status_code)  # two new matches

    importing = threading.Thread(target=post)
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        with going_on_once_the_copy_waits(app, hold, importing):
            importing.start()
            importing.join(WAIT)
    else:
        importing.start()
        wait_for_a_lock_wait(app)
        hold.go.set()
        importing.join(WAIT)
    assert not importing.is_alive()
    return answers[0]


def wait_for_a_lock_wait(app) -> None:
    """PostgreSQL: until a session of this database waits for a lock (the import's, for
    the background's open write)."""
    query = text(
        "SELECT count(*) FROM pg_locks JOIN pg_stat_activity USING (pid) "
        "WHERE NOT granted AND datname = current_database()"
    )
    with app.app_context(), db.engine.connect() as connection:
        for _ in range(WAIT * 100):
            if connection.scalar(query):
                return
            connection.rollback()
            threading.Event().wait(0.01)
    raise AssertionError("the import never waited for the background's write")


def test_an_import_waits_for_the_backgrounds_write_and_goes_through(app, round_for_the_background):
    with background_write_held(app) as hold:
        assert import_beside(app, hold) == 303
    with app.app_context():
        assert db.session.scalar(select(func.count(Match.id))) == 3  # the table's, and two
