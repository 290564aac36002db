"""Table benchmark: whole games played through Chromium the way a table plays them.

Run: .venv/bin/python bench/table.py [--players 4 6 10] [--seed 1]
(prints figures; not a test). It starts the real server (`python -m companion.serve`)
on loopback with a fresh database and, for each player count, plays one whole game
(10 rounds) on a 390x844 phone that enters every card, while a second phone (the
player link, at the same size) only watches.

Per round it prints what the entering phone cost: taps, keystrokes (digits and Enter)
and scroll gestures, and whether, right after the submission, the outcome of the round
(its summary) and the next field to type in were inside the screen. A scroll gesture
is counted for each of the two that is not on the screen: a player would have to
scroll to it. It also prints how long the watching phone took to show the placed round.

Targets (issue 9): 0 scrolls per round up to 6 players, at most 2 taps plus the digits,
the outcome visible after 100 % of the rounds, the other phone updated within 2 s.

``--own-phones`` plays the same game with every player on a phone of their own ("I am
Anna", tapped once when the match starts). Per round it prints, over the phones, the
most taps and keystrokes one phone needed to send its card (target, issue 19: the digits
and one Enter, no tap), the row choices tapped, and whether each phone had the outcome
and its own next field on the screen.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from conftest import CHROMIUM, CHROMIUM_ARGS, PHONE, serve_vendored_htmx  # noqa: E402
from driver import deal  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from serving import CSRF, free_port, start_server  # noqa: E402

from companion.web.htmx import HTMX_URL  # noqa: E402

IN_VIEW = """el => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth; }"""


@dataclass
class Round:
    """What one round cost on the entering phone, and how fast the other phone followed."""

    number: int
    taps: int
    keys: int
    scrolls: int
    outcome_seen: bool
    field_seen: bool
    follow_seconds: float


class Phone:
    """A phone at the table: counts every tap and keystroke it makes."""

    def __init__(self, page):
        self.page = page
        self.taps = 0
        self.keys = 0

    def tap(self, locator) -> None:
        locator.click()
        self.taps += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.keys += len(text)

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.keys += 1

    def seen(self, selector: str) -> bool:
        """True when the first element matching ``selector`` is wholly on the screen."""
        locator = self.page.locator(selector).first
        return locator.count() > 0 and locator.evaluate(IN_VIEW)


def setup_match(phone: Phone, base: str, names: list[str]) -> str:
    """Players added by plain posts; the match set up by taps (counted); its URL."""
    page = phone.page
    token = CSRF.search(page.request.get(f"{base}/players/").text()).group(1)
    for name in names:
        assert page.request.post(f"{base}/players/", form={"name": name, "csrf_token": token}).ok
    page.goto(f"{base}/matches/new")
    for name in names:
        phone.tap(page.get_by_role("button", name=name, exact=True))
        page.get_by_role("button", name=name, pressed=True).wait_for()
    phone.tap(page.get_by_role("button", name="Start the match"))
    page.wait_for_url(re.compile(r"/matches/\d+$"))
    return page.url


def join(watcher_page, phone: Phone, match_url: str) -> None:
    """The second phone opens the player link and keeps the match page open."""
    invite = phone.page.request.get(f"{match_url}/invite").text()
    token = re.search(r"/join/([\w-]+)", invite).group(1)
    watcher_page.goto(f"{match_url}/join/{token}")
    watcher_page.wait_for_function("window.htmx !== undefined")


def type_cards(phone: Phone, cards: list[int]) -> None:
    """Digits and Enter per field, from the field that has the focus; the last Enter sends."""
    for card in cards:
        phone.type(str(card))
        phone.press("Enter")


def play_round(phone: Phone, watcher, number: int, cards: list[int]) -> Round:
    """Enter one round, answer its row choices, measure what it took."""
    page = phone.page
    taps, keys = phone.taps, phone.keys
    scrolls = 0
    type_cards(phone, cards)
    sent = time.monotonic()
    done = page.locator(f".round-summary h2:has-text('Round {number},'), .row-choice").first
    while True:
        done.wait_for()
        if not page.locator(".row-choice").count():
            break
        scrolls += 0 if phone.seen(".row-choice h2") else 1
        phone.tap(page.locator("button.choice.is-suggested"))
        page.locator(".row-choice").wait_for(state="detached")
        sent = time.monotonic()
    watcher.locator(f".round-summary h2:has-text('Round {number},')").wait_for(timeout=10_000)
    follow = time.monotonic() - sent
    outcome_seen = phone.seen(".round-summary")
    field = ".round-form input:focus" if number < 10 else "#entry input:focus"
    field_seen = phone.seen(field)
    scrolls += (not outcome_seen) + (not field_seen)
    return Round(
        number, phone.taps - taps, phone.keys - keys, scrolls, outcome_seen, field_seen, follow
    )


@contextmanager
def phone_contexts(browser, count: int) -> Iterator[list]:
    """``count`` phone-sized browser contexts with htmx served offline, closed after."""
    contexts = [browser.new_context(**PHONE) for _ in range(count)]
    for context in contexts:
        context.route(HTMX_URL, serve_vendored_htmx)
    try:
        yield contexts
    finally:
        for context in contexts:
            context.close()


def play_game(browser, base: str, players: int, seed: int) -> tuple[int, list[Round]]:
    """One whole game of ``players``; the setup taps and every round's figures."""
    with phone_contexts(browser, 2) as contexts:
        phone = Phone(contexts[0].new_page())
        names = [f"P{players}-{seat}-{seed}" for seat in range(1, players + 1)]
        match_url = setup_match(phone, base, names)
        setup_taps = phone.taps
        watcher = contexts[1].new_page()
        join(watcher, phone, match_url)
        hands, starting = deal(random.Random(seed * 100 + players), players)
        type_cards(phone, starting)
        phone.page.get_by_role("heading", name=re.compile("round 1 of 10")).wait_for()
        rounds = [
            play_round(phone, watcher, number, [hand[number - 1] for hand in hands])
            for number in range(1, 11)
        ]
        return setup_taps, rounds


