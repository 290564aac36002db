"""What the Chromium tests do on a phone again and again: add players and start a match,
type cards, read the explained steps, check the page fits the phone."""

import itertools
import re

from playwright.sync_api import expect

serials = itertools.count(1)


def fits_the_phone(page) -> None:
    """No sideways scrolling at 390px (the message names what sticks out)."""
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(el => el.getBoundingClientRect().right > 391)
        .map(el => el.tagName + '.' + el.className).slice(-3)""")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide


def add_player(page, live_server, name: str) -> None:
    """Add a household player through the players page."""
    page.goto(f"{live_server}/players/")
    page.get_by_label("New player").fill(name)
    page.get_by_role("button", name="Add player").click()
    page.get_by_role("link", name=name, exact=True).wait_for()


def start_match(page, live_server, names: list[str]) -> None:
    """Seat the players in order and start a match with the default rules."""
    page.goto(f"{live_server}/matches/new")
    for seat, name in enumerate(names, 1):
        page.get_by_role("button", name=name, exact=True).click()
        seated = page.get_by_role("button", name=name, pressed=True)
        expect(seated.locator(".seat-number")).to_have_text(str(seat))
    page.get_by_role("button", name="Start the match").click()
    page.get_by_role("heading", name=re.compile(r"^Match \d+")).wait_for()


def enter_cards(page, cards: dict[str, int], button: str) -> None:
    """Type one card per label and submit."""
    for label, card in cards.items():
        page.get_by_label(label, exact=True).fill(str(card))
    page.get_by_role("button", name=button).click()


def explained_steps(page) -> list[str]:
    """The round's steps, each card explained: one tap on "Why?". With htmx they open
    under the link; without JavaScript on the round's replay, and the phone goes back."""
    match_url = page.url
    page.locator("a.explain").click()
    steps = page.locator(".step")
    steps.first.wait_for()
    texts = steps.all_inner_texts()
    if page.url.split("#")[0] != match_url.split("#")[0]:
        page.go_back()
    return texts


def add_players_quickly(page, live_server, names: list[str]) -> None:
    """Household players added by plain posts (the players page has its own tests)."""
    for name in names:
        response = page.request.post(f"{live_server}/players/", form={"name": name})
        assert response.ok, response.status


def new_names(count: int, stem: str) -> list[str]:
    return [f"{stem}{chr(65 + seat)}{next(serials)}" for seat in range(count)]


def started_match(page, live_server, names: list[str]) -> str:
    """A match of these new players, started on this phone (it holds the player link)."""
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    return page.url.split("#")[0]
