"""An import's luck (issue 34): the import does not figure it, a helper process does right
after (companion.backup.apart), and nothing waits for it meanwhile; the command line
figures it before it ends. Either way it ends as ``flask rebuild`` would make it."""

import json
import logging
import multiprocessing.context
import time

import pytest
from backups import export, household, upload
from conftest import make_app
from sqlalchemy import func, select

from companion.db import db
from companion.derived.play_luck import rebuild_luck
from companion.derived.tables import PlayLuck
from companion.models import Match


def luck_rows(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(PlayLuck))


def right(app) -> bool:
    with app.app_context():
        return rebuild_luck(check=True, echo=lambda line: None) == ([], [])


@pytest.fixture
def backup(client):
    """A household's backup: card games finished and running, a score-only game."""
    household(client)
    return export(client)


def test_the_import_leaves_luck_to_a_helper_that_figures_it_all(tmp_path, backup):
    empty = make_app(tmp_path / "other.sqlite", FILL_LUCK_APART=True)
    phone = empty.test_client()
    assert upload(phone, backup).status_code == 303
    # Pages never wait for it: luck.json figures a game the helper has not reached.
    assert phone.get("/matches/1/games/1/luck.json").status_code == 200
    deadline = time.monotonic() + 120
    while not (luck_rows(empty) and right(empty)):
        assert time.monotonic() < deadline, "the helper did not figure the import's luck"
        time.sleep(0.2)
    assert luck_rows(empty) > 0


@pytest.mark.parametrize("failure", [RuntimeError("bootstrapping phase"), OSError("no fork")])
def test_a_helper_that_cannot_start_leaves_the_import_done_and_says_so_in_the_log(
    tmp_path, backup, monkeypatch, caplog, failure
):
    """The finding: a server run from a script without a main guard cannot spawn the
    helper, and the import, stored by then, answered 500. It is done: the log says what
    is missing, and ``flask rebuild`` fills it."""

    def cannot_start(process):
        raise failure

    monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", cannot_start)
    empty = make_app(tmp_path / "other.sqlite", FILL_LUCK_APART=True)
    with caplog.at_level(logging.ERROR):
        assert upload(empty.test_client(), backup).status_code == 303
    with empty.app_context():
        assert db.session.scalar(select(func.count()).select_from(Match)) == len(backup["matches"])
    (record,) = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert "flask --app companion rebuild" in record.getMessage()
    assert record.exc_info[1] is failure  # its traceback, for whoever reads the log
    assert luck_rows(empty) == 0
    assert empty.test_cli_runner().invoke(args=["rebuild"]).exit_code == 0
    assert right(empty) and luck_rows(empty) > 0


def test_without_the_helper_the_import_keeps_no_luck_and_rebuild_puts_it_right(tmp_path, backup):
    empty = make_app(tmp_path / "other.sqlite")
    assert upload(empty.test_client(), backup).status_code == 303
    assert luck_rows(empty) == 0
    assert not right(empty)
    result = empty.test_cli_runner().invoke(args=["rebuild"])
    assert result.exit_code == 0, result.output
    assert "games' luck filled in" in result.output
    assert right(empty) and luck_rows(empty) > 0


def test_the_import_command_figures_the_luck_before_it_ends(tmp_path, backup):
    empty = make_app(tmp_path / "other.sqlite")
    path = tmp_path / "backup.json"
    path.write_text(json.dumps(backup))
    result = empty.test_cli_runner().invoke(args=["import", str(path)])
    assert result.exit_code == 0, result.output
    assert "Figuring the luck" in result.output
    assert luck_rows(empty) > 0 and right(empty)
