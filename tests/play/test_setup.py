"""Setting a match up: players seated by tapping, the rules, rematch, "I am", the home page."""

import random
import re

import pytest
from driver import (
    add_players,
    enter_round,
    i_am,
    phone,
    play_game,
    score_game,
    start_game,
    start_match,
    state_of,
    table_snapshot,
    tokens,
    undo,
)

from companion.db import db
from companion.models import Match


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"seat_1": "A"}, "seats", "Seat 2 to 10 players"),
        ({"seat_1": "A", "seat_2": "A"}, "seat_2", "already has a seat"),
        ({"seat_1": "A", "seat_2": "999"}, "seat_2", "Choose a player from the list"),
        ({"seat_1": "A", "seat_2": "x"}, "seat_2", "Choose a player from the list"),
        ({"seat_1": "A", "new_player": "b"}, "new_player", "already a player called B"),
        ({"seat_1": "A", "seat_2": "B", "end_kind": "sometimes"}, "end_kind", "how the match"),
        ({"seat_1": "A", "seat_2": "B", "end_value": "0"}, "end_value", "from 1 to 1000"),
        ({"seat_1": "A", "seat_2": "B", "end_value": "abc"}, "end_value", "from 1 to 1000"),
        ({"seat_1": "A", "seat_2": "B", "end_value": ""}, "end_value", "from 1 to 1000"),
        ({**{f"seat_{i}": f"P{i}" for i in range(1, 8)}, "deck": "pro"}, "deck", "2 to 6"),
    ],
)
def test_bad_new_match_is_rejected(client, app, data, field, message):
    ids = dict(
        zip(
            ["A", "B", *[f"P{i}" for i in range(1, 8)]],
            add_players(client, "Anna", "B", *[f"P{i}" for i in range(1, 8)]),
            strict=True,
        )
    )
    form = {"end_kind": "more_than", "end_value": "66", "deck": "standard"}
    form.update({key: str(ids.get(value, value)) for key, value in data.items()})
    before = table_snapshot(app)
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)
    assert table_snapshot(app) == before


@pytest.mark.parametrize("seated", [10, 2])
def test_an_eleventh_seat_is_refused_not_dropped(client, app, seated):
    """A form with seat_11 filled (the page has ten seats) starts no match at all."""
    ids = add_players(client, *[f"P{i}" for i in range(1, 12)])
    form = {f"seat_{seat}": str(pid) for seat, pid in enumerate(ids[:seated], 1)}
    form.update(seat_11=str(ids[10]), end_kind="more_than", end_value="66", deck="standard")
    before = table_snapshot(app)
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert re.search(r'id="seats-error">Seat 2 to 10 players', response.get_data(as_text=True))
    assert table_snapshot(app) == before


def test_new_player_on_the_spot_takes_the_next_seat(client):
    (anna,) = add_players(client, "Anna")
    response = client.post(
        "/matches/",
        data={"seat_1": str(anna), "new_player": "Ben", "end_kind": "more_than", "end_value": "66"},
    )
    assert response.status_code == 303
    match_id = int(response.headers["Location"].rsplit("/", 1)[1])
    assert [player.name for player in state_of(client, match_id).players] == ["Anna", "Ben"]


def test_seating_order_is_kept(client):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, [cleo, anna, ben])
    assert [player.name for player in state_of(client, match_id).players] == ["Cleo", "Anna", "Ben"]


def test_pro_deck_with_three_players_uses_cards_to_34(client, app):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, deck="pro", end_kind="games", end_value=1)
    assert start_game(client, match_id, [1, 2, 3, 35]).status_code == 422
    assert start_game(client, match_id, [1, 2, 3, 34]).status_code == 303
    response = enter_round(client, match_id, dict(zip(ids, [10, 20, 35], strict=True)))
    assert response.status_code == 422
    assert "cards go from 1 to 34" in response.get_data(as_text=True)
    undo(client, match_id)
    expected = play_game(client, match_id, ids, random.Random(4), deck=34)
    assert state_of(client, match_id).standing.totals == expected.bulls()
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "Pro variant: cards 1\N{EN DASH}34" in page


def seat_buttons(html: str) -> list[tuple[str, str]]:
    """(seat number shown, player name) of every seat button, in page order."""
    return re.findall(
        r'class="seat-pick[^"]*"[^>]*>\s*<span class="seat-number"[^>]*>(\d*)</span>'
        r'<span class="name"[^>]*>([^<]+)</span>',
        html,
    )


