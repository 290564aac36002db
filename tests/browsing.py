"""What the Chromium tests do on a phone again and again: add players and start a match,
type cards, read the explained steps, check the page fits the phone."""

import itertools
import random
import re

from driver import deal
from playwright.sync_api import expect

from companion import rules

serials = itertools.count(1)


# Resolves once htmx runs on the page (from its CDN or the companion's copy): at once if
# it does, else at its first htmx:load; refused after 10 s.
HTMX_STARTED = """() => window.htmx !== undefined || new Promise((resolve, reject) => {
  document.addEventListener("htmx:load", () => resolve(true), { once: true });
  setTimeout(() => reject(new Error("htmx did not start within 10 s")), 10000);
})"""


def htmx_started(page) -> None:
    """Wait until htmx runs on the page. Not wait_for_function: when its first look
    finds no htmx, it polls by evaluating a string in the page, which the CSP refuses
    (an EvalError that fails the test only when htmx comes late)."""
    assert page.evaluate(HTMX_STARTED)


def fits_the_phone(page, width: int = 390) -> None:
    """No sideways scrolling at 390px (or ``width``: a TV), once the page's style sheets
    are in (its load event). The message names what sticks out, where, with its
    parent's width, and the page's widths and style sheets.

    A page shows its heading before its last style sheet arrives, and a width read then
    is the page's half-styled: with stats.css in and app.css not yet, the player page's
    trend shows its hidden words ("(a baissé lors du dernier match)") on one line: 425 px
    wide in French, 453 in German (one CI run in eleven; every time with app.css held
    back)."""
    page.wait_for_load_state("load")
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide <= width:
        return
    found = page.evaluate(WIDE, width)
    raise AssertionError(f"{page.url} is {wide}px wide: {found}")


# What sticks out past the width (the last five in the document's order), and the page's state.
WIDE = """width => ({
  sticking_out: [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > width + 1).slice(-5)
    .map(el => { const box = el.getBoundingClientRect(), up = el.parentElement;
      return `${el.tagName}.${el.className} x ${Math.round(box.left)}-${Math.round(box.right)}`
        + ` "${el.textContent.trim().slice(0, 40)}" in ${up.tagName}.${up.className}`
        + ` ${Math.round(up.getBoundingClientRect().width)}px`; }),
  inner: innerWidth, client: document.documentElement.clientWidth,
  ready: document.readyState,
  sheets: [...document.styleSheets].map(sheet => (sheet.href || 'inline').split('/').pop()),
})"""


# True when the whole element is inside the viewport (not just somewhere on the page).
# The words of these elements that break across lines ("Erwarte|t"): a Range around each
# word has one line's boxes. An error, a button or a heading may wrap between its words,
# never inside one (``page.eval_on_selector_all(selector, BROKEN_WORDS)``).
BROKEN_WORDS = """els => els.flatMap(el => {
  const broken = [], walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
      if (lines.size > 1) broken.push(word[0]);
    }
  }
  return broken;
})"""

IN_VIEW = """el => { const r = el.getBoundingClientRect();
  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }"""


def in_view(locator) -> bool:
    """True when the whole element is inside the viewport (not just somewhere on the page),
    read once the page's style sheets are in, as ``fits_the_phone`` reads widths."""
    locator.page.wait_for_load_state("load")
    return locator.evaluate(IN_VIEW)


def add_player(page, live_server, name: str) -> None:
    """Add a household player through the players page."""
    page.goto(f"{live_server}/players/")
    page.get_by_label("New player").fill(name)
    page.get_by_role("button", name="Add player").click()
    page.get_by_role("link", name=name, exact=True).wait_for()


def start_match(page, live_server, names: list[str]) -> None:
    """Seat the players in order and start a match with the default rules."""
    page.goto(f"{live_server}/matches/new")
    for seat, name in enumerate(names, 1):
        page.get_by_role("button", name=name, exact=True).click()
        seated = page.get_by_role("button", name=name, pressed=True)
        expect(seated.locator(".seat-number")).to_have_text(str(seat))
    page.get_by_role("button", name="Start the match").click()
    page.get_by_role("heading", name=re.compile(r"^Match \d+")).wait_for()


def enter_cards(page, cards: dict[str, int], button: str) -> None:
    """Type one card per label and submit."""
    for label, card in cards.items():
        page.get_by_label(label, exact=True).fill(str(card))
    page.get_by_role("button", name=button).click()


STARTING_CARDS = {"Row 1": 12, "Row 2": 24, "Row 3": 37, "Row 4": 40}


def start_game(page, cards: dict[str, int] = STARTING_CARDS, number: int = 1) -> None:
    """Type a game's four starting cards, start it, and wait until its round 1 asks for
    cards: the start is sent by htmx, and the page before it has buttons ("I am …",
    links) that a click can hit while the swap is on its way."""
    enter_cards(page, cards, f"Start game {number}")
    expect(page.get_by_role("heading", name=f"Game {number} · round 1 of 10")).to_be_visible()


