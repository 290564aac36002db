"""A finished game's review, round by round (issue 56): the page, its round as a fragment,
one player followed, and the addresses that name nothing (404, never a 500)."""

import random
import re
from html import unescape

import pytest
from driver import add_players, play_game, score_game, start_game, start_match
from kept import kept

from companion import store

pytestmark = pytest.mark.app_config(LUCK_APART=True)

GRADE_WORDS = {
    "en": {"best": "best", "good": "good", "inaccuracy": "inaccuracy", "mistake": "mistake",
           "blunder": "blunder"},
}  # fmt: skip


@pytest.fixture
def reviewed(app, client, shared_folder):
    """Anna, Ben and Cleo have played game 1 to its end, and its review is kept (built
    once a session: tests/kept.py)."""
    match_id, ids = kept(app, client, shared_folder, "review_page", lambda: review(app, client))
    return match_id, ids


def review(app, client) -> tuple[int, list[int]]:
    """The fixture's game, entered through ``client`` and reviewed."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(45))
    with app.app_context():
        store.luck_after(match_id)
        assert store.review_after(match_id) == 1
    return match_id, ids


def page_of(client, match_id: int, query: str = "", **headers):
    return client.get(f"/matches/{match_id}/games/1/review{query}", headers=headers)


def plays_shown(html: str) -> list[tuple[int, int, str, int | None]]:
    """(player, card, grade, better card) of each play on a page, in its order."""
    found = []
    for item in re.findall(r'<li class="review-play.*?</li>\s*(?=<li class="review-play|</ul>)',
                           html, re.S):  # fmt: skip
        player = int(re.search(r'data-player="(\d+)"', item)[1])
        card = int(re.search(r'class="card-face">(\d+)<', item)[1])
        grade = re.search(r'data-grade="(\w+)"', item)[1]
        better = re.search(r'data-better="(\d+)"', item)
        found.append((player, card, grade, int(better[1]) if better else None))
    return found


def wanted(play: dict) -> tuple[int, int, str, int | None]:
    """What review.json says the page shows of a play: the better card when it was not
    the best and another card of the hand was."""
    better = min(play["hand"], key=lambda card: (card["to_game_end"], card["card"]))["card"]
    shown = play["grade"] != "best" and play["loss"] > 0 and better != play["card"]
    return (play["player_id"], play["card"], play["grade"], better if shown else None)


def test_every_rounds_grades_and_better_cards_are_review_jsons(client, reviewed):
    match_id, _ids = reviewed
    document = client.get(f"/matches/{match_id}/games/1/review.json").get_json()
    for entry in document["rounds"]:
        page = page_of(client, match_id, f"?round={entry['round']}")
        assert page.status_code == 200
        assert plays_shown(page.text) == [wanted(play) for play in entry["plays"]]
        text = unescape(page.text)
        for play in entry["plays"]:
            assert f">{GRADE_WORDS['en'][play['grade']]}<" in text
            if wanted(play)[3] is not None:
                saved = f"{play['loss']:.1f}"
                assert f"{wanted(play)[3]} would have saved {saved} bulls." in text


def test_the_first_round_without_a_round_asked_and_the_links_between_rounds(client, reviewed):
    match_id, _ids = reviewed
    first = page_of(client, match_id)
    assert first.status_code == 200 and "Round 1 of 10" in first.text
    assert 'rel="prev"' not in first.text
    assert f'href="/matches/{match_id}/games/1/review?round=2" rel="next"' in first.text
    last = page_of(client, match_id, "?round=10").text
    assert 'rel="next"' not in last and "?round=9" in last


def test_htmx_gets_the_round_alone(client, reviewed):
    match_id, _ids = reviewed
    fragment = page_of(client, match_id, "?round=4", **{"HX-Request": "true"})
    assert fragment.status_code == 200 and "HX-Request" in fragment.headers["Vary"]
    assert fragment.text.lstrip().startswith('<section id="review-round"')
    assert "<html" not in fragment.text and "Round 4 of 10" in fragment.text
    whole = page_of(client, match_id, "?round=4")
    assert plays_shown(fragment.text) == plays_shown(whole.text)


def test_one_player_followed_with_their_hand(client, reviewed):
    match_id, ids = reviewed
    document = client.get(f"/matches/{match_id}/games/1/review.json").get_json()
    play = next(play for play in document["rounds"][2]["plays"] if play["player_id"] == ids[1])
    page = page_of(client, match_id, f"?round=3&player={ids[1]}").text
    assert plays_shown(page) == [wanted(play)]
    hand = re.search(r'<ol class="hand".*?</ol>', page, re.S)[0]
    cards = [int(card) for card in re.findall(r'card-face">(\d+)<', hand)]
    assert cards == sorted(card["card"] for card in play["hand"])  # 8 cards left in round 3
    for card in play["hand"]:
        assert f"{card['card']}</span> {card['to_game_end']:.1f}" in hand
    step = f"/matches/{match_id}/games/1/review?round=4&amp;player={ids[1]}"
    assert f'href="{step}" rel="next"' in page  # the next round follows the same player


def test_accuracy_cost_and_key_moments_at_the_top(client, reviewed):
    match_id, _ids = reviewed
    document = client.get(f"/matches/{match_id}/games/1/review.json").get_json()
    page = unescape(page_of(client, match_id, "?round=5").text)
    for player in document["players"]:
        assert f"{round(player['accuracy'] * 100)}%" in page
        assert f"{player['choices_cost']:.1f}" in page
    plays = sorted(
        (
            (-play["cost"], entry["round"], play)
            for entry in document["rounds"]
            for play in entry["plays"]
            if play["grade"] != "best"
        ),
        key=lambda found: found[:2],
    )[:3]
    moments = re.findall(r'<ol class="key-moments">.*?</ol>', page, re.S)[0]
    links = re.findall(r'review\?round=(\d+)">Round \d+: .*?\'s (\d+) cost ([\d.]+) bulls', moments)
    assert links == [
        (str(number), str(play["card"]), f"{-cost:.1f}") for cost, number, play in plays
    ]


def test_the_page_says_when_the_review_is_being_worked_out(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(2))
    page = page_of(client, match_id)
    assert page.status_code == 200 and "being worked out" in page.text
    assert page_of(client, match_id, "?round=3").status_code == 200


@pytest.mark.parametrize(
    "query", ["?round=0", "?round=11", "?round=x", "?round=", "?round=1e3", "?player=0",
              "?player=999", "?player=Anna", "?round=2&player=-1"],
)  # fmt: skip
def test_an_address_that_names_nothing_is_a_404(client, reviewed, query):
    match_id, _ids = reviewed
    assert page_of(client, match_id, query).status_code == 404


def test_no_review_page_for_typed_scores_or_no_such_game(client, reviewed):
    match_id, ids = reviewed
    assert client.get(f"/matches/{match_id}/games/2/review").status_code == 404
    assert start_game(client, match_id, [5, 15, 25, 35]).status_code == 303
    # A game being played: its review comes at its end, and the page says so.
    playing = client.get(f"/matches/{match_id}/games/2/review")
    assert playing.status_code == 200
    assert "This game is still being played: its review comes once it is over." in playing.text
    assert client.get(f"/matches/{match_id + 1}/games/1/review").status_code == 404
    other = start_match(client, ids)
    assert score_game(client, other, {ids[0]: 3, ids[1]: 5, ids[2]: 0}).status_code == 303
    assert client.get(f"/matches/{other}/games/1/review").status_code == 404


def test_the_game_end_the_scoreboard_and_the_replay_link_to_it(client, reviewed):
    match_id, _ids = reviewed
    address = f"/matches/{match_id}/games/1/review"
    assert address in client.get(f"/matches/{match_id}").text
    assert address in client.get(f"/matches/{match_id}/scoreboard").text
    assert f"{address}?round=3" in client.get(f"/matches/{match_id}/games/1/replay?round=3").text
