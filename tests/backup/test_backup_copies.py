"""Automatic copies of the database: daily and after a match, rotated, checked, restored."""

import fcntl
import json
import logging
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from datetime import date, timedelta
from pathlib import Path

import pytest
from backups import at_head, backup_file, export, shifted, upload
from conftest import TESTS, make_app
from driver import add_players, score_game, start_match

from companion.backup import copies
from companion.backup.copies import copy_if_due, make_copy
from companion.db import db

# SQLite's backup API and its files (PostgreSQL: test_postgresql.py says none are made).
pytestmark = pytest.mark.sqlite_only("copies of an SQLite file")

MONDAY = date(2026, 11, 2)  # ISO week 45


def database_of(app) -> Path:
    with app.app_context():
        return Path(db.engine.url.database)


def players_in(path: Path) -> list[str]:
    """The player names stored in a database file."""
    with sqlite3.connect(path) as connection:
        return [row[0] for row in connection.execute("SELECT name FROM player ORDER BY id")]


def names(folder: Path) -> list[str]:
    """Every file in the folder, hidden ones too (a temporary copy left behind)."""
    return sorted(path.name for path in folder.iterdir() if path.name != ".lock")


def test_a_copy_is_the_database_checked_and_in_one_file(app, client):
    add_players(client, "Anna", "Ben")
    database = database_of(app)
    daily = make_copy(database, MONDAY)
    assert daily == database.parent / "backups" / "daily-2026-11-02.sqlite"
    assert players_in(daily) == ["Anna", "Ben"]
    with sqlite3.connect(daily) as copy:
        assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert names(daily.parent) == ["daily-2026-11-02.sqlite", "weekly-2026-W45.sqlite"]


def test_seven_daily_and_four_weekly_copies_are_kept(app, client):
    database = database_of(app)
    for day in range(40):  # a player a day, and a copy each evening
        add_players(client, f"Player {day:02d}")
        make_copy(database, MONDAY + timedelta(days=day))
    folder = database.parent / "backups"
    last = MONDAY + timedelta(days=39)
    assert names(folder) == sorted(
        [f"daily-{last - timedelta(days=back)}.sqlite" for back in range(7)]
        + [f"weekly-2026-W{week}.sqlite" for week in (47, 48, 49, 50)]
    )
    # A weekly copy is the week's first: W48 began on day 21 (a Monday).
    assert len(players_in(folder / "weekly-2026-W48.sqlite")) == 22
    assert len(players_in(folder / f"daily-{last}.sqlite")) == 40


def test_the_days_copy_holds_the_days_last_state(app, client):
    database = database_of(app)
    add_players(client, "Anna")
    make_copy(database, MONDAY)
    add_players(client, "Ben")
    daily = make_copy(database, MONDAY)
    assert players_in(daily) == ["Anna", "Ben"]
    assert players_in(daily.parent / "weekly-2026-W45.sqlite") == ["Anna"]


def test_a_copy_that_fails_its_check_leaves_the_earlier_ones(app, client, monkeypatch):
    add_players(client, "Anna")
    database = database_of(app)
    first = make_copy(database, MONDAY)
    before = first.read_bytes()
    monkeypatch.setattr(copies, "integrity_problems", lambda path: ["row 3 missing from index"])
    add_players(client, "Ben")
    assert make_copy(database, MONDAY + timedelta(days=1)) is None
    assert first.read_bytes() == before
    folder = first.parent
    assert names(folder) == [
        "FAILED.txt",
        "daily-2026-11-02.sqlite",
        "weekly-2026-W45.sqlite",
    ]
    assert "row 3 missing from index" in (folder / "FAILED.txt").read_text()
    monkeypatch.undo()
    assert make_copy(database, MONDAY + timedelta(days=1)) is not None
    assert not (folder / "FAILED.txt").exists()


POWER_CUT = """
import os, sys
from datetime import date
from pathlib import Path
from companion.backup import copies

def cut(self, target):  # the moment before the new copy is renamed into place
    os._exit(9)

Path.replace = cut
copies.make_copy(Path({database!r}), date(2026, 11, 3))
"""


def test_a_power_cut_while_copying_leaves_the_earlier_copies(app, client):
    add_players(client, "Anna")
    database = database_of(app)
    first = make_copy(database, MONDAY)
    before = first.read_bytes()
    script = textwrap.dedent(POWER_CUT.format(database=str(database)))
    cut = subprocess.run([sys.executable, "-c", script], cwd=TESTS.parent, check=False)
    assert cut.returncode == 9
    folder = first.parent
    assert ".daily-2026-11-03.sqlite.tmp" in names(folder)  # the half-done copy
    assert first.read_bytes() == before
    make_copy(database, MONDAY + timedelta(days=2))
    assert not [name for name in names(folder) if name.endswith(".tmp")]  # tidied up


