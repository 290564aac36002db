"""Household players: names are trimmed, unique in any case, renamed and archived safely."""

import pytest
from driver import add_players, score_game, start_game, start_match

from companion.db import db
from companion.models import Match, Player


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
        ("anna", "already a player called Anna"),  # the player there, as spelt there
        ("ANNA ", "already a player called Anna"),
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


def versions(app, match_id) -> tuple[int, int]:
    """A match's version and table version."""
    with app.app_context():
        match = db.session.get(Match, match_id)
        return match.version, match.table_version


def test_a_rename_shows_at_once_on_every_phone_of_a_match_in_progress(client, app):
    """The replays are kept per match version: a rename raises the version of every
    match the player sits in, so the phones' live polls fetch the new name."""
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    version, table_version = versions(app, match_id)
    assert ">Anna<" in client.get(f"/matches/{match_id}").get_data(as_text=True)  # replayed
    poll = f"/matches/{match_id}/live?since={version}"
    assert client.get(poll).status_code == 204
    assert client.post(f"/players/{anna}/name", data={"name": "Annika"}).status_code == 303
    assert versions(app, match_id) == (version + 1, table_version + 1)
    news = client.get(poll, headers={"HX-Request": "true"})
    assert news.status_code == 200
    assert "Annika" in news.get_data(as_text=True)
    assert ">Anna<" not in news.get_data(as_text=True)
    for page in (f"/matches/{match_id}", f"/matches/{match_id}/scoreboard"):
        html = client.get(page).get_data(as_text=True)
        assert "Annika" in html and ">Anna<" not in html, page


def test_a_rename_raises_only_the_versions_of_the_players_matches(client, app):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    finished = start_match(client, [anna, ben], end_kind="games", end_value=1)
    assert score_game(client, finished, {anna: 3, ben: 5}).status_code == 303
    other = start_match(client, [ben, cleo])
    before = versions(app, finished), versions(app, other)
    assert "Anna" in client.get(f"/matches/{finished}/scoreboard").get_data(as_text=True)
    client.post(f"/players/{anna}/name", data={"name": "Annika"})
    assert versions(app, finished) == tuple(n + 1 for n in before[0])
    assert versions(app, other) == before[1]
    assert "Annika" in client.get(f"/matches/{finished}/scoreboard").get_data(as_text=True)


def test_a_refused_rename_raises_no_version(client, app):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    before = versions(app, match_id)
    assert client.post(f"/players/{anna}/name", data={"name": "ben"}).status_code == 422
    assert versions(app, match_id) == before


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
