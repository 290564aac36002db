"""What a household holds at most (issue 30): a clear message at the cap, next to the
field, and nothing stored; in the players' page, a new match, a rematch and the import.
The caps are 200 players and 20,000 matches (companion.models); lowered here."""

import json

import pytest
from backups import export, household, shifted, snapshot, upload
from driver import add_players, score_game, start_match

from companion.models import MAX_MATCHES_HELD, MAX_PLAYERS_HELD


def test_the_caps_stand_far_above_a_household_and_a_club():
    assert MAX_PLAYERS_HELD == 200
    assert MAX_MATCHES_HELD == 20_000


@pytest.mark.app_config(PLAYERS_HELD=3)
def test_a_player_past_the_cap_is_refused_next_to_the_name(app, client):
    add_players(client, "Anna", "Ben", "Cleo")
    before = snapshot(app)
    response = client.post("/players/", data={"name": "Dora"})
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert "The household has 3 players, as many as it can hold." in page
    assert 'aria-invalid="true"' in page and 'value="Dora"' in page
    assert snapshot(app) == before


@pytest.mark.app_config(PLAYERS_HELD=3)
def test_a_new_player_typed_into_a_new_match_past_the_cap_stores_neither(app, client):
    anna, ben, _cleo = add_players(client, "Anna", "Ben", "Cleo")
    before = snapshot(app)
    data = {"seat_1": str(anna), "seat_2": str(ben), "new_player": "Dora"}
    response = client.post("/matches/", data={**data, "end_kind": "more_than", "end_value": "66"})
    assert response.status_code == 422
    assert "as many as it can hold" in response.get_data(as_text=True)
    assert snapshot(app) == before


@pytest.mark.app_config(MATCHES_HELD=1)
def test_a_match_past_the_cap_is_refused_and_nothing_is_stored(app, client):
    ids = add_players(client, "Anna", "Ben")
    start_match(client, ids)
    before = snapshot(app)
    response = client.post(
        "/matches/",
        data={"seat_1": str(ids[0]), "seat_2": str(ids[1]), "end_kind": "games", "end_value": "1"},
        headers={"Accept-Language": "de"},
    )
    assert response.status_code == 422
    assert "Der Haushalt hat 1 Spiele" in response.get_data(as_text=True)
    assert snapshot(app) == before


@pytest.mark.app_config(MATCHES_HELD=1)
def test_a_rematch_past_the_cap_is_refused_with_the_reason(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    assert score_game(client, match_id, {ids[0]: 3, ids[1]: 5}).status_code == 303
    before = snapshot(app)
    response = client.post(f"/matches/{match_id}/rematch")
    assert response.status_code == 409
    assert "The household has 1 matches, as many as it can hold." in response.get_data(as_text=True)
    assert snapshot(app) == before


@pytest.mark.parametrize(
    "cap, at_most, words", [("PLAYERS_HELD", 9, "10 players"), ("MATCHES_HELD", 3, "4 matches")]
)
def test_an_import_past_a_cap_is_refused_whole(app, client, cap, at_most, words):
    document = shifted(export_of_a_household(client))  # 5 players, 2 matches: 2 more
    app.config[cap] = at_most
    if cap == "PLAYERS_HELD":
        text = json.dumps(document, ensure_ascii=False)
        for player in document["players"]:  # 5 new players: names, seats and choices
            text = text.replace(f'"{player["name"]}"', f'"{player["name"]} II"')
        document = json.loads(text)
    before = snapshot(app)
    response = upload(client, document)
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert (
        "With this file the household would have" in page and f"{words}, at most {at_most}." in page
    )
    assert snapshot(app) == before


def export_of_a_household(client) -> dict:
    household(client)
    return export(client)
