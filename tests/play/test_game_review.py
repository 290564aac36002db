"""The review of a finished game (issue 45), kept and served: figured by the background
process after the game's end (``store.review_after``, never in a round's write), read by
``review.json``; dropped by the write that changes how a game ended."""

from __future__ import annotations

import os
import random
from html import unescape as html_unescape
from math import hypot

import pytest
from correcting import correct
from driver import add_players, play_game, score_game, start_game, start_match, undo
from sqlalchemy import func, select

from companion import background, rules, store
from companion.db import db
from companion.derived.play_luck import placed_rounds
from companion.derived.tables import ReviewCard
from companion.models import Game, Match
from companion.rules import review
from companion.state import played_game

pytestmark = pytest.mark.app_config(LUCK_APART=True)


def reviewed_rows(app, match_id: int) -> int:
    with app.app_context():
        query = select(func.count()).select_from(ReviewCard).where(ReviewCard.match_id == match_id)
        return db.session.scalar(query)


def review_after(app, match_id: int) -> int:
    """What the background process does once a game is over, here in this process (its
    luck first, as the process does)."""
    with app.app_context():
        store.luck_after(match_id)
        return store.review_after(match_id)


@pytest.fixture
def finished(client):
    """Anna, Ben and Cleo have played game 1 to its end; the match goes on."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(45))
    return match_id, ids


def review_of(client, match_id: int, game: int = 1):
    return client.get(f"/matches/{match_id}/games/{game}/review.json")


def test_a_finished_games_review_is_pending_until_the_background_figures_it(app, client, finished):
    match_id, ids = finished
    assert reviewed_rows(app, match_id) == 0  # not in the round's write
    pending = review_of(client, match_id)
    assert pending.status_code == 202 and pending.get_json() == {"game": 1, "pending": True}
    assert review_after(app, match_id) == 1
    assert review_after(app, match_id) == 0  # kept: nothing to do the next time
    document = review_of(client, match_id).get_json()
    assert document["game"] == 1 and document["samples"] == review.SAMPLES
    luck = client.get(f"/matches/{match_id}/games/1/luck.json").get_json()
    expected = {
        (entry["round"], play["player_id"]): play["expected"]
        for entry in luck["rounds"]
        for play in entry["plays"]
    }
    assert [entry["round"] for entry in document["rounds"]] == list(range(1, 11))
    held = {pid: [] for pid in ids}
    for entry in reversed(document["rounds"]):
        for play in entry["plays"]:
            held[play["player_id"]].insert(0, play["card"])
            hand = [card["card"] for card in play["hand"]]
            assert hand == held[play["player_id"]]  # the cards played from this round on
            played = play["hand"][0]
            assert played["card"] == play["card"]
            assert played["this_round"] == expected[(entry["round"], play["player_id"])]
            ends = [card["to_game_end"] for card in play["hand"]]
            assert play["loss"] == pytest.approx(ends[0] - min(ends))
            # Issue 56: the grade of the whole choice, card and row (the noises apart).
            row_loss, row_noise = play.get("row_loss", 0), play.get("row_noise", 0)
            assert play["cost"] == play["loss"] + row_loss
            assert play["grade"] == review.grade(play["cost"], hypot(play["noise"], row_noise))
    bulls = {player["player_id"]: player["bulls"] for player in luck["players"]}
    for player in document["players"]:
        assert player["bulls"] == bulls[player["player_id"]]
        # Issue 56: named as the pages name them ("cards dealt", "the others' cards"): a
        # household's luck (and expected) is luck.json's figure alone.
        named = {"player_id", "bulls", "cards_dealt", "choices_cost", "others_cards", "accuracy"}
        assert set(player) == named
        total = player["cards_dealt"] + player["choices_cost"] - player["others_cards"]
        assert player["bulls"] == pytest.approx(total)
        assert 0 <= player["accuracy"] <= 1


def test_an_unknown_game_a_game_being_played_and_typed_scores_have_no_review(app, client, finished):
    match_id, ids = finished
    assert start_game(client, match_id, [5, 15, 25, 35]).status_code == 303
    playing = review_of(client, match_id, 2)
    assert playing.status_code == 409 and "still being played" in playing.get_json()["error"]
    unknown = review_of(client, match_id, 7)
    assert unknown.status_code == 404 and "error" in unknown.get_json()
    other = start_match(client, ids)
    assert score_game(client, other, {ids[0]: 3, ids[1]: 5, ids[2]: 0}).status_code == 303
    typed = review_of(client, other)
    assert typed.status_code == 404 and "card by card" in typed.get_json()["error"]
    assert review_after(app, other) == 0


def test_undoing_the_last_round_drops_the_review(app, client, finished):
    match_id, _ids = finished
    review_after(app, match_id)
    assert reviewed_rows(app, match_id) > 0
    assert undo(client, match_id).status_code == 303  # the game is open again
    assert reviewed_rows(app, match_id) == 0
    assert review_of(client, match_id).status_code == 409
    assert review_after(app, match_id) == 0  # nothing to review while it is played


def test_the_background_reviews_a_game_that_ends_while_it_runs(app, client):
    """Its first look puts luck in line only; a game that ends after it is reviewed."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        matches.refresh()  # the first look: every match there is
    play_game(client, match_id, ids, random.Random(2))
    with app.app_context():
        matches.refresh()
    assert reviewed_rows(app, match_id) > 0
    assert review_of(client, match_id).status_code == 200


