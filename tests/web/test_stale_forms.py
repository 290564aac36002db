"""A form left open all evening, or whose CSRF token no longer fits: never Werkzeug's 400.

A token lives as long as the session, so a card typed into a page opened hours ago
goes through. A token that does not fit (missing, from a cleared cookie, signed with
another key) gets the form back at 422 in the player's language: the card entry form
itself with what was typed, or for any other form the page that sends it again, each
with a fresh token that goes through.
"""

import re
import time

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from companion.models import Player

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
GERMAN = "Nichts wurde gespeichert"
FIVE_HOURS = 5 * 3600


class FiveHoursAgo(TimestampSigner):
    """Signs as the server did five hours ago."""

    def get_timestamp(self) -> int:
        return int(time.time()) - FIVE_HOURS


def with_csrf(app, client, match_id) -> str:
    """Turn CSRF protection on (the table was set up without it); the page's token."""
    app.config["WTF_CSRF_ENABLED"] = True
    return TOKEN.search(client.get(f"/matches/{match_id}").get_data(as_text=True)).group(1)


def round_form(ids, cards=(50, 60, 70)) -> dict:
    """Game 1, round 1: a card for each of Anna, Ben and Cleo."""
    return {
        "game": "1",
        "round": "1",
        **{f"card-{i}": str(c) for i, c in zip(ids, cards, strict=True)},
    }


def signed(app, client, signer=TimestampSigner, key=None) -> str:
    """A token for this session's secret, as Flask-WTF makes it, with ``signer``."""
    with client.session_transaction() as session:
        raw = session["csrf_token"]
    key = key or app.config["SECRET_KEY"]
    return URLSafeTimedSerializer(key, salt="wtf-csrf-token", signer=signer).dumps(raw)


def test_a_card_typed_into_a_page_opened_five_hours_ago_is_stored(app, client, table):
    ids, match_id = table
    with_csrf(app, client, match_id)
    old = signed(app, client, FiveHoursAgo)
    form = {**round_form(ids), "csrf_token": old}
    response = client.post(f"/matches/{match_id}/rounds", data=form)
    assert response.status_code == 303


def stale_tokens(app, client) -> dict:
    """Tokens that do not fit the session: none, garbage, another key's."""
    return {
        "missing": None,
        "garbage": "not-a-token",
        "another key": signed(app, client, key="the-key-before-a-reinstall"),
    }


@pytest.mark.parametrize("kind", ["missing", "garbage", "another key"])
def test_a_card_with_a_token_that_no_longer_fits_comes_back_with_what_was_typed(
    app, client, table, kind
):
    ids, match_id = table
    page_token = with_csrf(app, client, match_id)
    form = round_form(ids)
    token = stale_tokens(app, client)[kind]
    if token is not None:
        form["csrf_token"] = token
    response = client.post(
        f"/matches/{match_id}/rounds", data=form, headers={"Accept-Language": "de"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert GERMAN in html and "Bad Request" not in html
    assert 'value="50"' in html and 'value="60"' in html and 'value="70"' in html
    fresh = TOKEN.search(html).group(1)
    assert fresh not in (token, None)
    assert page_token  # the page's own token still fits: the session is the same
    again = client.post(f"/matches/{match_id}/rounds", data={**form, "csrf_token": fresh})
    assert again.status_code == 303


def test_htmx_swaps_the_card_form_back_in_place(app, client, table):
    ids, match_id = table
    with_csrf(app, client, match_id)
    response = client.post(
        f"/matches/{match_id}/rounds",
        data={**round_form(ids), "csrf_token": "not-a-token"},
        headers={"HX-Request": "true", "X-CSRFToken": "not-a-token either"},
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422  # HTMX_CONFIG swaps 422 into the form's target
    assert "<html" not in html and 'id="match"' in html and 'value="50"' in html
    assert "HX-Retarget" not in response.headers
    fresh = TOKEN.search(html).group(1)
    again = client.post(
        f"/matches/{match_id}/rounds",
        data={**round_form(ids), "csrf_token": fresh},
        headers={"HX-Request": "true", "X-CSRFToken": "not-a-token either"},
    )
    assert again.status_code == 303  # the form's field counts before the stale header


def test_any_other_form_gets_the_page_that_sends_it_again(app, client):
    app.config["WTF_CSRF_ENABLED"] = True
    response = client.post(
        "/players/", data={"name": "Zoe", "csrf_token": "x"}, headers={"Accept-Language": "de"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert GERMAN in html and "Bad Request" not in html
    resend = dict(HIDDEN.findall(html))
    assert resend["name"] == "Zoe" and resend["csrf_token"] != "x"
    assert client.post("/players/", data=resend).status_code == 303
    with app.app_context():
        assert Player.query.filter_by(name="Zoe").count() == 1


def test_htmx_shows_the_page_that_sends_again_in_main(app, client):
    app.config["WTF_CSRF_ENABLED"] = True
    response = client.post("/players/", data={"name": "Zoe"}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert response.headers["HX-Retarget"] == "#main"
    assert response.headers["HX-Reselect"] == "#send-again"
    assert 'id="send-again"' in response.get_data(as_text=True)


def test_a_stale_card_for_a_match_that_is_gone_gets_the_page_that_sends_again(app, client):
    app.config["WTF_CSRF_ENABLED"] = True
    response = client.post("/matches/999/rounds", data={"game": "1", "card-1": "5"})
    assert response.status_code == 422
    assert dict(HIDDEN.findall(response.get_data(as_text=True)))["card-1"] == "5"
