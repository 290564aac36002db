"""Luck in Chromium (issue 34): an improbable take says its chance in the round's summary,
and a game's end shows each player's expected bulls and who was luckiest; at 390x844, in
view with what to enter next, in English, German and French, and on the TV."""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from browsing import fits_the_phone, in_view, new_names, play_cards_game, seat_ids, started_match
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


# Two players: row 1 holds 10 11 12 13 after three rounds; in round 4 Ben's 14 is its 5th
# card and Anna's 15 its 6th. From Anna's side Ben's card was any of the 93 she could not
# see, and only the 14 did that: a 1 % chance, for 10 11 12 13 14's 11 bulls.
STARTING = [10, 50, 70, 90]
ROUNDS = [(11, 51), (12, 52), (13, 53), (15, 14)]
TAKE = {
    "en": "15: sixth card, took row 1, 11 bulls — a 1% chance",
    "de": "15: sechste Karte, nimmt Reihe 1, 11 Hornochsen — eine Chance von 1 %",
    "fr": "15 : sixième carte, a ramassé la rangée 1, 11 têtes de bœuf — 1 % de chances",
}
EXPECTED = {"en": "expected", "de": "erwartet", "fr": "attendues"}
BAD_LUCK = {
    "en": "bulls of bad luck.",
    "de": "Hornochsen Pech.",
    "fr": "têtes de bœuf de malchance.",
}


# The header cells whose text runs into the text of the cell before it.
RUNNING_INTO = """cells => { const texts = cells.map(cell => {
    const range = document.createRange(); range.selectNodeContents(cell);
    return range.getBoundingClientRect(); });
  return cells.filter((cell, i) => i > 0 && texts[i].left < texts[i - 1].right
    && texts[i].top < texts[i - 1].bottom && texts[i - 1].top < texts[i].bottom)
    .map(cell => cell.textContent); }"""


# What moved the page: every scroll and every focus() or scrollIntoView() call, with when
# and from where, kept in window.__scrolls for an assertion's message.
WATCH_SCROLLS = """(() => {
  const log = window.__scrolls = [];
  const note = (what) => log.push([Math.round(performance.now()), what, scrollY,
    document.documentElement.scrollHeight, document.readyState]);
  addEventListener("scroll", () => note("scroll"), true);
  for (const name of ["focus", "scrollIntoView"]) {
    const own = HTMLElement.prototype[name] || Element.prototype[name];
    HTMLElement.prototype[name] = function (...args) {
      note(name + " " + (this.id || this.tagName) + " " + JSON.stringify(args)
        + " " + (new Error().stack || "").split("\\n").slice(2, 5).join(" | "));
      return own.apply(this, args);
    };
  }
  for (const type of ["DOMContentLoaded", "load", "htmx:afterSettle", "htmx:sseMessage"])
    addEventListener(type, () => note(type), true);
})()"""


def scrolls(page) -> list:
    """What moved the page since it loaded (``WATCH_SCROLLS``)."""
    return page.evaluate("window.__scrolls || []")


def posted_rounds(page, match_url: str, rounds, first: int = 1) -> None:
    """Rounds sent by plain posts, the seats' cards in seat order."""
    ids = seat_ids(page, match_url)
    for number, cards in enumerate(rounds, first):
        form = {f"card-{pid}": str(card) for pid, card in zip(ids, cards, strict=True)}
        response = page.request.post(
            f"{match_url}/rounds", form=form | {"game": "1", "round": str(number)}
        )
        assert response.ok


@contextmanager
def table_view(page, live_server: str, match_url: str, lang: str) -> Iterator:
    """The match's table view on a TV (1280x720) in ``lang``, closed after the block."""
    tv = page.context.browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        tv.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
        tv.goto(f"{match_url}/table")
        yield tv
    finally:
        tv.close()


