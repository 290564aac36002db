"""``flask rebuild`` and the kept reviews (issue 45): ``--check`` reviews every finished
card game again and names each game whose kept review differs (exit 1); ``rebuild``
mends it, fills in the games not reviewed yet, and drops rows a game has no use for."""

from __future__ import annotations

import random

import pytest
from driver import add_players, deal, enter_round, play_game, start_game, start_match
from kept import kept
from sqlalchemy import delete, func, insert, literal, select, update

from companion import store
from companion.db import db
from companion.derived.tables import ReviewCard, ReviewPlayer
from companion.models import Game, Match

SUMS = (
    ReviewPlayer.game_id,
    ReviewPlayer.player_id,
    ReviewPlayer.cost,
    ReviewPlayer.good,
    ReviewPlayer.plays,
    ReviewPlayer.costliest,
)


@pytest.fixture
def reviewed(app, client, shared_folder):
    """Anna, Ben and Cleo's match of two card games, both reviewed as the background
    does after a game's end; the review.json of each, as kept (built once a session:
    tests/kept.py)."""
    match_id, documents = kept(app, client, shared_folder, "reviews", lambda: review(app, client))
    return match_id, documents


def review(app, client) -> tuple[int, list[dict]]:
    """The fixture's match, entered through ``client`` and reviewed."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    rng = random.Random(45)
    for _game in range(2):
        play_game(client, match_id, ids, rng)
    with app.app_context():
        assert store.review_after(match_id) == 2
    documents = [review_json(client, match_id, game) for game in (1, 2)]
    return match_id, documents


def review_json(client, match_id: int, game: int) -> dict:
    response = client.get(f"/matches/{match_id}/games/{game}/review.json")
    assert response.status_code == 200, response.status_code
    return response.get_json()


def version(app, match_id: int) -> int:
    with app.app_context():
        return db.session.scalar(select(Match.version).where(Match.id == match_id))


def game_id(app, match_id: int, number: int) -> int:
    with app.app_context():
        query = select(Game.id).where(Game.match_id == match_id, Game.number == number)
        return db.session.scalar(query)


def test_kept_reviews_in_line_pass_the_check(app, runner, reviewed):
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output
    assert "Reviewing 2 finished card games again" in result.output
    assert "Every finished card game reviewed again, 0 found differing." in result.output


def test_a_damaged_review_row_is_found_and_mended(app, client, runner, reviewed):
    """One card's figure changed by hand, another card's row gone: ``--check`` names the
    game and changes nothing; ``rebuild`` puts both back, as the background figured
    them, and raises the match's version so every page shows it."""
    match_id, documents = reviewed
    second = game_id(app, match_id, 2)
    with app.app_context():
        damaged = db.session.scalar(
            select(ReviewCard.id).where(ReviewCard.game_id == second, ReviewCard.played)
        )
        db.session.execute(
            update(ReviewCard).where(ReviewCard.id == damaged).values(to_game_end=99.5)
        )
        lost = db.session.scalar(
            select(func.max(ReviewCard.id)).where(ReviewCard.game_id == game_id(app, match_id, 1))
        )
        db.session.execute(delete(ReviewCard).where(ReviewCard.id == lost))
        db.session.commit()
    assert review_json(client, match_id, 2) != documents[1]  # the damage shows
    assert client.get(f"/matches/{match_id}/games/1/review.json").status_code == 202
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 1, result.output
    assert f"match {match_id} game 1: review differs" in result.output
    assert f"match {match_id} game 2: review differs" in result.output
    assert "2 found differing" in result.output
    with app.app_context():  # --check changed nothing
        assert db.session.get(ReviewCard, damaged).to_game_end == 99.5
    before = version(app, match_id)
    result = runner.invoke(args=["rebuild"])
    assert result.exit_code == 0, result.output
    assert "Every finished card game reviewed again, 2 rebuilt differing." in result.output
    assert version(app, match_id) > before
    assert [review_json(client, match_id, game) for game in (1, 2)] == documents
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0 and "0 found differing" in result.output


