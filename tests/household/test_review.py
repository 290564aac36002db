"""The year at our table: every figure of the review, for the household and for each of
its six players, equals the same figure computed here from a replay of every game's
stored inputs through the rules engine (not from the derived tables)."""

from __future__ import annotations

import random
import re
import threading
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from itertools import pairwise
from typing import NamedTuple

import pytest
from driver import add_players, play_game, score_game, start_match
from openskill.models import PlackettLuce
from sqlalchemy import select
from yearbook import PAUSE, YEAR, kept_household

from companion import rules
from companion.db import db
from companion.derived import rebuild
from companion.household import review, yearly
from companion.household.review import REVIEWS, make_review, review_of
from companion.models import Match, Play, RowChoice, Score, Seat
from companion.state import score_bulls
from companion.web import present


class MatchIs(NamedTuple):
    """A match of the year as the replay finds it."""

    match_id: int
    played_at: datetime
    minutes: int
    finished: bool
    games: int
    players: tuple[int, ...]
    winners: tuple[int, ...]


class GameIs(NamedTuple):
    """One player's finished game as the replay finds it."""

    match_id: int
    number: int
    player_id: int
    bulls: int
    fives: int | None
    worst_round: int | None
    worst_round_number: int | None


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
                MatchIs(
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
                        GameIs(match.id, number, pid, bulls[pid], fives, worst, worst_number)
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
        """Each player's Skill (mu) before the year and after it, rated here with OpenSkill."""
        model = PlackettLuce()
        current, before, after = {}, {}, {}
        for inside, ranks in self.rated:
            players = [pid for pid, _rank in ranks]
            if inside:
                for pid in players:
                    before.setdefault(pid, current[pid].mu if pid in current else 25.0)
            teams = [[current.get(pid) or model.rating()] for pid in players]
            rated = model.rate(teams, ranks=[rank for _pid, rank in ranks])
            for pid, (rating,) in zip(players, rated, strict=True):
                current[pid] = rating
                if inside:
                    after[pid] = rating.mu
        return {pid: (before[pid], after[pid]) for pid in after}

    def review(self, player_id=None) -> yearly.Review:
        """The review counted here from the replayed matches and games, figure by figure
        (the definitions of ``companion.household.yearly``, none of its code)."""
        mine = player_id is not None
        matches = [m for m in self.matches if not mine or player_id in m.players]
        games = [g for g in self.games if not mine or g.player_id == player_id]
        when = {m.match_id: (m.played_at, m.match_id) for m in matches}
        wins = Counter(w for m in matches for w in m.winners if not mine or w == player_id)
        top = max(wins.values(), default=0)
        rises = {
            pid: round(after - before, 6)
            for pid, (before, after) in self.ratings().items()
            if not mine or pid == player_id
        }
        best = max(rises.values(), default=0)
        fives = Counter()
        for game in games:
            fives[game.player_id] += game.fives or 0
        takes = defaultdict(Counter)
        for (pid, rival), count in self.nemesis.items():
            if not mine or pid == player_id:
                takes[pid][rival] += count
        cards = Counter()
        for (pid, card), bulls in self.costs.items():
            if not mine or pid == player_id:
                cards[card] += bulls
        months, won = [0] * 12, defaultdict(lambda: [0] * 12)
        for match in matches:
            months[match.played_at.month - 1] += match.games
            for winner in match.winners:
                if not mine or winner == player_id:
                    won[winner][match.played_at.month - 1] += 1
        return yearly.Review(
            self.year,
            player_id,
            len(matches),
            sum(m.finished for m in matches),
            sum(m.games for m in matches),
            len({(m.played_at - timedelta(hours=6)).date() for m in matches}),
            sum(m.minutes for m in matches),
            dict(sorted(wins.items(), key=lambda item: (-item[1], item[0]))),
            sorted(pid for pid, count in wins.items() if count == top and top),
            (sorted(p for p, r in rises.items() if r == best), best) if best > 0 else None,
            self.cleanest(games, when, mine),
            self.worst_round(games, when),
            dict(sorted(((p, n) for p, n in fives.items() if n), key=lambda i: (-i[1], i[0]))),
            {
                pid: (
                    sorted(r for r, n in takes[pid].items() if n == max(takes[pid].values())),
                    max(takes[pid].values()),
                )
                for pid in sorted(takes)
            },
            min(cards.items(), key=lambda item: (-item[1], item[0])) if cards else None,
            yearly.Bars([(None, months)], max(months)),
            yearly.Bars(
                [(pid, won[pid]) for pid in sorted(won)],
                max((sum(column) for column in zip(*won.values(), strict=True)), default=0),
            ),
        )

    @staticmethod
    def cleanest(games, when, mine) -> yearly.Clean | None:
        """The game with the fewest bulls per player, the earliest on a tie."""
        tables = defaultdict(list)
        for game in games:
            tables[game.match_id, game.number].append(game.bulls)
        if not tables:
            return None
        (match_id, number), bulls = min(
            tables.items(),
            key=lambda item: (sum(item[1]) / len(item[1]), when[item[0][0]], item[0][1]),
        )
        return yearly.Clean(match_id, number, 1 if mine else len(bulls), sum(bulls))

    @staticmethod
    def worst_round(games, when) -> yearly.Rounded | None:
        """The most bulls in one round: the earliest, then the lower player id."""
        rounds = [game for game in games if game.worst_round]
        if not rounds:
            return None
        game = min(
            rounds,
            key=lambda g: (
                (-g.worst_round, when[g.match_id], g.number, g.worst_round_number, g.player_id)
            ),
        )
        return yearly.Rounded(
            game.player_id, game.worst_round, game.match_id, game.number, game.worst_round_number
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


def test_every_figure_of_the_year_equals_a_replay_of_its_games(client, app, shared_folder):
    """Six players, 40 matches: matches, games, evenings, time, wins, most improved,
    cleanest game, worst round, 55s, nemeses, the costliest card and both charts, for
    the household and for each player, and for the year before; the page shows them.

    One test builds the household once (on PostgreSQL every test starts empty); on
    SQLite it is a copy of the session's (tests/browser/test_browser_review.py's too).
    """
    ids = kept_household(client, app, shared_folder)
    expected = Replayed(app, YEAR)
    assert len(expected.matches) == 37
    with app.test_request_context():
        REVIEWS.values().clear()
        for player_id in [None, *ids]:
            assert comparable(review_of(YEAR, player_id)) == comparable(
                expected.review(player_id)
            ), player_id
        before = review_of(YEAR - 1, None)
        luck = review.luck_of(YEAR, None)  # the build's luck, figured after its games
    assert luck.luckiest and luck.unluckiest and luck.play, luck
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


def year_links(html: str) -> list[tuple[str, str]]:
    """The review's links to other years: (rel, year)."""
    return re.findall(r'rel="(prev|next)" href="/review/(\d+)', html)


def test_only_years_with_matches_are_linked(client, app):
    """The finding (issue 57): 2026's review linked an empty 2025. Matches in 2022 and
    2025 (one of them Anna's alone): each year links the nearest year with a match, for
    the household and for one player; a year without one links none."""
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    for seated, year in (([anna, ben], 2022), ([ben, cleo], 2022), ([anna, cleo], 2025)):
        match_id = start_match(client, seated, end_kind="games", end_value=1)
        assert score_game(client, match_id, dict.fromkeys(seated, 3)).status_code == 303
        with app.app_context():
            db.session.get(Match, match_id).created_at = datetime(year, 6, 1, 20)
            db.session.commit()
    with app.app_context():
        rebuild(check=False, echo=lambda _line: None)  # played_at follows the matches
        db.session.commit()
    assert year_links(client.get("/review/2025").text) == [("prev", "2022")]
    assert year_links(client.get("/review/2022").text) == [("next", "2025")]
    assert year_links(client.get("/review/2023").text) == [("prev", "2022"), ("next", "2025")]
    assert year_links(client.get("/review/2019").text) == [("next", "2022")]
    assert year_links(client.get("/review/2030").text) == [("prev", "2025")]
    assert year_links(client.get(f"/review/2022?player={anna}").text) == [("next", "2025")]
    assert year_links(client.get(f"/review/2025?player={ben}").text) == [("prev", "2022")]
    assert year_links(client.get(f"/review/2022?player={ben}").text) == []


def test_a_player_who_is_not_in_the_list_is_refused(client):
    response = client.get(f"/review/{YEAR}?player=9999")
    assert response.status_code == 422
    assert "Choose a player from the list." in response.text


def test_a_year_has_one_url(client):
    """The finding: /review/02026 and /review/2026%20 answered 200 as pages of their own."""
    for spelled in (f"0{YEAR}", f"{YEAR}%20", f"00{YEAR}"):
        response = client.get(f"/review/{spelled}?player=")
        assert response.status_code == 301, spelled
        assert response.headers["Location"] == f"/review/{YEAR}?player="
    assert client.get(f"/review/0{YEAR}").headers["Location"] == f"/review/{YEAR}"
    assert client.get(f"/review/{YEAR}").status_code == 200
    assert client.get("/review/1").status_code == 404


@pytest.mark.parametrize(
    "query",
    ["year=1", "endpoint=x", "_method=x", "_scheme=https", "_anchor=", "_anchor=x", "_external=1"],
)
def test_a_years_redirect_keeps_the_query_as_it_came(client, query):
    """The finding (issue 55): the redirect handed the query to url_for as its arguments, so
    ?year=1, ?endpoint=x and ?_method=x answered 500 and ?_scheme=https or ?_anchor= changed
    where it led. The year alone makes the address; the query follows it as it came."""
    response = client.get(f"/review/0{YEAR}?{query}&player=")
    assert response.status_code == 301
    assert response.headers["Location"] == f"/review/{YEAR}?{query}&player="


def test_phones_asking_at_once_share_one_review(app, monkeypatch):
    """The finding: 20 first requests at once on PostgreSQL each made the review (2.2 s
    each, 0.3 s alone). The first makes it; the others wait and take it."""
    made, started = [], threading.Barrier(8)

    def slow_review(year):
        made.append(year)
        time.sleep(0.2)  # long enough for every other thread to ask meanwhile
        return make_review(year)

    monkeypatch.setattr(review, "make_review", slow_review)
    results = []

    def ask():
        with app.app_context():
            started.wait()
            results.append(review_of(YEAR, None))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and len(results) == 8
    assert all(result is results[0] for result in results)


def test_the_leaderboard_leads_to_this_years_review(client):
    html = client.get("/leaderboard").text
    assert 'href="/review"' in html
    response = client.get("/review")
    assert response.status_code == 303
    assert re.fullmatch(r"/review/\d{4}", response.headers["Location"])
    assert "No finished game in" in client.get(response.headers["Location"]).text


def test_a_match_finished_now_is_in_this_years_review_at_once(client):
    """The review kept in memory is made again when a match of its year changes."""
    anna, ben = add_players(client, "Anna", "Ben")
    year = client.get("/review").headers["Location"]
    assert "No finished game in" in client.get(year).text
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=1)
    assert score_game(client, match_id, {anna: 3, ben: 7}).status_code == 303
    html = client.get(year).text
    tiles = re.findall(r'<li class="tile"><strong>([^<]+)</strong>', html)
    assert tiles[:3] == ["1", "1", "1"]  # matches, games, evenings


NEMESES = {
    "en": [
        "Ben, Cleo each filled 1 row that Anna then took",
        "Anna filled 2 rows that Ben then took",
        "Ben filled 2 rows that Cleo then took",
    ],
    "de": [
        "Ben, Cleo füllten je 1 Reihe, die Anna dann nehmen musste",
        "Anna füllte 2 Reihen, die Ben dann nehmen musste",
        "Ben füllte 2 Reihen, die Cleo dann nehmen musste",
    ],
    "fr": [
        "Ben, Cleo ont chacun rempli 1 rangée, ramassée ensuite par Anna",
        "Anna a rempli 2 rangées, ramassées ensuite par Ben",
        "Ben a rempli 2 rangées, ramassées ensuite par Cleo",
    ],
}


@pytest.mark.parametrize("lang", NEMESES)
def test_the_years_nemeses_are_said_as_sentences(client, lang):
    """ "Anna → Dieter (3 rows)" read as if Anna did it to Dieter (issue 43): who filled
    how many rows that whom then took, one rival or several (each), one row or more."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    for seed in range(6):  # dealt so: a tie of one row each, and two rows twice
        match_id = start_match(client, ids, end_kind="games", end_value=1)
        play_game(client, match_id, ids, random.Random(seed), chooser=lambda pending: 1)
    year = client.get("/review").headers["Location"]
    html = client.get(year, headers={"Accept-Language": lang}).text
    section = re.search(r'<section class="nemeses".*?</section>', html, re.S).group()
    lines = [
        " ".join(re.sub(r"<[^>]+>", "", item).replace("\u00a0", " ").split())
        for item in re.findall(r"<li>(.*?)</li>", section, re.S)
    ]
    assert lines == NEMESES[lang]
    # The unluckiest play's chance takes the article its number is said with.
    if lang == "en" and (said := re.search(r"(An?) ([\d.<]+%) chance of taking", html)):
        assert (said.group(1) == "An") == present.says_an(said.group(2))
