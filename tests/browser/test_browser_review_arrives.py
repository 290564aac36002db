"""A game's review arrives on a phone without moving what the table is doing (issue 45):
while the background works it out the phone shows so, the players start the next game,
and when the review is stored its push fills in the game's end while the starting cards
being typed, the field being typed in and the opened review stay as they were.

Twice, at a home network's address (not a secure context): on a test server that polls,
the test storing the review as the background would; and on the real server (`python -m
companion.serve`), its own background process held (SIGSTOP) until the phone is typing,
then let go, the review coming by the event stream.
"""

import os
import random
import signal

import conftest
import pytest
from chromium import LAN_HOST
from conftest import make_app, serving
from driver import add_players, play_game, start_match, tokens
from phones import the_background
from playwright.sync_api import expect

from companion import create_app, store

pytestmark = pytest.mark.browser

PENDING = "being worked out"
LINE = "the cards dealt made"


def game_over(client) -> int:
    """Anna, Ben and Cleo's match, its game 1 over: the match's id."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(45))
    return match_id


def start_typing(page, match_url: str, app, match_id: int):
    """A player's phone at game 1's end: the review opened to wait for it, game 2's
    starting cards being typed (row 3's field focused); row 3's field."""
    player_token, _watch = tokens(app, match_id)
    page.goto(f"{match_url}/join/{player_token}")  # a player's phone: it may start game 2
    review = page.locator(".game-review")
    review.locator("summary").first.click()
    expect(review.get_by_text(PENDING)).to_be_visible()
    page.get_by_label("Row 1", exact=True).fill("7")
    third = page.get_by_label("Row 3", exact=True)
    third.fill("3")
    page.evaluate("window.stillThisPage = true")
    return third


def review_arrived(page, third) -> None:
    """The review is filled in, in the review the player opened, and nothing else moved."""
    review = page.locator(".game-review")
    expect(review.get_by_text(LINE).first).to_be_visible(timeout=30_000)
    expect(review.get_by_text(PENDING)).to_have_count(0)
    assert page.evaluate("window.stillThisPage === true")  # pushed, not reloaded
    expect(page.get_by_label("Row 1", exact=True)).to_have_value("7")
    expect(third).to_have_value("3")
    expect(third).to_be_focused()


def test_the_review_fills_in_while_the_next_game_is_being_typed(page, tmp_path):
    app = make_app(tmp_path / "companion.sqlite", TRUSTED_HOSTS=LAN_HOST)
    match_id = game_over(app.test_client())
    with app.app_context():
        store.luck_after(match_id)
    with serving(app) as port:
        base = f"http://{LAN_HOST}:{port}/matches/{match_id}"
        third = start_typing(page, base, app, match_id)
        with app.app_context():
            assert store.review_after(match_id) == 1
        review_arrived(page, third)


def test_the_servers_background_pushes_the_review_into_an_open_page(page, served, tmp_path):
    # Only the stream brings it.
    server, port = served(COMPANION_LIVE_POLL="null", COMPANION_TRUSTED_HOSTS=LAN_HOST)
    held = the_background(server)
    os.kill(held, signal.SIGSTOP)
    try:
        app = create_app(conftest.testing_config(tmp_path / "workers.sqlite"))
        match_id = game_over(app.test_client())
        base = f"http://{LAN_HOST}:{port}/matches/{match_id}"
        third = start_typing(page, base, app, match_id)
        assert page.evaluate("window.isSecureContext") is False
        expect(page.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
    finally:
        os.kill(held, signal.SIGCONT)
    review_arrived(page, third)
