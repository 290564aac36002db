"""A home network without internet, a phone that loses the server, and a quiet console:
htmx falls back to the app's own pinned copy, polls recover by themselves, and no page
logs an error, with JavaScript on or off."""

import re

import pytest
from browsing import (
    add_players_quickly,
    htmx_started,
    new_names,
    started_match,
)
from chromium import PHONE, route_cdn
from playwright.sync_api import expect

from companion.web.htmx import HTMX_URL, HTMX_VERSION

pytestmark = pytest.mark.browser

BLOCKED_CDN = "net::ERR_FAILED"  # what Chromium logs for the CDN request we abort
# A live page's poll, answered and swapped in (a page without one has none to wait for):
# an error of what a poll brings shows by then. 10 s bound the wait for a poll of 2 s.
ONE_POLL = """() => new Promise(resolve => {
  if (!document.querySelector('[hx-trigger^="every "]')) return resolve("no poll");
  document.body.addEventListener("htmx:afterRequest", () => resolve("polled"), {once: true});
  setTimeout(() => resolve("no answer"), 10000);
})"""


def offline_phone(browser):
    """A phone whose network reaches the companion but not the CDN."""
    context = browser.new_context(**PHONE)
    context.route(HTMX_URL, lambda route: route.abort())
    return context


def errors_of(page) -> list[str]:
    """Console errors and uncaught exceptions of ``page``, collected from now on."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    return errors


def start_first_game(page) -> None:
    for row, card in enumerate([12, 24, 37, 40], 1):
        page.get_by_label(f"Row {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Start game 1").click()
    page.get_by_role("heading", name=re.compile("round 1 of 10")).wait_for()


def test_without_the_cdn_htmx_comes_from_the_companion(browser, live_server, artifacts):
    """The CDN is out of reach: the same pinned htmx (same SRI) loads from the app, so
    the other phone still updates live and the card grid still opens."""
    host = offline_phone(browser)
    guest = offline_phone(browser)
    try:
        page = host.new_page()
        errors = errors_of(page)
        names = new_names(2, "Off")
        match_url = started_match(page, live_server, names)
        htmx_started(page)
        assert page.evaluate("htmx.version") == HTMX_VERSION
        sources = page.eval_on_selector_all("script[src]", "els => els.map(el => el.src)")
        assert f"{live_server}/vendor/htmx.min.js?v={HTMX_VERSION}" in sources
        # An htmx post, not a page load: the copy is working, not just loaded. A marker
        # set on this window survives only a swap (a full page load would drop it).
        page.evaluate("window.stillThisPage = true")
        start_first_game(page)
        assert page.evaluate("window.stillThisPage === true")

        invite = page.request.get(f"{match_url}/invite").text()
        token = re.search(r"/join/([\w-]+)", invite).group(1)
        other = guest.new_page()
        other.goto(f"{match_url}/join/{token}")
        htmx_started(other)
        page.get_by_label(names[0], exact=True).fill("41")
        page.get_by_label(names[1], exact=True).fill("42")
        page.get_by_role("button", name="Place the cards").click()
        expect(other.locator(".round-summary")).to_contain_text("Round 1,", timeout=5000)

        # This phone's own answer too: the grid of the form it replaces would open and load,
        # then be swapped away closed.
        expect(page.get_by_role("heading", name=re.compile("round 2 of 10"))).to_be_visible()
        page.get_by_text("Pick from all cards").click()
        expect(page.locator("[data-card-grid] .grid button")).to_have_count(104)
        page.screenshot(path=artifacts / "offline-cdn.png")
        assert [error for error in errors if BLOCKED_CDN not in error] == []
    finally:
        host.close()
        guest.close()


def test_a_cdn_that_never_answers_gives_way_to_the_copy(browser, page, live_server):
    """A home network whose DNS hangs: the CDN request never ends. After at most 3 s the
    pinned copy comes from the companion, and nothing waited for the CDN meanwhile: the
    page was ready (DOMContentLoaded) before htmx came."""
    match_url = started_match(page, live_server, new_names(2, "Dns"))  # CDN served
    context = browser.new_context(**PHONE)
    context.add_cookies(page.context.cookies())  # the same phone: it holds the player link
    hanging = []
    context.route(HTMX_URL, lambda route: hanging.append(route))  # never answered
    context.add_init_script(
        "document.addEventListener('DOMContentLoaded', () => {"
        " if (window.readyBeforeHtmx === undefined) window.readyBeforeHtmx = !window.htmx; })"
    )
    try:
        phone = context.new_page()
        # Not "load": a request that never ends holds the load event (not the page).
        phone.goto(match_url, wait_until="domcontentloaded")
        htmx_started(phone)
        assert phone.evaluate("window.readyBeforeHtmx") is True
        assert hanging, "the CDN was asked first"
        sources = phone.eval_on_selector_all("script[src]", "els => els.map(el => el.src)")
        assert f"{live_server}/vendor/htmx.min.js?v={HTMX_VERSION}" in sources
        phone.evaluate("window.stillThisPage = true")
        start_first_game(phone)  # an htmx post, with the copy
        assert phone.evaluate("window.stillThisPage === true")
    finally:
        context.close()


def test_a_phone_that_loses_the_server_says_so_and_recovers(page, live_server):
    """Polls fail: "Reconnecting…", the typed card stays; they work again: it goes."""
    names = new_names(2, "Lost")
    started_match(page, live_server, names)
    start_first_game(page)
    page.get_by_label(names[0], exact=True).fill("41")
    notice = page.locator("#offline")
    assert notice.is_hidden()
    page.route("**/live?*", lambda route: route.abort())
    expect(notice).to_be_visible(timeout=5000)
    assert "Reconnecting" in notice.inner_text()
    assert page.get_by_label(names[0], exact=True).input_value() == "41"
    page.unroute("**/live?*")
    expect(notice).to_be_hidden(timeout=5000)
    assert page.get_by_label(names[0], exact=True).input_value() == "41"
    # A card sent while the server is away stays typed, and is sent once it is back.
    page.route("**/rounds", lambda route: route.abort())
    page.get_by_label(names[1], exact=True).fill("42")
    page.get_by_role("button", name="Place the cards").click()
    expect(notice).to_be_visible()
    assert page.get_by_label(names[1], exact=True).input_value() == "42"
    page.unroute("**/rounds")
    page.get_by_role("button", name="Place the cards").click()
    expect(page.locator(".round-summary")).to_contain_text("Round 1,")
    expect(notice).to_be_hidden()


def every_page(page, live_server) -> list[str]:
    """A URL for every kind of page, with a match in every state worth a look."""
    names = new_names(3, "Tour")
    match_url = started_match(page, live_server, names)
    start_first_game(page)
    for name, card in zip(names, [39, 44, 3], strict=True):
        page.get_by_label(name, exact=True).fill(str(card))
    page.get_by_role("button", name="Place the cards").click()
    page.locator(".row-choice").wait_for()
    choice_url = match_url
    match_id = match_url.rsplit("/", 1)[1]
    player_id = re.search(r'name="player" value="(\d+)"', page.content()).group(1)
    short = new_names(2, "Done")
    done_url = started_match(page, live_server, short)
    done_id = done_url.rsplit("/", 1)[1]
    page.get_by_text("Only keeping score?").click()
    page.get_by_label(f"Score of {short[0]}").fill("70")
    page.get_by_label(f"Score of {short[1]}").fill("3")
    page.get_by_role("button", name="Save the scores").click()
    page.locator(".result-banner").wait_for()
    return [
        "/",
        "/players/",
        f"/players/{player_id}",
        f"/players/{player_id}/stats",
        "/leaderboard",
        "/leaderboard/head-to-head",
        "/matches/new",
        choice_url.removeprefix(live_server),
        f"/matches/{match_id}/scoreboard",
        f"/matches/{match_id}/invite",
        f"/matches/{match_id}/table",
        f"/matches/{match_id}/undo",
        f"/matches/{done_id}",
        f"/matches/{done_id}/scoreboard",
        "/history",
        f"/matches/{done_id}/delete",
        "/backup",
        "/resolve",
        "/rules",
        "/patterns",
    ]


@pytest.mark.parametrize("javascript", [True, False])
def test_no_page_logs_an_error(browser, live_server, javascript):
    """Every page, JavaScript on or off: not one console error (CSP reports included)."""
    setup = browser.new_context(**PHONE)
    route_cdn(setup)
    try:
        paths = every_page(setup.new_page(), live_server)
        cookies = setup.cookies()
    finally:
        setup.close()
    context = browser.new_context(**PHONE, java_script_enabled=javascript)
    route_cdn(context)
    context.add_cookies(cookies)  # the same phone: it holds the player links
    try:
        page = context.new_page()
        errors, polled = errors_of(page), []
        for path in paths:
            page.goto(live_server + path)  # loaded: without JavaScript nothing comes after
            if javascript:
                htmx_started(page)
                poll = page.evaluate(ONE_POLL)
                assert poll != "no answer", path
                polled += [path] if poll == "polled" else []
                if poll == "no poll":  # a polling page is never idle: its poll's answer
                    page.wait_for_load_state("networkidle")  # came after what it loaded
            assert errors == [], path
        assert len(polled) >= 3 or not javascript, polled  # the live pages of a match
        # The resolver with a result and a row choice (its old page logged 24 errors).
        page.goto(f"{live_server}/resolve")
        for row, cards in enumerate(["5 12", "20 24", "30 37", "31 32 33 34 40"], 1):
            page.get_by_label(f"Row {row}", exact=True).fill(cards)
        for line, (name, card) in enumerate([("Anna", 39), ("Ben", 42), ("Cleo", 3)], 1):
            page.locator(f"#field-player{line}").fill(name)
            page.locator(f"#field-card{line}").fill(str(card))
        page.get_by_role("button", name="Place the cards").first.click()
        page.locator(".row-choice").wait_for()
        page.get_by_role("button", name=re.compile(r"^Take row 1\b")).click()
        page.get_by_role("heading", name="Bulls taken").wait_for()
        assert errors == []
    finally:
        context.close()


def test_rematch_in_one_tap_from_the_end_of_a_match(page, live_server):
    names = new_names(2, "Again")
    add_players_quickly(page, live_server, names)
    page.goto(f"{live_server}/matches/new")
    for name in names:
        page.get_by_role("button", name=name, exact=True).click()
        page.get_by_role("button", name=name, pressed=True).wait_for()
    page.locator(".house-rules summary").click()
    page.get_by_label("… (bulls or games)").fill("20")
    page.get_by_role("button", name="Start the match").click()
    page.wait_for_url(re.compile(r"/matches/\d+$"))  # the match, not the page before it
    first_url = page.url
    page.get_by_text("Only keeping score?").click()
    page.get_by_label(f"Score of {names[0]}").fill("25")
    page.get_by_label(f"Score of {names[1]}").fill("4")
    page.get_by_role("button", name="Save the scores").click()
    banner = page.locator(".result-banner")
    expect(banner).to_contain_text(f"Winner: {names[1]}")
    banner.get_by_role("button", name="Rematch").click()
    # Its answer (HX-Redirect) loads the new match after the click has returned: until
    # then the address is the finished match's, which /matches/<id> matches too.
    first_id = first_url.rsplit("/", 1)[1]
    expect(page).to_have_url(re.compile(rf"/matches/(?!{first_id}$)\d+$"))
    expect(page.locator(".now")).to_contain_text("Game 1")
    assert "more than 20 bulls" in page.locator("#live-score").inner_text()
    assert page.get_by_label(names[0], exact=True).count() == 0  # seats come with the rules
    assert page.locator(".me-names button").all_inner_texts() == [f"I am {n}" for n in names]
