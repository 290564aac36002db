"""The app in a real phone-sized Chromium: htmx loads, the layout fits, CSP is quiet."""

import pytest
from browsing import fits_the_phone, htmx_started

from companion.web.htmx import HTMX_VERSION

pytestmark = pytest.mark.browser

# Elements whose content spills out of their box (text wider than a card, say).
OVERFLOWING = """els => els.filter(el => el.scrollWidth > el.clientWidth + 1
                                 || el.scrollHeight > el.clientHeight + 1)
                   .map(el => el.outerHTML)"""


@pytest.mark.parametrize(("scheme", "lang"), [("light", "en"), ("dark", "de")])
def test_home_on_a_phone(page, console_errors, live_server, artifacts, scheme, lang):
    """The home page loads htmx (SRI intact), fits 390px and logs no errors."""
    page.emulate_media(color_scheme=scheme)
    page.context.set_extra_http_headers({"Accept-Language": lang})
    page.goto(f"{live_server}/")
    assert page.locator("html").get_attribute("lang") == lang
    htmx_started(page)
    assert page.evaluate("window.htmx.version") == HTMX_VERSION
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False
    fits_the_phone(page)
    assert page.eval_on_selector_all(".card", OVERFLOWING) == []
    name = "home.png" if scheme == "light" else f"home-{scheme}-{lang}.png"
    page.screenshot(path=artifacts / name, full_page=True)
    assert console_errors == []


def test_touch_targets_are_large(page, live_server):
    """Every link and button on the page is at least 44px tall."""
    page.goto(f"{live_server}/")
    heights = page.eval_on_selector_all(
        "a:not(.skip-link), button", "els => els.map(el => el.getBoundingClientRect().height)"
    )
    assert heights
    assert min(heights) >= 44


@pytest.mark.parametrize(
    ("name", "lang", "heading"),
    [
        ("Deutsch", "de", "Diese Karte gibt es nicht im Spiel"),
        ("Français", "fr", "Cette carte n’est pas dans le paquet"),
    ],
)
def test_language_switch_without_javascript(page_nojs, live_server, name, lang, heading):
    """A plain link switches the language and stays on the same page, JavaScript off."""
    page_nojs.goto(f"{live_server}/no-such-page")
    page_nojs.get_by_role("link", name=name).click()
    assert page_nojs.url == f"{live_server}/no-such-page"
    assert page_nojs.locator("h1").inner_text() == heading
    assert page_nojs.locator("html").get_attribute("lang") == lang


def test_404_page_in_german(page, console_errors, live_server, artifacts):
    """The error page looks like the app, and is in German for a German phone."""
    page.context.add_cookies([{"name": "lang", "value": "de", "url": live_server}])
    page.goto(f"{live_server}/no-such-page")
    assert page.locator("h1").inner_text() == "Diese Karte gibt es nicht im Spiel"
    fits_the_phone(page)
    page.screenshot(path=artifacts / "404-de.png", full_page=True)
    # Chromium reports the page's own 404 status as a console error; nothing else may.
    assert [error for error in console_errors if "/no-such-page:" not in error] == []
