"""The leaderboard's order on a 390x844 phone: it says what it is ordered by, and one tap
on "Won" puts the last match's winner above a player without a win, with JavaScript and
without; the leaderboard and a player's Skill chart in English, German and French."""

import itertools
import re

import pytest
from browsing import fits_the_phone
from playwright.sync_api import expect
from test_browser_leaderboard import post

pytestmark = pytest.mark.browser

_runs = itertools.count(1)


@pytest.fixture
def evenings(page, live_server) -> list[str]:
    """Oda wins three matches against Per and Quin (Per second every time), then Rut
    beats Quin in her only match. Returns the names in the order of sure skill."""
    run = next(_runs)
    oda, per, quin, rut = names = [f"{name} {run}" for name in ("Oda", "Per", "Quin", "Rut")]
    for name in names:
        post(page, f"{live_server}/players/", {"name": name})
    html = page.request.get(f"{live_server}/players/").text()
    ids = {name: re.search(rf'href="/players/(\d+)">{name}<', html)[1] for name in names}
    for bulls in (
        {oda: 4, per: 6, quin: 8},
        {oda: 5, per: 7, quin: 9},
        {oda: 3, per: 5, quin: 10},
        {rut: 1, quin: 20},
    ):
        seats = {f"seat_{seat}": ids[name] for seat, name in enumerate(bulls, 1)}
        url = post(page, f"{live_server}/matches/", {**seats, "end_kind": "games", "end_value": 1})
        scores = {"game": 1}
        for name, count in bulls.items():
            scores |= {f"kind-{ids[name]}": "bulls", f"score-{ids[name]}": count}
        post(page, live_server + url.split("#")[0] + "/scores", scores)
    return [oda, per, rut, quin]


def board_names(page, names: list[str]):
    """These players' links on the leaderboard, top to bottom (others may be on it too)."""
    mine = re.compile("^(?:" + "|".join(map(re.escape, names)) + ")$")
    return page.locator("table.leaderboard a.name").filter(has_text=mine)


@pytest.mark.parametrize("javascript", [True, False], ids=["htmx", "no-js"])
def test_one_tap_orders_the_leaderboard_by_wins(
    request, live_server, artifacts, evenings, javascript
):
    page = request.getfixturevalue("page" if javascript else "page_nojs")
    oda, per, rut, quin = evenings
    page.goto(f"{live_server}/leaderboard")
    order = page.get_by_role("navigation", name="Order by")
    expect(order.get_by_role("link", name="Skill")).to_have_attribute("aria-current", "true")
    expect(page.locator(".order-note")).to_have_text(re.compile(r"^Surest skill first"))
    expect(board_names(page, evenings)).to_have_text([oda, per, rut, quin])
    fits_the_phone(page)

    order.get_by_role("link", name="Won").tap()
    expect(page).to_have_url(re.compile(r"/leaderboard\?order=wins$"))
    expect(order.get_by_role("link", name="Won")).to_have_attribute("aria-current", "true")
    expect(page.locator(".order-note")).to_have_text(
        "Most matches won first; equal wins share a place."
    )
    expect(board_names(page, evenings)).to_have_text([oda, rut, per, quin])

    order.get_by_role("link", name="Avg. bulls").tap()
    expect(page).to_have_url(re.compile(r"/leaderboard\?order=bulls$"))
    expect(board_names(page, evenings)).to_have_text([rut, oda, per, quin])
    fits_the_phone(page)
    if javascript:
        page.screenshot(path=artifacts / "leaderboard-order-bulls.png", full_page=True)


@pytest.mark.parametrize(
    ("lang", "skill", "chart"),
    [
        ("en", "Skill", "Skill over time"),
        ("de", "Stärke", "Stärke im Lauf der Zeit"),
        ("fr", "Niveau", "Le niveau au fil du temps"),
    ],
)
def test_leaderboard_and_skill_chart_in_each_language(
    page, console_errors, live_server, artifacts, evenings, lang, skill, chart
):
    """The order links, the note and the chart fit the phone; screenshots to look at."""
    page.context.set_extra_http_headers({"Accept-Language": lang})
    oda = evenings[0]
    page.goto(f"{live_server}/leaderboard")
    current = page.locator("nav.order a[aria-current]")
    expect(current).to_have_text(skill)
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"leaderboard-order-{lang}.png", full_page=True)

    page.get_by_role("link", name=oda).tap()
    expect(page.get_by_role("heading", name=chart)).to_be_visible()
    shown = page.locator(".figures .rating").inner_text()  # "33 (±8)"
    last = page.locator("#chart-heading ~ details tbody tr").last.locator("td").last
    expect(last).to_have_text(shown.split("\u00a0")[0], use_inner_text=False)
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"player-skill-{lang}.png", full_page=True)
    assert console_errors == []
