"""Table benchmark: whole games played through Chromium the way a table plays them.

Run: .venv/bin/python -m bench.table [--players 4 6 10] [--seed 1]
(prints figures; not a test). It starts the real server (`python -m companion.serve`,
gevent workers: changes are pushed; the pages' 2 s poll is off) on loopback with a
fresh database and, for each player count, plays one whole game (10 rounds) on a
390x844 phone that enters every card, while a second phone (the player link, at the
same size) and the TV view (/matches/<id>/table at 1280x720) only watch.

Per round it prints what the entering phone cost: taps, keystrokes (digits and Enter)
and scroll gestures, and whether, right after the submission, the outcome of the round
(its summary) and the next field to type in were inside the screen. A scroll gesture
is counted for each of the two that is not on the screen: a player would have to
scroll to it. It also prints how long the watching phone and the TV took to show the
placed round: from the last card's (or row choice's) submit event on the entering phone
to a MutationObserver, installed before, seeing the round's summary on theirs, both in
the browser's clock.

Targets (issue 9): 0 scrolls per round up to 6 players, at most 2 taps plus the digits,
the outcome visible after 100 % of the rounds. Issue 18: the other phones and the TV
show a placed round after a median of at most 100 ms, at most 300 ms.

``--own-phones`` plays the same game with every player on a phone of their own ("I am
Anna", tapped once when the match starts). Per round it prints, over the phones, the
most taps and keystrokes one phone needed to send its card (target, issue 19: the digits
and one Enter, no tap), the row choices tapped, and whether each phone had the outcome
and its own next field on the screen, and how long the other phones took to show each
placed round.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

from bench.serving import CSRF, Usage, cpu_summary, free_port, start_server
from tests.chromium import CHROMIUM, CHROMIUM_ARGS, PHONE, route_cdn
from tests.driver import deal

TV = {"viewport": {"width": 1280, "height": 720}}
# When a form is sent (the last card's Enter, a row choice's tap), in the browser's clock:
# performance.timeOrigin + performance.now() is one clock for every page of the browser.
NOTE_SENT = """document.addEventListener("submit",
  () => { window.benchSent = performance.timeOrigin + performance.now(); }, true);"""
# Installed before the submit: when the summary of round ``number`` appears on the page
# (the TV shows the game's end instead after the last round).
WATCH_SHOWN = """number => {
  window.benchShown = null;
  const shown = () => [...document.querySelectorAll(".round-summary h2")]
    .some(h => h.textContent.includes(`Round ${number},`))
    || (number === 10 && [...document.querySelectorAll(".tv h2")]
      .some(h => h.textContent.includes("is over")));
  const note = () => { window.benchShown = performance.timeOrigin + performance.now(); };
  if (shown()) { note(); return; }
  const observer = new MutationObserver(() => {
    if (shown()) { note(); observer.disconnect(); }
  });
  observer.observe(document.body, {childList: true, subtree: true, characterData: true});
}"""
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
    follow_seconds: float  # the other phone showed the placed round after
    tv_seconds: float  # the TV view showed it after


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


def join(watcher_page, phone: Phone, match_url: str, then: str = "") -> None:
    """Another phone (or the TV) opens the player link and keeps the match page (or the
    page ``then`` below it) open, its event stream connected."""
    invite = phone.page.request.get(f"{match_url}/invite").text()
    token = re.search(r"/join/([\w-]+)", invite).group(1)
    watcher_page.goto(f"{match_url}/join/{token}")
    if then:
        watcher_page.goto(f"{match_url}/{then}")
    watcher_page.wait_for_function("() => window.htmx !== undefined")
    watcher_page.locator("#stream[sse-connect]").wait_for(state="attached")


def watch_for_round(pages, number: int) -> None:
    """Before the round is sent: note when each page shows its summary."""
    for page in pages:
        page.evaluate(WATCH_SHOWN, number)


def shown_after(page, sent: float) -> float:
    """Seconds from ``sent`` (the browser's clock) to the page showing the watched round."""
    try:
        page.wait_for_function("() => window.benchShown !== null", timeout=10_000)
    except PlaywrightTimeout:
        shown = page.locator("h2").all_inner_texts()
        stream = page.locator("#stream").get_attribute("data-stream")
        raise SystemExit(
            f"{page.url} did not show the round within 10 s ({shown}, stream {stream})"
        ) from None
    return (page.evaluate("window.benchShown") - sent) / 1000


def type_cards(phone: Phone, cards: list[int]) -> None:
    """Digits and Enter per field, from the field that has the focus; the last Enter sends."""
    for card in cards:
        phone.type(str(card))
        phone.press("Enter")


def play_round(phone: Phone, watcher, tv, number: int, cards: list[int]) -> Round:
    """Enter one round, answer its row choices, measure what it took."""
    page = phone.page
    taps, keys = phone.taps, phone.keys
    scrolls = 0
    watch_for_round([watcher, tv], number)
    type_cards(phone, cards)
    done = page.locator(f".round-summary h2:has-text('Round {number},'), .row-choice").first
    while True:
        done.wait_for()
        if not page.locator(".row-choice").count():
            break
        scrolls += 0 if phone.seen(".row-choice h2") else 1
        phone.tap(page.locator("button.choice.is-suggested"))
        page.locator(".row-choice").wait_for(state="detached")
    sent = page.evaluate("window.benchSent")  # the last card's, or the last choice's
    follow, on_tv = shown_after(watcher, sent), shown_after(tv, sent)
    outcome_seen = phone.seen(".round-summary")
    field = ".round-form input:focus" if number < 10 else "#entry input:focus"
    field_seen = phone.seen(field)
    scrolls += (not outcome_seen) + (not field_seen)
    return Round(
        number,
        phone.taps - taps,
        phone.keys - keys,
        scrolls,
        outcome_seen,
        field_seen,
        follow,
        on_tv,
    )


@contextmanager
def phone_contexts(browser, count: int, screens: int = 0) -> Iterator[list]:
    """``count`` phone-sized browser contexts and ``screens`` TV-sized ones after them,
    with htmx and its SSE extension served offline; closed after."""
    contexts = [browser.new_context(**PHONE) for _ in range(count)]
    contexts += [browser.new_context(**TV) for _ in range(screens)]
    for context in contexts:
        route_cdn(context)
        context.add_init_script(NOTE_SENT)
    try:
        yield contexts
    finally:
        for context in contexts:
            context.close()


def play_game(browser, base: str, players: int, seed: int) -> tuple[int, list[Round]]:
    """One whole game of ``players``; the setup taps and every round's figures."""
    with phone_contexts(browser, 2, screens=1) as contexts:
        phone = Phone(contexts[0].new_page())
        names = [f"P{players}-{seat}-{seed}" for seat in range(1, players + 1)]
        match_url = setup_match(phone, base, names)
        setup_taps = phone.taps
        watcher, tv = contexts[1].new_page(), contexts[2].new_page()
        join(watcher, phone, match_url)
        join(tv, phone, match_url, then="table")
        hands, starting = deal(random.Random(seed * 100 + players), players)
        type_cards(phone, starting)
        phone.page.get_by_role("heading", name=re.compile("round 1 of 10")).wait_for()
        rounds = [
            play_round(phone, watcher, tv, number, [hand[number - 1] for hand in hands])
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
    follows: list[float]  # seconds until each phone but the last sender showed the round


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
    watch_for_round([phone.page for phone in phones], number)
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
    sent = [phone.page.evaluate("window.benchSent") for phone in phones]
    last = sent.index(max(sent))  # the last card's phone, or the chooser's
    follows = [shown_after(phone.page, sent[last]) for n, phone in enumerate(phones) if n != last]
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
    return OwnRound(number, taps, keys, choices, outcome, field, lost, follows)


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
    print(f"the other phones showed the placed round after {spread(follows_of(rounds))}")


def follows_of(rounds) -> list[float]:
    """Every figure of how long another phone took to show a placed round."""
    return [follow for r in rounds for follow in r.follows]


def spread(seconds: list[float]) -> str:
    """Median and max, in ms."""
    return f"median {statistics.median(seconds) * 1000:.0f} ms, max {max(seconds) * 1000:.0f} ms"


def report(players: int, setup_taps: int, rounds: list[Round]) -> None:
    """Print one game's figures: a line per round, then the summary against the targets."""
    print(f"\n{players} players (setting up the match: {setup_taps} taps)")
    print("round  taps  keys  scrolls  outcome  next field  other phone       TV")
    for r in rounds:
        print(
            f"{r.number:>5}  {r.taps:>4}  {r.keys:>4}  {r.scrolls:>7}  "
            f"{'yes' if r.outcome_seen else 'NO':>7}  {'yes' if r.field_seen else 'NO':>10}  "
            f"{r.follow_seconds * 1000:>8.0f} ms  {r.tv_seconds * 1000:>4.0f} ms"
        )
    print(
        f"per round: {statistics.mean(r.scrolls for r in rounds):.1f} scrolls, "
        f"at most {max(r.taps for r in rounds)} taps plus the digits, "
        f"outcome visible {100 * sum(r.outcome_seen for r in rounds) / len(rounds):.0f} %, "
        f"next field visible {100 * sum(r.field_seen for r in rounds) / len(rounds):.0f} %; "
        f"other phone: {spread([r.follow_seconds for r in rounds])}; "
        f"TV: {spread([r.tv_seconds for r in rounds])}"
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
        # The real server, as `make run` starts it: gevent workers, so the pages get their
        # changes pushed. Their 2 s poll is off: what is measured is the push alone.
        server = start_server(database, port, None, {"COMPANION_LIVE_POLL": "null"})
        try:
            usage = Usage([server.pid], [], with_children=True)
            usage.start()
            began = time.monotonic()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
                base = f"http://127.0.0.1:{port}"
                phones, tvs = [], []
                for players in args.players:
                    if args.own_phones:
                        setup_taps, own = play_game_own_phones(browser, base, players, args.seed)
                        report_own_phones(players, setup_taps, own)
                        phones += follows_of(own)
                        continue
                    setup_taps, rounds = play_game(browser, base, players, args.seed)
                    report(players, setup_taps, rounds)
                    phones += [r.follow_seconds for r in rounds]
                    tvs += [r.tv_seconds for r in rounds]
                shares = usage.shares(time.monotonic() - began)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(
        f"\nafter the last card (or row choice) is sent, the placed round shows on the other"
        f" phones after {spread(phones)} ({len(phones)} times)"
        + (f", on the TV after {spread(tvs)} ({len(tvs)} times)" if tvs else "")
    )
    print(cpu_summary(shares, "Chromium and this script"))


if __name__ == "__main__":
    main()
