"""Statistics on small hand-made histories whose answers are known, and from scratch."""

import random
from datetime import datetime

import pytest
from driver import (
    add_players,
    choose,
    enter_round,
    play_game,
    replayed_rows,
    score_game,
    start_game,
    start_match,
    undo,
)
from openskill.models import PlackettLuce

from companion import derived, rules
from companion.db import db
from companion.derived import PlayerMatchStat
from companion.derived.figures import (
    Finished,
    GameRow,
    NemesisRow,
    TakeRow,
    game_rows,
    match_rows,
)
from companion.household import player_page as player_stats
from companion.household import statistics as stats
from companion.models import Match

A, B, C = 1, 2, 3

# A game of Anna (A), Ben (B) and Cleo (C) on starting cards 10, 20, 30, 40, whose every
# step is worked out by hand in test_game_rows_follow_the_engine_steps.
ROUNDS = [
    {A: 11, B: 12, C: 13},
    {A: 14, B: 50, C: 15},
    {A: 5, B: 21, C: 22},
    {A: 55, B: 23, C: 24},
    {A: 25, B: 56, C: 57},
    {A: 60, B: 58, C: 2},
    {A: 63, B: 61, C: 62},
    {A: 64, B: 26, C: 3},
    {A: 65, B: 66, C: 67},
    {A: 27, B: 28, C: 29},
]
CHOICES = {3: {A: 2}, 6: {C: 3}}  # round number: the too-low card's row


def hand_made_game() -> rules.GameState:
    """The game above, replayed by the engine."""
    rounds = [
        (list(plays.items()), CHOICES.get(number, {})) for number, plays in enumerate(ROUNDS, 1)
    ]
    return rules.replay_game([10, 20, 30, 40], rounds, [A, B, C])


def test_game_rows_follow_the_engine_steps():
    """Every card figure and every filler of the hand-made game.

    Round 2: Anna's 14 is the 5th card of row 1, Cleo's 15 the 6th: Cleo takes 10-14
    (11 bulls), filled by Anna. Round 3: Anna's 5 is too low, she takes row 2 (20: 3).
    Round 5: Anna's 25 is the 6th card of row 1 (15, 21, 22, 23, 24: 10 bulls), filled
    by Cleo's 24 from round 4. Round 6: Cleo's 2 is too low, she takes row 3 (30: 3);
    Ben's 58 is the 6th card of row 4 (40, 50, 55, 56, 57: 15 bulls, the 55 among them),
    filled by Cleo's 57 from round 5. Round 8: Anna's 64 takes row 4 (58-63: 7 bulls),
    which she filled herself with 63: that counts for nobody.
    """
    game = hand_made_game()
    assert game.bulls() == {A: 20, B: 15, C: 14}
    rows, rivals, takes = game_rows(7, 9, game.bulls(), game)
    # The cards that took: each one's bulls, adding up to each player's.
    assert sorted(takes) == [
        TakeRow(7, 9, A, 5, 3),
        TakeRow(7, 9, A, 25, 10),
        TakeRow(7, 9, A, 64, 7),
        TakeRow(7, 9, B, 58, 15),
        TakeRow(7, 9, C, 2, 3),
        TakeRow(7, 9, C, 15, 11),
    ]
    assert rows == [
        GameRow(
            7,
            9,
            A,
            20,
            True,
            sixth_takes=2,
            too_low_takes=1,
            clean_rounds=7,
            fives=0,
            worst_round=10,
            worst_round_number=5,
        ),
        GameRow(
            7,
            9,
            B,
            15,
            True,
            sixth_takes=1,
            too_low_takes=0,
            clean_rounds=9,
            fives=1,
            worst_round=15,
            worst_round_number=6,
        ),
        GameRow(
            7,
            9,
            C,
            14,
            True,
            sixth_takes=1,
            too_low_takes=1,
            clean_rounds=8,
            fives=0,
            worst_round=11,
            worst_round_number=2,
        ),
    ]
    assert rivals == [
        NemesisRow(7, 9, A, C, 1),
        NemesisRow(7, 9, B, C, 1),
        NemesisRow(7, 9, C, A, 1),
    ]


def test_score_only_games_have_no_card_figures():
    rows, rivals, takes = game_rows(1, 2, {A: 5, B: 0}, None)
    assert rows == [GameRow(1, 2, A, 5, False), GameRow(1, 2, B, 0, False)]
    assert rows[0].sixth_takes is None and rows[0].worst_round is None
    assert rivals == [] and takes == []