def test_one_process_makes_the_days_copy(app, client):
    database = database_of(app)
    folder = database.parent / "backups"
    folder.mkdir()
    descriptor = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # another server process is copying
        assert copy_if_due(database, MONDAY) is None
        assert names(folder) == []
    finally:
        os.close(descriptor)
    assert copy_if_due(database, MONDAY) is not None
    made = (folder / "daily-2026-11-02.sqlite").stat().st_mtime_ns
    assert copy_if_due(database, MONDAY) is None  # made already: not again
    assert (folder / "daily-2026-11-02.sqlite").stat().st_mtime_ns == made


def test_two_processes_at_once_make_one_copy(app, client):
    add_players(client, "Anna")
    database = database_of(app)
    script = (
        "from datetime import date; from pathlib import Path; "
        "from companion.backup.copies import copy_if_due; "
        f"print(copy_if_due(Path({str(database)!r}), date(2026, 11, 2)) is not None)"
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    made = [run.communicate(timeout=60)[0].strip() for run in runs]
    assert made.count("True") == 1, made
    assert names(database.parent / "backups") == [
        "daily-2026-11-02.sqlite",
        "weekly-2026-W45.sqlite",
    ]


# --- after a finished match ------------------------------------------------------------


@pytest.mark.app_config(AUTO_BACKUP=True)
def test_a_finished_match_is_copied_at_once(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    folder = database_of(app).parent / "backups"
    assert score_game(client, match_id, {ids[0]: 5, ids[1]: 7}).status_code == 303
    copies.wait_for_copies()
    assert not folder.exists()  # a game ended, not the match
    assert score_game(client, match_id, {ids[0]: 1, ids[1]: 2}).status_code == 303
    copies.wait_for_copies()
    (daily,) = folder.glob("daily-*.sqlite")
    with sqlite3.connect(daily) as copy:
        assert copy.execute("SELECT count(*) FROM game_result").fetchone() == (4,)


def matches_in(path: Path) -> int:
    """How many matches a database file holds."""
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT count(*) FROM match").fetchone()[0]


@pytest.mark.app_config(AUTO_BACKUP=True)
def test_an_import_is_copied_at_once(app, client, tmp_path):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    assert score_game(client, match_id, {ids[0]: 5, ids[1]: 7}).status_code == 303
    copies.wait_for_copies()
    (daily,) = (database_of(app).parent / "backups").glob("daily-*.sqlite")
    assert matches_in(daily) == 1
    assert upload(client, backup_file()).status_code == 303  # two matches from the file
    copies.wait_for_copies()
    assert matches_in(daily) == 3
    file = tmp_path / "backup.json"
    file.write_text(json.dumps(shifted(export(client))))  # the same three, a year earlier
    result = app.test_cli_runner().invoke(args=["import", str(file)])
    assert result.exit_code == 0, result.output
    assert matches_in(daily) == 6  # copied before the command ended


@pytest.mark.app_config(AUTO_BACKUP=True)
def test_a_copy_whose_thread_cannot_start_leaves_the_change_done(app, client, monkeypatch, caplog):
    """Out of threads: the finished match and the import are stored, the log says why no
    copy was made, and the next change copies again."""
    start = threading.Thread.start

    def no_copy_thread(thread):
        if thread.name == "copy-now":
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", no_copy_thread)
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    with caplog.at_level(logging.ERROR):
        assert score_game(client, match_id, {ids[0]: 5, ids[1]: 7}).status_code == 303
        assert upload(client, backup_file()).status_code == 303
    copies.wait_for_copies()
    assert copies._after_changes == []
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert [record.getMessage() for record in errors] == [
        "automatic copy after a match could not start",
        "automatic copy after an import could not start",
    ]
    assert not (database_of(app).parent / "backups").exists()
    monkeypatch.undo()
    assert upload(client, shifted(export(client))).status_code == 303  # the same, a year back
    copies.wait_for_copies()
    (daily,) = (database_of(app).parent / "backups").glob("daily-*.sqlite")
    assert matches_in(daily) == 6


def test_no_copy_in_tests_unless_asked(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    assert score_game(client, match_id, {ids[0]: 5, ids[1]: 7}).status_code == 303
    copies.wait_for_copies()
    assert not (database_of(app).parent / "backups").exists()


def test_nothing_automatic_without_a_database_file(tmp_path):
    memory = make_app(tmp_path / "unused.sqlite", SQLALCHEMY_DATABASE_URI="sqlite://")
    memory.config["AUTO_BACKUP"] = True
    assert copies.copy_target(memory) is None
    assert copies.copy_daily_in_background(memory) is None
    client = memory.test_client()
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    assert score_game(client, match_id, {ids[0]: 5, ids[1]: 7}).status_code == 303
    assert copies._after_changes == []
    page = client.get("/backup").get_data(as_text=True)
    assert "The database is not an SQLite file, so the companion makes no copies" in page


def servers_copy(app) -> Path:
    """The day's copy that the real server makes when it starts (waiting for it)."""
    folder = database_of(app).parent / "backups"
    deadline = time.monotonic() + 30
    while not list(folder.glob("daily-*.sqlite")) and time.monotonic() < deadline:
        time.sleep(0.2)
    (copy,) = folder.glob("daily-*.sqlite")
    return copy


def test_the_server_makes_the_days_copy_when_it_starts(workers):
    _server, _base, app = workers
    assert servers_copy(app).name == f"daily-{date.today()}.sqlite"


# --- the backup page lists them --------------------------------------------------------


@pytest.mark.app_config(AUTO_BACKUP=True)
def test_the_backup_page_lists_the_copies(app, client):
    add_players(client, "Anna")
    database = database_of(app)
    for day in (0, 6, 7):
        make_copy(database, MONDAY + timedelta(days=day))
    page = client.get("/backup").get_data(as_text=True)
    assert "It keeps the last 7 daily and 4 weekly copies in" in page
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert len(rows) == 5  # 3 daily, 2 weekly
    assert sum(">daily<" in row for row in rows) == 3
    assert sum(">weekly<" in row for row in rows) == 2
    assert all(" MB</td>" in row and "<time datetime=" in row for row in rows)
    assert "flask --app companion restore" in page
    german = client.get("/backup", headers={"Accept-Language": "de"}).get_data(as_text=True)
    assert ">täglich<" in german and ">wöchentlich<" in german


@pytest.mark.app_config(AUTO_BACKUP=True)
def test_the_backup_page_says_when_the_last_copy_failed(app, client, monkeypatch):
    monkeypatch.setattr(copies, "integrity_problems", lambda path: ["page 7 is never used"])
    make_copy(database_of(app), MONDAY)
    page = client.get("/backup").get_data(as_text=True)
    assert "The last copy failed: 2026-11-02: daily-2026-11-02.sqlite: page 7" in page


def test_the_backup_page_says_when_copies_are_off(client):
    page = client.get("/backup").get_data(as_text=True)
    assert "Automatic copies are switched off (setting COMPANION_AUTO_BACKUP)." in page


# --- flask --app companion restore FILE ------------------------------------------------


@pytest.fixture
def saved(app, client):
    """A copy holding Anna, and a database that has Ben since."""
    at_head(app)
    add_players(client, "Anna")
    copy = make_copy(database_of(app), MONDAY)
    add_players(client, "Ben")
    return copy


def test_restore_after_confirming_brings_the_copy_back(app, saved):
    result = app.test_cli_runner().invoke(args=["restore", str(saved)], input="y\n")
    assert result.exit_code == 0, result.output
    assert "Replace the database" in result.output
    assert result.output.count("0 matches, changed") == 2  # what it has, what it gets
    assert players_in(database_of(app)) == ["Anna"]
    (kept,) = saved.parent.glob("replaced-*.sqlite")
    assert players_in(kept) == ["Anna", "Ben"]  # what it replaced is kept
    assert f"the database it replaced is kept as {kept}" in result.output
    with app.app_context():  # the app reads the restored database
        assert db.session.execute(db.text("SELECT count(*) FROM player")).scalar() == 1
    with sqlite3.connect(database_of(app)) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_restore_can_be_called_off(app, saved):
    result = app.test_cli_runner().invoke(args=["restore", str(saved)], input="n\n")
    assert result.exit_code == 1
    assert "Aborted" in result.output
    assert players_in(database_of(app)) == ["Anna", "Ben"]
    assert not list(saved.parent.glob("replaced-*.sqlite"))


def test_restore_yes_asks_nothing(app, saved):
    result = app.test_cli_runner().invoke(args=["restore", "--yes", str(saved)])
    assert result.exit_code == 0, result.output
    assert "Replace the database" not in result.output
    assert players_in(database_of(app)) == ["Anna"]


def damaged(copy: Path) -> Path:
    """The copy with a page in the middle overwritten."""
    data = bytearray(copy.read_bytes())
    data[4096 * 2 : 4096 * 2 + 100] = b"\xff" * 100
    path = copy.with_name("damaged.sqlite")
    path.write_bytes(bytes(data))
    return path


def other_database(copy: Path) -> Path:
    """An SQLite file of some other program."""
    path = copy.with_name("other.sqlite")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE note (text)")
    return path


def text_file(copy: Path) -> Path:
    path = copy.with_name("notes.txt")
    path.write_text("milk, eggs\n" * 100)
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (text_file, "it is not an SQLite database."),
        (other_database, "it is not a database of the companion."),
        (damaged, "it is damaged (database disk image is malformed)."),
        (lambda copy: copy.with_name("missing.sqlite"), "there is no such file."),
    ],
)
def test_restore_refuses_a_bad_file_in_one_line(app, saved, make, message):
    bad = make(saved)
    result = app.test_cli_runner().invoke(args=["restore", "--yes", str(bad)])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert result.output.count("\n") == 1
    assert f"{bad} cannot be restored: {message}" in result.output
    assert players_in(database_of(app)) == ["Anna", "Ben"]


def test_restore_waits_for_the_server_to_stop(workers):
    _server, _base, app = workers
    result = app.test_cli_runner().invoke(args=["restore", "--yes", str(servers_copy(app))])
    assert result.exit_code == 1
    assert "The server is running. Stop it first" in result.output
