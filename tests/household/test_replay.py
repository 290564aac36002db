"""Replay: a card-by-card game round by round, every step explained; 404 for what is not."""

import html
import random
import re

import pytest
from driver import add_players, choose, enter_round, play_game, score_game, start_game, start_match


def text_of(page: str) -> str:
    """The words of a page, tags and spacing gone."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.fixture
def opening(client):
    """The rules' worked example, played: three rounds of game 1, Cleo's 3 too low."""
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, [anna, ben, cleo])
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    enter_round(client, match_id, {anna: 39, ben: 44, cleo: 3})
    choose(client, match_id, cleo, 1)
    enter_round(client, match_id, {anna: 45, ben: 50, cleo: 60})
    return match_id, (anna, ben, cleo)


def replay(client, match_id, game=1, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return client.get(f"/matches/{match_id}/games/{game}/replay" + (f"?{query}" if query else ""))


def test_a_round_rows_before_plays_steps_rows_after(client, opening):
    match_id, _ = opening
    response = replay(client, match_id, round=2)
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    words = text_of(page)
    assert "Replay of game 1" in words and "Round 2 of 10" in words
    before = words.split("The rows before the round")[1].split("The cards revealed,")[0]
    # Each card shows its number and bulls (and says "3 bulls" to screen readers).
    assert "Row 4 6 bulls 40 3 3 bulls 41 1 1 bull 42 1 1 bull 43 1 1 bull" in before
    plays = words.split("The cards revealed, lowest first")[1].split("Where each card went")[0]
    assert plays.strip() == "3 Cleo 39 Anna 44 Ben"
    steps = words.split("Where each card went")[1].split("The rows after the round")[0]
    assert (
        "3 is lower than every row's end (12, 24, 37, 43): Cleo chose row 1 and takes "
        "1 card, 1 bull."
    ) in steps
    assert "39 goes to row 3: 37 is the closest lower end (row 2 ends in 24)." in steps
    assert "44 goes to row 4: 43 is the closest lower end (row 3 ends in 39)." in steps
    after = words.split("The rows after the round")[1].split("Bulls after round 2")[0]
    assert "Row 1 1 bull changed 3 1" in after and "full" in after  # row 4 holds 5 cards
    assert 'id="after-1"' in page and 'class="table-row is-changed"' in page
    tally = words.split("Bulls after round 2")[1]
    assert "Anna 0 bulls Ben 0 bulls Cleo 1 bull" in tally


def test_a_sixth_card_is_explained(client, opening):
    match_id, _ = opening
    words = text_of(replay(client, match_id, round=3).get_data(as_text=True))
    assert (
        "45 would be the 6th card in row 4: Anna takes 5 cards, 11 bulls. 44 is the "
        "closest lower end (row 3 ends in 39)."
    ) in words
    assert "Anna 11 bulls Ben 0 bulls Cleo 1 bull" in words


def test_round_links_step_through_the_game(client, opening):
    match_id, _ = opening
    first = replay(client, match_id).get_data(as_text=True)  # no round given: the first
    assert "Round 1 of 10" in text_of(first)
    assert 'rel="prev"' not in first
    assert f'href="/matches/{match_id}/games/1/replay?round=2" rel="next"' in first
    middle = replay(client, match_id, round=2).get_data(as_text=True)
    assert f'href="/matches/{match_id}/games/1/replay?round=1" rel="prev"' in middle
    assert f'href="/matches/{match_id}/games/1/replay?round=3" rel="next"' in middle
    assert '<span class="button" aria-current="step">2</span>' in middle
    assert f'hx-get="/matches/{match_id}/games/1/replay?round=3"' in middle
    last = replay(client, match_id, round=3).get_data(as_text=True)
    assert 'rel="next"' not in last  # round 4 has not been played


def test_replay_as_a_fragment(client, opening):
    match_id, _ = opening
    response = client.get(
        f"/matches/{match_id}/games/1/replay?round=2", headers={"HX-Request": "true"}
    )
    fragment = response.get_data(as_text=True)
    assert "<html" not in fragment and fragment.lstrip().startswith('<div id="replay"')
    assert "HX-Request" in response.headers["Vary"]


@pytest.mark.parametrize(
    "path",
    [
        "games/1/replay?round=4",
        "games/1/replay?round=99",
        "games/1/replay?round=0",
        "games/1/replay?round=-1",
        "games/1/replay?round=abc",
        "games/1/replay?round=",
        "games/2/replay",
        "games/0/replay",
    ],
)
def test_what_was_not_played_is_404(client, opening, path):
    match_id, _ = opening
    response = client.get(f"/matches/{match_id}/{path}")
    assert response.status_code == 404
    assert "This card is not in the deck" in response.get_data(as_text=True)


def test_a_match_that_does_not_exist_is_404(client):
    assert client.get("/matches/9/games/1/replay").status_code == 404


def test_a_round_waiting_for_a_choice(client):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    start_game(client, match_id, [10, 20, 30, 40])
    enter_round(client, match_id, {anna: 5, ben: 50})
    words = text_of(replay(client, match_id, round=1).get_data(as_text=True))
    assert (
        "5 is lower than every row's end: Anna takes a row of their choice (fewest "
        "bulls: row 1). The game waits for this choice."
    ) in words


def test_a_game_without_rounds_shows_its_starting_cards(client):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    start_game(client, match_id, [10, 20, 30, 40])
    words = text_of(replay(client, match_id).get_data(as_text=True))
    assert "No round of this game has been entered yet." in words
    assert "Row 4 3 bulls 40 3 3 bulls" in words
    assert replay(client, match_id, round=1).status_code == 404


def test_a_score_only_game_has_no_cards_to_replay(client):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    score_game(client, match_id, {anna: 7, ben: [55, 11]})
    response = replay(client, match_id, round=3)
    assert response.status_code == 200
    words = text_of(response.get_data(as_text=True))
    assert "This game was kept as typed scores, so it has no cards to replay." in words
    assert "Anna 7 bulls Ben 12 bulls" in words


def test_every_round_of_a_whole_game_adds_up_to_the_engine(client):
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dan")
    match_id = start_match(client, ids)
    expected = play_game(client, match_id, ids, random.Random(11))
    for number in range(1, 11):
        response = replay(client, match_id, round=number)
        assert response.status_code == 200
    words = text_of(response.get_data(as_text=True))
    tally = " ".join(
        f"{name} {bulls} bull{'s' if bulls != 1 else ''}"
        for name, bulls in zip(
            ["Anna", "Ben", "Cleo", "Dan"], [expected.bulls()[pid] for pid in ids], strict=True
        )
    )
    assert tally in words


def test_the_scoreboard_links_replays_csv_and_delete(client, opening):
    match_id, (anna, ben, _) = opening
    page = client.get(f"/matches/{match_id}/scoreboard").get_data(as_text=True)
    assert f'href="/matches/{match_id}/games/1/replay">Game 1</a>' in page
    assert f'href="/matches/{match_id}/export.csv"' in page
    assert f'href="/matches/{match_id}/delete"' in page
    other = start_match(client, [anna, ben])
    score_game(client, other, {anna: 1, ben: 2})
    assert "/replay" not in client.get(f"/matches/{other}/scoreboard").get_data(as_text=True)
