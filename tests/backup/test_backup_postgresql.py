"""The backup import on PostgreSQL: the same Core statements, PostgreSQL's bulk load and ids.

Runs only when ``COMPANION_TEST_POSTGRESQL_URL`` names a PostgreSQL database that the
tests may empty (``postgresql+psycopg://user@host:port/name``); SQLite is the rest of
the suite's.
"""

import os

import conftest
import pytest
from backups import export, household, upload, without_time
from conftest import make_app
from driver import add_players, choose, enter_round, pending_of, start_game, start_match

from companion import create_app
from companion.db import db

URL = os.environ.get("COMPANION_TEST_POSTGRESQL_URL")
pytestmark = pytest.mark.skipif(not URL, reason="COMPANION_TEST_POSTGRESQL_URL is not set")


@pytest.fixture
def postgresql_app(tmp_path):
    """The app on the PostgreSQL database, its tables new and empty."""
    app = create_app(
        {**conftest.testing_config(tmp_path / "unused.sqlite"), "SQLALCHEMY_DATABASE_URI": URL}
    )
    with app.app_context():
        db.drop_all()
        db.create_all()
    yield app
    with app.app_context():
        db.session.remove()
        db.drop_all()
        db.engine.dispose()


@pytest.fixture
def document(tmp_path):
    """A household's history as a backup, made on SQLite."""
    source = make_app(tmp_path / "source.sqlite").test_client()
    household(source)
    return export(source)


def test_an_import_on_postgresql_gives_the_same_file_back(postgresql_app, document):
    client = postgresql_app.test_client()
    assert upload(client, document).status_code == 303
    assert without_time(export(client)) == without_time(document)
    assert upload(client, document).status_code == 303  # the same file again: nothing
    page = client.get("/backup").get_data(as_text=True)
    assert "Matches added: 0" in page and "Players added: 0" in page
    result = postgresql_app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


def test_after_an_import_new_rows_get_ids_of_their_own(postgresql_app, document):
    client = postgresql_app.test_client()
    first = start_match(client, add_players(client, "Yan", "Zoe"))
    assert upload(client, document).status_code == 303  # matches 2 and 3, after the one here
    pro = 3
    pending = pending_of(client, pro)  # the imported round that waits for a row choice
    assert choose(client, pro, pending.player, 1).status_code == 303  # a new row choice
    xia, wim = add_players(client, "Xia", "Wim")
    assert (xia, wim) == (8, 9)  # after Yan, Zoe and the five imported players
    later = start_match(client, [xia, wim])
    assert (first, later) == (1, 4)
    assert start_game(client, later, [10, 20, 30, 40]).status_code == 303  # a new game
    assert enter_round(client, later, {xia: 15, wim: 25}).status_code == 303  # round, plays
    assert without_time(export(client))["matches"][-1]["games"][0]["rounds"] == [
        {"cards": [15, 25]}
    ]
