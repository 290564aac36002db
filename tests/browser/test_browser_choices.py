"""The choices on a 390x844 phone (issue 45): on the leaderboard, each player's choices'
cost per game and accuracy are in the viewport beside their name, in English, German and
French; a player's page and the year's review show theirs."""

import random
import threading

import pytest
from browsing import fits_the_phone, in_view
from conftest import make_app, stop_server
from driver import add_players, play_game, start_match
from playwright.sync_api import expect
from waitress import create_server

from companion import store
from companion.models import utcnow

pytestmark = pytest.mark.browser

# The first line of the choices under a name, in each language ("choices 8.3 a game").
COST = {"en": "choices ", "de": "Entscheidungen: ", "fr": "choix "}
GOOD = {"en": " good · 3 games", "de": " gut · 3 Partien", "fr": " bons · 3\u00a0manches"}


@pytest.fixture(scope="module")
def household_server(tmp_path_factory):
    """A server of its own: Anna, Ben and Cleo's three card games, each reviewed as the
    background does after a game's end."""
    app = make_app(tmp_path_factory.mktemp("choices") / "companion.sqlite")
    client = app.test_client()
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=3)
    rng = random.Random(45)
    for _game in range(3):
        play_game(client, match_id, ids, rng)
    with app.app_context():
        assert store.review_after(match_id) == 3
    server = create_server(app, host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=server.run, name="choices-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}", ids
    stop_server(server, thread)


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_leaderboards_choices_are_in_view_on_a_phone(
    page, console_errors, household_server, artifacts, lang
):
    base, _ids = household_server
    page.context.set_extra_http_headers({"Accept-Language": lang})
    page.goto(f"{base}/leaderboard")
    first = page.locator("table.leaderboard tbody tr").first
    lines = first.locator(".choices")
    expect(lines).to_have_count(2)
    expect(lines.first).to_contain_text(COST[lang])
    expect(lines.nth(1)).to_contain_text(GOOD[lang].replace("\u00a0", " "))
    for index in range(2):
        assert in_view(lines.nth(index)), lines.nth(index).bounding_box()
    assert in_view(first.get_by_role("link").first)  # beside the player's name
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"leaderboard-choices-{lang}.png")
    assert console_errors == []


def test_a_players_page_and_the_year_show_the_choices(page, console_errors, household_server):
    base, ids = household_server
    page.goto(f"{base}/players/{ids[0]}/stats")
    figure = page.locator(".figures .choices")
    expect(figure).to_contain_text("bulls per game")
    expect(figure).to_contain_text("over 3 games")
    expect(page.locator(".choices-sentence")).to_contain_text("Anna: their choices cost")
    page.goto(f"{base}/review/{utcnow().year}")
    expect(page.locator(".highlight.decisions h2")).to_have_text("Best decision-maker")
    costly = page.locator(".highlight.costliest-play")
    expect(costly).to_contain_text("was better.")
    costly.get_by_role("link").click()
    expect(page.get_by_text("of 10", exact=False).first).to_be_visible()
    fits_the_phone(page)
    assert console_errors == []
