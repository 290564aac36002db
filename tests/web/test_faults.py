"""A busy, read-only or full database: 503 with what was typed kept, nothing half-saved.

"Busy" is a write transaction held by another program on the same file (SQLite's own
lock, as the sqlite3 shell would hold it) or by another server process (the writer
lock file beside the database). Read-only and full are made at the SQLite layer,
which root cannot override: ``PRAGMA query_only`` on the app's connections, and
``PRAGMA max_page_count`` for a database that cannot grow. Real read-only and full
file systems are in ``test_faults_mounts.py``.
"""

import contextlib
import errno
import io
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import conftest
import psycopg
import pytest
from conftest import make_app
from driver import add_players, enter_round
from flask import abort
from holders import HOLDERS, database_path, held_by_another_program
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError

from companion import create_app
from companion.db import DatabaseBusy, DatabaseUnavailable, db
from companion.models import Match, PendingCard, Play, Player, Round
from companion.startup import StorageError
from companion.web.faults import fault_of

HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
WAIT = 0.2  # seconds a write waits here before its 503 (WRITE_WAIT)


def count(app, model) -> int:
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(model))


def player_names(app) -> list[str]:
    with app.app_context():
        return sorted(db.session.scalars(db.select(Player.name)))


# --- a busy database ----------------------------------------------------------------


@pytest.mark.app_config(WRITE_WAIT=WAIT)
@pytest.mark.parametrize("holder", HOLDERS)
def test_a_new_player_while_the_database_is_busy_gets_a_page_to_send_again(
    app, client, holder, caplog
):
    with holder(app):
        response = client.post("/players/", data={"name": "Zoe"})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"
    page = response.get_data(as_text=True)
    assert "busy storing something else" in page and "Nothing was saved" in page
    assert ("name", "Zoe") in HIDDEN.findall(page)  # what was typed, ready to send again
    assert 'action="/players/"' in page
    assert player_names(app) == []
    assert "POST /players/ answered 503 (busy)" in caplog.text
    # Sending the page's form again once the database is free stores the player.
    again = dict(HIDDEN.findall(page))
    assert client.post("/players/", data=again).status_code == 303
    assert player_names(app) == ["Zoe"]


@pytest.mark.app_config(WRITE_WAIT=WAIT)
def test_the_busy_page_speaks_german(app, client):
    with held_by_another_program(app):
        response = client.post("/players/", data={"name": "Zoe"}, headers={"Accept-Language": "de"})
    assert response.status_code == 503
    page = response.get_data(as_text=True)
    assert "Nichts wurde gespeichert" in page and "Noch einmal senden" in page


@pytest.mark.app_config(WRITE_WAIT=WAIT)
def test_htmx_gets_a_notice_and_the_form_on_screen_stays(app, client, table):
    (anna, ben, cleo), match_id = table
    with held_by_another_program(app):
        response = client.post(
            f"/matches/{match_id}/rounds",
            data={
                f"card-{anna}": "50",
                f"card-{ben}": "51",
                f"card-{cleo}": "52",
                "game": "1",
                "round": "1",
            },
            headers={"HX-Request": "true"},
        )
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"
    notice = response.get_data(as_text=True)
    assert 'id="server-message"' in notice and "send it again" in notice
    assert "<form" not in notice and "<html" not in notice
    assert count(app, PendingCard) == 0 and count(app, Round) == 0


@pytest.mark.app_config(WRITE_WAIT=WAIT)
@pytest.mark.parametrize("holder", HOLDERS)
def test_what_can_be_refused_without_the_write_lock_is_refused_at_once(app, client, table, holder):
    """Checks that need no write lock answer as usual while another write holds it."""
    (anna, _, _), match_id = table
    stranger = app.test_client()  # a phone without the match's player link
    with holder(app):
        assert client.post("/players/", data={"name": "anna"}).status_code == 422
        assert client.post("/players/", data={"name": ""}).status_code == 422
        assert client.post(f"/players/{anna}/name", data={"name": "Ben"}).status_code == 422
        bad_match = {"seat_1": str(anna), "end_kind": "more_than", "end_value": "66"}
        assert client.post("/matches/", data=bad_match).status_code == 422
        round_form = {f"card-{anna}": "200", "game": "1", "round": "1"}
        assert client.post(f"/matches/{match_id}/rounds", data=round_form).status_code == 422
        assert stranger.post(f"/matches/{match_id}/invite/renew").status_code == 403
        assert stranger.post(f"/matches/{match_id}/undo", data={}).status_code == 403
        assert client.post(f"/matches/{match_id}/me", data={"player": anna}).status_code == 303