def test_a_history_is_not_reviewed_at_the_first_look(app, client, finished):
    match_id, _ids = finished
    with app.app_context():
        background.Matches(db.engine, os.getppid(), quiet=0).refresh()
    assert reviewed_rows(app, match_id) == 0


def test_a_correction_drops_the_games_review_and_the_background_figures_it_again(
    app, client, finished
):
    match_id, ids = finished
    review_after(app, match_id)
    document = review_of(client, match_id).get_json()
    with app.app_context():
        starting = db.session.scalars(select(Game).where(Game.match_id == match_id)).one().starting
    used = set(starting) | {play["card"] for entry in document["rounds"] for play in entry["plays"]}
    new = max(set(range(1, 105)) - used)  # the highest card nobody played: never too low
    assert correct(client, match_id, 1, 10, cards={ids[0]: new}).status_code == 303
    assert reviewed_rows(app, match_id) == 0
    assert review_of(client, match_id).status_code == 202
    assert review_after(app, match_id) == 1
    last = review_of(client, match_id).get_json()["rounds"][-1]["plays"]
    assert new in [play["card"] for play in last]


@pytest.mark.parametrize(
    ("lang", "pending", "line"),
    [
        ("en", "being worked out", "the cards dealt made"),
        ("de", "wird noch berechnet", "Die ausgeteilten Karten ließen"),
        ("fr", "en cours de calcul", "les cartes distribuées en laissaient attendre"),
    ],
)
def test_the_games_end_says_it_is_worked_out_then_shows_each_player(
    app, client, finished, lang, pending, line
):
    """One line per player under the game's bulls, the costliest plays one tap away; a
    push brings it (the match's versions rise with the stored review)."""
    match_id, ids = finished
    client.set_cookie("lang", lang)
    with app.app_context():
        store.luck_after(match_id)
    assert pending in unescaped(client.get(f"/matches/{match_id}").text)
    before = version_of(app, match_id)
    assert review_after(app, match_id) == 1
    assert version_of(app, match_id) == before + 1
    page = unescaped(client.get(f"/matches/{match_id}").text)
    assert pending not in page
    document = review_of(client, match_id).get_json()
    assert page.count(line) == len(ids)
    for player in document["players"]:
        assert f"{player['bulls']}" in page
    live = unescaped(client.get(f"/matches/{match_id}/live?since=0").text)
    assert live.count(line) == len(ids)