@dataclass
class OwnRound:
    """One round with every player on their own phone: the most one phone needed."""

    number: int
    taps: int  # the most taps one phone needed to send its card
    keys: int  # the most keystrokes (digits and Enter) one phone needed
    choices: int  # row choices tapped (a too-low card), on the chooser's phone
    outcome_seen: int  # phones with the round's outcome on the screen
    field_seen: int  # phones with their own next field focused and on the screen
    lost: int  # fields a live update replaced while their card was typed


def own_field(phone: Phone, player_id: int) -> str:
    return f"#entry input[name='card-{player_id}']"


def send_own_card(phone: Phone, player_id: int, card: int, number: int) -> int:
    """Type the card in this phone's own field and press Enter; a tap only when the
    focus is not already waiting there. Returns 1 when a live update replaced the field
    while it was typed in (the digits typed again), else 0."""
    field = phone.page.locator(own_field(phone, player_id))
    field.wait_for()
    if not phone.page.locator(f"{own_field(phone, player_id)}:focus").count():
        phone.tap(field)
    phone.type(str(card))
    lost = 0
    if field.input_value() != str(card):
        lost = 1
        field.fill("")
        phone.type(str(card))
    phone.press("Enter")
    sent = f".round-form .notice, .round-summary h2:has-text('Round {number},'), .row-choice"
    phone.page.locator(sent).first.wait_for()
    return lost


def play_own_round(phones: list, ids: list[int], number: int, cards: list[int]) -> OwnRound:
    """Every phone sends its own card; row choices are tapped where they are asked."""
    before = [(phone.taps, phone.keys) for phone in phones]
    lost = sum(
        send_own_card(phone, player_id, card, number)
        for phone, player_id, card in zip(phones, ids, cards, strict=True)
    )
    host, choices = phones[0], 0
    done = host.page.locator(f".round-summary h2:has-text('Round {number},'), .row-choice")
    while True:
        done.first.wait_for()
        if not host.page.locator(".row-choice").count():
            break
        host.tap(host.page.locator("button.choice.is-suggested"))
        choices += 1
        host.page.locator(".row-choice").wait_for(state="detached")
    costs = [(p.taps - t, p.keys - k) for p, (t, k) in zip(phones, before, strict=True)]
    costs[0] = (costs[0][0] - choices, costs[0][1])
    outcome = field = 0
    for phone, player_id in zip(phones, ids, strict=True):
        phone.page.locator(f".round-summary h2:has-text('Round {number},')").wait_for()
        outcome += phone.seen(".round-summary")
        if number < 10:
            phone.page.locator(own_field(phone, player_id)).wait_for()
            field += phone.seen(f"{own_field(phone, player_id)}:focus")
    taps, keys = max(t for t, _ in costs), max(k for _, k in costs)
    return OwnRound(number, taps, keys, choices, outcome, field, lost)


