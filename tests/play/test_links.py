"""Many phones, one table: player and watch links, own-card entry, live polling."""

import re
from datetime import UTC, datetime

import pytest
from driver import (
    add_players,
    choose,
    count,
    enter_round,
    i_am,
    pending_of,
    phone,
    start_game,
    start_match,
    state_of,
    tokens,
)

from companion.db import db
from companion.models import MAX_ID, PendingCard, Round

# --- links ----------------------------------------------------------------------------


def test_tokens_are_long_random_and_distinct(app, table):
    _, match_id = table
    player, watch = tokens(app, match_id)
    assert player != watch
    assert len(player) >= 43 and len(watch) >= 43  # 256 bits, URL-safe base64


def test_a_phone_without_a_link_can_look_but_not_write(app, table):
    (anna, ben, cleo), match_id = table
    stranger = phone(app)
    assert stranger.get(f"/matches/{match_id}").status_code == 200
    rounds_before = count(app, Round)
    response = enter_round(stranger, match_id, {anna: 41, ben: 42, cleo: 43})
    assert response.status_code == 403
    assert count(app, Round) == rounds_before
    assert stranger.get(f"/matches/{match_id}/invite").status_code == 403
    assert stranger.post(f"/matches/{match_id}/undo", data={"expect": "x"}).status_code == 403


