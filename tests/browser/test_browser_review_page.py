"""A game's review, round by round, on a 390x844 phone at a home network's address, in
English, German and French: every round stepped through (links, then the arrow keys),
each play's grade word and better card as review.json has them, the round's plays on
one screen; without JavaScript the links alone; on the TV at 1280x720, a slide.
Screenshots to look at."""

import random

import pytest
from browsing import IN_VIEW, fits_the_phone, htmx_started, in_view
from chromium import LAN_HOST
from conftest import make_app, serving
from driver import add_players, play_game, start_match
from playwright.sync_api import expect
from test_browser_review_arrives import game_over

from companion import store

pytestmark = pytest.mark.browser

GRADES = {
    "en": {"best": "best", "good": "good", "inaccuracy": "inaccuracy", "mistake": "mistake",
           "blunder": "blunder"},
    "de": {"best": "bester Zug", "good": "gut", "inaccuracy": "Ungenauigkeit",
           "mistake": "Fehler", "blunder": "Patzer"},
    "fr": {"best": "meilleur coup", "good": "bon", "inaccuracy": "imprécision",
           "mistake": "erreur", "blunder": "gaffe"},
}  # fmt: skip
ROUND = {"en": "Round {} of 10", "de": "Runde {} von 10", "fr": "Tour {} sur 10"}


def served_review(folder, played):
    """A LAN app whose match, ``played(client)`` its game 1 over, is reviewed, served:
    yields (the review page's address, review.json)."""
    app = make_app(folder / "companion.sqlite", TRUSTED_HOSTS=LAN_HOST)
    client = app.test_client()
    match_id = played(client)
    with app.app_context():
        store.luck_after(match_id)
        assert store.review_after(match_id) == 1
    document = client.get(f"/matches/{match_id}/games/1/review.json").get_json()
    with serving(app) as port:
        yield f"http://{LAN_HOST}:{port}/matches/{match_id}/games/1/review", document


@pytest.fixture(scope="module")
def reviewed_game(tmp_path_factory):
    """Anna, Ben and Cleo's game 1 over and reviewed: (address, review.json)."""
    yield from served_review(tmp_path_factory.mktemp("review"), game_over)


def better_card(play: dict) -> str | None:
    """The better card the page names for a play: the hand's best when the play was not."""
    better = min(play["hand"], key=lambda card: (card["to_game_end"], card["card"]))["card"]
    named = play["grade"] != "best" and play["loss"] > 0 and better != play["card"]
    return str(better) if named else None


# Each play of the round as the screen shows it, read in one go (a round of ten players
# is 80 reads one by one: a quarter of a minute per test under CI's load).
PLAYS_SHOWN = f"""plays => plays.map(el => {{
  const text = found => found ? found.textContent.replace(/\\s+/g, " ").trim() : null;
  const better = el.querySelector(".better");
  return {{player: el.dataset.player, card: text(el.querySelector(".card-face")),
    grade: text(el.querySelector(".grade")), better: better ? better.dataset.better : null,
    better_text: text(better), in_view: ({IN_VIEW})(el)}};
}})"""


def round_as_reviewed(page, entry: dict, lang: str) -> None:
    """The round on the screen is ``entry``'s: each play's grade and better card, in view.
    Once its heading names the round, the page holds it whole (one swap or one load)."""
    expect(page.locator("#review-round h2")).to_have_text(ROUND[lang].format(entry["round"]))
    page.wait_for_load_state("load")  # its style sheets in, as browsing.in_view reads
    shown = page.locator(".review-play").evaluate_all(PLAYS_SHOWN)
    wanted = [
        {
            "player": str(play["player_id"]),
            "card": str(play["card"]),
            "grade": GRADES[lang][play["grade"]],
            "better": better_card(play),
            "in_view": True,
        }
        for play in entry["plays"]
    ]
    assert [{key: play[key] for key in wanted[0]} for play in shown] == wanted, entry["round"]
    for play in shown:  # the better card is named in its words
        assert play["better"] is None or play["better"] in play["better_text"], play


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_every_round_steps_through_with_its_grades_in_view(page, reviewed_game, artifacts, lang):
    address, document = reviewed_game
    page.context.set_extra_http_headers({"Accept-Language": lang})
    page.goto(address)
    htmx_started(page)
    for entry in document["rounds"]:
        round_as_reviewed(page, entry, lang)
        fits_the_phone(page)
        if entry["round"] in (1, 5):
            page.screenshot(path=artifacts / f"review-page-{lang}-{entry['round']}.png")
        if entry["round"] < 10:
            with page.expect_response(lambda response: "review?round=" in response.url):
                if entry["round"] % 2:
                    page.locator('#review-round a[rel="next"]').click()
                else:
                    page.keyboard.press("ArrowRight")  # the arrow keys follow the links
    assert page.url.endswith("?round=10")  # htmx pushed each round's own address
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#review-round h2")).to_have_text(ROUND[lang].format(9))


