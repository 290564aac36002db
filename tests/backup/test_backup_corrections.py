"""Corrections in the backup: exported with what they replaced and when, imported again,
so a round trip gives the same file; a bad correction is refused with its place."""

import json
import random
import re

import pytest
from backups import export, upload
from conftest import make_app
from correcting import correct, text_of
from driver import add_players, enter_round, play_game, start_game, start_match, state_of

from companion.db import db
from companion.models import Correction


@pytest.fixture
def corrected(client):
    """A finished match, and a game in progress with two corrected rounds: the first
    dropped a row choice."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    first = start_match(client, ids, end_kind="games", end_value=1)
    play_game(client, first, ids, random.Random(3), chooser=lambda pending: pending.suggested)
    second = start_match(client, ids)
    anna, ben, cleo = ids
    assert start_game(client, second, [12, 24, 37, 40]).status_code == 303
    assert enter_round(client, second, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    assert enter_round(client, second, {anna: 2, ben: 50, cleo: 3}).status_code == 303
    assert (
        client.post(
            f"/matches/{second}/choice", data={"player": anna, "row": 1, "game": 1, "round": 2}
        ).status_code
        == 303
    )
    response = correct(client, second, 1, 1, cards={anna: 1}, choices={anna: 1})
    assert response.status_code == 303, text_of(response)
    response = correct(client, second, 1, 2, cards={ben: 51})
    assert response.status_code == 303, text_of(response)
    return client


def test_corrections_are_exported_with_what_they_replaced(corrected):
    document = export(corrected)
    game = document["matches"][1]["games"][0]
    first, second = game["corrections"]
    assert first["round"] == 1 and first["cards"] == [41, 42, 43]
    assert "choices" not in first
    assert first["dropped"] == [{"round": 2, "player": "Anna", "row": 1}]
    assert second["round"] == 2 and second["cards"] == [2, 50, 3] and "dropped" not in second
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", first["at"])
    assert "corrections" not in document["matches"][0]["games"][0]


def test_a_round_trip_with_corrections_gives_the_same_file(corrected, tmp_path):
    first = corrected.get("/backup/export.json").get_data(as_text=True)
    target = make_app(tmp_path / "other.sqlite").test_client()
    assert upload(target, first.encode()).status_code == 303
    again = target.get("/backup/export.json").get_data(as_text=True)
    drop_time = re.compile(r'"exported_at": "[^"]+"')
    assert drop_time.sub("", again) == drop_time.sub("", first)
    with target.application.app_context():
        assert db.session.scalar(db.select(db.func.count(Correction.id))) == 2
    page = target.get("/matches/2/games/1/replay?round=1")
    assert "corrected" in text_of(page)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"round": 4}, "round"),
        ({"cards": [1, 2]}, "one card per seat"),
        ({"choices": {"Zoe": 1}}, "no seat"),
        ({"choices": {"Anna": 5}}, "rows are 1, 2, 3 or 4"),
        ({"dropped": [{"round": 1, "player": "Anna", "row": 1}]}, "round"),
        ({"dropped": [{"round": 2, "player": "Anna"}]}, "“row” is missing"),  # was a 500
        ({"dropped": [{"round": 2, "player": "Anna", "row": 0}]}, "rows are 1, 2, 3 or 4"),
        ({"at": "yesterday"}, "date and time"),
        ({"colour": "red"}, "Unknown field"),
        # The finding: records that contradict the rounds were imported as "corrected".
        ({"cards": [9, 9, 43]}, "both entered 9: each card exists once"),
        ({"cards": [12, 42, 43]}, "12 is one of this game's starting cards"),
        ({"at": "2999-01-01T00:00:00Z"}, "“at” is 2999-01-01T00:00:00Z: dates go from 1900-01-01"),
        ({"at": "2001-01-01T00:00:00Z"}, "a correction comes after its game started"),
    ],
)
def test_a_bad_correction_is_refused(corrected, tmp_path, change, words):
    document = export(corrected)
    document["matches"][1]["games"][0]["corrections"][0].update(change)
    target = make_app(tmp_path / "other.sqlite").test_client()
    response = upload(target, json.dumps(document).encode())
    assert response.status_code == 422
    text = text_of(response)
    assert words in text and "correction 1" in text


def test_a_game_a_correction_left_waiting_goes_out_and_comes_back(client, tmp_path):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    anna = ids[0]
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    for cards in ((41, 42, 43), (13, 25, 38), (50, 51, 52)):
        data = dict(zip(ids, cards, strict=True))
        assert enter_round(client, match_id, data).status_code == 303
    # 14 for 41: Anna's 13 in round 2 is too low now; round 3 waits behind it.
    assert correct(client, match_id, 1, 1, cards={anna: 14}).status_code == 303
    first = client.get("/backup/export.json").get_data(as_text=True)
    target = make_app(tmp_path / "other.sqlite").test_client()
    assert upload(target, first.encode()).status_code == 303
    again = target.get("/backup/export.json").get_data(as_text=True)
    drop_time = re.compile(r'"exported_at": "[^"]+"')
    assert drop_time.sub("", again) == drop_time.sub("", first)
    waiting = state_of(target, 1).current
    assert waiting.rounds_played == 2 and waiting.pending.card == 13


def test_without_a_correction_a_round_before_the_last_may_not_wait(corrected, tmp_path):
    document = export(corrected)
    game = document["matches"][1]["games"][0]
    del game["corrections"]
    game["rounds"][0] = {"cards": [1, 42, 43]}  # Anna's 1: too low, no choice recorded
    target = make_app(tmp_path / "other.sqlite").test_client()
    response = upload(target, json.dumps(document).encode())
    assert response.status_code == 422
    assert "no row choice is recorded" in text_of(response)