def test_match_rows_rank_and_share_the_win():
    end = rules.EndCondition(rules.GAMES, 2)
    when = datetime(2026, 1, 1)
    games = [Finished(1, {A: 5, B: 10, C: 5}, []), Finished(2, {A: 5, B: 0, C: 4}, [])]
    rows = match_rows(5, when, [A, B, C], end, games, 41)
    assert [(row.bulls, row.rank, row.won, row.winners) for row in rows] == [
        (10, 2, False, 1),
        (10, 2, False, 1),
        (9, 1, True, 1),
    ]
    assert [(row.best_game, row.worst_game) for row in rows] == [(5, 5), (0, 10), (4, 5)]
    assert [row.best_game_number for row in rows] == [1, 2, 2]  # Anna's first 5
    assert [row.minutes for row in rows] == [41] * 3
    assert {(row.clean_game, row.clean_bulls) for row in rows} == {(2, 9)}
    unfinished = match_rows(5, when, [A, B], end, [Finished(1, {A: 1, B: 2}, [])], 12)
    assert [(row.finished, row.rank, row.won) for row in unfinished] == [(False, None, False)] * 2
    assert match_rows(5, when, [A, B], end, [], 0) == []


def test_match_rows_keep_every_55_and_the_first_worst_round():
    end = rules.EndCondition(rules.GAMES, 3)
    when = datetime(2026, 1, 1)
    first = [GameRow(1, 5, A, 9, True, 1, 0, 8, 1, 7, 4), GameRow(1, 5, B, 0, True, 0, 0, 10, 0, 0)]
    second = [
        GameRow(2, 5, A, 7, True, 1, 0, 9, 1, 7, 2),
        GameRow(2, 5, B, 12, True, 2, 0, 8, 0, 9, 6),
    ]
    games = [
        Finished(1, {A: 9, B: 0}, first),
        Finished(2, {A: 7, B: 12}, second),
        Finished(3, {A: 3, B: 4}, []),  # typed scores: no card figures
    ]
    anna, ben = match_rows(5, when, [A, B], end, games, 30)
    # Anna took 7 in game 1's round 4 and in game 2's round 2: the first counts.
    assert (anna.fives, anna.worst_round, anna.worst_round_game, anna.worst_round_number) == (
        2,
        7,
        1,
        4,
    )
    assert (ben.fives, ben.worst_round, ben.worst_round_game, ben.worst_round_number) == (
        0,
        9,
        2,
        6,
    )
    assert (anna.best_game, anna.best_game_number, ben.best_game, ben.best_game_number) == (
        3,
        3,
        0,
        1,
    )
    assert (anna.clean_game, anna.clean_bulls) == (ben.clean_game, ben.clean_bulls) == (3, 7)
    typed = match_rows(6, when, [A, B], end, [Finished(1, {A: 3, B: 4}, [])], 5)
    assert [(row.fives, row.worst_round, row.worst_round_game) for row in typed] == [
        (0, 0, None)
    ] * 2


# --- a household history through the app ------------------------------------


def backdate(app, match_id: int, when: datetime) -> None:
    """Move a match to another day (before its games are entered)."""
    with app.app_context():
        db.session.get(Match, match_id).created_at = when
        db.session.commit()


def scores_match(client, app, ids, games, when=None, end_games=None) -> int:
    """A score-only match: ``games`` is a list of bulls per game, in seat order."""
    match_id = start_match(client, ids, end_kind="games", end_value=end_games or len(games))
    if when is not None:
        backdate(app, match_id, when)
    for bulls in games:
        response = score_game(client, match_id, dict(zip(ids, bulls, strict=True)))
        assert response.status_code == 303, response.get_data(as_text=True)
    return match_id


@pytest.fixture
def household(client, app):
    """Anna, Ben, Cleo and Dora (archived) after four score-only matches.

    1 (March): A, B, C tie at 10 each: a three-way shared win.
    2 (May): A 3, B 7: Anna wins.
    3 (two years ago, June): A 20, B 1, C 1, D 8: Ben and Cleo share the win.
    4 (May): A 0, B 9 after one of two games: not finished.
    """
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    a, b, c, d = ids
    scores_match(client, app, [a, b, c], [(5, 5, 5), (5, 5, 5)], datetime(2026, 3, 10))
    scores_match(client, app, [a, b], [(3, 7)], datetime(2026, 5, 2))
    scores_match(client, app, [a, b, c, d], [(20, 1, 1, 8)], datetime(2024, 6, 1))
    scores_match(client, app, [a, b], [(0, 9)], datetime(2026, 5, 20), end_games=2)
    client.post(f"/players/{d}/archive", data={"archived": "1"})
    return ids


