"""Household players: names are trimmed, unique in any case, renamed and archived safely."""

import pytest
from driver import add_players, start_match

from companion.db import db
from companion.models import Player


def names(app):
    """Every stored player's name."""
    with app.app_context():
        return sorted(db.session.scalars(db.select(Player.name)))


def test_add_and_list_players(client, app):
    add_players(client, "Anna", "  Ben  ", "🐂 Ochse")
    assert names(app) == ["Anna", "Ben", "🐂 Ochse"]
    page = client.get("/players/").get_data(as_text=True)
    assert "🐂 Ochse" in page


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Enter a name"),
        ("   ", "Enter a name"),
        ("x" * 31, "at most 30"),
        ("anna", "already a player called anna"),
        ("ANNA ", "already a player called ANNA"),
        ("Bad\x07name", "control characters"),
    ],
)
def test_bad_names_are_rejected_and_nothing_saved(client, app, name, message):
    add_players(client, "Anna")
    response = client.post("/players/", data={"name": name})
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert message in page
    assert 'aria-invalid="true"' in page
    assert names(app) == ["Anna"]


def test_thirty_characters_and_emoji_are_fine(client, app):
    add_players(client, "x" * 30, "🦬" * 30)
    assert len(names(app)) == 2


def test_rename_keeps_history(client, app):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    response = client.post(f"/players/{anna}/name", data={"name": "Anne"})
    assert response.status_code == 303
    assert "Anne" in client.get(f"/matches/{match_id}").get_data(as_text=True)


def test_rename_to_a_taken_name_is_rejected(client, app):
    anna, _ = add_players(client, "Anna", "Ben")
    response = client.post(f"/players/{anna}/name", data={"name": "BEN"})
    assert response.status_code == 422
    assert names(app) == ["Anna", "Ben"]


def test_rename_may_change_only_the_case(client, app):
    (anna,) = add_players(client, "anna")
    assert client.post(f"/players/{anna}/name", data={"name": "Anna"}).status_code == 303
    assert names(app) == ["Anna"]


def test_a_player_who_played_is_archived_not_deleted(client, app):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    start_match(client, [anna, ben])
    assert "Delete" not in client.get(f"/players/{anna}").get_data(as_text=True)
    assert client.post(f"/players/{anna}/delete").status_code == 409
    assert client.post(f"/players/{anna}/archive", data={"archived": "1"}).status_code == 303
    assert "Anna" not in client.get("/matches/new").get_data(as_text=True)
    assert client.post(f"/players/{cleo}/delete").status_code == 303
    assert names(app) == ["Anna", "Ben"]
    client.post(f"/players/{anna}/archive", data={"archived": "0"})
    assert "Anna" in client.get("/matches/new").get_data(as_text=True)


def test_unknown_player_is_404(client):
    assert client.get("/players/99").status_code == 404
    assert client.post("/players/99/name", data={"name": "X"}).status_code == 404


def test_players_page_full_and_fragment(client):
    full = client.get("/players/").get_data(as_text=True)
    fragment = client.get("/players/", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "<html" in full and "<html" not in fragment
    assert 'id="players"' in fragment
