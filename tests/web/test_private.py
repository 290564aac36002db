"""What holds the link tokens stays this user's: files 0600, folders 0700, no caches.

The database (and the WAL and SHM files SQLite makes beside it), its automatic
copies and the secret key are made for this user alone, and ones an older version
left readable to everyone are tightened at start. Pages that show a player link and
every export tell caches not to keep them.
"""

import os
import re
import sqlite3
import stat
from datetime import date

import pytest
from conftest import make_app
from driver import add_players, start_match
from flask import Flask

from companion.backup.copies import make_copy
from companion.config import configure
from companion.db import db
from companion.models import Match


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def everyone_may_read():
    """The common umask (0022): new files would be 0644 unless made private."""
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.mark.sqlite_only("file modes of SQLite's files")
def test_a_new_database_its_side_files_copies_and_key_are_for_this_user_alone(
    tmp_path, everyone_may_read
):
    database = tmp_path / "data" / "companion.sqlite"
    key = tmp_path / "instance" / "secret_key"
    app = make_app(database, SECRET_KEY="", SECRET_KEY_FILE=str(key))
    add_players(app.test_client(), "Anna")  # a write: the WAL and SHM files exist
    for path in (database, f"{database}-wal", f"{database}-shm", key):
        assert mode(path) == 0o600, path
    assert mode(database.parent) == mode(key.parent) == 0o700
    daily = make_copy(database, date(2026, 12, 1))
    assert mode(daily.parent) == 0o700
    assert [mode(copy) for copy in daily.parent.glob("*.sqlite")] == [0o600, 0o600]


@pytest.mark.sqlite_only("file modes of SQLite's files")
def test_files_an_older_version_left_readable_are_tightened_at_start(tmp_path, everyone_may_read):
    database = tmp_path / "companion.sqlite"
    sqlite3.connect(database).close()  # as an older version made it: 0644
    key = tmp_path / "secret_key"
    key.write_text("an old key\n")
    for path in (database, f"{database}-wal", key):
        open(path, "a").close()
        os.chmod(path, 0o644)
    os.chmod(tmp_path, 0o755)
    make_app(database, SECRET_KEY="", SECRET_KEY_FILE=str(key))
    assert [mode(path) for path in (database, f"{database}-wal", key)] == [0o600] * 3
    assert mode(tmp_path) == 0o755  # the database's folder is the user's to choose


def test_the_instance_folder_is_tightened_at_start(tmp_path, everyone_may_read):
    instance = tmp_path / "instance"
    instance.mkdir(mode=0o755)
    os.chmod(instance, 0o755)
    configure(Flask(__name__, instance_path=str(instance)), {"SECRET_KEY": "x"})
    assert mode(instance) == 0o700


def test_pages_that_show_a_player_link_and_every_export_are_not_cached(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    with app.app_context():
        token = db.session.get(Match, match_id).player_token
    invite = client.get(f"/matches/{match_id}/invite")
    assert token in invite.get_data(as_text=True)
    answers = [
        invite,
        client.get(f"/matches/{match_id}/invite", headers={"HX-Request": "true"}),
        client.get(f"/matches/{match_id}/join/{token}"),
        client.get("/backup/export.json"),
        client.get(f"/matches/{match_id}/export.csv"),
    ]
    assert [answer.status_code for answer in answers] == [200, 200, 303, 200, 200]
    assert all(answer.headers["Cache-Control"] == "no-store" for answer in answers)
    assert re.search(r"max-age|public", client.get("/").headers.get("Cache-Control", "")) is None
