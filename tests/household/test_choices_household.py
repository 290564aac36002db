"""The choices over many games (issue 45): what a player's choices cost per game and
their accuracy on the leaderboard and a player's page, each equal to the same figure
counted here from every kept review as ``game_review.read`` gives it (the game's end
and ``review.json`` read the same); games not reviewed yet, score-only games and games
still going on left out; the pages never figure a review."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import datetime
from html import unescape
from typing import NamedTuple

import pytest
from driver import add_players, play_game, score_game, start_match
from kept import kept
from sqlalchemy import select, update

from companion import derived, store
from companion.db import db
from companion.derived import game_review
from companion.derived.tables import ReviewCard
from companion.household import choices, yearly
from companion.models import Game, Match, utcnow
from companion.rules import review
from companion.state import played_game

DASH = "\u2013"  # "none yet"


class Counted(NamedTuple):
    """A player's choices counted here: games, their cost in all, good plays, plays."""

    games: int
    cost: float
    good: int
    plays: int


def reviewed_games(app, keep=lambda match: True) -> list[tuple]:
    """Every game with a kept review: (match id, seats, game number, its review as
    ``game_review.read`` reads it)."""
    found = []
    with app.app_context():
        for match in db.session.scalars(select(Match).order_by(Match.id)):
            if not keep(match):
                continue
            seats = [seat.player_id for seat in match.seats]
            for game in match.games:
                reviewed = game_review.read(played_game(game, seats))
                if reviewed is not None:
                    found.append((match.id, len(seats), game.number, reviewed))
    return found


def counted(games) -> dict[int, Counted]:
    """Each player's choices over these reviewed games, from their plays one by one."""
    sums: dict[int, list] = defaultdict(lambda: [0, 0.0, 0, 0])
    for _match, _seats, _number, reviewed in games:
        for player in reviewed.players:
            sums[player.player][0] += 1
            sums[player.player][1] += player.choices_cost
        for plays in reviewed.rounds:
            for play in plays:
                sums[play.player][2] += play.grade in review.GOOD_GRADES
                sums[play.player][3] += 1
    return {player: Counted(*values) for player, values in sums.items()}


def text_of(html: str) -> str:
    """The words of a page, tags and spacing gone."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def name_cell(html: str, name: str) -> str:
    """The player cell of a leaderboard row, as text."""
    row = re.search(rf"<tr[^>]*>(?:(?!</tr>).)*>{name}</a>.*?</tr>", html, re.S).group(0)
    return text_of(re.search(r'<th scope="row">(.*?)</th>', row, re.S).group(1))


def tenths(value: float) -> set[str]:
    """How the pages write bulls to a tenth: both roundings of a value a hair from a
    boundary (sums added in another order)."""
    return {f"{round(near, 1):.1f}" for near in (value - 1e-9, value + 1e-9)}


def percents(share: float) -> set[str]:
    """How the pages write a share in English: "80%" (both roundings at a boundary)."""
    return {f"{round(near * 100):d}%" for near in (share - 1e-9, share + 1e-9)}


def shown_choices(cell: str) -> tuple[str, str, int]:
    """(cost, accuracy, games) of a leaderboard cell's choices."""
    found = re.search(r"choices (\S+) a game (\S+) good · (\d+) games?", cell)
    return found.group(1), found.group(2), int(found.group(3))


def review_matches(app, *match_ids: int) -> None:
    """What the background process does after a game's end, here in this process."""
    with app.app_context():
        for match_id in match_ids:
            store.review_after(match_id)


class Household(NamedTuple):
    ids: dict[str, int]
    matches: dict[str, int]


@pytest.fixture
def household(app, client, shared_folder):
    """Anna, Ben, Cleo and Dora: two card games of three and a four-player match of one
    card game and one score-only game, all reviewed; Anna and Ben's match of one card
    game not reviewed yet; Emil played only in a match not reviewed. Built once a session
    (tests/kept.py)."""
    built = kept(app, client, shared_folder, "choices", lambda: build_household(app, client))
    return Household(*built)


