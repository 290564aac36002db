"""Undo: one step back at a time, through row choices, rounds and the start of a game."""

import random
import re

from driver import (
    add_players,
    choose,
    enter_round,
    pending_of,
    play_game,
    start_game,
    start_match,
    state_of,
    undo,
)

from companion import rules


def test_undo_steps_back_through_choices_rounds_and_the_start(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    enter_round(client, match_id, {anna: 2, ben: 50, cleo: 3})
    choose(client, match_id, anna, 4)  # 2 takes row 4; 3 then follows 2
    history = [state_of(client, match_id)]
    assert [s.action for s in history[0].current.last_round.steps][:2] == [
        rules.TOO_LOW,
        rules.PLACED,
    ]
    assert undo(client, match_id).status_code == 303  # the choice
    assert pending_of(client, match_id).player == anna
    assert undo(client, match_id).status_code == 303  # round 2
    assert state_of(client, match_id).current.rounds_played == 1
    assert undo(client, match_id).status_code == 303  # round 1
    assert state_of(client, match_id).current.rounds_played == 0
    assert undo(client, match_id).status_code == 303  # the game's start
    assert state_of(client, match_id).games == []
    page = client.get(f"/matches/{match_id}/undo").get_data(as_text=True)
    assert "nothing to undo" in page


def test_undo_at_every_point_of_a_game_restores_the_state_before(client):
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dan")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    rng = random.Random(11)
    play_game(client, match_id, ids, rng)
    finished = state_of(client, match_id)
    seen = []
    while state_of(client, match_id).games:
        before = state_of(client, match_id)
        seen.append((len(before.games), before.games[-1].rounds_played))
        assert undo(client, match_id).status_code == 303
    assert finished.over and len(seen) >= 11  # 10 rounds + start (+ any choices)


def test_a_double_tap_undoes_only_once(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    page = client.get(f"/matches/{match_id}/undo").get_data(as_text=True)
    assert "round 1 of game 1" in page
    expect = re.search(r'name="expect" value="([^"]+)"', page).group(1)
    assert client.post(f"/matches/{match_id}/undo", data={"expect": expect}).status_code == 303
    second = client.post(f"/matches/{match_id}/undo", data={"expect": expect})
    assert second.status_code == 409
    assert state_of(client, match_id).current.rounds_played == 0
