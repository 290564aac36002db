"""The score as it is played, and the table view as a screen the whole room shares: the
running totals in the middle of a game on the phone, the scoreboard and the TV; the TV at
a game's end and at the match's end with ten players at 1280x720, 1920x1080 and
768x1024 (no scrolling, text read from the sofa, no half of the screen left empty); the
final totals in view on a phone at the match's end."""

import random
import re

import pytest
from browsing import (
    BROKEN_WORDS,
    IN_VIEW,
    fits_the_phone,
    match_with_rules,
    new_names,
    play_cards_game,
    seat_ids,
    type_scores,
)
from driver import deal
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TV_SIZES = [(1280, 720), (1920, 1080), (768, 1024)]
# The smallest text a name, a total or the outcome may have on a screen across the room.
SOFA_PX = {(1280, 720): 24, (1920, 1080): 36, (768, 1024): 24}

# Where the page's visible content lies: the union of the boxes of its text and pictures.
CONTENT_BOX = """() => {
  const boxes = [...document.querySelectorAll('.tv *')]
    .filter(el => el.checkVisibility() && !el.closest('.visually-hidden') && (el.tagName === 'svg'
      || [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())))
    .map(el => el.getBoundingClientRect()).filter(r => r.width && r.height);
  return {left: Math.min(...boxes.map(r => r.left)), right: Math.max(...boxes.map(r => r.right)),
          top: Math.min(...boxes.map(r => r.top)), bottom: Math.max(...boxes.map(r => r.bottom))};
}"""
FONT_SIZES = "els => els.map(el => parseFloat(getComputedStyle(el).fontSize))"


def ten_players() -> list[str]:
    """Ten new players, two of them with 30-letter names."""
    names = new_names(10, "Tv")
    names[3] = ("Bartholomäus Maximilian" + names[3])[:30]
    names[7] = ("W" * 30 + names[7])[-30:]
    return names


def open_tv(browser, match_url: str, size: tuple[int, int], lang: str = "en"):
    """The table view in a browser window of this size, in this language."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_cookies([{"name": "lang", "value": lang, "url": match_url}])
    tv = context.new_page()
    tv.goto(f"{match_url}/table")
    return tv


def assert_a_shared_screen(tv, size: tuple[int, int]) -> None:
    """Nothing scrolls, the text reads from across the room and the content fills the
    screen: no half of it, left or right, top or bottom, stays empty."""
    width, height = size
    scroll = tv.evaluate("""() => ({width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight})""")
    assert scroll["width"] <= width and scroll["height"] <= height, scroll
    for selector in (".standings-table tbody th .name", ".standings-table td.num", ".outcome"):
        sizes = tv.eval_on_selector_all(selector, FONT_SIZES)
        assert sizes and min(sizes) >= SOFA_PX[size], (selector, sizes)
    box = tv.evaluate(CONTENT_BOX)
    assert box["left"] <= 0.1 * width and box["right"] >= 0.9 * width, box
    assert box["top"] <= 0.1 * height and 0.6 * height <= box["bottom"] <= height, box
    assert tv.eval_on_selector_all(".standings-table thead th", BROKEN_WORDS) == []
    assert tv.evaluate(OVERLAPPING) == []


# The parts of the standings (table, luck in words, chart, code) whose boxes overlap: on a
# tablet held upright the code lay over the figures.
OVERLAPPING = """() => {
  const parts = [...document.querySelectorAll('.standings-body > *')]
    .filter(el => el.checkVisibility())
    .map(el => [el.getAttribute('class'), el.getBoundingClientRect()]);
  const over = (a, b) => a.left < b.right - 1 && b.left < a.right - 1
    && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  return parts.flatMap(([name, box], i) =>
    parts.slice(i + 1).filter(([, other]) => over(box, other)).map(([other]) => [name, other]));
}"""


# The BG Stats code: on the screen, and each module at least this many pixels wide.
QR_MODULE_PX = 4
QR_BOX = """el => { const r = el.getBoundingClientRect();
  return {modules: el.viewBox.baseVal.width, width: r.width, height: r.height, inView:
          r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth}; }"""


# The names whose text does not lie whole inside its cell (cut, or clipped by overflow).
CUT_NAMES = """cells => cells.filter(cell => {
  const name = cell.querySelector('.name'), range = document.createRange();
  range.selectNodeContents(name);
  const text = range.getBoundingClientRect(), box = cell.getBoundingClientRect();
  return name.scrollWidth > name.clientWidth || text.left < box.left - 1
    || text.right > box.right + 1 || text.top < box.top - 1 || text.bottom > box.bottom + 1;
}).map(cell => cell.textContent.trim())"""


def assert_a_code_a_phone_reads_from_the_sofa(tv) -> None:
    """The finding: the play itself in the code made ~2 px modules at 720 lines. The code
    of the short link is whole on the screen, its modules ``QR_MODULE_PX`` wide at least."""
    code = tv.locator(".bgstats-qr svg")
    expect(code).to_be_visible()
    box = code.evaluate(QR_BOX)
    assert box["inView"] and box["width"] / box["modules"] >= QR_MODULE_PX, box


def shown_totals(page, rows: str) -> dict[str, tuple[int, bool]]:
    """A totals table's rows: name -> (total, tagged as leading)."""
    found = page.eval_on_selector_all(
        rows,
        """rows => rows.map(row => [row.querySelector('.name').textContent,
            parseInt(row.querySelector('td.num').textContent),
            [...row.querySelectorAll('.tag')].some(tag => tag.textContent === 'leads')])""",
    )
    return {name: (total, leads) for name, total, leads in found}