def build_household(app, client) -> Household:
    """The household of the fixture, entered through ``client``."""
    names = ["Anna", "Ben", "Cleo", "Dora", "Emil"]
    ids = dict(zip(names, add_players(client, *names), strict=True))
    anna, ben, cleo, dora, emil = ids.values()
    rng = random.Random(45)
    three = start_match(client, [anna, ben, cleo], end_kind="games", end_value=2)
    for _game in range(2):
        play_game(client, three, [anna, ben, cleo], rng)
    four = start_match(client, [anna, ben, cleo, dora], end_kind="games", end_value=2)
    play_game(client, four, [anna, ben, cleo, dora], rng)
    assert score_game(client, four, {anna: 5, ben: 9, cleo: 2, dora: 14}).status_code == 303
    waiting = start_match(client, [anna, ben, emil], end_kind="games", end_value=1)
    play_game(client, waiting, [anna, ben, emil], rng)
    review_matches(app, three, four)
    return Household(ids, {"three": three, "four": four, "waiting": waiting})


def test_the_leaderboard_shows_each_players_choices_over_the_reviewed_games(app, client, household):
    """Cost per game and accuracy equal what the kept reviews give, game by game; the
    game not reviewed yet counts for nobody, and Emil, with none reviewed, shows none."""
    wanted = counted(reviewed_games(app))
    anna, ben, cleo, dora, emil = household.ids.values()
    assert {player: figures.games for player, figures in wanted.items()} == {
        anna: 3,
        ben: 3,
        cleo: 3,
        dora: 1,
    }
    html = client.get("/leaderboard").text
    for name, player in household.ids.items():
        cell = name_cell(html, name)
        if player == emil:
            assert "choices" not in cell
            continue
        cost, accuracy, games = shown_choices(cell)
        mine = wanted[player]
        assert cost in tenths(mine.cost / mine.games), name
        assert accuracy in percents(mine.good / mine.plays), name
        assert games == mine.games
    assert "Choices: what a player's choices cost per game" in text_of(html)


def test_the_players_filter_counts_the_matches_with_that_many_players(app, client, household):
    by_count = counted(reviewed_games(app, lambda match: len(match.seats) == 4))
    fragment = client.get("/leaderboard?players=4", headers={"HX-Request": "true"})
    assert fragment.text.lstrip().startswith('<div id="board">')
    for name, player in household.ids.items():
        cell = name_cell(fragment.text, name)
        if player not in by_count:
            assert "choices" not in cell, name
            continue
        cost, _accuracy, games = shown_choices(cell)
        assert cost in tenths(by_count[player].cost / by_count[player].games)
        assert games == 1


def test_a_players_page_says_their_choices_in_words(app, client, household):
    wanted = counted(reviewed_games(app))
    for name in ("Anna", "Dora"):
        player = household.ids[name]
        words = text_of(client.get(f"/players/{player}/stats").text)
        mine = wanted[player]
        figure = re.search(
            r"Choices' cost (\S+) bulls per game (\S+) good · over (\d+) games?", words
        )
        assert figure.group(1) in tenths(mine.cost / mine.games), name
        assert figure.group(2) in percents(mine.good / mine.plays), name
        assert int(figure.group(3)) == mine.games
        sentence = re.search(
            rf"{name}: their choices cost (\S+) bulls per game against the best card in hand, "
            r"and (\S+) of their plays were the best or good\.",
            words,
        )
        assert sentence.group(1) == figure.group(1) and sentence.group(2) == figure.group(2)
    words = text_of(client.get(f"/players/{household.ids['Emil']}/stats").text)
    assert f"Choices' cost {DASH} no game reviewed yet" in words
    assert "No game of Emil has been reviewed yet." in words


