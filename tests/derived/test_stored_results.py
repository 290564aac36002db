"""The finished games' results the replay reads (``state.stored_results``) are the ones
derived's refresh stored (``GameResult``)."""

import random

from driver import add_players, play_game, start_match
from sqlalchemy import select

from companion.db import db
from companion.derived import GameResult
from companion.state import stored_results


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