def test_a_watch_link_only_shows_the_match(app, table):
    (anna, ben, cleo), match_id = table
    player_token, watch_token = tokens(app, match_id)
    watcher = phone(app, match_id, watch_token)
    assert enter_round(watcher, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 403
    invite = watcher.get(f"/matches/{match_id}/invite").get_data(as_text=True)
    assert watch_token in invite
    assert player_token not in invite  # the watch page does not leak the player link
    assert watcher.post(f"/matches/{match_id}/invite/renew").status_code == 403


def test_a_player_link_lets_another_phone_enter(app, table):
    (anna, ben, cleo), match_id = table
    player_token, _ = tokens(app, match_id)
    other = phone(app, match_id, player_token)
    assert enter_round(other, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    assert count(app, Round) == 1


def test_a_wrong_token_is_404_and_grants_nothing(app, table):
    (anna, ben, cleo), match_id = table
    other = app.test_client()
    assert other.get(f"/matches/{match_id}/join/not-the-token").status_code == 404
    assert enter_round(other, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 403


def test_renewing_the_links_locks_out_the_old_ones(client, app, table):
    (anna, ben, cleo), match_id = table
    old_player, old_watch = tokens(app, match_id)
    other = phone(app, match_id, old_player)
    assert client.post(f"/matches/{match_id}/invite/renew").status_code == 303
    new_player, new_watch = tokens(app, match_id)
    assert {new_player, new_watch}.isdisjoint({old_player, old_watch})
    assert enter_round(other, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 403
    assert app.test_client().get(f"/matches/{match_id}/join/{old_player}").status_code == 404
    assert enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303


def test_invite_shows_qr_codes_at_an_address_phones_can_reach(client, app, table):
    _, match_id = table
    page = client.get(f"/matches/{match_id}/invite").get_data(as_text=True)
    player_token, watch_token = tokens(app, match_id)
    assert page.count("<svg") >= 2 and "<path" in page
    links = re.findall(r"https?://[^\s\"<]+/join/[\w-]+", page)
    assert any(link.endswith(player_token) for link in links)
    assert any(link.endswith(watch_token) for link in links)
    assert not any("localhost" in link or "127.0.0.1" in link for link in links)
    assert 'id="loopback-only"' not in page


@pytest.mark.app_config(PUBLIC_URL="https://nimmt.example.org/")
def test_invite_uses_the_configured_public_url(client, app, table):
    _, match_id = table
    page = client.get(f"/matches/{match_id}/invite").get_data(as_text=True)
    assert f"https://nimmt.example.org/matches/{match_id}/join/" in page


@pytest.mark.app_config(HOST="127.0.0.1")
def test_a_server_on_loopback_alone_invites_on_loopback_and_says_so(client, app, table):
    """COMPANION_HOST=127.0.0.1: the LAN address would be one it does not listen on."""
    _, match_id = table
    page = client.get(f"/matches/{match_id}/invite").get_data(as_text=True)
    links = re.findall(r"https?://[^\s\"<]+/join/[\w-]+", page)
    assert links and all(link.startswith("http://127.0.0.1/") for link in links)
    note = re.search(r'<p class="notice" id="loopback-only">([^<]+)</p>', page).group(1)
    assert "other phones cannot open these links" in note and "COMPANION_HOST=0.0.0.0" in note


@pytest.mark.app_config(HOST="127.0.0.1", PUBLIC_URL="https://nimmt.example.org/")
def test_a_proxy_in_front_of_a_loopback_server_is_where_phones_go(client, app, table):
    """Caddy on this machine, the companion behind it on loopback: PUBLIC_URL wins."""
    _, match_id = table
    page = client.get(f"/matches/{match_id}/invite").get_data(as_text=True)
    assert f"https://nimmt.example.org/matches/{match_id}/join/" in page
    assert 'id="loopback-only"' not in page


def test_a_link_and_i_am_outlast_the_browser_session(client, app, table):
    """Phones close their browsers by themselves: the session cookie has an expiry
    (31 days from the last link or "I am"), so the link and "I am" survive a restart."""
    (anna, _ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    cookie = client.get_cookie("session")
    assert cookie.expires is not None
    lasting = (cookie.expires - datetime.now(UTC)).days
    assert 30 <= lasting <= 31


def test_a_request_that_crosses_i_am_does_not_take_it_back(client, app, table):
    """One phone, two requests under way at once: a page or fragment it fetched just
    before "I am" was tapped answers after it. Its answer must not set the cookie it
    was sent with again, or the phone forgets it is Anna (and, the same way, a link it
    was just granted). Found by a Chromium test that tapped "I am" while the start of
    game 1 was on its way."""
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)  # the session is lasting from here on
    client.get(f"/matches/{match_id}")  # and holds its CSRF token, as a browser's does
    stale = client.get_cookie("session").value
    i_am(client, match_id, ben)
    crossing = phone(app)
    crossing.set_cookie("session", stale)
    response = crossing.get(f"/matches/{match_id}")
    assert response.status_code == 200
    assert not any(h.startswith("session=") for h in response.headers.getlist("Set-Cookie"))
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert f"You are {state_of(client, match_id).name(ben)} on this phone." in page


@pytest.mark.parametrize("path", ["/", "/history", "/backup", "/players/", "/matches/{}"])
def test_reading_a_page_leaves_the_phones_cookie_alone(client, app, table, path):
    """Only a change writes the cookie: every page a phone reads answers without one, so
    none can cross a newer cookie (pages that take what the last post left included)."""
    (anna, _ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    client.get(f"/matches/{match_id}")
    response = client.get(path.format(match_id))
    assert response.status_code == 200
    assert response.headers.getlist("Set-Cookie") == []


def test_flask_invite_prints_the_player_link_for_a_match_whose_phones_lost_it(app, table):
    """Every phone's link lost: the machine the companion runs on prints it again."""
    _, match_id = table
    result = app.test_cli_runner().invoke(args=["invite", str(match_id)])
    assert result.exit_code == 0, result.output
    (link,) = re.findall(r"http://\S+/join/\S+", result.output)
    assert link.endswith(tokens(app, match_id)[0])
    assert "█" in result.output or "▀" in result.output  # the QR code beside it
    rescued = app.test_client()
    assert rescued.get(re.sub(r"^http://[^/]+", "", link)).status_code == 303
    assert rescued.get(f"/matches/{match_id}/invite").status_code == 200  # a player again
    missing = app.test_cli_runner().invoke(args=["invite", "999"])
    assert missing.exit_code == 1 and "There is no match 999." in missing.output


@pytest.mark.parametrize(
    "match_id",
    # Issue 55: int() took Arabic-Indic (and fullwidth) digits and underscores as a number.
    [
        "99999999999999999999",
        str(2**63),
        str(MAX_ID + 1),
        "0",
        "-5",
        "\u0663",
        "\uff13",
        "1_0",
        "1e2",
    ],
)
def test_flask_invite_of_an_id_no_match_can_have_says_there_is_none(runner, match_id):
    """The finding: an id past SQLite's integer ended in OverflowError's traceback (and
    one past PostgreSQL's integer in its DataError's)."""
    result = runner.invoke(args=["invite", "--", match_id])
    assert result.exit_code == 1, result.output
    assert f"There is no match {match_id}." in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("zero", [0x660, 0x6F0, 0xFF10])  # Arabic-Indic, Persian, fullwidth
def test_flask_invite_takes_the_id_in_ascii_digits_only(runner, table, zero):
    """The finding (issue 55): `flask invite ٣` printed match 3's player link, as int()
    reads other scripts' digits; the pages take ASCII digits only, and so does the command."""
    _, match_id = table
    assert runner.invoke(args=["invite", f"0{match_id}"]).exit_code == 0
    other = str(match_id).translate({ord("0") + d: zero + d for d in range(10)})
    result = runner.invoke(args=["invite", other])
    assert result.exit_code == 1, result.output
    assert result.output == f"Error: There is no match {other}.\n"


def test_a_phone_that_started_200_matches_still_plays_the_last(client, app):
    """The finding: every match a phone started or joined added its link to the session
    cookie; past 4 KB (match 80 in Chromium) the browser dropped the cookie silently and
    the phone got 403 on the match it had just started. It keeps the newest links."""
    anna, ben = add_players(client, "Anna", "Ben")
    sizes = []
    for _ in range(200):
        match_id = start_match(client, [anna, ben])
        i_am(client, match_id, anna)
        sizes.append(len(client.get_cookie("session").value))
    assert max(sizes) < 4000  # a browser keeps at most 4,096 bytes of name and value
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    assert enter_round(client, match_id, {anna: 41}).status_code == 303  # as Anna, hidden
    first = match_id - 199
    assert client.post(f"/matches/{first}/games", data={"game": "1"}).status_code == 403


# --- everyone enters their own card ------------------------------------------------------


def test_cards_stay_hidden_until_the_last_one_is_in(client, app, table):
    (anna, ben, cleo), match_id = table
    player_token, _ = tokens(app, match_id)
    annas_phone = phone(app, match_id, player_token)
    i_am(annas_phone, match_id, anna)
    i_am(client, match_id, ben)
    assert enter_round(annas_phone, match_id, {anna: 41}).status_code == 303
    assert enter_round(client, match_id, {ben: 42}).status_code == 303
    assert count(app, Round) == 0 and count(app, PendingCard) == 2
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    live_table = page.split('id="live-table"')[1].split("</section>")[0]
    assert "41" not in re.sub(r"<[^>]+>", " ", live_table)
    assert "Anna" in page and "entered" in page.lower()
    # Cleo's card completes the round: all three are placed at once.
    assert enter_round(annas_phone, match_id, {cleo: 43}).status_code == 303
    state = state_of(client, match_id)
    assert state.current.rounds_played == 1
    assert [step.card for step in state.current.last_round.steps] == [41, 42, 43]
    assert count(app, PendingCard) == 0


def test_a_card_equal_to_another_hidden_card_is_taken_without_a_word(client, app, table):
    """Refusing it would tell this phone whose card is hidden (tests/play/test_hidden_cards.py)."""
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    enter_round(client, match_id, {anna: 41})
    response = enter_round(client, match_id, {ben: 41})
    assert response.status_code == 303
    assert count(app, PendingCard) == 2 and count(app, Round) == 0


def test_a_player_cannot_enter_twice(client, app, table):
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    enter_round(client, match_id, {anna: 41})
    # A form older than Anna's entry (another phone) still has her field: refused.
    response = enter_round(client, match_id, {anna: 50, ben: 51})
    assert response.status_code == 422
    assert "Anna&#39;s card is already in" in response.get_data(as_text=True)
    assert count(app, PendingCard) == 1


def test_undo_takes_back_the_hidden_cards(client, app, table):
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    enter_round(client, match_id, {anna: 41, ben: 42})
    page = client.get(f"/matches/{match_id}/undo").get_data(as_text=True)
    assert "2 cards entered so far for round 1" in page
    expect = re.search(r'name="expect" value="([^"]+)"', page).group(1)
    assert client.post(f"/matches/{match_id}/undo", data={"expect": expect}).status_code == 303
    assert count(app, PendingCard) == 0


def test_any_player_phone_may_choose_for_a_player_without_one(client, app, table):
    (anna, ben, cleo), match_id = table
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})
    player_token, _ = tokens(app, match_id)
    annas_phone = phone(app, match_id, player_token)
    assert choose(annas_phone, match_id, cleo, 2).status_code == 303
    assert pending_of(client, match_id) is None


def test_i_am_anna_is_remembered_per_phone(client, app, table):
    (anna, _ben, _cleo), match_id = table
    assert client.post(f"/matches/{match_id}/me", data={"player": str(anna)}).status_code == 303
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "I am Anna" in page or "You are Anna" in page
    client.post(f"/matches/{match_id}/me", data={"player": "999"})  # not seated: forgotten
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "You are Anna" not in page


# --- live updates --------------------------------------------------------------------------


def test_the_migration_gives_existing_matches_their_own_links(tmp_path):
    from conftest import testing_config
    from flask_migrate import upgrade

    from companion import create_app

    app = create_app(testing_config(tmp_path / "old.sqlite"))
    with app.app_context():
        upgrade(revision="74c698745d48")  # before links existed
        db.session.execute(
            db.text(
                "INSERT INTO match (created_at, end_kind, end_value, pro, version) "
                "VALUES ('2026-01-01', 'more_than', 66, 0, 0), ('2026-01-02', 'games', 3, 0, 0)"
            )
        )
        db.session.commit()
        upgrade()
        rows = db.session.execute(db.text("SELECT player_token, watch_token FROM match")).all()
    tokens = [token for row in rows for token in row]
    assert len(tokens) == 4 and len(set(tokens)) == 4
    assert all(len(token) >= 43 for token in tokens)


# --- cheap polls: the quiet answer before Flask, one replay per version -------------------
