"""A player's own page: card-by-card figures, the nemesis, history and the Skill chart.

Reads the derived tables of ``companion.derived`` (see there for the nemesis, defined
from the engine's steps) and the rating run of ``companion.household.statistics``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import case, func, select

from companion.db import db
from companion.derived import NemesisCount, PlayerGameStat, PlayerMatchStat
from companion.household.skill import START, RatingRun
from companion.models import Game
from companion.web.chart import Chart, Scale, framed

CHART_POINTS = 40  # more would not show on a phone; the table lists the same points


class CardFigures(NamedTuple):
    """What only card-by-card games tell about one player."""

    games: int  # finished games entered card by card
    score_games: int  # finished score-only games (no card figures)
    sixth_takes: int
    too_low_takes: int
    clean_rounds: int  # rounds in which the player took no bulls
    fives: int  # 55s caught
    worst_round: int  # most bulls in a single round
    worst_at: tuple[int, int, int] | None  # (match id, game number, round number)

    @property
    def rounds(self) -> int:
        """Rounds played card by card (ten per game)."""
        return self.games * 10


def card_figures(player_id: int) -> CardFigures:
    """Sum the player's per-game rows; card figures come from card-by-card games only."""
    stat = PlayerGameStat
    cards = func.sum(case((stat.cards, 1), else_=0))
    totals = db.session.execute(
        select(
            cards,
            func.count(stat.id),
            func.sum(stat.sixth_takes),
            func.sum(stat.too_low_takes),
            func.sum(stat.clean_rounds),
            func.sum(stat.fives),
            func.max(stat.worst_round),
        ).where(stat.player_id == player_id)
    ).one()
    games, every, sixth, too_low, clean, fives, worst = (value or 0 for value in totals)
    worst_at = None
    if worst:
        worst_at = tuple(
            db.session.execute(
                select(stat.match_id, Game.number, stat.worst_round_number)
                .join(Game, Game.id == stat.game_id)
                .where(stat.player_id == player_id, stat.worst_round == worst)
                .order_by(stat.game_id)
                .limit(1)
            ).one()
        )
    return CardFigures(games, every - games, sixth, too_low, clean, fives, worst, worst_at)


def nemeses(player_id: int) -> list[tuple[int, int]]:
    """Every rival whose card filled a row this player then took: (id, takes), most first."""
    takes = func.sum(NemesisCount.takes).label("takes")
    query = (
        select(NemesisCount.rival_id, takes)
        .where(NemesisCount.player_id == player_id)
        .group_by(NemesisCount.rival_id)
        .order_by(takes.desc(), NemesisCount.rival_id)
    )
    return [(rival, count) for rival, count in db.session.execute(query)]


class HistoryRow(NamedTuple):
    """One match in a player's history (matches with at least one finished game)."""

    match_id: int
    played_at: datetime
    players: int
    games: int
    bulls: int
    finished: bool
    rank: int | None
    won: bool
    winners: int


def history_pages(player_id: int, per_page: int) -> int:
    """How many pages the player's history has (at least one)."""
    stat = PlayerMatchStat
    count = db.session.scalar(select(func.count(stat.id)).where(stat.player_id == player_id))
    return max(1, -(-count // per_page))


def history(player_id: int, page: int, per_page: int) -> list[HistoryRow]:
    """One page of the player's matches, newest first."""
    stat = PlayerMatchStat
    query = (
        select(*(getattr(stat, name) for name in HistoryRow._fields))
        .where(stat.player_id == player_id)
        .order_by(stat.played_at.desc(), stat.match_id.desc())
        .limit(per_page)
        .offset((page - 1) * per_page)
    )
    return [HistoryRow._make(row) for row in db.session.execute(query)]


class Point(NamedTuple):
    """The player's Skill after one match, for the chart and its table."""

    played_at: datetime
    match_id: int
    skill: float


def rating_points(run: RatingRun, player_id: int, most: int = CHART_POINTS) -> list[Point]:
    """The player's Skill after their matches, thinned evenly to ``most`` points."""
    points = run.history.get(player_id, [])
    if len(points) > most:
        step = (len(points) - 1) / (most - 1)
        points = [points[round(index * step)] for index in range(most)]
    match_ids = [run.inputs[index].match_id for index, _skill in points]
    dates = dict(
        db.session.execute(
            select(PlayerMatchStat.match_id, PlayerMatchStat.played_at).where(
                PlayerMatchStat.player_id == player_id, PlayerMatchStat.match_id.in_(match_ids)
            )
        ).all()
    )
    return [
        Point(dates[match_id], match_id, skill)
        for match_id, (_index, skill) in zip(match_ids, points, strict=True)
    ]


def rating_chart(
    label: str, points: Sequence[Point], date_label: Callable[[datetime, str], str]
) -> Chart:
    """Lay out one line of Skill in the scoreboard chart's frame (``_chart.html``).

    The scale fits the line and the Skill everyone starts at, so a rise or a fall shows
    against the start. ``date_label(moment, pattern)`` writes the first and last match's
    dates under it, as years, months or days (CLDR patterns) depending on the time
    between them.
    """
    values = [point.skill for point in points]
    bottom, top = min(*values, START.skill), max(*values, START.skill)
    step = nice_step((top - bottom) / 4)
    low = math.floor(bottom / step) * step
    high = max(math.ceil(top / step) * step, low + step)
    scale = Scale(len(values) - 1, low, high)
    y_ticks = [(scale.y(value), value) for value in range(low, high + 1, step)]
    span = (points[-1].played_at - points[0].played_at).days
    pattern = "yyyy" if span > 3 * 365 else "MMM yyyy" if span > 60 else "d MMM"
    labels = {index: date_label(points[index].played_at, pattern) for index in (0, len(points) - 1)}
    if labels[0] == labels[len(points) - 1]:
        del labels[0]
    x_ticks = [(scale.x(index), text) for index, text in labels.items()]
    return framed([scale.line(label, values, 0)], y_ticks, x_ticks, None)


def nice_step(raw: float) -> int:
    """A whole tick step of 1, 2 or 5 times a power of ten, at least ``raw``."""
    power = 10 ** max(0, math.floor(math.log10(max(raw, 1))))
    return next(factor * power for factor in (1, 2, 5, 10) if factor * power >= raw)
