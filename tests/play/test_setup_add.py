"""Adding someone new where a match is set up: Enter in "Someone new?" or its Add button
seats them, keeps what was seated and chosen, and stores nothing else (issue 43)."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from driver import add_players, table_snapshot

from companion.db import db
from companion.models import Match, Player

RULES = {"end_kind": "at_least", "end_value": "50", "deck": "standard"}


def names(app) -> list[str]:
    """The household's players, by id."""
    with app.app_context():
        return list(db.session.scalars(db.select(Player.name).order_by(Player.id)))


def field_error(page: str) -> str:
    """The message beside the "Someone new?" field (empty when there is none)."""
    found = re.search(r'<p class="field-error" id="field-new_player-note">([^<]*)</p>', page)
    return found.group(1) if found else ""


def seat_values(page: str) -> list[str]:
    """The player ids the form carries as seats, seat_1 first."""
    return re.findall(r'name="seat_\d+" value="(\d+)"', page)


@pytest.mark.parametrize("action", ["enter", "add"])
def test_someone_new_is_added_and_seated_next_keeping_the_seats_and_rules(client, app, action):
    """Enter in the field presses the hidden first button ("enter"); Add says "add"."""
    anna, ben = add_players(client, "Anna", "Ben")
    form = {**RULES, "seat_1": str(ben), "seat_2": str(anna), "new_player": " Cleo "}
    response = client.post("/matches/", data={**form, "action": action})
    assert response.status_code == 303
    assert names(app) == ["Anna", "Ben", "Cleo"]
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Match.id))) == 0  # no match yet
        cleo = db.session.scalar(db.select(Player.id).where(Player.name == "Cleo"))
    address = urlsplit(response.headers["Location"])
    assert address.path == "/matches/new"
    query = {key: values[0] for key, values in parse_qs(address.query).items()}
    assert query == {**RULES, "seat_1": str(ben), "seat_2": str(anna), "seat_3": str(cleo)} | {
        "added": str(cleo)
    }
    page = client.get(response.headers["Location"]).text
    assert seat_values(page) == [str(ben), str(anna), str(cleo)]
    assert 'value="at_least" selected' in page and 'value="50"' in page
    assert "Cleo takes seat 3." in page
    assert re.search(r'id="field-new_player"[^>]*\sautofocus', page)  # ready for the next
    assert 'name="new_player" type="text" autocomplete' in page  # and empty again


def test_the_first_person_of_a_new_household_is_seated_first(client, app):
    """Nobody yet: the field comes first, focused; Enter seats the first name."""
    page = client.get("/matches/new").text
    assert "No players yet" in page
    assert re.search(r'id="field-new_player"[^>]*\sautofocus', page)
    response = client.post("/matches/", data={**RULES, "new_player": "Anna", "action": "enter"})
    assert response.status_code == 303
    page = client.get(response.headers["Location"]).text
    assert names(app) == ["Anna"]
    with app.app_context():
        anna = db.session.scalar(db.select(Player.id))
    assert seat_values(page) == [str(anna)]
    assert "Anna takes seat 1." in page


def test_enter_without_a_name_starts_the_match(client):
    """The hidden first button starts the match when "Someone new?" is empty."""
    anna, ben = add_players(client, "Anna", "Ben")
    form = {**RULES, "seat_1": str(anna), "seat_2": str(ben), "new_player": " "}
    response = client.post("/matches/", data={**form, "action": "enter"})
    assert response.status_code == 303
    assert re.fullmatch(r"/matches/\d+", response.headers["Location"])


def test_the_hidden_first_button_comes_before_every_seat_button(client):
    """Enter presses the form's first submit button: it must be "enter", not a player."""
    add_players(client, "Anna", "Ben")
    page = client.get("/matches/new").text
    form = page[page.index('action="/matches/"') :]
    buttons = re.findall(r'<button type="submit" name="(\w+)" value="(\w+)"', form)
    assert buttons[0] == ("action", "enter")
    assert ("action", "add") in buttons


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Enter a name."),
        ("   ", "Enter a name."),
        ("A" * 31, "A name has at most 30 characters."),
        ("anna", "There is already a player called Anna."),
        ("\N{CYRILLIC CAPITAL LETTER A}nna", "There is already a player called Anna."),
    ],
)
def test_a_bad_name_is_refused_beside_the_field_and_changes_nothing(client, app, name, message):
    _anna, ben = add_players(client, "Anna", "Ben")
    before = table_snapshot(app)
    form = {**RULES, "seat_1": str(ben), "new_player": name, "action": "add"}
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert field_error(response.text) == message
    assert 'aria-invalid="true" aria-describedby="field-new_player-note"' in response.text
    assert seat_values(response.text) == [str(ben)]  # the seats stay as they were
    assert 'value="at_least" selected' in response.text
    assert table_snapshot(app) == before


def test_an_eleventh_person_is_not_added(client, app):
    ids = add_players(client, *[f"P{i}" for i in range(1, 11)])
    before = table_snapshot(app)
    form = {**RULES, **{f"seat_{n}": str(pid) for n, pid in enumerate(ids, 1)}}
    response = client.post("/matches/", data={**form, "new_player": "Zoe", "action": "add"})
    assert response.status_code == 422
    assert field_error(response.text) == "Seat 2 to 10 players."
    assert table_snapshot(app) == before


def test_adding_as_htmx_boosted_gets_the_whole_page_after_the_redirect(client):
    """The boosted form follows the 303 to the whole page, its address the new seats."""
    response = client.post(
        "/matches/",
        data={**RULES, "new_player": "Anna", "action": "add"},
        headers={"HX-Request": "true", "HX-Boosted": "true"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert "<html" in response.text and "Anna takes seat 1." in response.text


def test_the_players_page_leads_back_to_setting_a_match_up(client):
    page = client.get("/players/").text
    assert '<a href="/matches/new">Start a match</a>' in page
