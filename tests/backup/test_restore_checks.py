"""``flask restore`` tries a copy before it swaps: a known revision, the models' tables
and columns, and ``rebuild --check`` passing on it. Each bad copy is made here from a
good one; each is refused in one line with exit 1, and the live database keeps every
byte it had."""

import logging.config
import random
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from backups import at_head
from driver import add_players, play_game, start_match

from companion.backup.copies import make_copy
from companion.db import db

pytestmark = pytest.mark.sqlite_only("restore replaces an SQLite file")

MONDAY = date(2026, 11, 2)
OLDER = "8db05ee4d502"  # the revision before match.table_version


@pytest.fixture(autouse=True)
def quiet_migrations(monkeypatch):
    """env.py configures logging from alembic.ini; not our business inside pytest."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


@pytest.fixture
def live(app, client) -> Path:
    """The live database: Anna, Ben and Cleo after a game of cards, then a copy of it,
    then Zoe, who is only in the live database."""
    at_head(app)
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, match_id, ids, random.Random(7))
    with app.app_context():
        database = Path(db.engine.url.database)
    make_copy(database, MONDAY)
    add_players(client, "Zoe")
    return database


@pytest.fixture
def good(live) -> Path:
    """The copy, as the app made it: good to restore."""
    return live.parent / "backups" / "daily-2026-11-02.sqlite"


def players_in(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return [row[0] for row in connection.execute("SELECT name FROM player ORDER BY id")]


def edited(good: Path, *statements: str) -> Path:
    """A copy of the good copy, changed by hand past SQLite's own checks."""
    path = good.with_name("edited.sqlite")
    path.write_bytes(good.read_bytes())
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA ignore_check_constraints=ON")  # foreign keys are off too
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()
    return path


def one_column_x(good: Path) -> Path:
    """Every table with its right name and one column, x."""
    with sqlite3.connect(good) as connection:
        names = [row[0] for row in connection.execute("SELECT name FROM sqlite_master")]
    tables = [name for name in names if not name.startswith(("sqlite_", "ix_", "uq_"))]
    tables.remove("alembic_version")
    return edited(
        good,
        *(f'DROP TABLE "{name}"' for name in tables),
        *(f'CREATE TABLE "{name}" (x)' for name in tables),
    )


def without_choices_and_scores(good: Path) -> Path:
    return edited(good, "DROP TABLE row_choice", "DROP TABLE score")


def unknown_revision(good: Path) -> Path:
    return edited(good, "UPDATE alembic_version SET version_num = '0123456789ab'")


def no_revision(good: Path) -> Path:
    return edited(good, "DROP TABLE alembic_version")


def card_999(good: Path) -> Path:
    return edited(good, "UPDATE play SET card = 999 WHERE id = 1")


def player_77(good: Path) -> Path:
    return edited(good, "UPDATE play SET player_id = 77 WHERE id = 1")


def starting_card_999(good: Path) -> Path:
    return edited(good, "UPDATE game SET row1 = 999 WHERE id = 1")


def tampered_result(good: Path) -> Path:
    return edited(good, "UPDATE game_result SET bulls = bulls + 1 WHERE id = 1")


def note_trigger(good: Path) -> Path:
    """The finding (issue 55): a copy whose trigger rewrote every new round's match note."""
    return edited(
        good,
        "CREATE TRIGGER rewrite_note AFTER INSERT ON round "
        "BEGIN UPDATE match SET note = 'pwned' WHERE id = NEW.match_id; END",
    )


def a_view(good: Path) -> Path:
    return edited(good, "CREATE VIEW names AS SELECT name FROM player")


def an_index(good: Path) -> Path:
    return edited(good, "CREATE INDEX ix_play_card ON play (card)")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (note_trigger, "its schema is not the app's: there is a trigger rewrite_note the app "),
        (a_view, "its schema is not the app's: there is a view names the app does not make."),
        (an_index, "its tables are not the app's: remove index ix_play_card."),  # Alembic's
        (one_column_x, "its tables are not the app's: table card_take has no column id."),
        (without_choices_and_scores, "its tables are not the app's: there is no table "),
        (
            unknown_revision,
            "its Alembic revision 0123456789ab is not one of this companion's "
            "(a copy from a newer version?).",
        ),
        (no_revision, "it has no Alembic revision (no alembic_version table)."),
        (
            card_999,
            "rebuild --check fails on it: play 1: card=999 breaks the check "
            "card BETWEEN 1 AND 104 (ck_play_card).",
        ),
        (player_77, "rebuild --check fails on it: play 1: player_id=77 names no player row"),
        (
            starting_card_999,
            "rebuild --check fails on it: game 1 (match 1, game 1): starting cards (999, ",
        ),
        (tampered_result, "rebuild --check fails on it: match 1 game 1: stored {"),
    ],
)
def test_a_bad_copy_is_refused_and_the_database_keeps_every_byte(app, live, good, make, message):
    bad = make(good)
    before = {path.name: path.read_bytes() for path in live.parent.glob(f"{live.name}*")}
    result = app.test_cli_runner().invoke(args=["restore", "--yes", str(bad)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert result.output.count("\n") == 1
    assert result.output.startswith(f"Error: {bad} cannot be restored: {message}")
    after = {path.name: path.read_bytes() for path in live.parent.glob(f"{live.name}*")}
    assert after == before
    assert players_in(live) == ["Anna", "Ben", "Cleo", "Zoe"]
    assert not list(good.parent.glob("replaced-*.sqlite"))


def test_a_good_copy_still_restores(app, live, good):
    result = app.test_cli_runner().invoke(args=["restore", "--yes", str(good)])
    assert result.exit_code == 0, result.output
    assert players_in(live) == ["Anna", "Ben", "Cleo"]
    assert app.test_cli_runner().invoke(args=["rebuild", "--check"]).exit_code == 0


def test_a_copy_from_an_older_version_is_upgraded_then_restored(app, live, good):
    # What the downgrade to OLDER does, written out: Alembic's batch mode would copy the
    # match table and drop the old one, which with foreign keys on empties its seats.
    older = edited(
        good,
        "ALTER TABLE match DROP COLUMN input_version",  # what the revisions since OLDER added
        "DROP TABLE luck_player",
        "ALTER TABLE match DROP COLUMN note",
        "ALTER TABLE match DROP COLUMN links_renewed_at",
        "DROP TABLE review_player",
        "DROP TABLE review_card",
        "DROP TABLE play_luck",
        "DROP TABLE correction",
        "DROP TABLE card_take",
        "DROP TABLE match_rating",
        "ALTER TABLE player_match_stat DROP COLUMN minutes",
        "DROP INDEX uq_match_rematch_id",
        "ALTER TABLE match DROP COLUMN rematch_id",
        "ALTER TABLE match DROP COLUMN table_version",
        f"UPDATE alembic_version SET version_num = '{OLDER}'",
    )
    result = app.test_cli_runner().invoke(args=["restore", "--yes", str(older)])
    assert result.exit_code == 0, result.output
    assert players_in(live) == ["Anna", "Ben", "Cleo"]
    with sqlite3.connect(live) as connection:
        assert "table_version" in {row[1] for row in connection.execute("PRAGMA table_info(match)")}
        (revision,) = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    assert revision != OLDER
    assert app.test_cli_runner().invoke(args=["rebuild", "--check"]).exit_code == 0
