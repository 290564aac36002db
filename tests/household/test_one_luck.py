"""One word, one figure (issue 56): a player's luck is the luck note's figure (luck.json:
the bulls their cards were expected to take less the bulls they took) on the game's end,
the match's end, the leaderboard, their page and the year; the game review's rest, which
weighs the whole game from the deal, has a name of its own, "the others' cards"."""

import random
import re
from html import unescape

import pytest
from driver import add_players, play_game, start_match
from test_luck_household import highlight, luck_cell, signed, text_of

from companion import store
from companion.models import utcnow

pytestmark = pytest.mark.app_config(LUCK_APART=True)


@pytest.fixture
def one_game(app, client):
    """Anna, Ben and Cleo's match of one game, over, its luck and review figured: the
    match's id, the players' ids by name and luck.json's players."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    play_game(client, match_id, ids, random.Random(45))
    with app.app_context():  # what the background process does after the game's end
        store.statistics_after(match_id)
        store.luck_after(match_id)
        assert store.review_after(match_id) == 1
    luck = client.get(f"/matches/{match_id}/games/1/luck.json").get_json()["players"]
    return match_id, dict(zip(["Anna", "Ben", "Cleo"], ids, strict=True)), luck


def test_a_players_luck_is_one_figure_on_every_page(client, one_game):
    match_id, ids, luck = one_game
    names = {player: name for name, player in ids.items()}
    by_luck = sorted(luck, key=lambda line: line["luck"])
    match_page = text_of(client.get(f"/matches/{match_id}").text).replace(" :", ":")
    for line in (by_luck[0], by_luck[-1]):  # the unluckiest and the luckiest: named
        name, figure = names[line["player_id"]], line["luck"]
        kind = "good" if figure >= 0 else "bad"
        said = f"{name}: expected from the cards {line['expected']:.1f} bulls, took {line['bulls']}"
        assert f"{said}: {abs(figure):.1f} bulls of {kind} luck." in match_page
    year = utcnow().year
    for line in luck:
        name, player, figure = names[line["player_id"]], line["player_id"], line["luck"]
        assert luck_cell(client.get("/leaderboard").text, name) in signed(figure)
        words = text_of(client.get(f"/players/{player}/stats").text)
        shown = re.search(r"Luck (\S+) bulls per game over 1 game", words)
        assert shown is not None and shown.group(1) in signed(figure), name
        mine = highlight(client.get(f"/review/{year}?player={player}").text, "luck")
        assert mine.split(" ")[1] in signed(figure), name


@pytest.mark.parametrize(
    ("lang", "luck", "others"),
    [("en", "luck", "the others' cards"), ("de", "Glück", "die Karten der anderen"),
     ("fr", "chance", "les cartes des autres")],
)  # fmt: skip
def test_the_games_review_names_its_rest_apart_from_luck(client, one_game, lang, luck, others):
    match_id, ids, _luck = one_game
    client.set_cookie("lang", lang)
    html = unescape(client.get(f"/matches/{match_id}").text)
    review = re.search(r'<details class="game-review".*?</details>\s*</section>', html, re.S)[0]
    lines = re.findall(r'<div class="review-player">\s*<p>(.*?)</p>', review, re.S)
    assert len(lines) == len(ids)
    for line in lines:
        assert others in line and luck not in line.lower()
    assert luck not in text_of(re.search(r'class="hint review-reading">(.*?)</p>', review)[1])