def explained_steps(page) -> list[str]:
    """The round's steps, each card explained: one tap on "Why?". With htmx they open
    under the link; without JavaScript on the round's replay, and the phone goes back."""
    match_url = page.url
    page.locator("a.explain").click()
    steps = page.locator(".step")
    steps.first.wait_for()
    texts = steps.all_inner_texts()
    if page.url.split("#")[0] != match_url.split("#")[0]:
        page.go_back()
    return texts


def add_players_quickly(page, live_server, names: list[str]) -> None:
    """Household players added by plain posts (the players page has its own tests)."""
    for name in names:
        response = page.request.post(f"{live_server}/players/", form={"name": name})
        assert response.ok, response.status


def new_names(count: int, stem: str) -> list[str]:
    return [f"{stem}{chr(65 + seat)}{next(serials)}" for seat in range(count)]


def started_match(page, live_server, names: list[str]) -> str:
    """A match of these new players, started on this phone (it holds the player link)."""
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    return page.url.split("#")[0]


def match_with_rules(page, live_server, names: list[str], end_kind: str, end_value: int) -> str:
    """A match of these new players with its own end condition, started by a plain post
    on this phone (it holds the player link); returns the match's URL."""
    add_players_quickly(page, live_server, names)
    page.goto(f"{live_server}/matches/new")
    ids = [
        page.get_by_role("button", name=name, exact=True).get_attribute("value") for name in names
    ]
    form = {f"seat_{seat}": pid for seat, pid in enumerate(ids, 1)}
    form.update(end_kind=end_kind, end_value=str(end_value), deck="standard")
    response = page.request.post(f"{live_server}/matches/", form=form, max_redirects=0)
    assert response.status == 303, response.text()
    return live_server + response.headers["location"].split("#")[0]


def play_cards_game(page, match_url: str, number: int, seed: int, rounds: int = 10) -> dict:
    """Play ``rounds`` rounds of game ``number`` by plain posts, a too-low card taking row
    1; return the engine's replay of them (bulls by player id)."""
    ids = seat_ids(page, match_url)
    hands, starting = deal(random.Random(seed), len(ids))
    form = {f"row{row}": str(card) for row, card in enumerate(starting, 1)}
    response = page.request.post(
        f"{match_url}/games", form={**form, "game": str(number)}, max_redirects=0
    )
    assert response.status == 303, response.text()
    played: list = []
    for turn in range(rounds):
        plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(ids)]
        form = {f"card-{pid}": str(card) for pid, card in plays}
        form.update(game=str(number), round=str(turn + 1))
        response = page.request.post(f"{match_url}/rounds", form=form, max_redirects=0)
        assert response.status == 303, response.text()
        choices: dict[int, int] = {}
        while pending := rules.replay_game(starting, [*played, (plays, choices)], ids).pending:
            choices[pending.player] = 1
            form = {"player": str(pending.player), "row": "1", "game": str(number)}
            form["round"] = str(turn + 1)
            response = page.request.post(f"{match_url}/choice", form=form, max_redirects=0)
            assert response.status == 303, response.text()
        played.append((plays, choices))
    return rules.replay_game(starting, played, ids)


def seat_ids(page, match_url: str) -> list[int]:
    """The seats' ids in order, read from the match page's score form or card fields."""
    html = page.request.get(match_url).text()
    found = re.findall(r'name="(?:card|score)-(\d+)"', html)
    return [int(pid) for pid in dict.fromkeys(found)]


def type_scores(page, match_url: str, number: int, bulls: dict[int, int]) -> None:
    """A game entered as typed scores (bulls by player id)."""
    form = {"game": str(number)}
    for pid, count in bulls.items():
        form[f"kind-{pid}"] = "bulls"
        form[f"score-{pid}"] = str(count)
    response = page.request.post(f"{match_url}/scores", form=form, max_redirects=0)
    assert response.status == 303, response.text()


class LanRequests:
    """A page's plain requests to a home network's name (``lan_server``): Chromium maps the
    name to loopback, Playwright's own requests cannot, so they go to loopback and carry
    the name as their Host."""

    def __init__(self, page, lan_server: str):
        self.request, self.host = page.request, lan_server.split("//", 1)[1]

    def __getattr__(self, method: str):
        def send(url: str, **options):
            headers = {**options.pop("headers", {}), "Host": self.host}
            url = url.replace(self.host, "127.0.0.1:" + self.host.rsplit(":", 1)[1], 1)
            return getattr(self.request, method)(url, headers=headers, **options)

        return send


class AtTheLan:
    """The page, its plain requests sent as ``LanRequests``: what browsing's helpers take."""

    def __init__(self, page, lan_server: str):
        self.page, self.request = page, LanRequests(page, lan_server)

    def __getattr__(self, name: str):
        return getattr(self.page, name)