def test_the_score_in_the_middle_of_a_game_counts_the_bulls_taken_so_far(
    browser, page, live_server
):
    """After a typed game and five rounds of the next, the phone, the scoreboard and the
    TV show each total as game 1 plus the bulls the engine counts so far in game 2, and
    "leads" marks the fewest of those, when one player alone has them."""
    names = new_names(4, "Run")
    match_url = match_with_rules(page, live_server, names, "more_than", 66)
    ids = seat_ids(page, match_url)
    typed = dict(zip(ids, [2, 3, 4, 5], strict=True))
    type_scores(page, match_url, 1, typed)
    so_far = play_cards_game(page, match_url, 2, seed=3, rounds=5).bulls()
    assert any(so_far.values())
    running = {pid: typed[pid] + so_far[pid] for pid in ids}
    fewest = min(running.values())
    alone = list(running.values()).count(fewest) == 1  # a tie for the fewest has no leader
    expected = {
        name: (running[pid], alone and running[pid] == fewest)
        for name, pid in zip(names, ids, strict=True)
    }
    assert expected != {name: (typed[pid], False) for name, pid in zip(names, ids, strict=True)}
    page.goto(match_url)
    assert shown_totals(page, "#live-score tbody tr") == expected
    page.goto(f"{match_url}/scoreboard")
    assert shown_totals(page, ".totals.fixed tbody tr") == expected
    tv = open_tv(browser, match_url, (1280, 720))
    try:
        assert shown_totals(tv, "#live-score tbody tr") == expected
    finally:
        tv.context.close()


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_table_view_at_a_games_end(browser, page, live_server, artifacts, lang):
    """Ten players: the TV, open since before the game, turns by itself to the game's
    bulls and the totals as bars, which fit every screen and read from the sofa."""
    match_url = match_with_rules(page, live_server, ten_players(), "more_than", 66)
    first = open_tv(browser, match_url, TV_SIZES[0], lang)
    try:
        game = play_cards_game(page, match_url, 1, seed=11)
        outcome = first.locator("#live-score .outcome")
        expect(outcome).to_be_visible(timeout=10_000)  # swapped in by the TV's own polling
        bulls = first.eval_on_selector_all(
            ".standings-table tbody td.num:nth-of-type(1)", "els => els.map(e => +e.textContent)"
        )
        assert sorted(bulls) == sorted(game.bulls().values())
        assert first.locator(".standings-table tbody .bar-limit").count() == 10
    finally:
        first.context.close()
    for size in TV_SIZES:
        tv = open_tv(browser, match_url, size, lang)
        try:
            # Round 10 first, over the standings for 8 s (test_the_tv_shows_round_ten_...):
            # run to its end, then the standings are what the room sees.
            let_the_last_round_go(tv)
            assert tv.locator(".standings-table tbody tr").count() == 10
            tv.screenshot(path=artifacts / f"tv-game-end-{lang}-{size[0]}x{size[1]}.png")
            assert_a_shared_screen(tv, size)
        finally:
            tv.context.close()


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_table_view_and_the_phone_at_the_matchs_end(
    browser, page, live_server, artifacts, lang
):
    """The winner large, the final standings and the chart of the totals game by game
    fit every screen; on a phone the final totals are in view without scrolling."""
    names = ten_players()
    match_url = match_with_rules(page, live_server, names, "more_than", 66)
    first = play_cards_game(page, match_url, 1, seed=11).bulls()
    ids = seat_ids(page, match_url)
    # Game 2 keeps everyone under the limit, game 3 takes the last seat past it.
    second = {pid: max(0, min(60 - first[pid], 5 + seat)) for seat, pid in enumerate(ids)}
    type_scores(page, match_url, 2, second)
    # Ten players hand out at most 167 bulls a game (rules.most_taken): the last seat 67
    # less its total at most, the others a few each.
    third = {pid: 2 * seat for seat, pid in enumerate(ids)}
    third[ids[-1]] = 67 - first[ids[-1]] - second[ids[-1]]
    type_scores(page, match_url, 3, third)
    for size in TV_SIZES:
        tv = open_tv(browser, match_url, size, lang)
        try:
            expect(tv.locator(".result-banner .outcome")).to_be_visible()
            assert tv.locator(".standings .chart polyline").count() == 10
            assert tv.locator(".standings-table tbody tr").count() == 10
            tv.screenshot(path=artifacts / f"tv-match-end-{lang}-{size[0]}x{size[1]}.png")
            assert_a_shared_screen(tv, size)
            assert_a_code_a_phone_reads_from_the_sofa(tv)
            assert tv.eval_on_selector_all(".standings-table tbody th", CUT_NAMES) == []
        finally:
            tv.context.close()
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.goto(match_url)
    rows = page.locator(".final-totals tbody tr")
    expect(rows).to_have_count(10)
    assert page.evaluate("scrollY") == 0
    assert all(rows.nth(index).evaluate(IN_VIEW) for index in range(10))
    # Every name whole: the 30-letter ones take a second line rather than an ellipsis.
    cut = "els => els.filter(el => el.scrollWidth > el.clientWidth).map(el => el.textContent)"
    assert page.eval_on_selector_all(".final-totals .name", cut) == []
    page.screenshot(path=artifacts / f"phone-match-end-{lang}.png")
    fits_the_phone(page)


