"""Many phones, one table: player and watch links, own-card entry, live polling."""

import random
import re

import pytest
from driver import (
    choose,
    enter_round,
    i_am,
    pending_of,
    state_of,
    undo,
)

from companion import state as state_module
from companion.db import db
from companion.models import Match, PendingCard, Round
from companion.state import current_state, match_state


def tokens(app, match_id):
    """The match's current player and watch tokens."""
    with app.app_context():
        match = db.session.get(Match, match_id)
        return match.player_token, match.watch_token


def phone(app, match_id=None, token=None):
    """Another phone; with a token it opens that join link first."""
    other = app.test_client()
    if token is not None:
        response = other.get(f"/matches/{match_id}/join/{token}")
        assert response.status_code == 303
    return other


def count(app, model):
    """Rows of a model."""
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(model))


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


@pytest.mark.app_config(PUBLIC_URL="https://nimmt.example.org/")
def test_invite_uses_the_configured_public_url(client, app, table):
    _, match_id = table
    page = client.get(f"/matches/{match_id}/invite").get_data(as_text=True)
    assert f"https://nimmt.example.org/matches/{match_id}/join/" in page


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


def test_a_card_already_entered_by_someone_else_is_refused_without_saying_whose(client, table):
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    enter_round(client, match_id, {anna: 41})
    response = enter_round(client, match_id, {ben: 41})
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "41 was already entered by another player this round" in page
    assert "Anna" not in page.split("already entered")[0][-200:]


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


def test_polling_answers_204_until_something_changes(client, app, table):
    (anna, _ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    with app.app_context():
        version = db.session.get(Match, match_id).version
    quiet = client.get(f"/matches/{match_id}/live?since={version}", headers={"HX-Request": "true"})
    assert quiet.status_code == 204
    enter_round(client, match_id, {anna: 41})
    news = client.get(f"/matches/{match_id}/live?since={version}", headers={"HX-Request": "true"})
    assert news.status_code == 200
    body = news.get_data(as_text=True)
    assert re.search(r'id="live-table"[^>]*hx-swap-oob="true"', body)
    assert 'id="live-score" hx-swap-oob="true"' in body
    assert f"since={version + 1}" in body


def test_polling_answers_304_to_a_conditional_request(client, app, table):
    _, match_id = table
    first = client.get(f"/matches/{match_id}/live")
    assert first.status_code == 200 and first.headers["ETag"]
    again = client.get(
        f"/matches/{match_id}/live", headers={"If-None-Match": first.headers["ETag"]}
    )
    assert again.status_code == 304


def test_table_view_shows_rows_steps_and_score(client, app, table):
    (anna, ben, cleo), match_id = table
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    _, watch_token = tokens(app, match_id)
    tv = phone(app, match_id, watch_token)
    page = tv.get(f"/matches/{match_id}/table").get_data(as_text=True)
    assert "Row 4" in page and "Round 1, lowest card first" in page and "Total" in page
    assert re.search(r'<span class="placed-card">43</span> row 4', page)
    assert 'hx-trigger="every 2s' in page


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


def test_a_shared_live_render_carries_each_phones_own_csrf_token(client, app, table):
    """Phones of a table share one render per version, but each gets its own token."""
    (anna, ben, cleo), match_id = table
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})  # Cleo must choose a row
    player_token, _ = tokens(app, match_id)
    found = []
    for _ in range(3):
        other = phone(app, match_id, player_token)
        body = other.get(
            f"/matches/{match_id}/live?since=0", headers={"HX-Request": "true"}
        ).get_data(as_text=True)
        assert "Take row 1" in body
        [own] = set(re.findall(r'name="csrf_token" value="([^"]+)"', body))
        found.append(own)
    assert len(set(found)) == 3


# --- cheap polls: the quiet answer before Flask, one replay per version -------------------


def test_a_quiet_poll_is_answered_before_flask(client, app, table, monkeypatch):
    """A poll at the current version gets 204 from QuietPolls: no view runs at all."""
    _, match_id = table
    with app.app_context():
        version = db.session.get(Match, match_id).version
    views = []
    monkeypatch.setitem(app.view_functions, "play.poll", lambda **kw: views.append(kw) or "")
    quiet = client.get(f"/matches/{match_id}/live?since={version}&form=x&view=match")
    assert quiet.status_code == 204 and quiet.get_data() == b"" and views == []
    client.get(f"/matches/{match_id}/live?since={version - 1}")  # moved on: Flask's turn
    client.get(f"/matches/{match_id}/live?since=abc")
    assert len(views) == 2


