"""One scale for ratings: the change beside Skill, the player's chart and the year's most
improved all count in Skill, and the leaderboard says what it is ordered by and offers
the order by wins or by bulls with one plain link."""

import re

import pytest
from driver import add_players, score_game, start_match

from companion.household import statistics as stats

HX = {"HX-Request": "true"}
START = 25  # everyone's Skill before their first finished match
SKILL_ORDER = ["Anna", "Ben", "Dora", "Cleo"]  # the skill a player surely has, first


@pytest.fixture
def evenings(client):
    """Anna wins three matches against Ben and Cleo (Ben second every time), then Dora
    beats Cleo in her only match: Ben has no win but is ahead of Dora by sure skill."""
    names = ("Anna", "Ben", "Cleo", "Dora")
    ids = dict(zip(names, add_players(client, *names), strict=True))
    anna, ben, cleo, dora = ids.values()
    for scores in (
        {anna: 4, ben: 6, cleo: 8},
        {anna: 5, ben: 7, cleo: 9},
        {anna: 3, ben: 5, cleo: 10},
        {dora: 1, cleo: 20},
    ):
        match_id = start_match(client, list(scores), end_kind="games", end_value=1)
        assert score_game(client, match_id, scores).status_code == 303
    return ids


def names_in_order(html: str) -> list[str]:
    """The leaderboard's players from top to bottom."""
    return re.findall(r'<a class="name" href="/players/\d+/stats"[^>]*>([^<]+)</a>', html)


def places(html: str) -> list[str]:
    """The leaderboard's place column from top to bottom."""
    return re.findall(r'<tr[^>]*>\s*<td class="num">([^<]+)</td>', html)


def row_of(html: str, name: str) -> str:
    """The leaderboard row of one player."""
    return re.search(rf"<tr[^>]*>(?:(?!</tr>).)*>{name}</a>.*?</tr>", html, re.S).group(0)


def skills(app) -> dict[int, stats.Figures]:
    """Every player's figures of all time, as the leaderboard has them."""
    with app.app_context():
        return stats.board().figures


def test_the_change_beside_skill_is_how_skill_moved_in_the_last_match(client, app, evenings):
    cleo, ben = evenings["Cleo"], evenings["Ben"]
    before = skills(app)[cleo].rating.mu
    match_id = start_match(client, [cleo, ben], end_kind="games", end_value=1)
    assert score_game(client, match_id, {cleo: 2, ben: 9}).status_code == 303
    after = skills(app)
    rise = after[cleo].rating.mu - before
    assert after[cleo].trend == pytest.approx(rise)
    html = client.get("/leaderboard").text
    assert f"{round(after[cleo].rating.mu)}&nbsp;(±" in row_of(html, "Cleo")  # the Skill shown
    assert f"▲</span> +{rise:.1f}" in row_of(html, "Cleo")
    # Dora's only match was her first: her change is from the Skill everyone starts with.
    dora = after[evenings["Dora"]]
    assert dora.trend == pytest.approx(dora.rating.mu - START)
    assert f"▲</span> +{dora.rating.mu - START:.1f}" in row_of(html, "Dora")
    player = client.get(f"/players/{cleo}/stats").text
    assert f"▲</span> +{rise:.1f}" in player


def test_the_skill_chart_is_in_skill_units(client, evenings):
    html = client.get(f"/players/{evenings['Anna']}/stats").text
    shown = int(re.search(r"<dt>Skill</dt><dd><span class=\"rating\">(\d+)&nbsp;", html)[1])
    section = html[html.index('id="chart-heading"') : html.index('id="history"')]
    assert "Skill over time" in section
    values = [int(value) for value in re.findall(r'<td class="num">(-?\d+)</td></tr>', section)]
    assert len(values) == 3 and values[-1] == shown
    ticks = [int(value) for value in re.findall(r'class="tick">(-?\d+)</text>', section)]
    assert min(ticks) <= min(values) and max(values) <= max(ticks)
    assert min(ticks) <= START <= max(ticks)  # the line is seen against where it started


def test_most_improved_counts_in_skill(client, app, evenings):
    figures = skills(app)
    best = max(figures.values(), key=lambda figure: figure.rating.mu)
    assert best.player_id == evenings["Anna"]
    html = client.get("/review", follow_redirects=True).text  # every match is this year's
    assert f"Skill up +{best.rating.mu - START:.1f} over the year" in html


@pytest.mark.parametrize(
    ("lang", "skill", "note"),
    [
        ("en", "Skill", "Surest skill first"),
        ("de", "Stärke", "Sicherste Stärke zuerst"),
        ("fr", "Niveau", "Niveau le plus sûr d’abord"),
    ],
)
def test_the_leaderboard_says_what_it_is_ordered_by(client, evenings, lang, skill, note):
    html = client.get("/leaderboard", headers={"Accept-Language": lang}).text
    header = html[html.index('id="board-heading"') : html.index("<table")]
    assert re.search(rf'<a [^>]*aria-current="true"[^>]*>{skill}</a>', header)
    assert note in header
    assert names_in_order(html) == SKILL_ORDER


@pytest.mark.parametrize(
    ("order", "names", "shown_places", "note"),
    [
        ("skill", SKILL_ORDER, ["1", "2", "3", "4"], "Surest skill first"),
        ("wins", ["Anna", "Dora", "Ben", "Cleo"], ["1", "2", "3", "3"], "Most matches won first"),
        ("bulls", ["Dora", "Anna", "Ben", "Cleo"], ["1", "2", "3", "4"], "Fewest bulls per game"),
    ],
)
def test_one_link_orders_by_wins_or_by_bulls(client, evenings, order, names, shown_places, note):
    board = client.get("/leaderboard").text
    link = "/leaderboard" if order == "skill" else f"/leaderboard?order={order}"
    assert f'href="{link}"' in board  # a plain link: one tap, no JavaScript needed
    response = client.get(link)
    assert response.status_code == 200
    html = response.text
    assert names_in_order(html) == names
    assert places(html) == shown_places
    assert re.search(rf'<a href="{re.escape(link)}"[^>]*aria-current="true"', html)
    assert note in html[: html.index("<table")]
    fragment = client.get(link, headers=HX).text
    assert fragment.lstrip().startswith('<div id="board">') and "<html" not in fragment
    assert names_in_order(fragment) == names


def test_the_order_and_the_filters_keep_each_other(client, evenings):
    html = client.get("/leaderboard?order=wins&period=year").text
    assert '<input type="hidden" name="order" value="wins">' in html
    bulls = re.search(r'href="(/leaderboard\?[^"]*order=bulls[^"]*)"', html)[1]
    assert "period=year" in bulls
    assert 'name="order"' not in client.get("/leaderboard").text  # the default needs none


@pytest.mark.parametrize("value", ["", "rating", "WINS", "wins%00", "%E2%96%B2", "x" * 300])
def test_a_bad_order_says_why_and_shows_the_default(client, evenings, value):
    response = client.get(f"/leaderboard?order={value}")
    assert response.status_code == 422
    html = response.text
    assert "Choose the order: skill, wins or bulls per game." in html
    assert names_in_order(html) == SKILL_ORDER
    fragment = client.get(f"/leaderboard?order={value}", headers=HX)
    assert fragment.status_code == 422 and names_in_order(fragment.text) == SKILL_ORDER