# What a TV shows mid-game: the heading, the round's summary, the score, a row choice.
ROUND_TEXT = (
    ".now-game",
    ".round-summary h2",
    ".summary-steps .name",
    "#live-score h2",
    "#live-score tbody .name",
    "#live-score tbody td.num",
)


def assert_a_round_reads_from_the_sofa(tv, size: tuple[int, int], selectors=ROUND_TEXT) -> None:
    """Nothing scrolls, every piece of the round's text is sofa-sized and on the screen,
    and the content fills it: no half left empty."""
    width, height = size
    scroll = tv.evaluate("""() => ({width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight})""")
    beyond = tv.evaluate("""() => { const out = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange(); range.selectNodeContents(node);
            const r = range.getBoundingClientRect();
            if (r.width && (r.right > innerWidth || r.bottom > innerHeight))
                out.push(node.parentElement.className + ': ' + node.data.trim().slice(0, 20));
        }
        return out.slice(-3); }""")
    assert scroll["width"] <= width and scroll["height"] <= height, (scroll, beyond)
    for selector in selectors:
        sizes = tv.eval_on_selector_all(selector, FONT_SIZES)
        assert sizes and min(sizes) >= SOFA_PX[size], (selector, sizes)
        assert all(tv.eval_on_selector_all(selector, f"els => els.map({IN_VIEW})")), selector
    box = tv.evaluate(CONTENT_BOX)
    assert box["left"] <= 0.1 * width and box["right"] >= 0.9 * width, box
    assert box["top"] <= 0.1 * height and box["bottom"] >= 0.75 * height, box


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_table_view_reads_from_the_sofa_in_every_round(
    browser, page, live_server, artifacts, lang
):
    """Ten players, mid-game and at a row choice: the summary, the score and the headings
    are 24 px at 1280x720 and 36 px at 1920x1080, and all of it fits the screen."""
    match_url = match_with_rules(page, live_server, ten_players(), "more_than", 66)
    play_cards_game(page, match_url, 1, seed=11, rounds=6)
    for size in TV_SIZES[:2]:
        tv = open_tv(browser, match_url, size, lang)
        try:
            expect(tv.locator(".round-summary")).to_be_visible()
            tv.screenshot(path=artifacts / f"tv-round-{lang}-{size[0]}x{size[1]}.png")
            assert_a_round_reads_from_the_sofa(tv, size)
        finally:
            tv.context.close()
    # Round 7: the lowest card is too low, and the TV says who takes a row.
    ids = seat_ids(page, match_url)
    hands, starting = deal(random.Random(11), len(ids))
    seen = set(starting) | {card for hand in hands for card in hand[:6]}
    lowest = [card for card in range(1, 105) if card not in seen][: len(ids)]
    cards = dict(zip(ids, lowest, strict=True))
    form = {f"card-{pid}": str(card) for pid, card in cards.items()} | {"game": "1", "round": "7"}
    response = page.request.post(f"{match_url}/rounds", form=form, max_redirects=0)
    assert response.status == 303, response.text()
    for size in TV_SIZES[:2]:
        tv = open_tv(browser, match_url, size, lang)
        try:
            expect(tv.locator(".choosing")).to_be_visible()
            tv.screenshot(path=artifacts / f"tv-choice-{lang}-{size[0]}x{size[1]}.png")
            selectors = (".now-game", ".choosing", "#live-score tbody td.num")
            assert_a_round_reads_from_the_sofa(tv, size, selectors)
        finally:
            tv.context.close()