def test_without_javascript_the_links_step_through(page_nojs, reviewed_game):
    address, document = reviewed_game
    page_nojs.goto(address + "?round=9")
    page_nojs.locator('a[rel="next"]').click()
    round_as_reviewed(page_nojs, document["rounds"][9], "en")


def test_one_player_followed_with_their_hand_in_view(page, reviewed_game, artifacts):
    address, document = reviewed_game
    play = document["rounds"][0]["plays"][1]
    page.goto(f"{address}?player={play['player_id']}")
    round_as_reviewed(page, {"round": 1, "plays": [play]}, "en")
    hand = page.locator(".hand li")
    expect(hand).to_have_count(10)
    assert in_view(hand.last)
    fits_the_phone(page)
    page.screenshot(path=artifacts / "review-page-player.png")


def test_the_tv_shows_a_round_as_a_slide(page, reviewed_game, artifacts):
    address, document = reviewed_game
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{address}?round=6")
    round_as_reviewed(page, document["rounds"][5], "en")
    rows, plays = page.locator(".rows-before"), page.locator(".review-plays")
    assert rows.bounding_box()["x"] < plays.bounding_box()["x"]  # side by side
    size = page.locator(".review-play .who").first.evaluate("el => getComputedStyle(el).fontSize")
    assert float(size.removesuffix("px")) >= 20  # read across the room
    fits_the_phone(page, 1280)
    page.screenshot(path=artifacts / "review-page-tv.png")


# Ten players with twelve-letter names: the longest round a phone shows.
TEN = ("Bartholomäus", "Konstantinos", "Maximilianus", "Hildegardine", "Christophine",
       "Ferdinandine", "Marie-Louise", "Jean-Baptist", "Alessandrina", "Massimiliano")  # fmt: skip


def ten_players_over(client) -> int:
    """Ten players with twelve-letter names, their match's game 1 over: the match's id."""
    ids = add_players(client, *TEN)
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(56))
    return match_id


@pytest.fixture(scope="module")
def ten_players_reviewed(tmp_path_factory):
    """Game 1 of ten players over and reviewed: (address, review.json)."""
    yield from served_review(tmp_path_factory.mktemp("ten"), ten_players_over)


# Each name shown and whether it is on one line (not wrapped: a line's height, not two).
ONE_LINE = """names => Object.fromEntries(names.map(el => [el.textContent,
  el.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(el).lineHeight)]))"""


def round_in_view(page, entry: dict, steps: tuple[str, ...]) -> None:
    """Every play's name on one line (each play in view: ``round_as_reviewed``) and the
    round's steps inside the viewport."""
    names = page.locator(".review-play .who").evaluate_all(ONE_LINE)
    assert len(names) == len(entry["plays"]) and all(names.values()), (entry["round"], names)
    for rel in steps:
        step = page.locator(f'#review-round a[rel="{rel}"]')
        assert in_view(step), (entry["round"], rel, step.bounding_box())


def steps_of(number: int) -> tuple[str, ...]:
    """The round's previous and next links: none before round 1 or after round 10."""
    return tuple(rel for rel, there in (("prev", number > 1), ("next", number < 10)) if there)


SCREENS = {"phone": (390, 844), "tv": (1280, 720)}


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
@pytest.mark.parametrize("screen", SCREENS)
def test_ten_players_round_fits_one_screen(page, ten_players_reviewed, artifacts, screen, lang):
    """Each round of ten players with long names on one screen, in each language: every
    play and the round's steps inside the viewport, no scrolling sideways; on the TV
    (1280x720) a slide with the rows beside the plays and no scrolling at all."""
    address, document = ten_players_reviewed
    width, height = SCREENS[screen]
    assert any(play["grade"] != "best" for entry in document["rounds"] for play in entry["plays"])
    page.set_viewport_size({"width": width, "height": height})
    page.context.set_extra_http_headers({"Accept-Language": lang})
    for entry in document["rounds"]:
        page.goto(f"{address}?round={entry['round']}")
        page.screenshot(path=artifacts / f"review-ten-{screen}-{lang}-{entry['round']}.png")
        round_as_reviewed(page, entry, lang)
        round_in_view(page, entry, steps_of(entry["round"]))
        fits_the_phone(page, width)
        if screen == "tv":
            rows, plays = page.locator(".rows-before"), page.locator(".review-plays")
            assert rows.bounding_box()["x"] < plays.bounding_box()["x"]  # side by side
            assert page.evaluate("document.documentElement.scrollHeight") <= height
