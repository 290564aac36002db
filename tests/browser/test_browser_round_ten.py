"""Round 10 ends on every phone as every round does (issue 57), in Chromium at a LAN
address on three phones of their own, each "I am" one player: round 10's too-low card is
chosen on its player's phone, and the two other phones keep who took what in view, the
game's bulls and the next game's starting cards below it, in EN, DE and FR."""

import itertools
import random

import pytest
from browsing import fits_the_phone, in_view, new_names, play_cards_game, started_match
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import deal
from playwright.sync_api import expect
from test_browser_phones import i_am, invite_links

from companion import rules

pytestmark = pytest.mark.browser

PLAYERS = 3


def round_ten_waits_for_a_choice(seed: int) -> bool:
    """Whether the game ``play_cards_game`` plays from ``seed`` (a too-low card taking
    row 1) has a too-low card in its round 10."""
    ids = list(range(1, PLAYERS + 1))
    hands, starting = deal(random.Random(seed), PLAYERS)
    played: list = []
    for turn in range(10):
        plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(ids)]
        choices: dict[int, int] = {}
        while pending := rules.replay_game(starting, [*played, (plays, choices)], ids).pending:
            if turn == 9:
                return True
            choices[pending.player] = 1
        played.append((plays, choices))
    return False


SEED = next(seed for seed in itertools.count() if round_ten_waits_for_a_choice(seed))


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_round_ten_stays_in_view_on_every_phone(browser, lan_server, artifacts, lang):
    contexts = [new_phone_context(browser) for _ in range(PLAYERS)]
    try:
        phones = [context.new_page() for context in contexts]
        names = new_names(PLAYERS, "Ten")
        # Rounds 1 to 9 by plain posts on loopback (Playwright's requests cannot resolve
        # the LAN name that Chromium maps); the phones join at the LAN address.
        loopback = lan_server.replace(LAN_HOST, "127.0.0.1")
        setup = started_match(phones[0], loopback, names)
        play_cards_game(phones[0], setup, 1, SEED, rounds=9)
        phones[0].goto(setup)
        player_link, _watch = invite_links(phones[0], lan_server)
        match_url = player_link.split("/join/")[0]
        for phone, name in zip(phones, names, strict=True):
            phone.goto(player_link)
            phone.goto(match_url)
            i_am(phone, name)
            phone.locator(f".lang-switch a[lang={lang}]").click()
            expect(phone.locator("html")).to_have_attribute("lang", lang)

        # Round 10: each phone sends its own card; the too-low card's player chooses.
        hands, _starting = deal(random.Random(SEED), PLAYERS)
        for phone, name, hand in zip(phones, names, hands, strict=True):
            phone.get_by_label(name, exact=True).fill(str(hand[9]))
            phone.get_by_label(name, exact=True).press("Enter")
        for phone in phones:
            expect(phone.locator(".row-choice-live")).to_be_attached()
        # Only the chooser's phone has the buttons out; the others have them behind a tap.
        chooser = next(phone for phone in phones if not phone.locator(".choose-for").count())
        chooser.locator(".row-choice button.choice.is-suggested").click()

        for number, phone in enumerate(phones):
            expect(phone.locator("#live-table")).to_have_attribute("data-round", "1-10")
            # The next game's starting cards have come, their first field waiting.
            expect(phone.locator("#field-row1")).to_be_focused()
            summary = phone.locator(".live-news .round-summary")
            assert in_view(summary), (number, summary.bounding_box())
            for step in summary.locator(".summary-step").all():
                assert in_view(step), step.bounding_box()
            # Below it: the rows, the game's bulls, then the next game's starting cards.
            end = phone.locator(".live-end .game-end").bounding_box()
            entry = phone.locator("#entry form").first.bounding_box()
            assert summary.bounding_box()["y"] < end["y"] < entry["y"]
            fits_the_phone(phone)
            phone.screenshot(path=artifacts / f"round-ten-{lang}-phone{number + 1}.png")
    finally:
        for context in contexts:
            context.close()
