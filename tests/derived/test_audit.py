"""``flask rebuild --check`` on rows that no form lets through: each is named, table and id
and what is wrong, and the command ends with exit 1 instead of a traceback."""

import random
import sqlite3

import pytest
from driver import add_players, play_game, start_match

from companion.db import db
from companion.models import Game, Play, Round, RowChoice


@pytest.fixture
def played(app, client):
    """Anna, Ben and Cleo after one whole game of cards; the rebuild finds nothing."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, match_id, ids, random.Random(7))
    assert app.test_cli_runner().invoke(args=["rebuild", "--check"]).exit_code == 0
    with app.app_context():
        game = db.session.scalar(db.select(Game))
        first_play = db.session.scalar(db.select(Play).order_by(Play.id))
        return {
            "match": match_id,
            "game": game.id,
            "starting": game.starting,
            "play": first_play.id,
            "choice": db.session.scalar(db.select(db.func.min(RowChoice.id))),
            "last_round": db.session.scalar(db.select(db.func.max(Round.id))),
        }


def change(app, statement: str, **values) -> None:
    """Change a row as a hand at the database would, past no form."""
    with app.app_context():
        db.session.execute(db.text(statement), values)
        db.session.commit()


def past_a_check(app, table: str, constraint: str, statement: str, **values) -> None:
    """Write a row that a CHECK refuses: SQLite told to ignore its checks for once, or
    on PostgreSQL the constraint dropped first (each keeps its rows otherwise)."""
    with app.app_context():
        url = db.engine.url
        if url.get_backend_name() == "sqlite":
            with sqlite3.connect(url.database) as connection:
                connection.execute("PRAGMA ignore_check_constraints=ON")
                connection.execute(statement, values)
            connection.close()
            return
        with db.engine.begin() as connection:
            connection.exec_driver_sql(f"ALTER TABLE {table} DROP CONSTRAINT {constraint}")
            connection.execute(db.text(statement), values)


def check_names(app, line: str) -> None:
    """``rebuild --check`` and ``rebuild`` both name the row in ``line``, exit 1, no
    traceback, and change nothing."""
    runner = app.test_cli_runner()
    for args in (["rebuild", "--check"], ["rebuild"]):
        result = runner.invoke(args=args)
        assert result.exit_code == 1, result.output
        assert isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
        assert line in result.output.splitlines()
        assert "break a constraint or the rules (1, named above)" in result.output


def test_a_card_past_the_deck_is_named(app, played):
    statement = "UPDATE play SET card = 999 WHERE id = :id"
    past_a_check(app, "play", "ck_play_card", statement, id=played["play"])
    check_names(
        app,
        f"play {played['play']}: card=999 breaks the check card BETWEEN 1 AND 104 (ck_play_card)",
    )


def test_a_row_choice_past_the_table_is_named(app, played):
    statement = "UPDATE row_choice SET row = 7 WHERE id = :id"
    past_a_check(app, "row_choice", "ck_row_choice_row", statement, id=played["choice"])
    check_names(
        app,
        f"row_choice {played['choice']}: row=7 breaks the check row BETWEEN 1 AND 4 "
        "(ck_row_choice_row)",
    )


def test_a_starting_card_past_the_deck_is_named(app, played):
    change(app, "UPDATE game SET row1 = 999 WHERE id = :id", id=played["game"])
    cards = (999, *played["starting"][1:])
    check_names(
        app,
        f"game {played['game']} (match {played['match']}, game 1): starting cards {cards}: "
        "There is no card 999 in this deck: cards go from 1 to 104.",
    )


def test_a_card_played_twice_in_a_game_is_named(app, played):
    starting = played["starting"][1]
    change(
        app,
        "UPDATE play SET card = :card WHERE id = "
        "(SELECT max(id) FROM play WHERE round_id = :round)",
        card=starting,
        round=played["last_round"],
    )
    check_names(
        app,
        f"round {played['last_round']} (match {played['match']}, game 1, round 10): "
        f"{starting} is one of this game's starting cards.",
    )