@pytest.mark.parametrize(
    ("lang", "reading", "differ"),
    [
        ("en", "Cards dealt: the bulls the hand made likely.", "The others' cards: the rest,"),
        ("de", "Ausgeteilte Karten: die Hornochsen", "Die Karten der anderen: der Rest,"),
        ("fr", "Cartes distribuées\u00a0: les têtes", "Les cartes des autres\u00a0: le reste,"),
    ],
)
def test_the_review_names_its_rest_apart_from_the_luck_above_it(
    app, client, finished, lang, reading, differ
):
    """The review's rest (the whole game from the deal) is not the luck note's luck (each
    round's card alone), which the game's end shows above it: it has its own name, "the
    others' cards" (issue 56: one word, one figure)."""
    match_id, _ids = finished
    client.set_cookie("lang", lang)
    with app.app_context():
        store.luck_after(match_id)
    assert review_after(app, match_id) == 1
    page = unescaped(client.get(f"/matches/{match_id}").text)
    assert page.index('class="luck-note"') < page.index(reading)  # the luck is above it
    assert page.count(reading) == 1 and page.count(differ) == 1


def unescaped(html: str) -> str:
    """A page's text as a reader sees its words (entities read, tags kept)."""
    return html_unescape(html)


def version_of(app, match_id: int) -> int:
    with app.app_context():
        return db.session.scalar(select(Match.version).where(Match.id == match_id))


def test_the_tv_names_the_games_turning_point(app, client, finished):
    """The game's costliest play, in one sentence beside the luck on the TV."""
    match_id, _ids = finished
    review_after(app, match_id)
    document = review_of(client, match_id).get_json()
    plays = [
        (play["loss"], entry["round"], play, "card")
        for entry in document["rounds"]
        for play in entry["plays"]
        if play["grade"] != "best" and review.grade(play["loss"], play["noise"]) != "best"
    ] + [  # a too-low card's row choice counts from a bull lost against the best row
        (play["row_loss"], entry["round"], play, "row")
        for entry in document["rounds"]
        for play in entry["plays"]
        if play["grade"] != "best" and play.get("row_loss", 0) >= 1
    ]
    loss, number, play, kind = max(plays, key=lambda found: found[0])
    tv = unescaped(client.get(f"/matches/{match_id}/table").text)
    sentence = f"The turning point: in round {number}, "
    assert sentence in tv
    if kind == "row":
        better = min(play["rows"], key=lambda row: (row["to_game_end"], row["row"]))["row"]
        told = (
            f"{play['card']} on row {play['row']} cost {loss:.1f} bulls (row {better} was better)."
        )
    else:
        better = min(play["hand"], key=lambda card: (card["to_game_end"], card["card"]))["card"]
        told = f"{play['card']} cost {loss:.1f} bulls ({better} was better)."
    assert told in tv


def test_a_too_low_cards_rows_are_kept_and_served_as_figured(app, client, finished):
    """review.json gives a too-low card's row, its loss against the best row and the four
    rows counted to the game's end, as the rules figure them; other plays have none."""
    match_id, ids = finished
    review_after(app, match_id)
    document = review_of(client, match_id).get_json()
    with app.app_context():
        game = db.session.scalar(select(Game).where(Game.match_id == match_id))
        played = played_game(game, ids)
        rounds = placed_rounds(played)
        figured = review.review_game(game.starting, rounds, 104, (game.id,))
    too_low = 0
    for entry, plays, result in zip(document["rounds"], figured, rounds, strict=True):
        steps = {step.player: step for step in result.steps}
        by_player = {play.player: play for play in plays}
        for play in entry["plays"]:
            step, wanted = steps[play["player_id"]], by_player[play["player_id"]]
            if step.action != rules.TOO_LOW:
                assert "rows" not in play and not wanted.rows
                continue
            too_low += 1
            assert play["row"] == step.row
            assert play["rows"] == [
                {"row": row.row, "to_game_end": row.to_game_end} for row in wanted.rows
            ]
            assert play["row_loss"] == pytest.approx(wanted.row_loss)
            assert play["row_noise"] == pytest.approx(wanted.row_noise)
            assert play["grade"] == wanted.grade  # the whole choice's, as the rules grade it
    assert too_low  # the dealt game has too-low cards
    costs = {
        player.player: player.choices_cost
        for player in review.player_reviews(figured, played.bulls)
    }
    for player in document["players"]:
        assert player["choices_cost"] == pytest.approx(costs[player["player_id"]])
