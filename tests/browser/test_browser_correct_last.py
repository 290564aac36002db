"""Game 2 on a 390x844 phone, in English, German and French: "Correct a round…" lists the
game on the table and the last finished game, as docs/table.md says (issue 57: it
listed game 2 only), and a tap on game 1's round 10 opens its form."""

import re

import pytest
from browsing import fits_the_phone, match_with_rules, new_names, play_cards_game
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

GAME = {"en": "Game {}", "de": "Partie {}", "fr": "Manche {}"}


@pytest.mark.parametrize("lang", GAME)
def test_in_game_two_the_last_finished_games_rounds_are_a_tap_away(
    page, live_server, artifacts, lang
):
    match_url = match_with_rules(page, live_server, new_names(3, "Fix"), "more_than", 200)
    play_cards_game(page, match_url, 1, seed=5)
    play_cards_game(page, match_url, 2, seed=6, rounds=2)
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.goto(match_url)
    page.locator(".correct-rounds summary").click()
    games = page.locator(".correct-game")
    expect(games).to_have_text([GAME[lang].format(2), GAME[lang].format(1)])
    expect(page.locator(".correct-rounds .round-links").nth(1).locator("a")).to_have_count(10)
    fits_the_phone(page)
    page.locator(".correct-rounds").screenshot(path=artifacts / f"correct-rounds-{lang}.png")
    page.locator(".correct-rounds .round-links").nth(1).locator("a").last.click()
    expect(page).to_have_url(re.compile(r"/games/1/rounds/10/correct$"))
