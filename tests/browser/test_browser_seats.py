"""The new-match form shows the seated in seat order (issue 57): on a 390x844 phone at a
home network's address, in English, German and French. The finding: the players stood
by name, so seat 4 came before seat 3."""

import pytest
from browsing import add_player, fits_the_phone
from chromium import LAN_HOST
from conftest import SHARED_BY_THE_SESSION, make_app, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.fixture
def household(tmp_path):
    """A companion at http://companion.lan:PORT with a household of its own (the shared
    servers' hold every other test's players)."""
    app = make_app(tmp_path / "companion.sqlite", TRUSTED_HOSTS=LAN_HOST, **SHARED_BY_THE_SESSION)
    with serving(app) as port:
        yield f"http://{LAN_HOST}:{port}"


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_seated_stand_in_seat_order_then_the_others(page, household, artifacts, lang):
    for name in ("Anna", "Ben", "Cleo", "Dora", "Emil"):
        add_player(page, household, name)
    page.context.add_cookies([{"name": "lang", "value": lang, "url": household}])
    page.goto(f"{household}/matches/new")
    for seat, name in enumerate(("Dora", "Ben", "Emil", "Anna"), 1):
        page.get_by_role("button", name=name, exact=True).click()
        seated = page.locator(".seat-pick.is-seated")
        expect(seated).to_have_count(seat)
        expect(seated.nth(seat - 1)).to_contain_text(name)
    expect(page.locator(".seat-pick .name")).to_have_text(["Dora", "Ben", "Emil", "Anna", "Cleo"])
    expect(page.locator(".seat-pick .seat-number")).to_have_text(["1", "2", "3", "4", ""])
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"new-match-seats-{lang}.png", full_page=True)
