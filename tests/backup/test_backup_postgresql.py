"""The backup import on PostgreSQL: the same Core statements, PostgreSQL's bulk load and ids.

The rest of the import's tests run here too (``--database=postgresql``); these are
about what PostgreSQL does differently (``companion.storage.imports``): the phones go on
writing while the file is copied in (one import at a time: test_backup_turn.py).
"""

import threading

import pytest
from backups import export, household, shifted, snapshot, upload, without_time
from conftest import make_app
from driver import add_players, choose, enter_round, pending_of, start_game, start_match

from companion import derived
from companion.backup import load
from companion.db import db
from companion.models import Round

pytestmark = pytest.mark.postgresql


@pytest.fixture
def document(tmp_path):
    """A household's history as a backup, made on another database."""
    source = make_app(tmp_path / "source.sqlite").test_client()
    household(source)
    return export(source)


def test_an_import_on_postgresql_gives_the_same_file_back(app, client, document):
    assert upload(client, document).status_code == 303
    assert without_time(export(client)) == without_time(document)
    assert upload(client, document).status_code == 303  # the same file again: nothing
    page = client.get("/backup").get_data(as_text=True)
    assert "Matches added: 0" in page and "Players added: 0" in page
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


def test_after_an_import_new_rows_get_ids_of_their_own(client, document):
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
    (entered,) = without_time(export(client))["matches"][-1]["games"][0]["rounds"]
    assert entered["cards"] == [15, 25]


def test_a_phone_writes_while_the_import_copies_the_file_in(app, client, table, document):
    """PostgreSQL keeps the imported ids free beforehand: the copy holds nobody up."""
    (anna, ben, cleo), match_id = table
    statement, answers = load.merge_statement, []

    def while_copying(model, *args):
        if model is derived.PlayerGameStat:  # plays and all are in, not committed yet
            phone = threading.Thread(
                target=lambda: answers.append(enter_round(client, match_id, cards))
            )
            phone.start()
            phone.join(10)
        return statement(model, *args)

    cards = {anna: 50, ben: 51, cleo: 52}
    load.merge_statement = while_copying
    try:
        assert upload(app.test_client(), shifted(document)).status_code == 303
    finally:
        load.merge_statement = statement
    assert [answer.status_code for answer in answers] == [303]
    imported = sum(len(game.get("rounds", [])) for m in document["matches"] for game in m["games"])
    with app.app_context():  # the phone's round and the file's, all there
        assert db.session.scalar(db.select(db.func.count(Round.id))) == 1 + imported
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


def test_a_merge_that_fails_midway_leaves_nothing_not_even_its_staging(app, client, document):
    before = snapshot(app)
    statement = load.merge_statement

    def failing(model, *args):
        if model is derived.PlayerMatchStat:  # the last table: the rest is written
            raise RuntimeError("the power went out")
        return statement(model, *args)

    load.merge_statement = failing
    try:
        with pytest.raises(RuntimeError):
            upload(client, document)
    finally:
        load.merge_statement = statement
    assert snapshot(app) == before
    with app.app_context():  # no temporary table is left on any connection
        temporary = "SELECT count(*) FROM pg_class WHERE relpersistence = 't'"
        assert db.session.execute(db.text(temporary)).scalar() == 0
