"""Correcting a card three rounds back, in Chromium at 390x844 with 6 players: the form
and its confirmation each fit one screen, and what changed shows on the correcting phone
and, by the live update, on another phone."""

import random
import re

import pytest
from browsing import fits_the_phone, new_names, play_cards_game, seat_ids, started_match
from conftest import new_phone_context
from driver import deal
from playwright.sync_api import expect
from test_browser_phones import invite_links

from companion import rules

pytestmark = pytest.mark.browser

SEED = 23
INSIDE = """el => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"""


def a_new_card(ids: list[int], number: int) -> tuple[int, int]:
    """A player and a card nobody holds that is not too low in round ``number`` of the
    game ``play_cards_game`` plays with SEED (too-low cards take row 1 there)."""
    hands, starting = deal(random.Random(SEED), len(ids))
    rounds = []
    for turn in range(number - 1):
        plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(ids)]
        choices: dict = {}
        while pending := rules.replay_game(starting, [*rounds, (plays, choices)], ids).pending:
            choices[pending.player] = 1
        rounds.append((plays, choices))
    rows = rules.replay_game(starting, rounds, ids).rows
    used = set(starting) | {card for hand in hands for card in hand}
    lowest_end = min(row[-1] for row in rows)
    return ids[2], min(card for card in range(lowest_end + 1, 105) if card not in used)


def inside_the_screen(page, selector: str) -> None:
    """The element's bounding box lies within the phone's viewport."""
    page.evaluate("scrollTo(0, 0)")
    assert page.locator(selector).evaluate(INSIDE), page.locator(selector).bounding_box()


def test_a_card_three_rounds_back_corrected_shows_what_changed_on_two_phones(
    browser, page, live_server, artifacts, console_errors
):
    names = new_names(6, "Fix")
    match_url = started_match(page, live_server, names)
    play_cards_game(page, match_url, 1, SEED, rounds=5)
    ids = seat_ids(page, match_url)
    player, card = a_new_card(ids, 2)
    was = deal(random.Random(SEED), len(ids))[0][2][1]  # their card in round 2, as played
    # One line for the card changed: "Fix3: 57 → 60" (issue 43), not one per card.
    changed = re.compile(rf"{names[2]}: {was} → {card}\b")
    page.goto(match_url)
    link, _watch = invite_links(page, live_server)
    other_context = new_phone_context(browser)
    try:
        other = other_context.new_page()
        other.goto(link)
        expect(other.get_by_role("heading", name=re.compile("round 6 of 10"))).to_be_visible()

        # Three rounds back, two taps from the match page: the list, then round 2.
        page.goto(match_url)
        page.locator(".correct-rounds summary").click()
        page.get_by_role("link", name="Correct round 2 of game 1").click()
        form = page.get_by_role("heading", name="Correct round 2 of game 1")
        expect(form).to_be_visible()
        inside_the_screen(page, "#correct")
        fits_the_phone(page)
        page.screenshot(path=artifacts / "correct-form-6p.png")
        page.get_by_label(names[2], exact=True).fill(str(card))
        page.get_by_role("button", name="Show what changes").click()

        confirm = page.get_by_role("heading", name="Correct round 2 of game 1?")
        expect(confirm).to_be_visible()
        expect(page.locator(".changes-rounds")).to_contain_text(changed)
        inside_the_screen(page, "#correct")
        fits_the_phone(page)
        page.screenshot(path=artifacts / "correct-confirm-6p.png")
        page.get_by_role("button", name="Store the correction").click()

        heading = "Round 2 of game 1 was corrected"
        # The page opens at what changed, not scrolled down to the next round's fields:
        # the whole summary in view (it sat 17 px above the screen, issue 43).
        expect(page.get_by_role("heading", name=heading)).to_be_in_viewport()
        expect(page.locator(".corrected")).to_be_in_viewport(ratio=1)
        for phone in (page, other):
            notice = phone.locator(".corrected")
            expect(notice.get_by_role("heading", name=heading)).to_be_visible(timeout=15_000)
            expect(notice.locator(".changes-rounds")).to_contain_text(changed)
            expect(notice.locator(".changes-totals li")).to_have_count(6)
        page.screenshot(path=artifacts / "correct-done-6p.png")
        other.screenshot(path=artifacts / "correct-other-6p.png")
        assert player in ids
        assert console_errors == []
    finally:
        other_context.close()
