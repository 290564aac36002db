"""A club on PostgreSQL: migrations, row locks, faults, copies, and apps sharing one database.

Runs with ``--database=postgresql`` only (the second run of ``make test``); the rest of
the suite runs there too, on the same server (tests/postgresql.py).
"""

import logging.config
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import conftest
import pytest
from driver import (
    add_players,
    enter_round,
    i_am,
    phone,
    score_game,
    start_game,
    start_match,
    tokens,
)
from flask import Flask
from flask_migrate import downgrade, upgrade
from phones import FormPhone, joined, start_server, stop
from servers import CSRF, ROOT
from sqlalchemy import create_engine, event, inspect, select, text
from sqlalchemy.pool import NullPool

from companion import create_app
from companion.backup.copies import copy_target
from companion.db import db
from companion.derived import GameResult, in_commit_order, ratings
from companion.models import Match, Play, Player, Round
from companion.startup import StorageError, check_storage
from companion.storage import checkpoint_in_background
from companion.storage.postgresql import MATCH_ROWS_LOCK
from companion.store import writing

pytestmark = pytest.mark.postgresql

WAIT = 0.3  # seconds a write waits for a row lock here before its 503 (WRITE_WAIT)


def other_connection(app):
    """A connection of another program (psql, another server) to the app's database."""
    with app.app_context():
        url = db.engine.url
    return create_engine(url, poolclass=NullPool).connect()


def count(app, model) -> int:
    with app.app_context():
        return db.session.scalar(select(db.func.count()).select_from(model))


# --- migrations ------------------------------------------------------------------------


@pytest.fixture
def empty_app(monkeypatch):
    """An app on a PostgreSQL database without tables, for the migrations (the newest
    against the models: test_app.py, on both engines)."""
    # env.py configures logging from alembic.ini; not our business inside pytest.
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)
    url = conftest.database_url("empty", empty=True)
    return create_app(conftest.testing_config("unused", SQLALCHEMY_DATABASE_URI=url))


def test_migrations_keep_the_matches_of_an_older_database(empty_app):
    """The links' migration fills in tokens for matches already there, as on SQLite."""
    with empty_app.app_context():
        upgrade(revision="74c698745d48")  # players, matches, games: no links yet
        db.session.execute(
            text(
                "INSERT INTO match (created_at, end_kind, end_value, pro, version) VALUES "
                "(now(), 'games', 3, false, 0), (now(), 'more_than', 66, true, 4)"
            )
        )
        db.session.commit()
        upgrade()
        rows = db.session.execute(
            text("SELECT version, table_version, player_token, watch_token FROM match ORDER BY id")
        ).all()
        assert [row[:2] for row in rows] == [(0, 0), (4, 0)]
        tokens = [token for row in rows for token in row[2:]]
        assert len(set(tokens)) == 4 and all(len(token) >= 43 for token in tokens)
        db.session.remove()
        downgrade(revision="base")
        assert inspect(db.engine).get_table_names() == ["alembic_version"]


# --- the write path: a row lock per match ---------------------------------------------


@pytest.mark.app_config(WRITE_WAIT=WAIT)
def test_a_write_waits_for_its_matchs_row_lock_then_answers_503(app, client, table):
    """Another write holding the match: 503 after WRITE_WAIT, nothing stored; other
    matches and new players go on meanwhile; once it is free the round goes in."""
    (anna, ben, cleo), match_id = table
    other_match = start_match(client, [anna, ben])
    assert start_game(client, other_match, [10, 20, 30, 40]).status_code == 303
    cards = {anna: 50, ben: 51, cleo: 52}
    with other_connection(app) as other:
        other.execute(select(Match.id).where(Match.id == match_id).with_for_update())
        started = time.monotonic()
        response = enter_round(client, match_id, cards)
        waited = time.monotonic() - started
        assert enter_round(client, other_match, {anna: 41, ben: 42}).status_code == 303
        assert client.post("/players/", data={"name": "Zoe"}).status_code == 303
        other.rollback()
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"
    assert "busy storing something else" in response.get_data(as_text=True)
    assert WAIT <= waited < WAIT + 2
    assert count(app, Round) == 1  # the other match's round only
    assert enter_round(client, match_id, cards).status_code == 303
    assert count(app, Round) == 2


