"""Importing a backup while the table plays: phones keep writing, all or nothing.

One import at a time: test_backup_turn.py.
"""

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import timedelta

import pytest
from backups import export, household, shifted, snapshot, upload, without_time
from conftest import TESTS, make_app
from driver import add_players, choose, pending_of, start_match
from sqlalchemy import insert, select, update

from companion import derived, store
from companion.backup import apart, load
from companion.backup.check import read_backup
from companion.backup.columns import VERSION
from companion.db import db
from companion.models import Match, Player, utcnow
from companion.storage import imports as engines
from companion.storage.sqlite import writer_lock


@pytest.fixture
def document(client):
    """A household's history as a file whose matches are all new to ``client``'s database."""
    household(client)
    return shifted(export(client))


def database_path(app) -> str:
    with app.app_context():
        return db.engine.url.database


@pytest.mark.sqlite_only("SQLite's writer lock (PostgreSQL: test_backup_postgresql.py)")
def test_staging_leaves_the_phones_free_to_write(app, client, document, monkeypatch):
    path = database_path(app)
    seen = []
    take = load.Rows.take

    def while_staging(rows):
        # What a phone's write needs: the writers' lock, then SQLite's write lock.
        writer = writer_lock(path)
        seen.append(writer.acquire(timeout=0))
        writer.release()
        with sqlite3.connect(path, timeout=0) as other:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE player SET archived = archived")
            other.rollback()
            seen.append(True)
        return take(rows)

    monkeypatch.setattr(load.Rows, "take", while_staging)
    assert upload(client, document).status_code == 303
    assert seen and all(seen)


@pytest.mark.sqlite_only("SQLite's pragmas (PostgreSQL: test_backup_postgresql.py)")
def test_a_merge_that_fails_midway_leaves_nothing(app, client, document, monkeypatch):
    before = snapshot(app)
    statement = load.merge_statement

    def failing(model, *args):
        if model is load.derived.PlayerMatchStat:  # the last table: the rest is written
            raise RuntimeError("the power went out")
        return statement(model, *args)

    monkeypatch.setattr(load, "merge_statement", failing)
    with app.app_context(), pytest.raises(RuntimeError):
        load.import_backup(read_backup(json.dumps(document).encode()))
    assert snapshot(app) == before
    with app.app_context():  # the pooled connection is left as it was found
        raw = db.engine.raw_connection()
        try:
            assert raw.driver_connection.execute("PRAGMA foreign_keys").fetchone() == (1,)
            temp = "SELECT name FROM temp.sqlite_master WHERE type = 'table'"
            assert raw.driver_connection.execute(temp).fetchall() == []
        finally:
            raw.close()


CRASH = """
import os, sys
sys.path.insert(0, {tests!r})
from conftest import testing_config
from companion import create_app
from companion.backup import apart, load
from companion.backup.check import read_backup
from companion.backup.columns import VERSION

statement = load.merge_statement
def crash(model, *args):
    if model is load.derived.PlayerGameStat:  # plays and all are in, not committed
        os._exit(9)
    return statement(model, *args)
load.merge_statement = crash
app = create_app(testing_config("unused", SQLALCHEMY_DATABASE_URI={url!r}))
with app.app_context():
    load.import_backup(read_backup(open({file!r}, "rb").read()))
"""


def test_a_process_killed_during_the_merge_leaves_nothing(app, document, tmp_path):
    file = tmp_path / "backup.json"
    file.write_text(json.dumps(document))
    before = snapshot(app)
    url = app.config["SQLALCHEMY_DATABASE_URI"]  # an SQLite file, or PostgreSQL
    script = CRASH.format(tests=str(TESTS), url=url, file=str(file))
    crashed = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], check=False)
    assert crashed.returncode == 9
    assert snapshot(app) == before
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


@pytest.mark.sqlite_only("only SQLite's copy holds the phones up")
@pytest.mark.app_config(IMPORT_LOCK_BUDGET=0, IMPORT_QUIET=3600)
def test_a_big_import_while_someone_plays_is_refused_on_the_page(app, client, document):
    add_players(client, "Zoe")  # a write a moment ago: someone is at the table
    before = snapshot(app)
    response = upload(client, document)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "Someone is playing right now, and this backup is big" in page
    assert 'aria-invalid="true"' in page
    assert snapshot(app) == before


def entered_long_ago(app) -> None:
    """Every entry stamped two hours ago, as if nobody had played since."""
    with app.app_context():
        for model in store.ENTRIES:
            db.session.execute(update(model).values(created_at=utcnow() - timedelta(hours=2)))
        db.session.commit()


@pytest.mark.sqlite_only("only SQLite's copy holds the phones up")
@pytest.mark.app_config(IMPORT_LOCK_BUDGET=0, IMPORT_QUIET=3600)
def test_a_big_import_when_nobody_played_for_a_while_goes_ahead(app, client, document):
    entered_long_ago(app)
    path = database_path(app)
    os.utime(path)  # the file changed just now (a start-up's migration): nobody played
    assert upload(client, document).status_code == 303


@pytest.mark.sqlite_only("only SQLite's copy holds the phones up")
@pytest.mark.app_config(IMPORT_LOCK_BUDGET=0, IMPORT_QUIET=1)
def test_the_command_line_waits_for_a_quiet_moment(app, client, document, tmp_path):
    file = tmp_path / "backup.json"
    file.write_text(json.dumps(document))
    entered_long_ago(app)
    add_players(client, "Zoe")
    written = time.time()  # the last entry, Zoe
    result = app.test_cli_runner().invoke(args=["import", str(file)])
    assert result.exit_code == 0, result.output
    assert "Someone is playing: waiting for a quiet moment" in result.output
    assert "Matches: 2 added" in result.output
    assert time.time() - written >= 1  # a second without writes came first


