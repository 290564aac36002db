"""The year at our table: every figure of the review, for the household and for each of
its six players, equals the same figure computed here from a replay of every game's
stored inputs through the rules engine (not from the derived tables)."""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta
from itertools import pairwise

from openskill.models import PlackettLuce
from sqlalchemy import select
from yearbook import PAUSE, YEAR, build_household

from companion import rules
from companion.db import db
from companion.household import yearly
from companion.household.review import YEARS, review_of
from companion.models import Match, Play, RowChoice, Score, Seat
from companion.state import score_bulls


class Replayed:
    """The household's year computed from the stored inputs, game by game."""

    def __init__(self, app, year: int):
        self.year = year
        with app.app_context():
            self.read(year)

    def read(self, year: int) -> None:
        """Replay every match of ``year`` and count everything the review shows."""
        self.matches, self.games = [], []
        self.nemesis: Counter = Counter()
        self.costs: Counter = Counter()
        everything = db.session.scalars(select(Match).order_by(Match.created_at, Match.id))
        self.rated = []  # (match in year?, ranks) of every finished match, in order
        for match in everything.all():
            seats = [
                seat.player_id
                for seat in db.session.scalars(
                    select(Seat).where(Seat.match_id == match.id).order_by(Seat.position)
                )
            ]
            finished_games = [self.replay(match, game, seats) for game in match.games]
            finished_games = [game for game in finished_games if game is not None]
            if not finished_games:
                continue
            end = rules.EndCondition(match.end_kind, match.end_value)
            totals = {pid: sum(g[0][pid] for g in finished_games) for pid in seats}
            over = end.is_met(totals, len(finished_games))
            ranks = {pid: 1 + sum(t < totals[pid] for t in totals.values()) for pid in seats}
            winners = tuple(sorted(pid for pid in seats if ranks[pid] == 1)) if over else ()
            inside = match.created_at.year == year
            if over:
                self.rated.append((inside, sorted(ranks.items())))
            if not inside:
                continue
            self.matches.append(
                yearly.MatchIn(
                    match.id,
                    match.created_at,
                    self.minutes(match, len(finished_games)),
                    over,
                    len(finished_games),
                    tuple(sorted(seats)),
                    winners,
                )
            )
            for number, (bulls, figures, nemesis, costs) in enumerate(finished_games, 1):
                for pid in seats:
                    fives, worst, worst_number = figures.get(pid, (None, None, None))
                    self.games.append(
                        yearly.GameIn(match.id, number, pid, bulls[pid], fives, worst, worst_number)
                    )
                self.nemesis.update(nemesis)
                self.costs.update(costs)

    @staticmethod
    def replay(match, game, seats):
        """A finished game's bulls, card figures, fillers and card costs (None if not over)."""
        if game.mode == "scores":
            scores = db.session.scalars(select(Score).where(Score.game_id == game.id)).all()
            return {s.player_id: score_bulls(s) for s in scores}, {}, Counter(), Counter()
        rounds = []
        for round_ in game.rounds:
            plays = db.session.scalars(select(Play).where(Play.round_id == round_.id)).all()
            choices = db.session.scalars(
                select(RowChoice).where(RowChoice.round_id == round_.id)
            ).all()
            rounds.append(
                ([(p.player_id, p.card) for p in plays], {c.player_id: c.row for c in choices})
            )
        table = rules.replay_game(game.starting, rounds, seats)
        if not table.finished:
            return None
        owner, fives, worst = {}, Counter(), {}
        nemesis, costs = Counter(), Counter()
        for number, result in enumerate(table.rounds, 1):
            took = Counter()
            for step in result.steps:
                owner[step.card] = step.player
                if step.action == rules.PLACED:
                    continue
                took[step.player] += step.bulls
                costs[step.player, step.card] += step.bulls
                fives[step.player] += 55 in step.taken
                if step.action == rules.SIXTH:
                    filler = owner.get(step.taken[-1])
                    if filler not in (None, step.player):
                        nemesis[step.player, filler] += 1
            for pid, count in took.items():
                if count > worst.get(pid, (0, None))[0]:
                    worst[pid] = (count, number)
        figures = {pid: (fives[pid], *worst.get(pid, (0, None))) for pid in seats}
        return table.bulls(), figures, nemesis, costs

    @staticmethod
    def minutes(match, games: int) -> int:
        """The match's minutes: its finished games' entries, gaps counted up to 20 each."""
        moments, previous = [], match.created_at
        for game in match.games[:games]:
            if game.mode == "scores":
                moments += [previous, game.created_at]
            else:
                moments += [game.created_at, *(r.created_at for r in game.rounds)]
            previous = moments[-1]
        moments.sort()
        gaps = sum((min(b - a, PAUSE) for a, b in pairwise(moments)), timedelta())
        seconds = gaps.total_seconds()
        return max(1, round(seconds / 60)) if seconds > 0 else 0

    def ratings(self) -> dict[int, tuple[float, float]]:
        """Each player's ordinal before the year and after it, rated here with OpenSkill."""
        model = PlackettLuce()
        current, before, after = {}, {}, {}
        for inside, ranks in self.rated:
            players = [pid for pid, _rank in ranks]
            if inside:
                for pid in players:
                    before.setdefault(pid, current[pid].ordinal() if pid in current else 0.0)
            teams = [[current.get(pid) or model.rating()] for pid in players]
            rated = model.rate(teams, ranks=[rank for _pid, rank in ranks])
            for pid, (rating,) in zip(players, rated, strict=True):
                current[pid] = rating
                if inside:
                    after[pid] = rating.ordinal()
        return {pid: (before[pid], after[pid]) for pid in after}

    def review(self, player_id=None) -> yearly.Review:
        """The review the replay makes (the page's own pure function, fed replayed rows)."""
        rows = [(p, r, t) for (p, r), t in self.nemesis.items()]
        return yearly.year_review(
            self.year, self.matches, self.games, rows, dict(self.costs), self.ratings(), player_id
        )