def play_game_own_phones(browser, base: str, players: int, seed: int):
    """One whole game, every player on their own phone; setup taps and every round."""
    with phone_contexts(browser, players) as contexts:
        phones = [Phone(context.new_page()) for context in contexts]
        names = [f"O{players}-{seat}-{seed}" for seat in range(1, players + 1)]
        match_url = setup_match(phones[0], base, names)
        hands, starting = deal(random.Random(seed * 100 + players), players)
        type_cards(phones[0], starting)
        phones[0].page.get_by_role("heading", name=re.compile("round 1 of 10")).wait_for()
        for phone in phones[1:]:
            join(phone.page, phones[0], match_url)
        ids = []
        for phone, name in zip(phones, names, strict=True):
            button = phone.page.get_by_role("button", name=f"I am {name}")
            ids.append(int(button.get_attribute("value")))
            phone.tap(button)
            phone.page.get_by_text(f"You are {name} on this phone.").wait_for()
        setup_taps = sum(phone.taps for phone in phones)
        rounds = [
            play_own_round(phones, ids, number, [hand[number - 1] for hand in hands])
            for number in range(1, 11)
        ]
        return setup_taps, rounds


def report_own_phones(players: int, setup_taps: int, rounds: list[OwnRound]) -> None:
    """Print a game played on own phones: a line per round, then against the target."""
    print(f"\n{players} players, each on their own phone (setting up: {setup_taps} taps)")
    print("round  taps  keys  row choices  outcome shown  own field ready")
    for r in rounds:
        print(
            f"{r.number:>5}  {r.taps:>4}  {r.keys:>4}  {r.choices:>11}  "
            f"{r.outcome_seen:>7}/{players:<5}  {r.field_seen:>9}/{players}"
        )
    print(
        f"per phone and round: at most {max(r.taps for r in rounds)} taps and "
        f"{max(r.keys for r in rounds)} keys (the digits and one Enter); "
        f"{sum(r.choices for r in rounds)} row choices in the game; "
        f"{sum(r.lost for r in rounds)} cards typed again (a live update replaced the field)"
    )


def report(players: int, setup_taps: int, rounds: list[Round]) -> None:
    """Print one game's figures: a line per round, then the summary against the targets."""
    print(f"\n{players} players (setting up the match: {setup_taps} taps)")
    print("round  taps  keys  scrolls  outcome  next field  other phone")
    for r in rounds:
        print(
            f"{r.number:>5}  {r.taps:>4}  {r.keys:>4}  {r.scrolls:>7}  "
            f"{'yes' if r.outcome_seen else 'NO':>7}  {'yes' if r.field_seen else 'NO':>10}  "
            f"{r.follow_seconds:>9.2f} s"
        )
    follows = [r.follow_seconds for r in rounds]
    print(
        f"per round: {statistics.mean(r.scrolls for r in rounds):.1f} scrolls, "
        f"at most {max(r.taps for r in rounds)} taps plus the digits, "
        f"outcome visible {100 * sum(r.outcome_seen for r in rounds) / len(rounds):.0f} %, "
        f"next field visible {100 * sum(r.field_seen for r in rounds) / len(rounds):.0f} %; "
        f"other phone: median {statistics.median(follows):.2f} s, max {max(follows):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, nargs="+", default=[4, 6, 10])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--own-phones", action="store_true", help="every player sends from their own phone"
    )
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        database = f"sqlite:///{Path(folder) / 'table.sqlite'}"
        server = start_server(database, port, workers=1)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
                base = f"http://127.0.0.1:{port}"
                for players in args.players:
                    if args.own_phones:
                        setup_taps, own = play_game_own_phones(browser, base, players, args.seed)
                        report_own_phones(players, setup_taps, own)
                        continue
                    setup_taps, rounds = play_game(browser, base, players, args.seed)
                    report(players, setup_taps, rounds)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