@pytest.mark.app_config(WRITE_WAIT=WAIT)
def test_a_valid_new_match_while_busy_is_a_503_that_keeps_the_seats(app, client):
    anna, ben = add_players(client, "Anna", "Ben")
    form = {
        "seat_1": str(anna),
        "seat_2": str(ben),
        "new_player": "Cleo",
        "end_kind": "games",
        "end_value": "3",
    }
    with held_by_another_program(app):
        response = client.post("/matches/", data=form)
    assert response.status_code == 503
    assert set(form.items()) <= set(HIDDEN.findall(response.get_data(as_text=True)))
    assert count(app, Match) == 0 and player_names(app) == ["Anna", "Ben"]


@pytest.mark.app_config(WRITE_WAIT=WAIT)
def test_an_import_while_busy_is_a_503_without_a_second_wait(app, client):
    """The import's answer no longer queries the locked database again."""
    add_players(client, "Anna")
    backup = client.get("/backup/export.json").data
    statements: list[str] = []
    with app.app_context():
        listen_to(db.engine, statements)
    with held_by_another_program(app):
        response = client.post("/backup/import", data={"file": (io.BytesIO(backup), "backup.json")})
    assert response.status_code == 503
    page = response.get_data(as_text=True)
    assert "Back" in page and "Send again" not in page  # a file is chosen again
    # One wait, not two: on SQLite the import's copy waits for the writer once, on its own
    # staging connection (BEGIN IMMEDIATE, issue 55), and the page it answers with asks
    # the database nothing.
    with app.app_context():
        waits = 1 if db.engine.dialect.name == "sqlite" else 0
    assert sum("BEGIN IMMEDIATE" in sql for sql in statements) == waits


def listen_to(engine, statements: list[str]) -> None:
    """Record every statement the engine runs into ``statements``."""

    @event.listens_for(engine, "before_cursor_execute")
    def record(_conn, _cursor, statement, *_args):
        statements.append(statement)


# --- the error pages -----------------------------------------------------------------


def fail_with(code: int) -> None:
    """What a view does that ends in ``code``."""
    if code == 500:
        raise RuntimeError("a bug")
    if code == 503:
        raise DatabaseBusy("held by another write")
    abort(code)


@pytest.mark.app_config(PROPAGATE_EXCEPTIONS=False)
@pytest.mark.parametrize("code", [403, 404, 500, 503])
def test_error_pages_never_touch_the_database(app, code):
    app.add_url_rule(
        f"/fail/{code}", f"fail_{code}", lambda: fail_with(code), methods=["GET", "POST"]
    )
    statements: list[str] = []
    with app.app_context():
        listen_to(db.engine, statements)
    client = app.test_client()
    for method in (client.get, client.post):
        response = method(f"/fail/{code}", headers={"Accept-Language": "de"})
        assert response.status_code == code
        assert "<html" in response.get_data(as_text=True)
    assert statements == []


# --- read-only and full, at the SQLite layer -------------------------------------------


@contextlib.contextmanager
def on_every_connection(app, pragma: str):
    """Run ``pragma`` on each of the app's new connections; drop the pooled ones."""
    with app.app_context():
        engine = db.engine

    def apply(dbapi_connection, _record):
        dbapi_connection.execute(pragma)

    event.listen(engine, "connect", apply)
    engine.dispose()
    try:
        yield
    finally:
        event.remove(engine, "connect", apply)
        engine.dispose()


@pytest.mark.sqlite_only("PRAGMA query_only (PostgreSQL: test_postgresql.py)")
def test_a_database_turned_read_only_answers_503_and_still_shows_pages(app, client, table):
    (anna, ben, cleo), match_id = table
    with on_every_connection(app, "PRAGMA query_only = ON"):
        response = client.post("/players/", data={"name": "Zoe"})
        assert response.status_code == 503
        assert "database is read-only" in response.get_data(as_text=True)
        cards = {anna: 50, ben: 51, cleo: 52}
        assert enter_round(client, match_id, cards).status_code == 503
        assert client.get(f"/matches/{match_id}").status_code == 200
        assert client.get("/players/").status_code == 200
    assert count(app, Round) == 0 and player_names(app) == ["Anna", "Ben", "Cleo"]
    assert enter_round(client, match_id, cards).status_code == 303


def fill_to_the_limit(app) -> None:
    """Make the database unable to grow, then fill what is left of its pages."""
    raw = sqlite3.connect(database_path(app), isolation_level=None)
    pages = raw.execute("PRAGMA page_count").fetchone()[0]
    raw.execute(f"PRAGMA max_page_count = {pages}")
    number = 0
    with pytest.raises(sqlite3.OperationalError, match="full"):
        while True:
            number += 1
            raw.execute(
                "INSERT INTO player (name, name_key, archived, created_at) "
                "VALUES (?, ?, 0, '2025-01-01 00:00:00')",
                (f"filler {number:05}", f"filler {number:05}"),
            )
    raw.close()