def test_games_not_reviewed_yet_are_no_difference_and_rebuild_fills_them_in(
    app, client, runner, reviewed
):
    """As after an import or an upgrade: no review kept. ``--check`` counts them apart
    and passes; ``rebuild`` reviews them (what the background would have figured)."""
    match_id, documents = reviewed
    with app.app_context():
        db.session.execute(delete(ReviewCard))
        db.session.execute(delete(ReviewPlayer))
        db.session.commit()
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output
    assert "0 found differing" in result.output
    assert "2 games not reviewed yet" in result.output
    result = runner.invoke(args=["rebuild"])
    assert result.exit_code == 0, result.output
    assert "2 games reviewed anew." in result.output
    assert [review_json(client, match_id, game) for game in (1, 2)] == documents


def test_rows_kept_for_a_game_that_has_no_review_go(app, client, runner, reviewed):
    """A game still being played has no review: rows found for it (copied there by hand
    from a finished game) are a difference, and ``rebuild`` drops them."""
    _match_id, _documents = reviewed
    ids = add_players(client, "Dora", "Emil")
    going = start_match(client, ids, end_kind="games", end_value=2)
    rng = random.Random(4)
    play_game(client, going, ids, rng)
    hands, starting = deal(rng, len(ids))
    assert start_game(client, going, starting).status_code == 303
    plays = {pid: hands[seat][0] for seat, pid in enumerate(ids)}
    assert enter_round(client, going, plays).status_code == 303
    with app.app_context():
        assert store.review_after(going) == 1
        first, second = game_id(app, going, 1), game_id(app, going, 2)
        columns = [column for column in ReviewCard.__table__.columns if column.key != "id"]
        copied = select(*(literal(second) if c.key == "game_id" else c for c in columns))
        db.session.execute(
            insert(ReviewCard.__table__).from_select(
                [column.key for column in columns], copied.where(ReviewCard.game_id == first)
            )
        )
        db.session.commit()
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 1 and f"match {going} game 2: review differs" in result.output
    assert f"match {going} game 1" not in result.output
    assert runner.invoke(args=["rebuild"]).exit_code == 0
    with app.app_context():
        kept = select(func.count()).select_from(ReviewCard)
        assert db.session.scalar(kept.where(ReviewCard.game_id == second)) == 0
        assert db.session.scalar(kept.where(ReviewCard.game_id == first)) > 0
    assert runner.invoke(args=["rebuild", "--check"]).exit_code == 0


def test_a_players_damaged_sums_are_found_and_mended(app, client, runner, reviewed):
    """The household's pages read each player's sums of a game (``ReviewPlayer``): a sum
    changed by hand, or gone, is a difference that ``rebuild`` puts back from the rows."""
    match_id, _documents = reviewed
    with app.app_context():
        wanted = sorted(tuple(row) for row in db.session.execute(select(*SUMS)))
        first = db.session.scalar(select(func.min(ReviewPlayer.id)))
        db.session.execute(
            update(ReviewPlayer).where(ReviewPlayer.id == first).values(cost=ReviewPlayer.cost + 3)
        )
        gone = db.session.scalar(select(func.max(ReviewPlayer.id)))
        db.session.execute(delete(ReviewPlayer).where(ReviewPlayer.id == gone))
        db.session.commit()
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 1, result.output
    assert f"match {match_id} game 1: review differs" in result.output
    assert f"match {match_id} game 2: review differs" in result.output
    assert runner.invoke(args=["rebuild"]).exit_code == 0
    with app.app_context():
        assert sorted(tuple(row) for row in db.session.execute(select(*SUMS))) == wanted
    assert runner.invoke(args=["rebuild", "--check"]).exit_code == 0


def test_a_deleted_match_leaves_no_review(app, client, reviewed):
    match_id, _documents = reviewed
    with app.app_context():
        version = db.session.scalar(select(Match.version).where(Match.id == match_id))
        assert store.delete_match(match_id, version)
        for model in (ReviewCard, ReviewPlayer):
            assert db.session.scalar(select(func.count()).select_from(model)) == 0
