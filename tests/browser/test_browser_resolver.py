"""The resolver, the rules and the pattern page in a phone-sized Chromium, with and without JS."""

import re

import pytest
from browsing import fits_the_phone, htmx_started

from companion.resolver.resolve_page import WORKED_EXAMPLE

pytestmark = pytest.mark.browser

# Elements whose content spills out of their box (text wider than a card, say).
OVERFLOWING = """els => els.filter(el => el.scrollWidth > el.clientWidth + 1
                                 || el.scrollHeight > el.clientHeight + 1)
                   .map(el => el.outerHTML)"""


def fits_with_its_cards(page) -> None:
    """No sideways scrolling at 390px, and no card whose text spills out."""
    fits_the_phone(page)
    assert page.eval_on_selector_all(".card", OVERFLOWING) == []


def fill_worked_example(page, live_server) -> None:
    """Open the resolver and type in the rules page's worked example."""
    page.goto(f"{live_server}/resolve")
    for name, value in WORKED_EXAMPLE.items():
        page.fill(f"[name={name}]", value)


def see_cleo_take_row_1(page) -> None:
    """Cleo's 3 is too low: she is asked, takes row 1, and the round is told step by step."""
    choice = page.locator(".row-choice")
    choice.wait_for()
    assert "Cleo takes a row" in choice.inner_text()
    assert "suggested" in page.locator("#choice3-1").inner_text()
    page.get_by_role("button", name=re.compile(r"^Take row 1\b")).click()
    page.locator("#tally").wait_for()
    steps = page.locator(".step")
    assert steps.count() == 3
    assert "Cleo takes 2 cards from row 1: 3 bulls" in steps.nth(0).inner_text()
    assert "39 goes to row 3" in steps.nth(1).inner_text()
    assert "Ben takes 5 cards from row 4: 11 bulls" in steps.nth(2).inner_text()
    assert page.locator(".row-choice").count() == 0


def test_worked_example_with_htmx(page, console_errors, live_server, artifacts):
    """htmx swaps only the resolver: the page never reloads, the result shows at once."""
    fill_worked_example(page, live_server)
    htmx_started(page)
    page.evaluate("window.notReloaded = true")
    page.get_by_role("button", name="Place the cards").click()
    page.locator(".row-choice").wait_for()
    fits_with_its_cards(page)
    # caret="initial": hiding the caret leaves style="" on every input, which htmx's
    # settling then copies under our CSP (a console error the app itself never causes).
    page.screenshot(path=artifacts / "resolver-choice.png", full_page=True, caret="initial")
    see_cleo_take_row_1(page)
    assert page.evaluate("window.notReloaded") is True
    fits_with_its_cards(page)
    page.screenshot(path=artifacts / "resolver.png", full_page=True)
    assert console_errors == []


def test_worked_example_without_javascript(page_nojs, live_server):
    """Plain forms do it all with JavaScript off."""
    fill_worked_example(page_nojs, live_server)
    page_nojs.get_by_role("button", name="Place the cards").click()
    see_cleo_take_row_1(page_nojs)
    fits_with_its_cards(page_nojs)


@pytest.mark.parametrize("js", [True, False], ids=["htmx", "nojs"])
def test_a_wrong_card_is_shown_next_to_its_field(page, page_nojs, live_server, js):
    """A card already on the table: the message sits under that card, the values stay."""
    tab = page if js else page_nojs
    tab.goto(f"{live_server}/resolve")
    for name, value in {**WORKED_EXAMPLE, "card1": "24"}.items():
        tab.fill(f"[name={name}]", value)
    tab.get_by_role("button", name="Place the cards").click()
    tab.locator("#field-card1-note").wait_for()
    assert tab.locator("#field-card1-note").inner_text() == "24 already lies in row 2."
    assert tab.locator("#field-card1").get_attribute("aria-invalid") == "true"
    assert tab.locator("#field-row4").input_value() == "31 32 33 34 40"
    fits_with_its_cards(tab)


@pytest.mark.parametrize("js", [True, False], ids=["htmx", "nojs"])
def test_more_players(page, page_nojs, live_server, js):
    """Two more player lines appear, and what was typed stays."""
    tab = page if js else page_nojs
    tab.goto(f"{live_server}/resolve")
    tab.fill("[name=row1]", "5 12")
    tab.get_by_role("button", name="More players").click()
    tab.locator("[name=card6]").wait_for()
    assert tab.locator("[name=card7]").count() == 0
    assert tab.locator("[name=row1]").input_value() == "5 12"


@pytest.mark.parametrize(
    ("path", "shot", "scheme"),
    [
        ("/rules", "rules.png", "light"),
        ("/patterns", "patterns.png", "light"),
        ("/patterns", "patterns-dark.png", "dark"),
    ],
)
def test_pages_fit_a_phone(page, console_errors, live_server, artifacts, path, shot, scheme):
    """The rules and the pattern page fit 390px, in light and dark, without errors."""
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{live_server}{path}")
    fits_with_its_cards(page)
    page.screenshot(path=artifacts / shot, full_page=True)
    assert console_errors == []


@pytest.mark.parametrize("path", ["/patterns", "/rules", "/resolve"])
def test_touch_targets_are_big_enough(page, live_server, path):
    """Every button, field and stand-alone link of the page's content is at least 44px tall."""
    page.goto(f"{live_server}{path}")
    heights = page.eval_on_selector_all(
        "main button, main input[type=text], main select, main a:not(p a)",
        "els => els.map(el => el.getBoundingClientRect().height)",
    )
    assert heights
    assert min(heights) >= 44


def test_resolver_in_the_dark(page, console_errors, live_server, artifacts):
    """The resolved round in dark mode."""
    page.emulate_media(color_scheme="dark")
    fill_worked_example(page, live_server)
    page.get_by_role("button", name="Place the cards").click()
    see_cleo_take_row_1(page)
    page.screenshot(path=artifacts / "resolver-dark.png", full_page=True)
    assert console_errors == []


def test_resolver_in_german_fits(page, console_errors, live_server, artifacts):
    """German words are longer ("Hornochsen"): the resolved round still fits 390px."""
    page.context.set_extra_http_headers({"Accept-Language": "de"})
    fill_worked_example(page, live_server)
    page.locator(".resolver-form button[type=submit]").first.click()
    page.locator("#choice3-1").click()
    page.locator("#tally").wait_for()
    assert "kommt in Reihe 3" in page.locator(".step").nth(1).inner_text()
    fits_with_its_cards(page)
    page.screenshot(path=artifacts / "resolver-de.png", full_page=True)
    assert console_errors == []
