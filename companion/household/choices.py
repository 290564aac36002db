"""Each player's choices over the reviewed games, for the leaderboard, a player's page and
the year's review: what the choices cost per game (the sum of a game's losses, a too-low
card's row included, ``companion.rules.review``), the accuracy (the share of plays graded
best or good), and the costliest play.

Only the games whose review is kept count (``companion.derived.game_review``: the
server's background process reviews a game after its end, ``flask rebuild`` a history's
games): a page never figures a review, which takes seconds of CPU. A review is kept with
each player's sums of it (``ReviewPlayer``: a row per game and player, not one per card
of each hand: 0.2 s to read for 14,000 reviewed games, not 3 s), and each match's sums
are kept in memory by the match's version (``companion.household.by_match``): storing or
dropping a game's review raises its match's version.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Select, func, select

from companion.db import db
from companion.derived import game_review
from companion.derived.tables import ReviewCard, ReviewPlayer
from companion.household.by_match import (
    ByMatch,
    Kept,
    extreme,
    found,
    in_range,
    players_by_match,
)
from companion.household.yearly import Costly
from companion.models import Game, Match

KEPT = ByMatch("match_choices")


class Choices(NamedTuple):
    """A player's choices over some reviewed games: the games, what the choices cost in
    all (the plays' losses, in bulls), the plays graded best or good, and the plays."""

    games: int
    cost: float
    good: int
    plays: int

    @property
    def per_game(self) -> float:
        """What the choices cost per game, in bulls."""
        return self.cost / self.games

    @property
    def accuracy(self) -> float:
        """The share of plays graded best or good, 0..1."""
        return self.good / self.plays


class PlayerChoices(NamedTuple):
    """A player's choices over a match's reviewed games, and the largest loss of their
    plays graded worse than best (None when none was)."""

    player_id: int
    choices: Choices
    costliest: float | None


class MatchChoices(NamedTuple):
    """A match's reviewed games at one version: when it was created (UTC), and its
    players' choices (none before a game is reviewed)."""

    version: int
    played_at: datetime
    players: tuple[PlayerChoices, ...]


def kept() -> Kept:
    """Every match's reviewed games, in line with the database (``by_match``)."""
    return KEPT.kept(read_matches)


def read_matches(
    ids: list[int] | None, versions: dict[int, tuple[int, datetime]]
) -> dict[int, MatchChoices]:
    """The reviewed games of these matches (None: all of them) as kept, at ``versions``."""
    where = [] if ids is None else [ReviewPlayer.match_id.in_(ids)]
    rows = db.session.connection().execute(player_sums(where))
    return players_by_match(rows, ids, versions, MatchChoices, player_choices)


def player_choices(player_id: int, games: int, cost, good, plays, costliest) -> PlayerChoices:
    """A player's row of ``player_sums`` (its match's id left out)."""
    return PlayerChoices(player_id, Choices(games, float(cost), int(good), int(plays)), costliest)


def player_sums(where: list) -> Select:
    """(match, player, games, cost, good plays, plays, costliest loss) over each match's
    reviewed games, from each player's sums of a game (``ReviewPlayer``, kept with the
    review; a covering index)."""
    summed = ReviewPlayer
    return (
        select(
            summed.match_id,
            summed.player_id,
            func.count(),
            func.sum(summed.cost),
            func.sum(summed.good),
            func.sum(summed.plays),
            func.max(summed.costliest),
        )
        .where(*where)
        .group_by(summed.match_id, summed.player_id)
        .order_by(summed.match_id, summed.player_id)
    )


def choices_by_player(
    since: datetime | None = None,
    until: datetime | None = None,
    players: int | None = None,
    held: Kept | None = None,
) -> dict[int, Choices]:
    """Each player's choices over the reviewed games of the matches created in [since,
    until) with ``players`` at the table (the leaderboard's filters; None: any), from
    ``held`` (default: ``kept()``)."""

    def part(matches: dict[int, MatchChoices]) -> dict[int, list]:
        totals: dict[int, list] = {}
        for _id, match in in_range(matches, since, until, players):
            for mine in match.players:
                have = totals.setdefault(mine.player_id, [0, 0.0, 0, 0])
                for index, value in enumerate(mine.choices):
                    have[index] += value
        return totals

    def combine(parts: list[dict[int, list]]) -> dict[int, Choices]:
        totals: dict[int, list] = {}
        for totalled in parts:
            for player_id, values in totalled.items():
                have = totals.setdefault(player_id, [0, 0.0, 0, 0])
                for index, value in enumerate(values):
                    have[index] += value
        return {player_id: Choices(*values) for player_id, values in totals.items()}

    return found(held or kept(), ("choices", since, until, players), part, combine)


def costliest(
    since: datetime | None = None,
    until: datetime | None = None,
    player_id: int | None = None,
    held: Kept | None = None,
) -> Costly | None:
    """The costliest play of the reviewed games of the matches created in [since, until),
    of everyone or of one player, from ``held`` (default: ``kept()``): of the plays graded
    worse than best, the one with the largest loss; the earliest on a tie (by the match's
    creation, its id, the game, the round), then the lower player id."""
    return extreme(held or kept(), "costliest", max, (since, until, player_id), first_costly)


def first_costly(loss: float, where: set[tuple[int, int]]) -> Costly | None:
    """Of the plays with this loss in the reviewed games of these (match, player) pairs,
    the earliest, with the hand's better card."""
    matches = sorted({match_id for match_id, _player in where})
    plays = game_review.play_losses(ReviewCard.match_id.in_(matches)).subquery()
    query = (
        select(plays.c.match_id, plays.c.player_id, Game.id, Game.number, plays.c.round_number)
        .join(Game, Game.id == plays.c.game_id)
        .join(Match, Match.id == plays.c.match_id)
        .where(plays.c.loss == loss, plays.c.best == 0)
        .order_by(Match.created_at, Match.id, Game.number, plays.c.round_number)
        .order_by(plays.c.player_id)
    )
    for match_id, player, game_id, game, number in db.session.connection().execute(query):
        if (match_id, player) not in where:
            continue
        play = game_review.kept_play(game_id, number, player)
        if play is not None:
            return Costly(player, play.card, play.better.card, loss, match_id, game, number)
    return None
