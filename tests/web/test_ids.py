"""Ids in URLs: one spelling per id (ASCII digits, no leading zero), and an id no row can
have is a 404 whatever the method, never a 405 or a 500."""

import pytest
from driver import add_players, start_game, start_match
from werkzeug.routing.converters import NumberConverter

from companion.db import db
from companion.models import MAX_ID, Match
from companion.web.guard import IdConverter

# Other spellings of 1 that int() takes: each served match 1 before.
OTHER_ONES = [
    "%D9%A1",  # U+0661 Arabic-Indic one
    "%EF%BC%91",  # U+FF11 fullwidth one
    "%DB%B1",  # U+06F1 extended Arabic-Indic one
    "%E0%A5%A7",  # U+0967 Devanagari one
    "%F0%9D%9F%8F",  # U+1D7CF mathematical bold one
    "01",
    "001",
    "+1",
    "%201",
    "1%20",
    "1%0A",
    "1_0",
]
# Ids no row can have: past PostgreSQL's integer, past SQLite's, past 18 digits.
OUT_OF_RANGE = [str(MAX_ID + 1), "99999999999", str(2**63), "9" * 19, "9" * 5000]
MATCH_ROUTES = [  # (method, path with {id}): GET and POST routes of a match
    ("GET", "/matches/{id}"),
    ("GET", "/matches/{id}/grid"),
    ("GET", "/matches/{id}/scoreboard"),
    ("GET", "/matches/{id}/live"),
    ("GET", "/matches/{id}/undo"),
    ("POST", "/matches/{id}/undo"),
    ("POST", "/matches/{id}/rematch"),
    ("POST", "/matches/{id}/rounds"),
    ("POST", "/matches/{id}/me"),
    ("GET", "/matches/{id}/delete"),
    ("POST", "/matches/{id}/delete"),
    ("GET", "/matches/{id}/export.csv"),
    ("GET", "/players/{id}"),
    ("POST", "/players/{id}/name"),
    ("GET", "/players/{id}/stats"),
]


def matches(app) -> int:
    """How many matches are stored."""
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(Match))


@pytest.fixture
def one(client):
    """Match 1 (Anna's and Ben's, a game started) and player 1 exist: the ids to spell."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    start_game(client, match_id, [12, 24, 37, 40])
    assert match_id == ids[0] == 1
    return match_id


@pytest.mark.parametrize("method, path", MATCH_ROUTES)
def test_the_plain_id_is_served(client, one, method, path):
    """The control: "1" reaches the view (whatever it then answers, not a 404)."""
    response = client.open(path.format(id="1"), method=method, data={"name": "Anna B"})
    assert response.status_code != 404


@pytest.mark.dialect_free("the id converter refuses the spelling before any query")
@pytest.mark.parametrize("method, path", MATCH_ROUTES)
def test_another_spelling_of_an_id_is_a_404(client, app, one, method, path):
    """Every other spelling of 1, on one app (an app for each took a minute of CI)."""
    answers = {
        spelling: client.open(path.format(id=spelling), method=method, data={"name": "Anna B"})
        for spelling in OTHER_ONES
    }
    assert {
        spelling: r.status_code for spelling, r in answers.items() if r.status_code != 404
    } == {}
    assert matches(app) == 1


def test_a_rematch_through_arabic_indic_digits_starts_nothing(client, app, one):
    """The finding: POST /matches/%D9%A1/rematch created a match."""
    assert client.post("/matches/%D9%A1/rematch").status_code == 404
    assert client.get("/matches/%EF%BC%91").status_code == 404
    assert matches(app) == 1


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("number", OUT_OF_RANGE)
def test_an_id_out_of_range_is_a_404_for_every_method(client, one, method, number):
    """The finding: POST /matches/99999999999/undo answered 405 where GET answered 404."""
    for path in ("/matches/{id}/undo", "/matches/{id}/delete"):  # GET and POST routes both
        assert client.open(path.format(id=number), method=method).status_code == 404


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("path", ["/matches/{id}/undo", "/matches/{id}/delete"])
def test_an_id_with_no_match_is_a_404_for_every_method(client, one, method, path):
    assert client.open(path.format(id=MAX_ID), method=method).status_code == 404
    assert client.open(path.format(id="2"), method=method).status_code == 404


def test_an_id_out_of_range_on_a_post_only_route_is_a_404_too(client, one):
    assert client.post(f"/matches/{MAX_ID + 1}/rematch").status_code == 404
    assert client.post(f"/matches/{MAX_ID}/rematch").status_code == 404
    assert client.post("/players/99999999999/name", data={"name": "X"}).status_code == 404


def test_every_route_with_a_number_uses_the_id_converter(app):
    """A new ``<int:…>`` route would bring back the other spellings: none may."""
    with_ids = 0
    for rule in app.url_map.iter_rules():
        for name, converter in rule._converters.items():
            assert not isinstance(converter, NumberConverter), (rule.rule, name)
            with_ids += isinstance(converter, IdConverter)
    assert with_ids >= 20


def test_urls_are_built_with_plain_digits(app):
    with app.test_request_context():
        from flask import url_for

        assert url_for("play.show", match_id=7) == "/matches/7"
        assert url_for("players.edit", player_id=12) == "/players/12"


def test_a_quiet_poll_takes_only_the_plain_id(client, app, one):
    """The quiet-poll shortcut before Flask reads ids with the route's own pattern."""
    with app.app_context():
        version = db.session.get(Match, 1).version
    assert client.get(f"/matches/1/live?since={version}").status_code == 204
    assert client.get(f"/matches/01/live?since={version}").status_code == 404
    assert client.get(f"/matches/%D9%A1/live?since={version}").status_code == 404
