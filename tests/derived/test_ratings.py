"""Every finished match's ratings, kept in the database (``companion.derived.ratings``):
the same as rating every finished match again in order, and as the leaderboard's run,
after matches finished out of order, undone, deleted, imported; rebuild puts them right."""

from __future__ import annotations

import itertools
import random
import re

from backups import export, shifted, upload
from driver import add_players, play_game, score_game, start_match, undo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update

from companion.db import db
from companion.derived import MatchRating, ratings, rebuild
from companion.household import statistics as stats


def stored(app) -> set[ratings.RatingRow]:
    with app.app_context():
        return ratings.stored_from(db.session.connection(), None)


def assert_kept(app) -> set[ratings.RatingRow]:
    """The stored rows are every finished match rated again from the start, and each
    player's last one is the leaderboard's rating of them, to the last bit."""
    with app.app_context():
        rows = ratings.stored_from(db.session.connection(), None)
        assert rows == ratings.all_rated(db.session.connection())
        last = {}
        for row in sorted(rows, key=lambda row: (row.played_at, row.match_id)):
            last[row.player_id] = (row.mu, row.sigma)
        run = stats.board().run
        assert last == {player: (new.mu, new.sigma) for player, new in run.current.items()}
    return rows


def of_match(rows, match_id: int) -> dict[int, tuple[float, float]]:
    return {row.player_id: (row.mu, row.sigma) for row in rows if row.match_id == match_id}


def delete(client, match_id: int) -> None:
    page = client.get(f"/matches/{match_id}/delete").get_data(as_text=True)
    version = re.search(r'name="version" value="(\d+)"', page).group(1)
    response = client.post(f"/matches/{match_id}/delete", data={"version": version})
    assert response.status_code == 303


def test_a_match_that_finishes_before_an_earlier_one_is_rated_again_after_it(client, app):
    anna, ben, cleo, dora = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    early = start_match(client, [anna, ben, cleo], end_kind="games", end_value=1)
    late = start_match(client, [ben, cleo, dora], end_kind="games", end_value=1)
    assert score_game(client, late, {ben: 3, cleo: 9, dora: 5}).status_code == 303
    first = assert_kept(app)
    assert set(of_match(first, late)) == {ben, cleo, dora} and not of_match(first, early)
    # The earlier match finishes now: it comes first, and Ben's and Cleo's ratings in the
    # later one start from it; Dora's did not play it, but her rank met theirs.
    assert score_game(client, early, {anna: 4, ben: 10, cleo: 4}).status_code == 303
    second = assert_kept(app)
    assert set(of_match(second, early)) == {anna, ben, cleo}
    assert of_match(second, late)[ben] != of_match(first, late)[ben]
    # Undone, the earlier match is no longer finished: the later one is as it was.
    assert undo(client, early).status_code == 303
    assert of_match(assert_kept(app), late) == of_match(first, late)


def test_a_deleted_match_leaves_the_later_ones_rated_without_it(client, app):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    matches = []
    for bulls in [(5, 9, 12), (12, 5, 9), (9, 12, 5)]:
        match_id = start_match(client, [anna, ben, cleo], end_kind="games", end_value=1)
        scores = dict(zip([anna, ben, cleo], bulls, strict=True))
        assert score_game(client, match_id, scores).status_code == 303
        matches.append(match_id)
    before = assert_kept(app)
    delete(client, matches[0])
    after = assert_kept(app)
    assert not of_match(after, matches[0])
    assert of_match(after, matches[1]) != of_match(before, matches[1])


def test_card_games_and_an_unfinished_match_are_rated_as_they_end(client, app):
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    rng = random.Random(5)
    for seats in (ids, ids[:3], ids[1:]):
        match_id = start_match(client, seats, end_kind="games", end_value=1)
        play_game(client, match_id, seats, rng)
    going = start_match(client, ids, end_kind="more_than", end_value=300)
    play_game(client, going, ids, rng)  # a game done, the match not over: not rated
    rows = assert_kept(app)
    assert not of_match(rows, going) and len(rows) == 4 + 3 + 3


def test_rebuild_finds_and_puts_right_a_stored_rating(client, app):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=1)
    assert score_game(client, match_id, {anna: 3, ben: 8}).status_code == 303
    with app.app_context():
        db.session.execute(update(MatchRating).where(MatchRating.player_id == anna).values(mu=40))
        db.session.commit()
        said = []
        found = rebuild(check=True, echo=said.append)
        assert found.differing_ratings == 1 and found.differing == (match_id,)
        assert said == [f"ratings differ in 1 matches, the first match {match_id}"]
        rebuild(check=False, echo=lambda _line: None)
        db.session.commit()
        assert db.session.scalar(select(MatchRating.mu).where(MatchRating.player_id == anna)) != 40
    assert_kept(app)
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0 and "rated again, 0 found differing" in result.output


def test_an_import_of_older_matches_rates_the_later_ones_again(client, app):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, [anna, ben, cleo], end_kind="games", end_value=1)
    assert score_game(client, match_id, {anna: 2, ben: 8, cleo: 8}).status_code == 303
    before = of_match(assert_kept(app), match_id)
    response = upload(client, shifted(export(client)))  # the same match, a year earlier
    assert response.status_code == 303, response.get_data(as_text=True)
    after = assert_kept(app)
    assert len({row.match_id for row in after}) == 2
    assert of_match(after, match_id) != before  # now Anna's second win, and so on


def test_an_import_rates_its_matches_a_batch_at_a_time_as_if_all_at_once(client, app, monkeypatch):
    """The import's rating writes its rows a few at a time (bounded memory for a big
    file); the rows are the same as rating every match from the start."""
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    rng = random.Random(6)
    for _ in range(5):
        seated = rng.sample(ids, rng.randint(2, 4))
        match_id = start_match(client, seated, end_kind="games", end_value=1)
        scores = {player: rng.randint(0, 20) for player in seated}
        assert score_game(client, match_id, scores).status_code == 303
    document = shifted(export(client))  # the same matches a year earlier: all new
    monkeypatch.setattr(ratings, "BATCH", 3)
    assert upload(client, document).status_code == 303
    rows = assert_kept(app)
    assert len({row.match_id for row in rows}) == 10


SLOW = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HOUSEHOLDS = itertools.count()  # every example has players of its own (names are unique)


@SLOW
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 3), min_size=2, max_size=4, unique=True),  # seats
            # bulls by seat: four players hand out at most 107 in a game (rules.most_taken)
            st.lists(st.integers(0, 24), min_size=4, max_size=4),
        ),
        min_size=2,
        max_size=5,
    ),
    st.randoms(use_true_random=False),
)
def test_the_kept_ratings_are_the_matches_rated_in_order_whatever_happens(client, app, plan, rng):
    """Matches finish in any order, are undone and deleted: after each change the kept
    ratings are every finished match rated again in order, and the leaderboard's."""
    names = [f"P{next(HOUSEHOLDS)}" for _ in range(4)]
    ids = add_players(client, *names)
    matches = [
        (start_match(client, [ids[s] for s in seats], end_kind="games", end_value=1), seats)
        for seats, _bulls in plan
    ]
    order = list(range(len(plan)))
    rng.shuffle(order)
    for index in order:
        match_id, seats = matches[index]
        scores = {ids[seat]: plan[index][1][n] for n, seat in enumerate(seats)}
        assert score_game(client, match_id, scores).status_code == 303
        assert_kept(app)
    undone, deleted = rng.sample([match_id for match_id, _seats in matches], 2)
    assert undo(client, undone).status_code == 303
    assert_kept(app)
    delete(client, deleted)
    assert_kept(app)
