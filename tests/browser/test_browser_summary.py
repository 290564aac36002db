"""The round summary in Chromium at 390x844 with six players: the round in the order it
happened, a sixth card that takes the row a lower card just went to, a too-low card with
the row its player chose; the summary and the next round's first field on one screen, in
English, German and French."""

import re

import pytest
from browsing import (
    fits_the_phone,
    in_view,
    match_with_rules,
    new_names,
    play_cards_game,
    started_match,
)
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


# Seats: Anna Ben Cleo Dora Emil Fritz. Game 1 starts on 12 60 80 90; round 1 fills row 2
# to four cards; in round 2 Fritz's 5 is too low (he takes row 1), Ben's 69 is row 2's
# 5th card, then Dora's 71 its 6th: she takes the row with Ben's 69 in it.
STARTING = [12, 60, 80, 90]
ROUND_1 = [61, 62, 63, 81, 91, 92]
ROUND_2 = [85, 69, 95, 71, 72, 5]
# (seat, card, what it did) in each language, lowest card first.
LINES = {
    "en": [
        (5, "5: too low, took row 1, 1 bull"),
        (1, "69 → row 2"),
        (3, "71: sixth card, took row 2, 7 bulls"),
        (4, "72 → row 2"),
        (0, "85 → row 3"),
        (2, "95 → row 4"),
    ],
    "de": [
        (5, "5: zu niedrig, nimmt Reihe 1, 1 Hornochse"),
        (1, "69 → Reihe 2"),
        (3, "71: sechste Karte, nimmt Reihe 2, 7 Hornochsen"),
        (4, "72 → Reihe 2"),
        (0, "85 → Reihe 3"),
        (2, "95 → Reihe 4"),
    ],
    "fr": [
        (5, "5 : trop faible, a ramassé la rangée 1, 1 tête de bœuf"),
        (1, "69 → rangée 2"),
        (3, "71 : sixième carte, a ramassé la rangée 2, 7 têtes de bœuf"),
        (4, "72 → rangée 2"),
        (0, "85 → rangée 3"),
        (2, "95 → rangée 4"),
    ],
}


def dealt(page) -> None:
    """Wait until the round's cards have landed (the deal-out animation is under 2 s), so
    a screenshot shows the rows as they are. Not wait_for_function: the CSP refuses it."""
    for _ in range(30):
        if page.evaluate("document.getAnimations().every(a => a.playState === 'finished')"):
            return
        page.wait_for_timeout(100)
    raise AssertionError("the cards are still being dealt out")


def type_round(page, cards: list[int]) -> None:
    """Digits and Enter per field, from the first field (it has the focus); Enter sends."""
    expect(page.locator(".round-form input:not([type=hidden])").first).to_be_focused()
    for card in cards:
        page.keyboard.type(str(card))
        page.keyboard.press("Enter")


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_summary_tells_the_round_in_order_on_one_screen(
    page, console_errors, live_server, artifacts, lang
):
    """Six players: every card once, lowest first, the taking cards named with their bulls;
    the summary, the rows and the next round's fields all in view, without scrolling."""
    names = new_names(6, "Sum")
    started_match(page, live_server, names)
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.reload()
    for row, card in enumerate(STARTING, 1):
        page.locator(f"#field-row{row}").fill(str(card))
    page.locator("#entry button[type=submit]").first.click()
    type_round(page, ROUND_1)
    page.locator(".round-summary h2").wait_for()
    type_round(page, ROUND_2)
    # Fritz's 5 is too low: he takes row 1 (the one with the fewest bulls, but any goes).
    page.locator("#row-1").click()
    steps = page.locator(".round-summary .summary-step")
    expect(steps).to_have_text([f"{names[seat]} {text}" for seat, text in LINES[lang]])
    # The rows taken are marked in red: the too-low card and the sixth.
    expect(page.locator(".summary-too_low")).to_have_count(1)
    expect(page.locator(".summary-sixth")).to_have_count(1)
    assert re.search(r"\b71\b", steps.nth(2).locator(".summary-card").inner_text())

    # One screen: what just happened and what to enter next, nothing scrolled.
    summary = page.locator(".round-summary")
    form = page.locator(".round-form")
    first_field = form.locator("input:not([type=hidden])").first
    expect(first_field).to_be_focused()
    dealt(page)
    page.screenshot(path=artifacts / f"summary-6p-{lang}.png")
    assert page.evaluate("scrollY") == 0
    for part in (summary, page.locator(".live-rows .table-rows"), first_field):
        assert in_view(part), part.bounding_box()
    assert in_view(form.locator("input:not([type=hidden])").last)
    assert in_view(form.locator("button[type=submit]"))
    fits_the_phone(page)
    assert console_errors == []


def test_the_table_view_reads_the_round_the_same_way(page, live_server):
    """The TV's summary: the same lines in the same order, beside the rows."""
    names = new_names(6, "SumTv")
    match_url = started_match(page, live_server, names)
    start = page.request.post(
        f"{match_url}/games",
        form={f"row{row}": str(card) for row, card in enumerate(STARTING, 1)} | {"game": "1"},
    )
    assert start.ok
    for number, cards in ((1, ROUND_1), (2, ROUND_2)):
        html = page.request.get(match_url).text()
        ids = re.findall(r'name="card-(\d+)"', html)
        form = {f"card-{pid}": str(card) for pid, card in zip(ids, cards, strict=True)}
        response = page.request.post(
            f"{match_url}/rounds", form=form | {"game": "1", "round": str(number)}
        )
        assert response.ok
    page.goto(match_url)
    page.locator("#row-1").click()
    page.locator(".round-summary").wait_for()
    tv = page.context.browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        tv.goto(f"{match_url}/table")
        expected = [f"{names[seat]} {text}" for seat, text in LINES["en"]]
        expect(tv.locator(".summary-step")).to_have_text(expected)
        assert in_view(tv.locator(".round-summary"))
    finally:
        tv.close()


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_round_ten_shows_its_rows_on_the_phone(page, live_server, artifacts, lang):
    """Issue 43: after the last round the phone showed the summary and the game's bulls,
    not the rows. The phone, open while the game is played, turns to round 10 as to any
    round: what it did, and under it the rows as round 10 left them, both in view."""
    match_url = match_with_rules(page, live_server, new_names(4, "Ten"), "more_than", 66)
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.goto(match_url)
    game = play_cards_game(page, match_url, 1, seed=5)
    expect(page.locator(".round-summary h2")).to_contain_text("10")  # pushed to the phone
    rows = page.locator(".live-rows .table-row")
    expect(rows).to_have_count(4)
    for number, row in enumerate(game.rows):
        expect(rows.nth(number).locator(".card-number")).to_have_text([str(c) for c in row])
    taken = {step.row for step in game.rounds[-1].steps if step.taken}
    assert taken  # round 10 took a row: the phone says which
    expect(page.locator(".live-rows .table-row.is-taken")).to_have_count(len(taken))
    expect(page.locator(".live-end .game-end")).to_be_attached()  # the game's bulls after
    dealt(page)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=artifacts / f"phone-round-ten-{lang}.png")
    for part in (page.locator(".round-summary"), page.locator(".live-rows .table-rows")):
        assert in_view(part), part.bounding_box()
    fits_the_phone(page)
