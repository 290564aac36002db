"""The leaderboard, player statistics and head-to-head pages: full, fragment, bad input."""

import re

import pytest
from driver import add_players, score_game, start_match

HX = {"HX-Request": "true"}


@pytest.fixture
def trio(client):
    """Anna, Ben and Cleo (archived): a shared win of Anna and Ben, then Ben alone."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    first = start_match(client, ids, end_kind="games", end_value=1)
    assert score_game(client, first, dict(zip(ids, (3, 3, 9), strict=True))).status_code == 303
    second = start_match(client, ids[:2], end_kind="games", end_value=1)
    assert score_game(client, second, dict(zip(ids, (8, 2), strict=False))).status_code == 303
    client.post(f"/players/{ids[2]}/archive", data={"archived": "1"})
    return ids


def row_of(html: str, name: str) -> str:
    """The leaderboard row of one player."""
    return re.search(rf"<tr[^>]*>(?:(?!</tr>).)*>{name}</a>.*?</tr>", html, re.S).group(0)


def test_leaderboard_full_page(client, trio):
    response = client.get("/leaderboard")
    assert response.status_code == 200
    assert "HX-Request" in response.headers["Vary"]
    html = response.get_data(as_text=True)
    assert "<title>Leaderboard" in html and 'href="/static/css/stats.css"' in html
    assert "1/2" in row_of(html, "Anna")  # the shared win counts
    assert "2/2" in row_of(html, "Ben")
    assert "0/1" in row_of(html, "Cleo") and "archived" in row_of(html, "Cleo")
    assert "▲" in row_of(html, "Ben") and "rose in the last match" in row_of(html, "Ben")
    assert html.index(">Ben</a>") < html.index(">Anna</a>") < html.index(">Cleo</a>")
    assert 'href="/leaderboard"' in client.get("/").get_data(as_text=True)  # in the nav


def test_leaderboard_fragment_for_htmx(client, trio):
    html = client.get("/leaderboard?period=year&players=2", headers=HX).get_data(as_text=True)
    assert html.lstrip().startswith('<div id="board">')
    assert "<html" not in html and "<title>" not in html
    assert '<option value="2" selected>' in html and '<option value="year" selected>' in html
    assert "1/1" in row_of(html, "Ben") and "0/1" in row_of(html, "Anna")
    assert "best" not in row_of(html, "Cleo")  # no 2-player match


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("period=decade", "period", "Choose this month, this year or all time."),
        ("period=", "period", "Choose this month, this year or all time."),
        ("players=1", "players", "Choose any number of players, or 2 to 10."),
        ("players=11", "players", "Choose any number of players, or 2 to 10."),
        ("players=abc", "players", "Choose any number of players, or 2 to 10."),
        ("players=%C2%B2", "players", "Choose any number of players, or 2 to 10."),
        ("players=-3", "players", "Choose any number of players, or 2 to 10."),
    ],
)
def test_bad_leaderboard_filters_say_why(client, trio, query, field, message):
    response = client.get(f"/leaderboard?{query}")
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert f'id="field-{field}" name="{field}" aria-invalid="true"' in html
    assert message in html
    assert ">Anna</a>" in html  # the board with the default in place of the bad value


def test_player_page(client, trio):
    anna = trio[0]
    response = client.get(f"/players/{anna}/stats")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    for text in (
        "Matches won",
        "1 of them shared",
        "Skill over time",
        "shared win",
        "place 2 of 2",
        'class="chart-svg"',
        "Skill as a table",
        "were all entered as scores only",
    ):
        assert text in html, text
    assert "Rows taken with a sixth card" not in html  # no card-level figure is invented
    assert f'href="/players/{anna}/stats"' in client.get(f"/players/{anna}").get_data(as_text=True)


def test_player_page_history_fragment_and_pages(client, trio):
    anna = trio[0]
    html = client.get(f"/players/{anna}/stats?page=1", headers=HX).get_data(as_text=True)
    assert html.lstrip().startswith('<h2 id="history-heading">')
    assert "<html" not in html and "Skill over time" not in html
    for page in ("0", "2", "abc", "-1", "1.5", "99999999999999999999"):
        response = client.get(f"/players/{anna}/stats?page={page}")
        assert response.status_code == 422, page
        assert "pages go from 1 to 1" in response.get_data(as_text=True)


def test_player_page_of_a_new_player(client):
    (nobody,) = add_players(client, "Nobody")
    html = client.get(f"/players/{nobody}/stats").get_data(as_text=True)
    assert "No game of Nobody has finished yet." in html
    assert "Skill starts at 25 with the first finished match." in html
    assert client.get("/players/999/stats").status_code == 404


def test_head_to_head(client, trio):
    anna, ben, _cleo = trio
    assert "Choose two players" in client.get("/leaderboard/head-to-head").get_data(as_text=True)
    response = client.get(f"/leaderboard/head-to-head?first={anna}&second={ben}")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Anna against Ben" in html
    assert "in 2 finished matches together" in html
    assert "Level (equal totals): 1 match." in html
    fragment = client.get(
        f"/leaderboard/head-to-head?first={anna}&second={ben}", headers=HX
    ).get_data(as_text=True)
    assert fragment.lstrip().startswith('<div id="duel">') and "<html" not in fragment


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("first=1&second=1", "Choose two different players."),
        ("first=abc", "Choose a player from the list."),
        ("first=1&second=999", "Choose a player from the list."),
    ],
)
def test_bad_head_to_head_choices(client, trio, query, message):
    response = client.get(f"/leaderboard/head-to-head?{query}")
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)


def test_pages_in_german(client, trio):
    de = {"Accept-Language": "de"}
    html = client.get("/leaderboard", headers=de).get_data(as_text=True)
    assert "Bestenliste" in html and "Spieler am Tisch" in html
    html = client.get(f"/players/{trio[0]}/stats", headers=de).get_data(as_text=True)
    assert "Hornochsen pro Partie" in html and "Spiele" in html
    html = client.get("/leaderboard/head-to-head", headers=de).get_data(as_text=True)
    assert "Direkter Vergleich" in html


@pytest.mark.parametrize(
    ("lang", "word", "note"),
    [
        ("en", "Skill", "± says how sure it is"),
        ("de", "Stärke", "± sagt, wie sicher sie ist"),
        ("fr", "Niveau", "± dit à quel point il est sûr"),
    ],
)
def test_ratings_read_in_plain_words(client, trio, lang, word, note):
    """A "Skill" column with "26 (±7)", not a rating of "-6 ±8": the model's skill with its
    uncertainty, and one line that says what they mean, without OpenSkill's jargon."""
    html = client.get("/leaderboard", headers={"Accept-Language": lang}).get_data(as_text=True)
    assert f'<th scope="col" class="num">{word}</th>' in html
    shown = re.search(r'<span class="rating">(.*?)</span>', row_of(html, "Ben")).group(1)
    assert re.fullmatch(r"\d+&nbsp;\(±\d+\)", shown), shown
    assert note in html.replace("\u00a0", " ")
    assert "\u03bc" not in html and "\u03c3" not in html and "OpenSkill" not in html
    player = client.get(f"/players/{trio[1]}/stats", headers={"Accept-Language": lang}).text
    assert f"<dt>{word}</dt>" in player


@pytest.mark.parametrize(
    ("lang", "after", "note"),
    [
        ("en", r"Skill after the first match: \d+\.", "The Skill chart shows from the second"),
        ("de", r"Stärke nach dem ersten Spiel: \d+\.", "Die Kurve der Stärke erscheint ab"),
        ("fr", r"Niveau après la première partie : \d+\.", "La courbe du niveau s’affiche dès"),
    ],
)
def test_after_one_match_the_skill_chart_is_said_not_an_empty_frame(
    client, trio, lang, after, note
):
    """One point draws no line (issue 43: an empty frame): Cleo played one match."""
    cleo = trio[2]
    html = client.get(f"/players/{cleo}/stats", headers={"Accept-Language": lang}).text
    html = html.replace("\u00a0", " ")
    assert 'class="chart-svg"' not in html
    assert re.search(after, html) and note in html