def hold_the_last_round(tv) -> None:
    """Hold the 8 s of round 10 (tv.css's tv-after-the-round) while the test reads it,
    and wait until its cards have been dealt out (the deal-out is under 2 s). Not
    wait_for_function: the CSP refuses it."""
    tv.evaluate("""() => document.getAnimations()
        .filter(a => a.animationName === 'tv-after-the-round').forEach(a => a.pause())""")
    for _ in range(30):
        if tv.evaluate("""() => document.getAnimations().every(a =>
            a.animationName === 'tv-after-the-round' || a.playState === 'finished')"""):
            return
        tv.wait_for_timeout(100)
    raise AssertionError("the cards are still being dealt out")


def let_the_last_round_go(tv) -> None:
    """Let round 10's 8 s run out: to their end at once (tv.css's own end state, hidden),
    the other animations on from where ``hold_the_last_round`` held them (one that ran to
    its end is not started again); once it is hidden (read: the standings come)."""
    tv.evaluate("""() => document.getAnimations().forEach(a =>
        a.animationName === 'tv-after-the-round' ? a.finish()
            : a.playState === 'paused' && a.play())""")
    expect(tv.locator(".last-round")).to_be_hidden(timeout=15_000)


def assert_round_ten_reads_from_the_sofa(tv, size: tuple[int, int], rows: list) -> None:
    """Round 10 as any round mid-game: its four rows with the cards the engine left on
    them, and its summary beside them, all on the screen and sofa-sized."""
    last_round = tv.locator(".last-round")
    expect(last_round.locator(".round-summary h2")).to_contain_text("10")
    shown = last_round.locator(".table-row")
    expect(shown).to_have_count(4)
    for number, row in enumerate(rows):
        expect(shown.nth(number).locator(".card-number")).to_have_text([str(c) for c in row])
    for selector, smallest in (
        (".last-round .summary-steps .name", SOFA_PX[size]),
        (".last-round .card-number", SOFA_PX[size]),
        (".last-round .row-name", 0.75 * SOFA_PX[size]),  # a label, as mid-game
    ):
        sizes = tv.eval_on_selector_all(selector, FONT_SIZES)
        assert sizes and min(sizes) >= smallest, (selector, sizes)
        assert all(tv.eval_on_selector_all(selector, f"els => els.map({IN_VIEW})")), selector
    box = tv.evaluate(CONTENT_BOX)
    assert box["left"] <= 0.1 * size[0] and box["right"] >= 0.75 * size[0], box


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_tv_shows_round_ten_before_the_games_standings(
    browser, page, live_server, artifacts, lang
):
    """The round that often decided the game was on the phones only, and then four lines
    of text on an empty screen: the TV, open during the game, turns to round 10 as any
    round mid-game (its rows, who took which, beside what it did) when the game ends,
    then to the game's standings once it has been read. At 1920x1080 too, opened then."""
    size = TV_SIZES[0]
    match_url = match_with_rules(page, live_server, ten_players(), "more_than", 66)
    tv = open_tv(browser, match_url, size, lang)
    try:
        game = play_cards_game(page, match_url, 1, seed=11)
        rows = [list(row) for row in game.rows]
        last_round = tv.locator(".last-round")
        expect(last_round).to_be_visible(timeout=10_000)  # by the TV's own polling
        hold_the_last_round(tv)
        tv.screenshot(path=artifacts / f"tv-round-ten-{lang}.png")
        assert_round_ten_reads_from_the_sofa(tv, size, rows)
        assert len(tv.eval_on_selector_all(".last-round .summary-steps .name", FONT_SIZES)) == 10
        let_the_last_round_go(tv)
        expect(tv.locator(".standings-table tbody tr")).to_have_count(10)
        tv.screenshot(path=artifacts / f"tv-after-round-ten-{lang}.png")
        assert_a_shared_screen(tv, size)
    finally:
        tv.context.close()
    size = TV_SIZES[1]
    tv = open_tv(browser, match_url, size, lang)
    try:
        hold_the_last_round(tv)
        tv.screenshot(path=artifacts / f"tv-round-ten-{lang}-{size[0]}x{size[1]}.png")
        assert_round_ten_reads_from_the_sofa(tv, size, rows)
        let_the_last_round_go(tv)
        assert_a_shared_screen(tv, size)
    finally:
        tv.context.close()


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_before_the_first_game_the_tv_shows_phones_how_to_join(
    browser, page, live_server, artifacts, lang
):
    """Issue 43: before game 1 the TV showed an empty score table. It shows the address to
    type and a code to scan, both on the screen and read from the sofa, beside the seats;
    once game 1 starts (the TV open meanwhile) they go and the round's screen comes."""
    match_url = match_with_rules(page, live_server, ten_players(), "more_than", 66)
    tvs = [open_tv(browser, match_url, size, lang) for size in TV_SIZES[:2]]
    try:
        for tv, size in zip(tvs, TV_SIZES[:2], strict=True):
            join = tv.locator(".table-join")
            expect(join).to_be_visible()
            expect(join.locator(".join-address")).to_have_text(re.compile(r"/matches/\d+$"))
            tv.screenshot(path=artifacts / f"tv-join-{lang}-{size[0]}x{size[1]}.png")
            for selector in (".table-join h2", ".join-address", ".join-hint"):
                sizes = tv.eval_on_selector_all(selector, FONT_SIZES)
                assert sizes and min(sizes) >= SOFA_PX[size], (selector, sizes)
                assert tv.locator(selector).evaluate(IN_VIEW), selector
            assert tv.locator(".join-address").evaluate(ONE_LINE)
            code = tv.locator(".join-qr svg").evaluate(QR_BOX)
            assert code["inView"] and code["width"] / code["modules"] >= 2 * QR_MODULE_PX, code
            expect(tv.locator("#live-score tbody tr")).to_have_count(10)  # the seats
            assert_a_shared_screen_before_the_game(tv, size)
        play_cards_game(page, match_url, 1, seed=11, rounds=1)
        for tv in tvs:
            expect(tv.locator(".round-summary")).to_be_visible(timeout=10_000)
            expect(tv.locator(".table-join")).to_have_count(0)
    finally:
        for tv in tvs:
            tv.context.close()