def test_a_household_with_no_reviewed_game_says_so(app, client):
    """Games finished, none reviewed: the leaderboard and the player's page say so
    plainly, and a request figures none."""
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=1)
    play_game(client, match_id, [anna, ben], random.Random(3))
    html = client.get("/leaderboard").text
    assert "choices" not in name_cell(html, "Anna")
    assert "Choices: no game in this selection has been reviewed yet." in text_of(html)
    words = text_of(client.get(f"/players/{anna}/stats").text)
    assert "No game of Anna has been reviewed yet." in words
    with app.app_context():
        assert db.session.scalar(select(ReviewCard.id).limit(1)) is None


def test_a_game_reviewed_later_shows_at_once(app, client, household):
    """The pages read the sums kept in memory: a game the background reviews after the
    last request (its write raises the match's version) shows at the next one, and so
    does a review dropped."""
    ben = household.ids["Ben"]
    html = client.get("/leaderboard").text
    assert shown_choices(name_cell(html, "Anna"))[2] == 3
    review_matches(app, household.matches["waiting"])
    html = client.get("/leaderboard").text
    assert shown_choices(name_cell(html, "Anna"))[2] == 4
    assert shown_choices(name_cell(html, "Emil"))[2] == 1
    wanted = counted(reviewed_games(app))
    assert shown_choices(name_cell(html, "Ben"))[0] in tenths(wanted[ben].cost / wanted[ben].games)
    with app.app_context():  # as a correction drops a game's review, in its write
        waiting = select(Game.id).where(Game.match_id == household.matches["waiting"])
        game_review.forget(db.session.scalars(waiting).all())
        db.session.execute(
            update(Match)
            .where(Match.id == household.matches["waiting"])
            .values(version=Match.version + 1)
        )
        db.session.commit()
    html = client.get("/leaderboard").text
    assert shown_choices(name_cell(html, "Anna"))[2] == 3
    assert "choices" not in name_cell(html, "Emil")


def test_the_sums_in_sql_equal_the_reviews_read_play_by_play(app, household):
    """``game_review.play_losses`` (the sums' SQL) grades every play as ``read`` does."""
    wanted = {}
    for match_id, _seats, number, reviewed in reviewed_games(app):
        for round_number, plays in enumerate(reviewed.rounds, 1):
            for play in plays:
                key = (match_id, number, round_number, play.player)
                wanted[key] = (play.loss, play.grade == review.BEST, play.grade)
    with app.app_context():
        plays = game_review.play_losses().subquery()
        query = select(plays, Match.id).join(Match, Match.id == plays.c.match_id)
        rows = db.session.execute(query).mappings().all()
        numbers = {
            game.id: game.number
            for match in db.session.scalars(select(Match))
            for game in match.games
        }
    assert len(rows) == len(wanted)
    grades = defaultdict(int)
    for row in rows:
        loss, best, grade = wanted[
            (row["match_id"], numbers[row["game_id"]], row["round_number"], row["player_id"])
        ]
        assert row["loss"] == pytest.approx(loss, abs=1e-12)
        assert bool(row["best"]) == best
        assert bool(row["good"]) == (grade in review.GOOD_GRADES)
        grades[grade] += 1
    assert grades[review.BEST] and sum(grades.values()) > grades[review.BEST]  # both kinds


def test_kept_sums_are_read_again_only_for_changed_matches(app, client, household, monkeypatch):
    """A second request reads no match's reviews; a change to one match reads that one."""
    client.get("/leaderboard")
    asked = []
    reading = choices.read_matches
    monkeypatch.setattr(
        choices, "read_matches", lambda ids, versions: asked.append(ids) or reading(ids, versions)
    )
    client.get("/leaderboard")
    assert asked == []
    review_matches(app, household.matches["waiting"])
    client.get("/leaderboard")
    assert asked == [[household.matches["waiting"]]]


def costliest_counted(games, player=None) -> tuple | None:
    """The play graded worse than best with the largest loss, the earliest on a tie:
    (loss, match, game, round, player, card, better card)."""
    costly = [
        (play.loss, match_id, number, round_number, play.player, play.card, play.better.card)
        for match_id, _seats, number, reviewed in games
        for round_number, plays in enumerate(reviewed.rounds, 1)
        for play in plays
        if play.grade != review.BEST and player in (None, play.player)
    ]
    if not costly:
        return None
    top = max(entry[0] for entry in costly)
    return min(entry for entry in costly if entry[0] == top)


