"""Statistics for the leaderboard, the player page and head to head.

Everything here reads the derived tables of ``companion.derived`` (written from the
engine's replay of the stored inputs) and never applies a rule itself. Match figures
count finished matches only (``rules.standing(...).over``); per-game figures count
every finished game, card by card or score-only, also in matches still going on.
The period filter goes by the day a match was created; the players filter by its seats.

The leaderboard's figures are kept in memory per filter, with the fingerprint of the
match rows they were computed from (``fingerprint``): a request after any change
computes them again (in SQL, ratings mostly from ``companion.household.skill``' cache).
Luck (``luck``) and the choices (``choices``) are kept apart, match by match
(``companion.household.match_luck``, ``companion.household.choices``): a game's luck and
its review are figured in writes after the one that finished it, an import's later
still, while the match rows stay as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple

from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import aliased

from companion.db import db
from companion.derived import PlayerGameStat, PlayerMatchStat
from companion.household import choices as reviewed
from companion.household import luck_figures, match_luck
from companion.household.skill import START, Ranked, Rating, RatingRun, rated
from companion.memo import Memo
from companion.models import utcnow

PERIODS = ("all", "year", "month")
BOARDS = Memo("boards", 32)  # filter combinations kept (periods x player counts)


class Filters(NamedTuple):
    """Which matches the leaderboard counts: a period and a number of players."""

    period: str = "all"
    players: int | None = None

    def since(self, now: datetime) -> datetime | None:
        """The first moment of the period, or None for all time."""
        if self.period == "month":
            return datetime(now.year, now.month, 1)
        if self.period == "year":
            return datetime(now.year, 1, 1)
        return None


ALL_TIME = Filters()


@dataclass
class Figures:
    """One player's figures under some filters."""

    player_id: int
    matches: int = 0  # finished matches
    won: int = 0  # shared wins included
    shared: int = 0  # of which shared
    games: int = 0  # finished games
    bulls: int = 0  # over those games
    best: int | None = None  # fewest bulls in one game
    worst: int | None = None  # most bulls in one game
    rating: Rating | None = None
    before: Rating | None = None  # before the player's latest rated match

    @property
    def win_rate(self) -> float | None:
        """Matches won per finished match, 0..1."""
        return self.won / self.matches if self.matches else None

    @property
    def average(self) -> float | None:
        """Bulls per finished game."""
        return self.bulls / self.games if self.games else None

    @property
    def trend(self) -> float | None:
        """How Skill moved in the player's latest match."""
        if self.rating is None or self.before is None:
            return None
        return self.rating.skill - self.before.skill


class Board(NamedTuple):
    """The leaderboard's figures by player id, and the rating run behind them."""

    figures: dict[int, Figures]
    run: RatingRun


def fingerprint() -> tuple[int, int]:
    """Changes whenever any match row changes: rows are replaced, ids never reused, and
    committed in the order of their ids (``derived.in_commit_order``)."""
    count, highest = db.session.execute(
        select(func.count(PlayerMatchStat.id), func.max(PlayerMatchStat.id))
    ).one()
    return count, highest or 0


def board(filters: Filters = ALL_TIME, now: datetime | None = None) -> Board:
    """The figures of every player who played under ``filters`` (cached per fingerprint)."""
    since = filters.since(now or utcnow())
    key = (since, filters.players)
    stamp = fingerprint()
    hit = BOARDS.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    result = compute_board(since, filters.players)
    BOARDS.put(key, (stamp, result))
    return result


def luck(filters: Filters = ALL_TIME, now: datetime | None = None) -> dict[int, match_luck.Luck]:
    """Each player's luck over the complete card games under ``filters``, by player id."""
    since = filters.since(now or utcnow())
    return luck_figures.luck_by_player(since, None, filters.players)


def choices(
    filters: Filters = ALL_TIME, now: datetime | None = None
) -> dict[int, reviewed.Choices]:
    """Each player's choices over the reviewed card games under ``filters``, by player id."""
    since = filters.since(now or utcnow())
    return reviewed.choices_by_player(since, None, filters.players)


def compute_board(since: datetime | None, players: int | None) -> Board:
    """Add up the match rows under the filters (in SQL) and rate their finished matches."""
    stat = PlayerMatchStat
    where = []
    if since is not None:
        where.append(stat.played_at >= since)
    if players is not None:
        where.append(stat.players == players)
    shared = case((and_(stat.won, stat.winners > 1), 1), else_=0)
    sums = (
        select(
            stat.player_id,
            func.sum(case((stat.finished, 1), else_=0)),
            func.sum(case((stat.won, 1), else_=0)),
            func.sum(shared),
            func.sum(stat.games),
            func.sum(stat.bulls),
            func.min(stat.best_game),
            func.max(stat.worst_game),
        )
        .where(*where)
        .group_by(stat.player_id)
    )
    # Core, not ORM execution: plain rows, and much less overhead on 20,000 of them.
    connection = db.session.connection()
    figures = {row[0]: Figures(*row) for row in connection.execute(sums)}
    ranks = (
        select(stat.match_id, stat.player_id, stat.rank)
        .where(stat.finished, *where)
        .order_by(stat.played_at, stat.match_id, stat.player_id)
    )
    rows = connection.execute(ranks).all()
    ranked = [
        Ranked(match_id, tuple((player, rank) for _match, player, rank in group))
        for match_id, group in groupby(rows, key=itemgetter(0))
    ]
    run = rated((since, players), ranked)
    for player, rating in run.current.items():
        figures[player].rating = Rating(rating.mu, rating.sigma)
        previous = run.before.get(player)
        figures[player].before = Rating(previous.mu, previous.sigma) if previous else START
    return Board(figures, run)


class Duel(NamedTuple):
    """Two players against each other."""

    matches: int  # finished matches both played
    first_ahead: int  # fewer total bulls than the second
    second_ahead: int
    ties: int
    games: int  # finished games both played
    first_bulls: int
    second_bulls: int

    @property
    def first_average(self) -> float | None:
        """The first player's bulls per game in the games together."""
        return self.first_bulls / self.games if self.games else None

    @property
    def second_average(self) -> float | None:
        """The second player's bulls per game in the games together."""
        return self.second_bulls / self.games if self.games else None


def head_to_head(first: int, second: int) -> Duel:
    """Matches and games that both players played, compared."""
    one, two = aliased(PlayerMatchStat), aliased(PlayerMatchStat)
    matches = db.session.execute(
        select(
            func.count(one.id),
            func.sum(case((one.bulls < two.bulls, 1), else_=0)),
            func.sum(case((one.bulls > two.bulls, 1), else_=0)),
        )
        .join(two, and_(two.match_id == one.match_id, two.player_id == second))
        .where(one.player_id == first, one.finished)
    ).one()
    game_one, game_two = aliased(PlayerGameStat), aliased(PlayerGameStat)
    games = db.session.execute(
        select(func.count(game_one.id), func.sum(game_one.bulls), func.sum(game_two.bulls))
        .join(game_two, and_(game_two.game_id == game_one.game_id, game_two.player_id == second))
        .where(game_one.player_id == first)
    ).one()
    count, ahead, behind = (value or 0 for value in matches)
    game_count, first_bulls, second_bulls = (value or 0 for value in games)
    return Duel(count, ahead, behind, count - ahead - behind, game_count, first_bulls, second_bulls)
