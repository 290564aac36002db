"""Undo: one step back at a time, through row choices, rounds and the start of a game."""

import random
import re

from driver import (
    add_players,
    choose,
    enter_round,
    pending_of,
    phone,
    play_game,
    start_game,
    start_match,
    state_of,
    tokens,
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


def test_an_undone_round_comes_back_into_the_fields_of_the_phone_that_undid_it(app, client, trio):
    """Issue 31: Undo took a round back and the phone had to type every card again. Its
    cards come back into that phone's fields once; another phone's stay empty."""
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    other = phone(app, match_id, tokens(app, match_id)[0])
    assert undo(client, match_id).status_code == 303
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    for player, card in ((anna, 41), (ben, 42), (cleo, 43)):
        assert re.search(rf'name="card-{player}"[^>]*value="{card}"', page), player
    again = client.get(f"/matches/{match_id}").get_data(as_text=True)  # once
    assert 'value="41"' not in again
    assert 'value="41"' not in other.get(f"/matches/{match_id}").get_data(as_text=True)


def test_undone_cards_do_not_come_back_once_the_round_was_entered_again(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    assert undo(client, match_id).status_code == 303
    response = client.post(
        f"/matches/{match_id}/rounds",
        data={
            f"card-{anna}": "44",
            f"card-{ben}": "45",
            f"card-{cleo}": "46",
            "game": "1",
            "round": "1",
        },
        follow_redirects=False,
    )
    assert response.status_code == 303
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'value="41"' not in page and 'value="44"' not in page