def assert_counted_here(replayed: Replayed, review: yearly.Review) -> None:
    """The household's headline figures counted here too, not by ``yearly``."""
    matches, games = replayed.matches, replayed.games
    assert review.matches == len(matches)
    assert review.finished == sum(1 for match in matches if match.finished)
    assert review.games == len({(game.match_id, game.number) for game in games})
    evenings = {(match.played_at - timedelta(hours=6)).date() for match in matches}
    assert review.evenings == len(evenings)
    assert review.minutes == sum(match.minutes for match in matches)
    wins = Counter(pid for match in matches for pid in match.winners)
    assert review.top_winners == sorted(p for p, n in wins.items() if n == max(wins.values()))
    assert review.fives_total == sum(game.fives or 0 for game in games)
    assert review.worst_round.bulls == max(game.worst_round or 0 for game in games)
    per_card = Counter()
    for (_player, card), bulls in replayed.costs.items():
        per_card[card] += bulls
    assert review.costliest[1] == max(per_card.values())
    month_games = [0] * 12
    for match in matches:
        month_games[match.played_at.month - 1] += match.games
    assert review.games_by_month.series[0][1] == month_games


def comparable(review: yearly.Review) -> dict:
    """The review's figures, the rating rise rounded (two runs of floating point sums)."""
    values = review._asdict()
    if review.improved:
        values["improved"] = (review.improved[0], round(review.improved[1], 6))
    return values


def test_every_figure_of_the_year_equals_a_replay_of_its_games(client, app):
    """Six players, 40 matches: matches, games, evenings, time, wins, most improved,
    cleanest game, worst round, 55s, nemeses, the costliest card and both charts, for
    the household and for each player, and for the year before; the page shows them.

    One test builds the household once (on PostgreSQL every test starts empty).
    """
    ids = build_household(client, app)
    expected = Replayed(app, YEAR)
    assert len(expected.matches) == 37
    with app.test_request_context():
        YEARS.values().clear()
        for player_id in [None, *ids]:
            assert comparable(review_of(YEAR, player_id)) == comparable(
                expected.review(player_id)
            ), player_id
        before = review_of(YEAR - 1, None)
    assert before.matches == 3
    assert comparable(before) == comparable(Replayed(app, YEAR - 1).review())
    household = expected.review()
    assert_counted_here(expected, household)
    assert household.fives_total and household.nemeses and household.costliest
    assert household.finished == 36 and household.evenings < 37
    html = client.get(f"/review/{YEAR}").text
    tiles = re.findall(r'<li class="tile"><strong>([^<]+)</strong>', html)
    assert tiles[:3] == [str(household.matches), str(household.games), str(household.evenings)]
    worst = household.worst_round
    assert f"/matches/{worst.match_id}/games/{worst.game}/replay?round={worst.round}" in html
    months = sum(1 for value in household.games_by_month.series[0][1] if value)
    assert html.count('class="bar series-0"') >= months


def test_a_player_who_is_not_in_the_list_is_refused(client):
    response = client.get(f"/review/{YEAR}?player=9999")
    assert response.status_code == 422
    assert "Choose a player from the list." in response.text


def test_the_leaderboard_leads_to_this_years_review(client):
    html = client.get("/leaderboard").text
    assert 'href="/review"' in html
    response = client.get("/review")
    assert response.status_code == 303
    assert re.fullmatch(r"/review/\d{4}", response.headers["Location"])
    assert "No finished game in" in client.get(response.headers["Location"]).text