def opened_afresh(page, live_server: str, url: str, lang: str) -> None:
    """``url`` opened anew on this phone in ``lang`` (the language switch's cookie): from
    another page, so nothing of the page it showed before (its scroll) is carried over,
    as the same URL opened again could."""
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.goto("about:blank")
    page.goto(url)


def round_shown(page, live_server: str, names: list[str], starting, rounds, lang: str) -> str:
    """A match of ``names`` whose game 1 starts on ``starting`` with ``rounds`` placed by
    plain posts, open on this phone in ``lang``; its URL."""
    match_url = started_match(page, live_server, names)
    form = {f"row{row}": str(card) for row, card in enumerate(starting, 1)}
    assert page.request.post(f"{match_url}/games", form=form | {"game": "1"}).ok
    posted_rounds(page, match_url, rounds)
    opened_afresh(page, live_server, match_url, lang)
    return match_url


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_an_improbable_take_says_its_chance_on_one_screen(
    page, console_errors, live_server, artifacts, lang
):
    names = new_names(2, "Luck")
    match_url = round_shown(page, live_server, names, STARTING, ROUNDS, lang)
    take = page.locator(".round-summary .summary-sixth")
    expect(take).to_have_text(f"{names[0]} {TAKE[lang]}")
    expect(take.locator(".summary-chance")).to_be_visible()
    first_field = page.locator(".round-form input:not([type=hidden])").first
    expect(first_field).to_be_visible()
    page.screenshot(path=artifacts / f"luck-take-{lang}.png")
    assert page.evaluate("scrollY") == 0
    for part in (page.locator(".round-summary"), first_field):
        assert in_view(part), part.bounding_box()
    fits_the_phone(page)
    with table_view(page, live_server, match_url, lang) as tv:
        expect(tv.locator(".summary-sixth")).to_have_text(f"{names[0]} {TAKE[lang]}")
        assert in_view(tv.locator(".summary-sixth .summary-chance"))
    assert console_errors == []


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_game_end_shows_expected_bulls_and_the_luckiest(
    page, console_errors, live_server, artifacts, lang
):
    names = new_names(4, "LuckEnd")
    match_url = started_match(page, live_server, names)
    play_cards_game(page, match_url, 1, seed=34)
    luck = page.request.get(f"{match_url}/games/1/luck.json").json()
    assert luck["method"] == "sampled" and len(luck["rounds"]) == 10
    opened_afresh(page, live_server, match_url, lang)
    end = page.locator(".game-end")
    expect(end.locator("thead th .expected")).to_have_text(EXPECTED[lang])
    # No header's text runs into the next one's.
    assert end.locator("thead th").evaluate_all(RUNNING_INTO) == []
    shown = end.locator("td .expected")  # under each player's bulls
    expect(shown).to_have_count(4)
    figures = [re.sub(r"[.,]", ".", text) for text in shown.all_inner_texts()]
    by_name = {player["name"]: player for player in luck["players"]}
    assert figures == [f"{by_name[name]['expected']:.1f}" for name in names]
    unluckiest = min(luck["players"], key=lambda player: player["luck"])
    luckiest = max(luck["players"], key=lambda player: player["luck"])
    why = end.locator(".luck-why")
    expect(why.locator("summary")).to_contain_text(luckiest["name"])
    expect(why.locator("summary")).to_contain_text(unluckiest["name"])
    # Their figures in words and what "expected" means, one tap away.
    why.locator("summary").click()
    expect(why.locator(".luck-unlucky")).to_be_visible()
    expect(why.locator(".luck-unlucky")).to_contain_text(BAD_LUCK[lang])
    expect(why.locator(".luck-unlucky")).to_contain_text(unluckiest["name"])
    end.scroll_into_view_if_needed()
    page.screenshot(path=artifacts / f"luck-game-end-{lang}.png", full_page=True)
    for part in (end.locator("table"), why.locator(".luck-unlucky")):
        part.scroll_into_view_if_needed()
        assert in_view(part), part.bounding_box()
    fits_the_phone(page)
    with table_view(page, live_server, match_url, lang) as tv:
        expect(tv.locator(".last-round")).to_be_visible()
        # Round 10 stays 8 s (tv.css), then the standings come: to its end at once (a
        # push of the game's luck meanwhile brings it anew, for its own 8 s).
        tv.evaluate("""() => document.getAnimations()
            .filter(a => a.animationName === 'tv-after-the-round').forEach(a => a.finish())""")
        expect(tv.locator(".last-round")).to_be_hidden(timeout=15_000)
        standings = tv.locator(".standings")
        expect(standings.locator("td.expected")).to_have_count(4)
        expect(standings.locator(".luck-unlucky")).to_contain_text(unluckiest["name"])
        tv.screenshot(path=artifacts / f"luck-tv-game-end-{lang}.png")
        for part in (standings.locator(".standings-table"), standings.locator(".luck-note")):
            assert in_view(part), part.bounding_box()
    assert console_errors == []