# One line of text: its height is one line's.
ONE_LINE = """el => el.getClientRects().length === 1
  && el.getBoundingClientRect().height < 1.6 * parseFloat(getComputedStyle(el).fontSize)"""


def assert_a_shared_screen_before_the_game(tv, size: tuple[int, int]) -> None:
    """Nothing scrolls and the content fills the screen's width."""
    width, height = size
    scroll = tv.evaluate("""() => ({width: document.documentElement.scrollWidth,
        height: document.documentElement.scrollHeight})""")
    assert scroll["width"] <= width and scroll["height"] <= height, scroll
    box = tv.evaluate(CONTENT_BOX)
    assert box["left"] <= 0.1 * width and box["right"] >= 0.9 * width, box


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_mid_game_the_tvs_score_rows_and_entered_chips_are_balanced(
    browser, page, live_server, artifacts, lang
):
    """Issue 43: with four players the TV's score rows stretched to ~140 px each while the
    "Entered:" chips were 13 px. Mid-game the chips read from the sofa, and a score row
    is about a line of text, the column's spare height left below them."""
    names = new_names(4, "Chip")
    match_url = match_with_rules(page, live_server, names, "more_than", 66)
    play_cards_game(page, match_url, 1, seed=11, rounds=3)
    ids = seat_ids(page, match_url)
    hands, _starting = deal(random.Random(11), len(ids))
    for seat in (0, 2):  # two of the four cards of round 4 are in, hidden: "I am", a card
        page.request.post(f"{match_url}/me", form={"player": str(ids[seat])})
        form = {f"card-{ids[seat]}": str(hands[seat][3]), "game": "1", "round": "4"}
        response = page.request.post(f"{match_url}/rounds", form=form, max_redirects=0)
        assert response.status == 303, response.text()
    for size in TV_SIZES[:2]:
        tv = open_tv(browser, match_url, size, lang)
        try:
            chips = tv.locator(".entered .tag")
            expect(chips).to_have_count(4)
            expect(tv.locator(".entered .tag.is-in")).to_have_count(2)
            tv.screenshot(path=artifacts / f"tv-entered-{lang}-{size[0]}x{size[1]}.png")
            sizes = tv.eval_on_selector_all(".entered, .entered .tag", FONT_SIZES)
            assert min(sizes) >= 0.75 * SOFA_PX[size], sizes  # as the rows' labels
            assert all(tv.eval_on_selector_all(".entered .tag", f"els => els.map({IN_VIEW})"))
            text = SOFA_PX[size]
            heights = tv.eval_on_selector_all(
                "#live-score tbody tr", "els => els.map(el => el.getBoundingClientRect().height)"
            )
            assert len(heights) == 4 and max(heights) <= 2.5 * text, heights
            for selector in ROUND_TEXT:
                assert min(tv.eval_on_selector_all(selector, FONT_SIZES)) >= text, selector
                assert all(tv.eval_on_selector_all(selector, f"els => els.map({IN_VIEW})"))
        finally:
            tv.context.close()