def test_tapping_names_seats_players_in_order_and_again_gives_the_seat_back(client, app):
    """Each tap posts the form back to /matches/new: nothing is stored, the seats change."""
    anna, _ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    before = table_snapshot(app)
    form = {"end_kind": "at_least", "end_value": "50", "deck": "standard"}
    page = client.post("/matches/new", data={**form, "tap": str(cleo)}).text
    assert seat_buttons(page) == [("1", "Cleo"), ("", "Anna"), ("", "Ben")]
    seats = {"seat_1": str(cleo)}
    page = client.post("/matches/new", data={**form, **seats, "tap": str(anna)}).text
    assert seat_buttons(page) == [("1", "Cleo"), ("2", "Anna"), ("", "Ben")]
    assert f'name="seat_1" value="{cleo}"' in page and f'name="seat_2" value="{anna}"' in page
    assert 'value="at_least" selected' in page and 'value="50"' in page  # the rules stay
    # Tapping Cleo again gives her seat back: Anna moves up to seat 1.
    seats = {"seat_1": str(cleo), "seat_2": str(anna)}
    page = client.post("/matches/new", data={**form, **seats, "tap": str(cleo)}).text
    assert seat_buttons(page) == [("1", "Anna"), ("", "Ben"), ("", "Cleo")]
    assert table_snapshot(app) == before


def test_the_seated_show_in_seat_order_then_the_others_by_name(client):
    """The finding (issue 57): the players stood by name, seat 4 before seat 3."""
    anna, ben, _cleo, dora, emil = add_players(client, "Anna", "Ben", "Cleo", "Dora", "Emil")
    seats = {"seat_1": dora, "seat_2": ben, "seat_3": emil, "seat_4": anna}
    page = client.get("/matches/new", query_string=seats).text
    assert seat_buttons(page) == [
        ("1", "Dora"),
        ("2", "Ben"),
        ("3", "Emil"),
        ("4", "Anna"),
        ("", "Cleo"),
    ]


