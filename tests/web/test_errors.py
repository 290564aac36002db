"""Errors: pages of the app for people, JSON with an "error" for every JSON route."""

import pytest
from driver import add_players, start_match

from companion.models import MAX_ID

# Every way a JSON route's address can name nothing: an unknown game or match, an id no
# row can have, another spelling of an id, no id at all; and a method it does not take.
JSON_MISSES = [
    ("GET", "/matches/{id}/games/2/luck.json", 404),
    ("GET", "/matches/{id}/games/99999999999/luck.json", 404),
    ("GET", "/matches/{id}/games/0/luck.json", 404),
    ("GET", "/matches/{id}/games/01/luck.json", 404),
    ("GET", "/matches/{id}/games/one/luck.json", 404),
    ("GET", "/matches/{other}/games/1/luck.json", 404),
    ("GET", f"/matches/{MAX_ID + 1}/games/1/luck.json", 404),
    ("GET", "/matches/%D9%A1/games/1/luck.json", 404),
    ("GET", "/matches/{id}/luck.json", 404),
    ("POST", "/matches/{id}/games/1/luck.json", 405),
    ("GET", "/api/nothing", 404),
    ("GET", "/api/resolve", 405),
]


@pytest.fixture
def match_id(client):
    """A match of Anna's and Ben's, its first game not started."""
    return start_match(client, add_players(client, "Anna", "Ben"))


@pytest.mark.parametrize("method, path, status", JSON_MISSES)
def test_a_json_route_answers_its_errors_in_json(client, match_id, method, path, status):
    """The finding: luck.json of an unknown game answered the app's HTML 404 page."""
    response = client.open(path.format(id=match_id, other=match_id + 1), method=method)
    assert response.status_code == status
    assert response.mimetype == "application/json"
    assert set(response.get_json()) == {"error"} and response.get_json()["error"]
    assert "<html" not in response.get_data(as_text=True).lower()


def test_a_page_still_answers_its_errors_as_a_page(client, match_id):
    for path in (f"/matches/{match_id + 1}", f"/matches/{match_id}/games/2/replay", "/nothing"):
        response = client.get(path)
        assert response.status_code == 404
        assert response.mimetype == "text/html"