@pytest.mark.sqlite_only("PRAGMA max_page_count")
def test_a_full_database_answers_503_saves_nothing_and_keeps_serving(app, client):
    anna, ben = add_players(client, "Anna", "Ben")
    fill_to_the_limit(app)
    players = count(app, Player)
    with app.app_context():
        pages = db.session.execute(db.text("PRAGMA page_count")).scalar()
    form = {"seat_1": str(anna), "seat_2": str(ben), "new_player": "Zoe", "end_value": "66"}
    with on_every_connection(app, f"PRAGMA max_page_count = {pages}"):
        response = client.post("/matches/", data=form)
        assert response.status_code == 503
        assert "disk of the computer it runs on is full" in response.get_data(as_text=True)
        assert client.get("/players/").status_code == 200
        assert client.get("/").status_code == 200
    # The match, its seats and the new player were one write: none of it is there.
    assert count(app, Match) == 0 and count(app, Player) == players
    assert count(app, Play) == 0


# --- at start: one line that says which path and what to do ---------------------------


def test_a_read_only_database_stops_the_start_in_one_line(tmp_path):
    database = tmp_path / "companion.sqlite"
    make_app(database)  # the database exists, then is opened read-only by SQLite
    url = f"sqlite:///file:{database}?mode=ro&uri=true"
    with pytest.raises(StorageError) as stopped:
        create_app(conftest.testing_config(database, SQLALCHEMY_DATABASE_URI=url))
    message = stopped.value.format_message()
    assert "\n" not in message
    assert f"The database {database} is read-only" in message
    assert "COMPANION_DATABASE_URL" in message


def test_a_folder_that_cannot_be_made_stops_the_start_in_one_line(tmp_path):
    """A file where the instance folder should be: the same for root as for anyone."""
    (tmp_path / "instance").write_text("not a folder")
    database = tmp_path / "instance" / "companion.sqlite"
    with pytest.raises(StorageError) as stopped:
        create_app(conftest.testing_config(database))
    message = stopped.value.format_message()
    assert "\n" not in message and f"Cannot create the folder {database.parent}" in message


def test_a_secret_key_that_cannot_be_written_stops_the_start_in_one_line(tmp_path):
    (tmp_path / "instance").write_text("not a folder")
    key = tmp_path / "instance" / "secret_key"
    config = conftest.testing_config(
        tmp_path / "companion.sqlite", SECRET_KEY=None, SECRET_KEY_FILE=key
    )
    with pytest.raises(StorageError) as stopped:
        create_app(config)
    message = stopped.value.format_message()
    assert "\n" not in message and "COMPANION_SECRET_KEY" in message


def test_flask_commands_print_the_line_without_a_traceback(tmp_path):
    database = tmp_path / "companion.sqlite"
    make_app(database)
    env = {
        **os.environ,
        "COMPANION_DATABASE_URL": f"sqlite:///file:{database}?mode=ro&uri=true",
        "COMPANION_SECRET_KEY": "x",
    }
    flask = Path(sys.executable).with_name("flask")
    result = subprocess.run(
        [flask, "--app", "companion", "rebuild", "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: The database {database} is read-only: make it and its folder {tmp_path} "
        "writable for this user (SQLite writes files beside it), or set "
        "COMPANION_DATABASE_URL to another place."
    ]


@pytest.mark.parametrize(
    ("number", "fault"),
    [(errno.EROFS, "read-only"), (errno.EACCES, "read-only"), (errno.ENOSPC, "full")],
)
def test_a_writer_lock_file_that_cannot_be_opened_is_named_by_its_cause(number, fault):
    try:
        raise DatabaseUnavailable("lock file") from OSError(number, os.strerror(number))
    except DatabaseUnavailable as error:
        assert fault_of(error) == fault


@pytest.mark.parametrize(
    ("error", "fault"),
    [
        (psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"), "busy"),
        (psycopg.errors.DeadlockDetected("deadlock detected"), "busy"),
        (psycopg.errors.ReadOnlySqlTransaction("read-only transaction"), "read-only"),
        (psycopg.errors.DiskFull("could not extend file"), "full"),
        (psycopg.errors.AdminShutdown("terminating connection"), "unavailable"),
        (psycopg.OperationalError("connection failed: Connection refused"), "unavailable"),
        (psycopg.errors.UniqueViolation("duplicate key"), None),  # the request's own
        (psycopg.errors.NumericValueOutOfRange("integer out of range"), None),  # a bug: 500
        (psycopg.DataError("cannot contain NUL (0x00) bytes"), None),
    ],
)
def test_postgresql_errors_are_told_apart_by_their_sqlstate(error, fault):
    wrapped = DBAPIError.instance("SELECT 1", {}, error, psycopg.Error)
    assert fault_of(wrapped) == fault