def summary(figures: stats.Figures) -> tuple:
    return (
        figures.matches,
        figures.won,
        figures.shared,
        figures.games,
        figures.bulls,
        figures.best,
        figures.worst,
    )


def test_leaderboard_figures(app, household):
    a, b, c, d = household
    with app.app_context():
        figures = stats.board().figures
    assert summary(figures[a]) == (3, 2, 1, 5, 33, 0, 20)
    assert summary(figures[b]) == (3, 2, 2, 5, 27, 1, 9)
    assert summary(figures[c]) == (2, 2, 2, 3, 11, 1, 5)
    assert summary(figures[d]) == (1, 0, 0, 1, 8, 8, 8)
    assert figures[a].win_rate == pytest.approx(2 / 3)
    assert figures[a].average == pytest.approx(6.6)
    assert figures[c].win_rate == 1.0


def test_filters_by_period_and_players(app, household):
    a, b, c, d = household
    now = datetime(2026, 5, 31, 12)
    with app.app_context():
        month = stats.board(stats.Filters("month"), now).figures
        year = stats.board(stats.Filters("year"), now).figures
        two = stats.board(stats.Filters("all", 2)).figures
        four = stats.board(stats.Filters("all", 4)).figures
    assert summary(month[a]) == (1, 1, 0, 2, 3, 0, 3)  # matches 2 and 4
    assert summary(year[a]) == (2, 2, 1, 4, 13, 0, 5)  # matches 1, 2 and 4
    assert c not in month and d not in year
    assert summary(two[b]) == (1, 0, 0, 2, 16, 7, 9)
    assert set(four) == {a, b, c, d} and summary(four[d]) == (1, 0, 0, 1, 8, 8, 8)


def test_ratings_are_openskill_plackett_luce_by_rank(app, household):
    """Matches in date order (3, 1, 2); ranks by total bulls, ties sharing a rank."""
    a, b, c, d = household
    model = PlackettLuce()
    ratings = {player: model.rating() for player in household}
    history = {player: [] for player in household}
    for players, ranks in [([a, b, c, d], [4, 1, 1, 3]), ([a, b, c], [1, 1, 1]), ([a, b], [1, 2])]:
        rated = model.rate([[ratings[player]] for player in players], ranks=ranks)
        for player, (rating,) in zip(players, rated, strict=True):
            history[player].append(ratings[player])
            ratings[player] = rating
    with app.app_context():
        figures = stats.board().figures
    for player in household:
        assert figures[player].rating.mu == pytest.approx(ratings[player].mu)
        assert figures[player].rating.sigma == pytest.approx(ratings[player].sigma)
        assert figures[player].rating.ordinal == pytest.approx(ratings[player].ordinal())
        before = history[player][-1]
        assert figures[player].rating.skill == pytest.approx(ratings[player].mu)
        assert figures[player].trend == pytest.approx(ratings[player].mu - before.mu)
    # Dora's only match was her first: her trend is against the starting Skill, 25.
    assert figures[d].before.skill == pytest.approx(25)


def test_the_rating_cache_extends_and_starts_over(client, app, household):
    a, b, _c, _d = household
    with app.app_context():
        first = stats.board().run
        assert stats.board().run is first  # nothing changed: the cached figures
    match_id = scores_match(client, app, [a, b], [(1, 2)])
    with app.app_context():
        extended = stats.board().run
    assert extended.inputs[:-1] == first.inputs and len(extended.inputs) == 4
    assert undo(client, match_id).status_code == 303
    with app.app_context():
        again = stats.board().run
        fresh = stats.compute_board(None, None)
    assert again.inputs == first.inputs
    assert again.current == first.current == fresh.run.current


def test_head_to_head(app, household):
    a, b, c, _d = household
    with app.app_context():
        duel = stats.head_to_head(a, b)
        other = stats.head_to_head(b, a)
        none = stats.head_to_head(c, 9999)
    # 1: tie at 10, 2: Anna ahead, 3: Ben ahead; 4 is not finished.
    assert duel[:4] == (3, 1, 1, 1)
    assert (duel.games, duel.first_bulls, duel.second_bulls) == (5, 33, 27)
    assert duel.first_average == pytest.approx(6.6)
    assert duel.second_average == pytest.approx(5.4)
    assert other[:4] == (3, 1, 1, 1) and other.first_bulls == 27
    assert none == (0, 0, 0, 0, 0, 0, 0) and none.first_average is None