def highlight(html: str, kind: str) -> str:
    """The words of one highlight of the year's review."""
    found = re.search(rf'<section class="highlight {kind}">(.*?)</section>', html, re.S)
    return text_of(found.group(1)) if found else ""


def test_the_years_review_names_the_best_decision_maker_and_the_costliest_play(
    app, client, household
):
    """Of the players with three reviewed games or more (Dora has one), the highest
    accuracy; the year's costliest play with its better card, one tap from its round."""
    games = reviewed_games(app)
    wanted = counted(games)
    year = utcnow().year
    ranked = {
        player: (round(mine.good / mine.plays, 6), -round(mine.cost / mine.games, 6))
        for player, mine in wanted.items()
        if mine.games >= yearly.REVIEW_GAMES
    }
    assert household.ids["Dora"] not in ranked and len(ranked) == 3
    top = max(ranked.values())
    names = {player: name for name, player in household.ids.items()}
    best = sorted(player for player, value in ranked.items() if value == top)
    html = client.get(f"/review/{year}").text
    shown = highlight(html, "decisions")
    assert shown.startswith("Best decision-maker " + ", ".join(names[p] for p in best))
    mine = wanted[best[0]]
    accuracy = re.search(r"(\S+) of the plays the best or good", shown).group(1)
    assert accuracy in percents(mine.good / mine.plays)
    cost = re.search(r"choices (\S+) a game · over (\d+) games", shown)
    assert cost.group(1) in tenths(mine.cost / mine.games)
    assert int(cost.group(2)) == mine.games
    loss, match_id, game, number, player, card, better = costliest_counted(games)
    shown = highlight(html, "costliest-play")
    assert shown.startswith(f"The costliest play {card} It cost ")
    assert re.search(
        rf"It cost (\S+) bulls by the game's end; the {better} was better\.", shown
    ).group(1) in tenths(loss)
    assert names[player] in shown
    url = f"/matches/{match_id}/games/{game}/replay?round={number}"
    assert f'href="{url}"' in html
    replay = text_of(client.get(url).text)
    assert f"Round {number} of 10" in replay and str(card) in replay
    assert "The best decision-maker played the best card in hand" in text_of(html)


def test_one_players_year_shows_their_choices_and_their_costliest_play(app, client, household):
    games = reviewed_games(app)
    dora = household.ids["Dora"]
    mine = counted(games)[dora]
    html = client.get(f"/review/{utcnow().year}?player={dora}").text
    shown = highlight(html, "decisions")
    assert shown.startswith("Choices ")
    assert re.search(r"Choices (\S+) ", shown).group(1) in percents(mine.good / mine.plays)
    assert "over 1 game" in shown and "Best decision-maker" not in html
    _loss, match_id, game, number, _player, card, _better = costliest_counted(games, dora)
    assert highlight(html, "costliest-play").startswith(f"The costliest play {card} ")
    assert f'href="/matches/{match_id}/games/{game}/replay?round={number}"' in html


def test_a_year_with_no_reviewed_game_says_so(app, client, household):
    """The reviewed matches moved to last year: this year has none, and says so; last
    year's review shows them."""
    last_year = utcnow().year - 1
    with app.app_context():
        for key in ("three", "four"):
            match = db.session.get(Match, household.matches[key])
            match.created_at = datetime(last_year, 6, 1, 20)
        db.session.commit()
        derived.rebuild(check=False, echo=lambda _line: None)  # played_at follows
        db.session.commit()
    html = client.get(f"/review/{utcnow().year}").text
    assert 'class="highlight decisions"' not in html
    assert 'class="highlight costliest-play"' not in html
    assert "No game of this year has been reviewed yet." in text_of(html)
    html = client.get(f"/review/{last_year}").text
    assert 'class="highlight decisions"' in html and 'class="highlight costliest-play"' in html
