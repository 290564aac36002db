"""The leaderboard, a player's statistics and head to head on a 390x844 phone."""

import itertools
import random
import re

import pytest
from browsing import fits_the_phone, htmx_started
from playwright.sync_api import expect

from companion import rules

pytestmark = pytest.mark.browser

_runs = itertools.count(1)


def post(page, url: str, form: dict) -> str:
    """Post a form like a phone does (same cookies); return where it redirects to."""
    response = page.request.post(url, form={k: str(v) for k, v in form.items()}, max_redirects=0)
    assert response.status == 303, response.text()[:2000]
    return response.headers["location"]


def player_ids(page, live_server, names) -> list[int]:
    """Add the players and read their ids from the players page."""
    for name in names:
        post(page, f"{live_server}/players/", {"name": name})
    html = page.request.get(f"{live_server}/players/").text()
    return [int(re.search(rf'href="/players/(\d+)">{name}<', html).group(1)) for name in names]


def new_match(page, live_server, ids, games: int) -> str:
    """Start a match that ends after ``games`` games; return its URL."""
    form = {f"seat_{seat}": pid for seat, pid in enumerate(ids, 1)}
    form.update(end_kind="games", end_value=games, deck="standard")
    match_id = re.search(r"/matches/(\d+)", post(page, f"{live_server}/matches/", form))[1]
    return f"{live_server}/matches/{match_id}"


def play_cards_game(page, url: str, ids, number: int, rng: random.Random) -> None:
    """Play a whole game card by card; the local engine says when a row must be chosen."""
    cards = rng.sample(range(1, 105), 10 * len(ids) + 4)
    starting = cards[-4:]
    post(
        page,
        f"{url}/games",
        {"game": number, **{f"row{row}": card for row, card in enumerate(starting, 1)}},
    )
    table = rules.Table([(card,) for card in starting])
    for turn in range(10):
        plays = [(pid, cards[seat * 10 + turn]) for seat, pid in enumerate(ids)]
        post(
            page,
            f"{url}/rounds",
            {"game": number, "round": turn + 1, **{f"card-{pid}": card for pid, card in plays}},
        )
        table.start_round(plays)
        choices = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
            post(
                page,
                f"{url}/choice",
                {
                    "player": pending.player,
                    "row": pending.suggested,
                    "game": number,
                    "round": turn + 1,
                },
            )


@pytest.fixture
def history(page, live_server):
    """Three players: a card-by-card game and a score-only one, then a shared win.

    Returns the players' names and ids; the third is archived.
    """
    run = next(_runs)
    names = [f"Lena {run}", f"Malte {run}", f"Nora {run}"]
    ids = player_ids(page, live_server, names)
    url = new_match(page, live_server, ids, games=2)
    play_cards_game(page, url, ids, 1, random.Random(7))
    post(
        page,
        f"{url}/scores",
        {
            "game": 2,
            **{f"kind-{pid}": "bulls" for pid in ids},
            **{f"score-{pid}": bulls for pid, bulls in zip(ids, (4, 9, 1), strict=True)},
        },
    )
    url = new_match(page, live_server, ids[:2], games=1)
    post(
        page,
        f"{url}/scores",
        {
            "game": 1,
            **{f"kind-{pid}": "bulls" for pid in ids[:2]},
            **{f"score-{pid}": 6 for pid in ids[:2]},
        },
    )
    post(page, f"{live_server}/players/{ids[2]}/archive", {"archived": 1})
    return names, ids


def test_leaderboard_and_player_page_on_a_phone(
    page, console_errors, live_server, artifacts, history
):
    """The leaderboard fits, filters with htmx, and leads to a player's page and chart."""
    names, _ids = history
    page.goto(f"{live_server}/leaderboard")
    table = page.locator("table.leaderboard")
    for name in names:
        assert table.get_by_role("link", name=name).is_visible()
    archived = table.locator("tr", has=page.get_by_role("link", name=names[2]))
    assert "archived" in archived.inner_text()
    fits_the_phone(page)
    page.screenshot(path=artifacts / "leaderboard.png", full_page=True)

    htmx_started(page)
    page.get_by_label("Players at the table").select_option("2")
    page.wait_for_url(re.compile(r"players=2"))
    assert "1/1" in table.locator("tr", has=page.get_by_role("link", name=names[0])).inner_text()
    assert (
        not table.get_by_role("link", name=names[2])
        .locator("xpath=ancestor::tr")
        .locator(".rating")
        .count()
    )

    page.get_by_role("link", name=names[0]).click()
    page.get_by_role("heading", name="Card by card").wait_for()
    # The chart and the sentence come after that heading: a page read in up to the heading
    # may not have them yet.
    expect(page.locator("svg.chart-svg")).to_be_visible()
    expect(page.locator("main")).to_contain_text(
        "From 1 game entered card by card.", use_inner_text=True
    )
    fits_the_phone(page)
    page.screenshot(path=artifacts / "player-stats.png", full_page=True)
    assert console_errors == []


def test_head_to_head_in_german_dark(page, live_server, artifacts, history):
    """Head to head in German at night: the form and the comparison fit the phone."""
    page.emulate_media(color_scheme="dark")
    page.context.set_extra_http_headers({"Accept-Language": "de"})
    _names, ids = history
    page.goto(f"{live_server}/leaderboard/head-to-head?first={ids[0]}&second={ids[1]}")
    assert "Direkter Vergleich" in page.locator("h1").inner_text()
    assert page.locator("table.duel").is_visible()
    fits_the_phone(page)
    page.screenshot(path=artifacts / "head-to-head-dark-de.png", full_page=True)
    page.goto(f"{live_server}/leaderboard")
    fits_the_phone(page)
    page.screenshot(path=artifacts / "leaderboard-dark-de.png", full_page=True)