def test_card_figures_and_nemesis_through_the_app(client, app):
    """The hand-made game played twice at the table, then a score-only game."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    names = dict(zip((A, B, C), ids, strict=True))
    match_id = start_match(client, ids, end_kind="games", end_value=3)
    for _ in range(2):
        assert start_game(client, match_id, [10, 20, 30, 40]).status_code == 303
        for number, plays in enumerate(ROUNDS, 1):
            cards = {names[player]: card for player, card in plays.items()}
            assert enter_round(client, match_id, cards).status_code == 303
            for player, row in CHOICES.get(number, {}).items():
                assert choose(client, match_id, names[player], row).status_code == 303
    assert score_game(client, match_id, dict.fromkeys(ids, 4)).status_code == 303
    with app.app_context():
        anna = player_stats.card_figures(names[A])
        ben = player_stats.card_figures(names[B])
        assert player_stats.nemeses(names[A]) == [(names[C], 2)]
        assert player_stats.nemeses(names[C]) == [(names[A], 2)]
    assert anna == (2, 1, 4, 2, 14, 0, 10, (match_id, 1, 5))
    assert anna.rounds == 20
    assert (ben.sixth_takes, ben.fives, ben.worst_round, ben.worst_at) == (
        2,
        2,
        15,
        (match_id, 1, 6),
    )


def test_a_player_with_only_score_games_has_no_card_figures(app, household):
    with app.app_context():
        figures = player_stats.card_figures(household[0])
    assert figures.games == 0 and figures.score_games == 5
    assert figures.worst_at is None


# --- from scratch --------------------------------------------------------------


def generated_history(client, seed: int) -> list[int]:
    """Random card-by-card and score-only games in several matches, with undos."""
    rng = random.Random(seed)
    ids = add_players(client, "Ann", "Bob", "Cat", "Don", "Eve")
    for number in range(4):
        seated = rng.sample(ids, rng.randint(2, 5))
        games = rng.randint(1, 3)
        match_id = start_match(client, seated, end_kind="games", end_value=games)
        for _ in range(games):
            if rng.random() < 0.6:
                play_game(client, match_id, seated, rng)
            else:
                score_game(client, match_id, {pid: rng.randint(0, 20) for pid in seated})
            if number == 1:
                undo(client, match_id)  # take back a finished game's last entry
                break
    return ids


def figures_now(ids) -> dict:
    """Every figure the pages show, for comparison."""
    return {
        "board": {
            key: stats.compute_board(None, count).figures
            for key, count in (("all", None), ("three", 3))
        },
        "cards": {pid: player_stats.card_figures(pid) for pid in ids},
        "nemeses": {pid: player_stats.nemeses(pid) for pid in ids},
        "duels": {(one, two): stats.head_to_head(one, two) for one in ids for two in ids},
        "history": {pid: player_stats.history(pid, 1, 50) for pid in ids},
    }


@pytest.mark.parametrize("seed", [1, 2])
def test_recomputing_from_scratch_gives_the_same_figures(client, app, runner, seed):
    ids = generated_history(client, seed)
    with app.app_context():
        stored = derived.stored_rows()
        matches = db.session.scalars(db.select(Match)).all()
        replayed = {name: set() for name in stored}
        for match in matches:
            for name, rows in replayed_rows(match).items():
                replayed[name] |= rows
        assert stored == replayed
        assert stored["games"] and stored["matches"]
        before = figures_now(ids)
        for model in (derived.PlayerGameStat, derived.NemesisCount, PlayerMatchStat):
            db.session.execute(db.delete(model))
        db.session.commit()
    result = runner.invoke(args=["rebuild"])
    assert result.exit_code == 0, result.output
    assert "statistics replayed" in result.output
    with app.app_context():
        assert derived.stored_rows() == stored
        assert figures_now(ids) == before
    assert runner.invoke(args=["rebuild", "--check"]).exit_code == 0


def test_rebuild_check_reports_a_wrong_row(client, app, runner, household):
    with app.app_context():
        db.session.execute(db.update(PlayerMatchStat).values(bulls=PlayerMatchStat.bulls + 1))
        db.session.commit()
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 1
    assert "derived statistics differ (matches)" in result.output
    assert runner.invoke(args=["rebuild"]).exit_code == 0
    assert runner.invoke(args=["rebuild", "--check"]).exit_code == 0


def test_a_deleted_match_leaves_no_figures(client, app, household):
    a, b, _c, _d = household
    with app.app_context():
        before = summary(stats.board().figures[a])
    match_id = scores_match(client, app, [a, b], [(50, 0)])
    with app.app_context():
        assert summary(stats.board().figures[a]) != before
    with app.app_context():
        db.session.delete(db.session.get(Match, match_id))
        db.session.commit()
        assert derived.stored_rows([match_id]) == {
            "games": set(),
            "rivals": set(),
            "takes": set(),
            "matches": set(),
        }
        assert summary(stats.board().figures[a]) == before