def test_two_writers_of_one_match_take_turns(app, table):
    """The second write to a match begins only when the first has committed."""
    _, match_id = table
    times: dict[str, float] = {}
    first_in = threading.Event()

    def write(name: str, hold: float) -> None:
        with app.app_context(), writing(match_id):
            times[f"{name} in"] = time.monotonic()
            first_in.set()
            time.sleep(hold)
            db.session.execute(
                Match.__table__.update().where(Match.id == match_id).values(pro=name == "second")
            )
        times[f"{name} out"] = time.monotonic()

    first = threading.Thread(target=write, args=("first", 0.5))
    first.start()
    assert first_in.wait(10)
    write("second", 0)
    first.join(10)
    assert times["second in"] >= times["first out"] - 0.05  # after the first's commit
    with app.app_context():
        assert db.session.get(Match, match_id).pro is True  # the second wrote last


def test_match_rows_are_added_one_writer_at_a_time(app):
    """The leaderboard's fingerprint needs match rows committed in the order of their ids."""
    with other_connection(app) as other, app.app_context():
        other.execute(select(db.func.pg_advisory_xact_lock(MATCH_ROWS_LOCK)))  # a writer
        db.session.execute(text("SET lock_timeout = '200ms'"))
        with pytest.raises(Exception, match="lock timeout"):
            in_commit_order(db.session.connection())
        db.session.rollback()
        other.rollback()  # done: the next writer's turn
        in_commit_order(db.session.connection())
        db.session.rollback()


def test_matches_finished_at_once_keep_the_ratings_of_matches_rated_in_order(app, client):
    """Four phones finish eight matches at once, the later ones first; the players are in
    several of them, so each rating depends on the matches finished in another write."""
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dora", "Emil")
    seated = [[ids[i % 5], ids[(i + 1) % 5], ids[(i + 3) % 5]] for i in range(8)]
    matches = [start_match(client, seats, end_kind="games", end_value=1) for seats in seated]
    phones = [phone(app, match_id, tokens(app, match_id)[0]) for match_id in matches]

    def finish(number: int) -> int:
        scores = dict(zip(seated[number], [(number * 7) % 11, 5, (number * 3) % 8], strict=True))
        return score_game(phones[number], matches[number], scores).status_code

    with ThreadPoolExecutor(4) as at_once:
        assert list(at_once.map(finish, reversed(range(8)))) == [303] * 8
    with app.app_context():
        connection = db.session.connection()
        rows = ratings.stored_from(connection, None)
        assert rows == ratings.all_rated(connection)
        assert {row.match_id for row in rows} == set(matches)


# --- faults and the start --------------------------------------------------------------


def test_a_read_only_database_answers_503_and_still_shows_pages(app, client, table):
    (anna, ben, cleo), match_id = table
    with app.app_context():
        engine = db.engine

    def read_only(dbapi_connection, _record):
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET default_transaction_read_only = on")
        dbapi_connection.commit()

    event.listen(engine, "connect", read_only)
    engine.dispose()
    try:
        response = client.post("/players/", data={"name": "Zoe"})
        assert response.status_code == 503
        assert "read-only" in response.text and "database server" in response.text
        assert enter_round(client, match_id, {anna: 50, ben: 51, cleo: 52}).status_code == 503
        assert client.get(f"/matches/{match_id}").status_code == 200
    finally:
        event.remove(engine, "connect", read_only)
        engine.dispose()
    assert count(app, Player) == 3 and count(app, Round) == 0


def test_after_the_server_dropped_every_connection_the_next_request_is_served(app, client):
    """A restart of the database server: pooled connections are tried before use."""
    assert client.get("/players/").status_code == 200  # a connection in the pool
    with other_connection(app) as other:
        other.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )
    assert client.get("/players/").status_code == 200
    assert client.post("/players/", data={"name": "Zoe"}).status_code == 303


def closed_port_url() -> str:
    """A PostgreSQL URL where no server listens."""
    server = conftest.POSTGRESQL["databases"].server
    return server.url("companion").replace(f":{server.port}/", ":9/")


def test_an_unreachable_server_stops_the_start_in_one_line():
    url = closed_port_url()
    with pytest.raises(StorageError) as refused:
        create_app(conftest.testing_config("unused", SQLALCHEMY_DATABASE_URI=url))
    line = refused.value.format_message()
    assert "\n" not in line
    assert "Cannot reach the database postgresql+psycopg://postgres@127.0.0.1:9/companion" in line
    assert "Connection refused" in line and "COMPANION_DATABASE_URL" in line