# Six players: row 1 holds 10 11 12 13 after three rounds, rows 3 and 4 are full. In round
# 4 Ben's 14 is row 1's 5th card and Anna's 15 its 6th; Emil's 16 and Fritz's 17 follow on
# her new row. From Anna's side the others' five cards were any of 81 she could not see,
# and only the 14 did that (a too-low card would take row 2, the lightest): 5/81 ≈ 6 %.
SIX_STARTING = [10, 30, 60, 90]
SIX_ROUNDS = [
    (11, 31, 32, 61, 62, 91),
    (12, 33, 34, 63, 92, 93),
    (13, 35, 64, 94, 36, 37),
    (15, 14, 38, 39, 16, 17),
]
# Six players' figures are drawn (4,000 sets, seeded by the ids this run's matches get):
# about 6 %, as luck.json says.
SIX_TAKE = {
    "en": "15: sixth card, took row 1, 11 bulls — a {}% chance",
    "de": "15: sechste Karte, nimmt Reihe 1, 11 Hornochsen — eine Chance von {} %",
    "fr": "15 : sixième carte, a ramassé la rangée 1, 11 têtes de bœuf — {} % de chances",
}


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_six_players_summary_with_a_chance_still_fits_one_screen(
    page, console_errors, live_server, artifacts, lang
):
    names = new_names(6, "Six")  # names of 6 letters and more, like a family's
    page.add_init_script(WATCH_SCROLLS)
    match_url = round_shown(page, live_server, names, SIX_STARTING, SIX_ROUNDS, lang)
    # Luck follows the round's answer (a second push): its chance shown, it is stored.
    expect(page.locator(".summary-sixth .summary-chance")).to_be_visible(timeout=15_000)
    luck = page.request.get(f"{match_url}/games/1/luck.json").json()
    chance = next(play for play in luck["rounds"][3]["plays"] if play["card"] == 15)["chance"]
    assert luck["method"] == "sampled" and 0.04 < chance < 0.09  # 5/81: 6.2 %
    percent = (Decimal(repr(chance)) * 100).quantize(Decimal(1), ROUND_HALF_EVEN)  # as Babel
    take = SIX_TAKE[lang].format(percent)
    steps = page.locator(".round-summary .summary-step")
    expect(steps).to_have_count(6)
    expect(page.locator(".summary-sixth")).to_have_text(f"{names[0]} {take}")
    first_field = page.locator(".round-form input:not([type=hidden])").first
    expect(first_field).to_be_focused()
    page.screenshot(path=artifacts / f"luck-summary-6p-{lang}.png")
    assert page.evaluate("scrollY") == 0, scrolls(page)
    for part in (page.locator(".round-summary"), page.locator(".live-rows .table-rows")):
        assert in_view(part), part.bounding_box()
    form_fields = page.locator(".round-form input:not([type=hidden])")
    assert in_view(form_fields.first) and in_view(form_fields.last)
    assert in_view(page.locator(".round-form button[type=submit]"))
    fits_the_phone(page)
    assert console_errors == []