def test_tapping_seats_as_a_fragment_for_htmx(client):
    """htmx gets only the form section back; Vary tells caches the two answers apart."""
    (anna,) = add_players(client, "Anna")
    response = client.post("/matches/new", data={"tap": str(anna)}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section aria-labelledby="new-heading"')
    assert "HX-Request" in response.headers["Vary"]


@pytest.mark.parametrize("tap", ["999", "x", "9" * 5000, ""])
def test_tapping_an_unknown_player_seats_nobody(client, app, tap):
    add_players(client, "Anna")
    before = table_snapshot(app)
    response = client.post("/matches/new", data={"tap": tap})
    assert response.status_code == (422 if tap else 200)
    assert seat_buttons(response.text) == [("", "Anna")]
    assert table_snapshot(app) == before


def test_an_eleventh_tap_is_refused(client):
    ids = add_players(client, *[f"P{i}" for i in range(11)])
    seats = {f"seat_{seat}": str(pid) for seat, pid in enumerate(ids[:10], 1)}
    response = client.post("/matches/new", data={**seats, "tap": str(ids[10])})
    assert response.status_code == 422
    assert "Seat 2 to 10 players" in response.text
    seated = {name: number for number, name in seat_buttons(response.text)}
    assert [seated[f"P{i}"] for i in range(11)] == [*map(str, range(1, 11)), ""]


def test_rematch_starts_the_same_seats_and_rules_in_one_tap(client, app):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    old = start_match(client, [ids[2], ids[0], ids[1]], end_kind="games", end_value=1, deck="pro")
    score_game(client, old, {ids[0]: 3, ids[1]: 5, ids[2]: 8})
    assert "Rematch" in client.get(f"/matches/{old}").text  # offered once it is over
    assert "Rematch" in client.get("/").text
    other_phone = phone(app, old, tokens(app, old)[0])  # a player phone; it gets the link
    response = other_phone.post(f"/matches/{old}/rematch")
    assert response.status_code == 303
    new = int(re.search(r"/matches/(\d+)$", response.headers["Location"]).group(1))
    with app.app_context():
        before, after = db.session.get(Match, old), db.session.get(Match, new)
        assert [seat.player_id for seat in after.seats] == [ids[2], ids[0], ids[1]]
        assert (after.end_kind, after.end_value, after.pro) == ("games", 1, True)
        assert after.created_at >= before.created_at and after.games == []
    assert start_game(other_phone, new, [1, 2, 3, 4]).status_code == 303


def test_a_match_with_a_rematch_leads_to_it(client, app):
    """Once rematched, a finished match offers its rematch, not another one: a second tap
    (or another phone's) goes to the same rematch, and nothing new is stored."""
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    first = client.post(f"/matches/{old}/rematch")
    new = int(re.search(r"/matches/(\d+)$", first.headers["Location"]).group(1))
    other_phone = phone(app, old, tokens(app, old)[0])
    again = other_phone.post(f"/matches/{old}/rematch")
    assert again.status_code == 303 and again.headers["Location"].endswith(f"/matches/{new}")
    assert start_game(other_phone, new, [1, 2, 3, 4]).status_code == 303  # its link too
    with app.app_context():
        assert db.session.query(Match).count() == 2
    for page in (f"/matches/{old}", f"/matches/{old}/scoreboard", "/"):
        html = client.get(page).text
        assert f'action="/matches/{old}/rematch"' not in html, page
        assert f'href="/matches/{old}/rematch"' in html and f"Rematch: match {new}" in html, page


def test_every_phone_of_the_table_follows_the_rematch_with_its_link_and_its_i_am(client, app):
    """Issue 31: after a rematch, each other phone had to scan a new code and say who it
    is again. Through the finished match's link to its rematch, a player phone holds the
    rematch's player link and its "I am", the TV its watch link; a stranger nothing."""
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    old = start_match(client, [anna, ben, cleo], end_kind="games", end_value=1)
    player_token, watch_token = tokens(app, old)
    bens_phone, tv, stranger = (
        phone(app, old, player_token),
        phone(app, old, watch_token),
        phone(app),
    )
    i_am(bens_phone, old, ben)
    score_game(client, old, {anna: 3, ben: 5, cleo: 8})
    started = client.post(f"/matches/{old}/rematch")
    new = int(re.search(r"/matches/(\d+)$", started.headers["Location"]).group(1))
    followed = bens_phone.get(f"/matches/{old}/rematch")
    assert followed.status_code == 303 and followed.headers["Location"] == f"/matches/{new}"
    assert start_game(bens_phone, new, [1, 2, 3, 4]).status_code == 303  # a player
    assert "You are Ben on this phone" in bens_phone.get(f"/matches/{new}").text
    watched = tv.get(f"/matches/{old}/rematch?view=table")
    assert watched.headers["Location"] == f"/matches/{new}/table"
    assert tv.post(f"/matches/{new}/invite/renew").status_code == 403  # watches only
    assert f"/matches/{new}/invite" in tv.get(f"/matches/{new}").text  # its watch link
    stranger.get(f"/matches/{old}/rematch")
    assert stranger.get(f"/matches/{new}/invite").status_code == 403


def test_every_screen_keeps_the_result_until_the_rematchs_first_game_then_follows(client, app):
    """Issue 43: a rematch took the winner off the TV at once; issue 57: the phones had
    to tap to follow. The link to the rematch, on the TV and on every phone, is marked to
    follow only once the rematch's first game starts, and the finished match's version
    rises then, so each page's poll (or stream) brings the mark."""
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    new = int(client.post(f"/matches/{old}/rematch").headers["Location"].rsplit("/", 1)[1])
    for page in (f"/matches/{old}/table", f"/matches/{old}"):
        html = client.get(page).text
        assert "Winner: Anna" in html and f"Rematch: match {new}" in html
        assert "data-follow" not in html, page
    version = state_of(client, old).version
    assert start_game(client, new, [12, 24, 37, 40]).status_code == 303
    assert state_of(client, old).version == version + 1
    poll = client.get(f"/matches/{old}/live?since={version}&view=table")
    assert poll.status_code == 200
    for html in (poll.text, client.get(f"/matches/{old}/table").text):
        assert "Winner: Anna" in html  # the match's own, still
        assert f'href="/matches/{old}/rematch?view=table" data-follow' in html
    poll = client.get(f"/matches/{old}/live?since={version}")
    for html in (poll.text, client.get(f"/matches/{old}").text):
        assert f'href="/matches/{old}/rematch" data-follow' in html
    # The rematch's rounds raise nothing of the finished match.
    assert enter_round(client, new, {ids[0]: 41, ids[1]: 42}).status_code == 303
    assert state_of(client, old).version == version + 1


def test_the_tv_says_the_rematch_started_with_the_code_until_its_first_round(client, app):
    """Issue 57: the TV that followed a rematch says so, with the code for a phone that
    left, while its first round is being entered; a match of its own never says so."""
    ids = add_players(client, "Anna", "Ben")
    own = start_match(client, ids)
    assert start_game(client, own, [12, 24, 37, 40]).status_code == 303
    assert "Rematch started" not in client.get(f"/matches/{own}/table").text
    old = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    new = int(client.post(f"/matches/{old}/rematch").headers["Location"].rsplit("/", 1)[1])
    assert start_game(client, new, [12, 24, 37, 40]).status_code == 303
    tv = client.get(f"/matches/{new}/table").text
    assert "Rematch started" in tv and 'class="join-qr"' in tv
    assert "Rematch started" not in client.get(f"/matches/{new}").text  # the TV's alone
    assert enter_round(client, new, {ids[0]: 41, ids[1]: 42}).status_code == 303
    tv = client.get(f"/matches/{new}/table").text
    assert "Rematch started" not in tv and 'class="join-qr"' not in tv


def test_a_rematch_keeps_the_matchs_note(client, app):
    """Issue 57: the evening's note ("Oma's 80th") comes along to the rematch."""
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    assert client.post(f"/matches/{old}/note", data={"note": "Oma's 80th"}).status_code == 303
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    new = int(client.post(f"/matches/{old}/rematch").headers["Location"].rsplit("/", 1)[1])
    with app.app_context():
        assert db.session.get(Match, new).note == "Oma's 80th"
    assert "Oma&#39;s 80th" in client.get(f"/matches/{new}").text


def test_a_boosted_rematch_loads_the_new_page_so_the_address_follows(client, app):
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    boosted = client.post(
        f"/matches/{old}/rematch", headers={"HX-Request": "true", "HX-Boosted": "true"}
    )
    assert boosted.status_code == 204
    assert re.fullmatch(r"/matches/\d+", boosted.headers["HX-Redirect"])


def test_the_link_to_a_rematch_not_started_leads_back_to_the_match(client):
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    response = client.get(f"/matches/{old}/rematch")
    assert response.status_code == 303 and response.headers["Location"] == f"/matches/{old}"


def test_deleting_a_rematch_offers_rematch_again(client):
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    first = client.post(f"/matches/{old}/rematch")
    new = int(re.search(r"/matches/(\d+)$", first.headers["Location"]).group(1))
    version = client.get(f"/matches/{new}/delete").text
    version = re.search(r'name="version" value="(\d+)"', version).group(1)
    assert client.post(f"/matches/{new}/delete", data={"version": version}).status_code == 303
    assert f'action="/matches/{old}/rematch"' in client.get(f"/matches/{old}").text


@pytest.mark.parametrize("link", [None, "watch"])
def test_a_phone_without_the_player_link_cannot_start_a_rematch(client, app, link):
    """The finding: a stranger's post created the rematch and got its player link."""
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    stranger = phone(app, old, tokens(app, old)[1] if link else None)
    page = stranger.get(f"/matches/{old}").text
    assert f'action="/matches/{old}/rematch"' not in page  # no button that would refuse
    assert f'action="/matches/{old}/rematch"' not in stranger.get("/").text
    before = table_snapshot(app)
    assert stranger.post(f"/matches/{old}/rematch").status_code == 403
    assert table_snapshot(app) == before
    assert f'action="/matches/{old}/rematch"' in client.get(f"/matches/{old}").text


def test_a_match_still_being_played_has_no_rematch_yet(client, app):
    """Taken early, the rematch would be the stranger's: refused until the match is over."""
    ids = add_players(client, "Anna", "Ben")
    old = start_match(client, ids, end_kind="games", end_value=2)
    score_game(client, old, {ids[0]: 3, ids[1]: 5})
    before = table_snapshot(app)
    refused = client.post(f"/matches/{old}/rematch")
    assert refused.status_code == 409
    assert f"Match {old} is still being played" in refused.text
    assert table_snapshot(app) == before


def test_rematch_of_an_unknown_match_is_404(client):
    assert client.post("/matches/999/rematch").status_code == 404


def test_i_am_is_offered_as_soon_as_the_match_exists(client, trio):
    _, match_id = trio
    page = client.get(f"/matches/{match_id}").text
    assert "Everyone on their own phone? Who are you?" in page
    assert page.count('name="player" value=') == 3
    assert "The four face-up starting cards" in page


def test_the_home_page_lists_matches_being_played_apart_from_finished_ones(client):
    anna, ben = add_players(client, "Anna", "Ben")
    finished = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, finished, {anna: 12, ben: 3})
    playing = start_match(client, [ben, anna])
    score_game(client, playing, {anna: 10, ben: 20})
    start_game(client, playing, [12, 24, 37, 40])
    enter_round(client, playing, {anna: 41, ben: 42})
    page = client.get("/").text
    being_played = page.split("Being played")[1].split("Finished")[0]
    done = page.split("Finished")[1]
    assert f"Match {playing}" in being_played and f"Match {finished}" not in being_played
    assert "Game 2 · round 2 of 10" in being_played
    assert "leading: Anna" in being_played and f'href="/matches/{playing}">Continue' in being_played
    assert f"Match {finished}" in done and "Winner: Ben" in done
    assert f'action="/matches/{finished}/rematch"' in done