@pytest.mark.parametrize(
    "command",
    [
        ["-m", "flask", "--app", "companion", "rebuild"],
        ["-m", "companion.serve", "--host", "127.0.0.1", "--port", "0"],
    ],
)
def test_the_commands_and_the_server_say_it_without_a_traceback(command):
    env = {"COMPANION_DATABASE_URL": closed_port_url(), "COMPANION_SECRET_KEY": "k"}
    result = subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    output = (result.stdout + result.stderr).strip()
    assert "Traceback" not in output and len(output.splitlines()) == 1
    assert "Cannot reach the database" in output


def test_no_instance_folder_is_needed(tmp_path, app):
    """The database is on the server: nothing is made beside it (a secret key is set)."""
    other = Flask("other", instance_path=str(tmp_path / "instance"))
    other.config["SQLALCHEMY_DATABASE_URI"] = app.config["SQLALCHEMY_DATABASE_URI"]
    check_storage(other)
    assert not (tmp_path / "instance").exists()


# --- copies, restore and the backup page ----------------------------------------------


def test_no_automatic_copies_and_no_checkpoints(app):
    app.config["AUTO_BACKUP"] = True
    assert copy_target(app) is None
    assert checkpoint_in_background(app) is None


def test_the_backup_page_says_to_use_pg_dump(client):
    page = client.get("/backup").get_data(as_text=True)
    assert "The database is on a PostgreSQL server" in page and "pg_dump" in page
    german = client.get("/backup", headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert "pg_dump" in german and "PostgreSQL-Server" in german


def test_restore_refuses_in_one_line(runner, tmp_path):
    copy = tmp_path / "daily-2026-11-30.sqlite"
    copy.write_bytes(b"")
    result = runner.invoke(args=["restore", str(copy), "--yes"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: The database is on a PostgreSQL server: restore a pg_dump of it with "
        "pg_restore or psql there, not with this command.\n"
    )


# --- several apps on one database: what the database says decides ---------------------


@pytest.fixture
def second(app):
    """A second app (another server) on the same database as ``app``."""
    config = conftest.testing_config(
        "unused", SQLALCHEMY_DATABASE_URI=app.config["SQLALCHEMY_DATABASE_URI"]
    )
    return create_app(config)


def test_a_rename_on_one_app_shows_on_the_others_match_page(client, second, table):
    (anna, _ben, _cleo), match_id = table
    other = second.test_client()
    assert "Anna" in other.get(f"/matches/{match_id}").text  # kept in the second's memory
    assert client.post(f"/players/{anna}/name", data={"name": "Annika"}).status_code == 303
    page = other.get(f"/matches/{match_id}").text
    assert "Annika" in page and "Anna<" not in page


def test_a_new_match_with_a_deleted_matchs_id_is_its_own(app, client, second):
    """Ids come back after an import or a deletion; the other app's memory of the old
    match is not shown for the new one."""
    anna, ben, cleo, dan = add_players(client, "Anna", "Ben", "Cleo", "Dan")
    first = start_match(client, [anna, ben])
    other = second.test_client()
    assert "Anna" in other.get(f"/matches/{first}").text
    version = re.search(
        r'name="version" value="(\d+)"', client.get(f"/matches/{first}/delete").text
    )
    assert client.post(f"/matches/{first}/delete", data={"version": version[1]}).status_code == 303
    with app.app_context():  # an import would count on from the largest id: the same
        db.session.execute(text("SELECT setval(pg_get_serial_sequence('match', 'id'), 1, false)"))
        db.session.commit()
    assert start_match(client, [cleo, dan]) == first
    page = other.get(f"/matches/{first}").text
    assert "Cleo" in page and "Anna" not in page


def test_a_rebuild_that_puts_results_right_shows_on_every_app(app, client, second, runner):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=3)
    assert score_game(client, match_id, {anna: 3, ben: 9}).status_code == 303
    assert start_game(client, match_id, [10, 20, 30, 40]).status_code == 303
    with app.app_context():  # a stored result gone wrong
        db.session.execute(
            GameResult.__table__.update().where(GameResult.player_id == anna).values(bulls=30)
        )
        db.session.commit()
    other = second.test_client()
    assert ">30<" in other.get(f"/matches/{match_id}/scoreboard").text  # as stored
    result = runner.invoke(args=["rebuild"])
    assert result.exit_code == 0, result.output
    scoreboard = other.get(f"/matches/{match_id}/scoreboard").text
    assert ">30<" not in scoreboard and ">3<" in scoreboard


def test_a_game_finished_on_one_app_counts_on_the_others_leaderboard(client, second):
    anna, ben = add_players(client, "Anna", "Ben")
    other = second.test_client()
    assert "Anna" not in other.get("/leaderboard").text  # nobody has played: kept
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=1)
    assert score_game(client, match_id, {anna: 3, ben: 9}).status_code == 303
    assert "Anna" in other.get("/leaderboard").text