def test_polls_the_middleware_passes_on_get_flasks_answers(client, app, table):
    (anna, _ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    assert client.get("/matches/999/live?since=0").status_code == 404
    with app.app_context():
        version = db.session.get(Match, match_id).version
    enter_round(client, match_id, {anna: 41})
    stale = client.get(f"/matches/{match_id}/live?since={version}")
    assert stale.status_code == 200 and f"since={version + 1}" in stale.get_data(as_text=True)
    assert client.get(f"/matches/{match_id}/live?since={version + 1}").status_code == 204


def test_a_shared_replay_shows_the_same_page_to_every_phone(client, app, table):
    """The second phone at a version reads the first one's replay (detached): same page."""
    (anna, ben, cleo), match_id = table
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})  # Cleo must choose a row
    player_token, _ = tokens(app, match_id)
    pages = []
    for _ in range(2):
        other = phone(app, match_id, player_token)
        other.post(f"/matches/{match_id}/me", data={"player": str(cleo)})
        page = other.get(f"/matches/{match_id}").get_data(as_text=True)
        pages.append(re.sub(r'(csrf_token" value="|X-CSRFToken": ")[^"]+', "", page))
    assert pages[0] == pages[1]
    assert "Take row 1" in pages[1] and "Cleo" in pages[1]
    # ...and a write checks against that shared replay, then stores by its version.
    assert choose(client, match_id, cleo, 2).status_code == 303
    assert "Take row 1" not in client.get(f"/matches/{match_id}").get_data(as_text=True)


def versions_of(app, match_id):
    with app.app_context():
        match = db.session.get(Match, match_id)
        return match.version, match.table_version


def test_hidden_cards_keep_the_table_version_everything_else_raises_it(client, app, table):
    (anna, ben, cleo), match_id = table
    i_am(client, match_id, anna)
    version, table_version = versions_of(app, match_id)
    enter_round(client, match_id, {anna: 39})
    enter_round(client, match_id, {ben: 42})
    assert versions_of(app, match_id) == (version + 2, table_version)
    enter_round(client, match_id, {cleo: 3})  # the last card: the round, Cleo must choose
    assert versions_of(app, match_id) == (version + 3, table_version + 1)
    assert choose(client, match_id, cleo, 2).status_code == 303
    assert versions_of(app, match_id)[1] == table_version + 2
    enter_round(client, match_id, {anna: 50})
    undo(client, match_id)  # taking back a hidden card is a change of the table too
    assert versions_of(app, match_id)[1] == table_version + 3
    client.post(f"/matches/{match_id}/invite/renew")
    assert versions_of(app, match_id)[1] == table_version + 4


def test_a_version_of_hidden_cards_reads_like_a_full_replay(client, app, table, monkeypatch):
    """At every version of a round entered card by card, the shared state (derived from
    the replay of its table_version) shows what replaying from scratch shows."""
    ids, match_id = table
    i_am(client, match_id, ids[0])
    derived = []
    original = state_module.with_hidden_cards
    monkeypatch.setattr(
        state_module, "with_hidden_cards", lambda *args: derived.append(args) or original(*args)
    )
    rng = random.Random(7)
    for _round in range(4):
        current = state_of(client, match_id).current
        free = sorted(set(range(1, 105)) - current.seen - set(current.entered.values()))
        for player_id, card in zip(ids, rng.sample(free, len(ids)), strict=True):
            assert enter_round(client, match_id, {player_id: card}).status_code == 303
            with app.test_request_context():
                shared = current_state(match_id)
                fresh = match_state(db.session.get(Match, match_id))
                assert shared.version == fresh.version
                assert shared.current.entered == fresh.current.entered
                assert shared.current.table.rows == fresh.current.table.rows
                assert shared.current.bulls == fresh.current.bulls
        while (pending := pending_of(client, match_id)) is not None:
            assert choose(client, match_id, pending.player, pending.suggested).status_code == 303
    assert len(derived) >= 4 * (len(ids) - 1)  # every card but a round's first, at least
