"""What state.py reads of derived's tables by name (it sits below companion.derived and
imports none of it) is the table the model defines, and holds what was stored."""

import random

from driver import add_players, play_game, start_match
from sqlalchemy import select

from companion.db import db
from companion.derived import GameResult
from companion.state import GAME_RESULTS, stored_results


def test_the_results_state_reads_are_the_game_result_models_table():
    model = GameResult.__table__
    assert GAME_RESULTS.name == model.name
    assert set(GAME_RESULTS.c.keys()) <= set(model.c.keys())


def test_state_reads_each_finished_games_stored_bulls(app, client):
    players = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, players, end_kind="games", end_value=3)
    rng = random.Random(35)
    played = [play_game(client, match_id, players, rng) for _ in range(2)]
    with app.app_context():
        rows = db.session.execute(select(GameResult)).scalars()
        kept: dict[int, dict[int, int]] = {}
        for row in rows:
            kept.setdefault(row.game_id, {})[row.player_id] = row.bulls
        read = stored_results(match_id)
    assert read == kept
    assert [read[game_id] for game_id in sorted(read)] == [game.bulls() for game in played]