def test_a_card_sent_to_one_app_ends_the_quiet_polls_of_the_other(app, client, second, table):
    (anna, _ben, _cleo), match_id = table
    with app.app_context():
        version = db.session.get(Match, match_id).version
    other = second.test_client()
    poll = f"/matches/{match_id}/live?since={version}"
    assert other.get(poll).status_code == 204
    i_am(client, match_id, anna)
    assert enter_round(client, match_id, {anna: 50}).status_code == 303  # Anna's own card
    assert count(app, Play) == 0  # hidden until every card is in
    answer = other.get(poll)
    assert answer.status_code == 200 and "Anna" in answer.text


# --- two real servers on one database --------------------------------------------------


@pytest.mark.slow
def test_two_servers_share_one_database(tmp_path):
    """A club's two app servers, started at once on a new database (one migrates, the
    other finds it done): a card sent to one ends the other's quiet polls, and a rename
    on one shows on the other's match page (the version decides, not memory)."""
    club = tmp_path / "club.sqlite"  # stands for the club's database (tests/postgresql.py)
    env = {"COMPANION_DATABASE_URL": conftest.database_url(club, empty=True)}
    with ThreadPoolExecutor() as starting:  # gunicorn's workers, and waitress
        both = [starting.submit(start_server, tmp_path, workers, **env) for workers in (2, 1)]
    started = [future.result() for future in both if future.exception() is None]
    try:
        assert len(started) == 2, [str(future.exception()) for future in both]
        (_, first_port), (_, second_port) = started
        app = create_app(conftest.testing_config(club))
        _, (anna, ben, _cleo), match_id, (at_first,) = joined(
            app, f"http://127.0.0.1:{first_port}", 1, FormPhone
        )
        at_second = FormPhone(f"http://127.0.0.1:{second_port}")
        token = tokens_of(app, match_id)
        assert at_second.request(f"/matches/{match_id}/join/{token}") == 303
        assert "Ben" in at_second.page(f"/matches/{match_id}")  # the second keeps it
        with app.app_context():
            version = db.session.get(Match, match_id).version
        poll = f"/matches/{match_id}/live?since={version}"
        assert at_second.request(poll) == 204

        page = at_first.page(f"/matches/{match_id}")
        csrf = CSRF.search(page).group(1)
        form = {"player": str(anna), "csrf_token": csrf}
        assert at_first.request(f"/matches/{match_id}/me", form) == 303
        card = {f"card-{anna}": "50", "game": "1", "round": "1", "csrf_token": csrf}
        assert at_first.request(f"/matches/{match_id}/rounds", card) == 303
        answer = at_second.page(poll)
        assert "is-in" in answer and f"since={version + 1}" in answer

        rename = {"name": "Benedikt", "csrf_token": csrf}
        assert at_first.request(f"/players/{ben}/name", rename) == 303
        assert "Benedikt" in at_second.page(f"/matches/{match_id}")
    finally:
        for server, _port in started:
            stop(server)


def tokens_of(app, match_id: int) -> str:
    """The match's player link token."""
    with app.app_context():
        return db.session.get(Match, match_id).player_token


# --- live pushes: the trigger that tells every server process ------------------------


def test_the_migrated_match_table_notifies_its_changes_at_commit(empty_app):
    """After `flask db upgrade`, a write to a match sends NOTIFY companion_match with its
    id, delivered when the writing transaction commits, not before (companion.storage.feed)."""
    import psycopg

    with empty_app.app_context():
        upgrade()
        url = db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(url, autocommit=True) as listener:
            listener.execute("LISTEN companion_match")
            db.session.execute(
                text(
                    "INSERT INTO match (created_at, end_kind, end_value, pro, version, "
                    "table_version, player_token, watch_token) VALUES "
                    "(now(), 'games', 3, false, 0, 0, 'p', 'w')"
                )
            )
            assert list(listener.notifies(timeout=0.2)) == []  # not before the commit
            db.session.commit()
            match_id = db.session.scalar(text("SELECT id FROM match"))
            notes = list(listener.notifies(timeout=5, stop_after=1))
            assert [(note.channel, note.payload) for note in notes] == [
                ("companion_match", str(match_id))
            ]
        db.session.remove()
        downgrade(revision="base")
