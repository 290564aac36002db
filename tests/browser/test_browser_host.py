"""The refusal of a name the companion does not answer to, on a phone at a home network's
address (issue 57): a page of the app, styled, its addresses links; in EN, DE and FR.
The finding: an unstyled page that named “companion.lan:8000” and no link to tap."""

import pytest
from browsing import fits_the_phone, in_view
from chromium import LAN_HOST
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

HEADINGS = {
    "en": "Not the companion's address",
    "de": "Nicht die Adresse des Begleiters",
    "fr": "Ce n’est pas l’adresse du compagnon",
}


@pytest.mark.parametrize("lang", HEADINGS)
def test_a_refused_name_gets_a_page_of_the_app_with_its_addresses_to_tap(
    page, console_errors, live_server, artifacts, lang
):
    # The session's live server answers to its own names, not to companion.lan.
    port = live_server.rsplit(":", 1)[1]
    page.context.set_extra_http_headers({"Accept-Language": lang})
    response = page.goto(f"http://{LAN_HOST}:{port}/players/")
    assert response.status == 400
    heading = page.get_by_role("heading", name=HEADINGS[lang])
    expect(heading).to_be_visible()
    assert in_view(heading)
    expect(page.locator("main")).to_contain_text(f"“{LAN_HOST}”" if lang == "en" else LAN_HOST)
    expect(page.locator("main")).not_to_contain_text(f"{LAN_HOST}:{port}")
    # Styled as the app: its header bar, its font, the page's width; nothing refused.
    header = page.locator(".site-header")
    assert header.evaluate("el => getComputedStyle(el).display") == "flex"
    assert page.locator("main").evaluate("el => getComputedStyle(el).maxWidth") != "none"
    links = page.locator(".addresses a")
    assert links.count() >= 1
    for href in links.evaluate_all("els => els.map(el => el.href)"):
        assert href.endswith(f":{port}/") and LAN_HOST not in href
    assert in_view(links.first)
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"host-refused-{lang}.png", full_page=True)
    # The page's own 400 is its only error: no style refused by the CSP, nothing else.
    assert [error for error in console_errors if "status of 400" not in error] == []
    assert len(console_errors) <= 2  # the page, and maybe the icon Chromium asks for