def test_ids_follow_the_matches_already_there(app, tmp_path):
    source = make_app(tmp_path / "source.sqlite").test_client()
    household(source)
    target = app.test_client()
    ids = add_players(target, "Yan", "Zoe")
    start_match(target, ids)  # match 1 here already
    phone = app.test_client()  # imports, and so holds the player link of what is unfinished
    assert upload(phone, export(source)).status_code == 303
    with app.app_context():
        pro = db.session.scalar(db.select(Match).where(Match.pro))
        assert pro.id == 3
    pending = pending_of(phone, pro.id)
    assert pending is not None  # the round that waits for Anna's row choice
    assert choose(target, pro.id, pending.player, 1).status_code == 403
    assert choose(phone, pro.id, pending.player, 1).status_code == 303
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


# --- a big file is imported by a helper process ----------------------------------------


@pytest.mark.app_config(IMPORT_APART_FROM=0)
def test_a_big_file_is_imported_by_a_helper_process(app, client, document, monkeypatch):
    calls = []
    monkeypatch.setattr(apart, "check_and_import", lambda *args: calls.append(args))  # not here
    response = upload(client, document)
    assert response.status_code == 303
    assert calls == []  # the helper did the work, in its own process
    page = client.get("/backup").get_data(as_text=True)
    assert "Players added: 0" in page and "Matches added: 2" in page
    refused = upload(client, {**document, "version": VERSION + 1})
    assert refused.status_code == 422  # its refusals come back whole, with the message
    newer = f"format version {VERSION + 1}, from a newer companion"
    assert newer in refused.get_data(as_text=True)


@pytest.mark.app_config(IMPORT_APART_FROM=0)
@pytest.mark.parametrize(
    "name, reason",
    [
        ("M" * 31, "Ein Name hat höchstens 30 Zeichen."),
        ("Anna\u200d", "Ein Name darf keine unsichtbaren Zeichen"),
    ],
)
def test_a_helper_refuses_a_name_in_the_page_language(app, client, document, name, reason):
    """The finding: a big file with a 31-character name answered 500 (KeyError: 'babel'),
    the helper's app having no Babel. The reason now travels untranslated and is said in
    the language of the page that uploaded it, as for a small file."""
    client.set_cookie("lang", "de")
    before = snapshot(app)
    bad = {**document, "players": [*document["players"], {**document["players"][0], "name": name}]}
    response = upload(client, bad)
    assert response.status_code == 422
    assert reason in response.get_data(as_text=True)
    assert "ist kein brauchbarer Name" in response.get_data(as_text=True)
    assert snapshot(app) == before


def test_a_helper_that_dies_imports_nothing_and_says_so(app, client, document, monkeypatch):
    app.config["IMPORT_APART_FROM"] = 0
    before = snapshot(app)

    def broken(self, *args, **kwargs):
        raise BrokenProcessPool("killed")

    monkeypatch.setattr(ProcessPoolExecutor, "submit", broken)
    response = upload(client, document)
    assert response.status_code == 422
    assert "The import stopped before it was done" in response.get_data(as_text=True)
    assert snapshot(app) == before


# --- the same import on any database ----------------------------------------------------


def foreign_key_problems(app) -> list:
    """SQLite's own check of every foreign key in the database."""
    with app.app_context():
        raw = db.engine.raw_connection()
        try:
            return raw.driver_connection.execute("PRAGMA foreign_key_check").fetchall()
        finally:
            raw.close()


@pytest.mark.sqlite_only("SQLite's shortcut")
def test_the_neutral_copy_gives_what_the_sqlite_shortcut_gives(app, tmp_path, monkeypatch):
    source = make_app(tmp_path / "source.sqlite").test_client()
    household(source)
    document = export(source)
    shortcut = make_app(tmp_path / "shortcut.sqlite")
    assert upload(shortcut.test_client(), document).status_code == 303
    with shortcut.app_context():
        derived_rows = derived.stored_rows()
    monkeypatch.setitem(engines.SQLITE_SHORTCUTS, "foreign_keys_off", False)
    assert upload(app.test_client(), document).status_code == 303
    for installation in (app, shortcut):  # the same inputs, the same derived rows
        assert without_time(export(installation.test_client())) == without_time(document)
        with installation.app_context():
            assert derived.stored_rows() == derived_rows
    assert foreign_key_problems(app) == foreign_key_problems(shortcut) == []
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


def test_the_neutral_copy_has_its_keys_checked(app, client, document, monkeypatch):
    monkeypatch.setitem(engines.SQLITE_SHORTCUTS, "foreign_keys_off", False)

    def astray(tables):  # every player of the file mapped to an id nobody has
        staged = tables[Player]
        wrong = select(staged.c.id, Player.id + 1000).join(
            Player, Player.name_key == staged.c.name_key
        )
        return insert(tables["ids"]).from_select(["number", "id"], wrong)

    monkeypatch.setattr(load, "map_players", astray)
    before = snapshot(app)
    response = upload(client, document)
    assert response.status_code == 422
    assert "The database changed or was busy during the import" in response.get_data(as_text=True)
    assert snapshot(app) == before
