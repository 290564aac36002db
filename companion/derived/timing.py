"""When a match and its games were played, and how long they took, from stored timestamps.

Nothing is stored for this: a game's row is written when its starting cards (or its
typed scores) are entered, and a round's row when its last card is revealed, each with
its ``created_at``. The time at the table is the sum of the gaps between consecutive
entries, each gap counted up to ``PAUSE``: a round entered after an evening's pause
(or a game whose scores were typed the next morning) adds at most ``PAUSE``, not the
hours in between.

- A cards game runs from its starting cards to its last round.
- A score-only game is entered at once when it is over: it runs from the entry before it
  (the previous game's end, or the match's creation for the first game) to its scores.
- A match runs from its first game's start to its last game's end; its time is the sum
  of the capped gaps over all of its entries in that span.

``match_times`` reads the timestamps of many matches in one query each; ``timeline``,
``counted`` and ``span`` are pure. The minutes of a match are also kept with its
statistics (``PlayerMatchStat.minutes``), for the year's review.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise
from typing import NamedTuple

from sqlalchemy import bindparam, select

from companion import rules
from companion.models import Game, Match, Round
from companion.state import read

PAUSE = timedelta(minutes=20)  # a game of 6 nimmt! is about this long; a round far less


class Span(NamedTuple):
    """When something was played (start and end, UTC naive) and the time it took."""

    start: datetime
    end: datetime
    played: timedelta

    @property
    def minutes(self) -> int:
        """The time played in whole minutes, rounded (at least 1 once anything was played)."""
        seconds = self.played.total_seconds()
        return max(1, round(seconds / 60)) if seconds > 0 else 0


class GameTimes(NamedTuple):
    """One game's entries: its number, mode, when it was created and its rounds' times."""

    number: int
    mode: str
    created_at: datetime
    rounds: tuple[datetime, ...]


class MatchTimes(NamedTuple):
    """A match's span and each of its games' spans, by game number."""

    match: Span
    games: dict[int, Span]


def span(moments: Sequence[datetime]) -> Span:
    """The span of ordered entries: first to last, gaps counted up to ``PAUSE`` each."""
    played = sum((min(later - earlier, PAUSE) for earlier, later in pairs(moments)), timedelta())
    return Span(moments[0], moments[-1], played)


def pairs(moments: Sequence[datetime]):
    """Consecutive entries (a clock set back counts as no time, not as negative time)."""
    return ((earlier, max(earlier, later)) for earlier, later in pairwise(moments))


def timeline(created_at: datetime, games: Sequence[GameTimes]) -> MatchTimes:
    """The spans of a match created at ``created_at`` and of its games, in game order."""
    spans: dict[int, Span] = {}
    entries: list[datetime] = []
    previous = created_at
    for game in games:
        if game.mode == "scores":
            moments = [previous, game.created_at]
        else:
            moments = [game.created_at, *game.rounds]
        spans[game.number] = span(moments)
        entries += moments if not entries else moments[moments[0] == entries[-1] :]
        previous = spans[game.number].end
    whole = span(sorted(entries)) if entries else Span(created_at, created_at, timedelta())
    return MatchTimes(whole, spans)


# The timestamps of some matches, statements built once: the game's end reads them on
# every page, and SQLAlchemy then skips building and keying them (issue 59).
MATCH_IDS = bindparam("match_ids", expanding=True)
GAMES = (
    select(Game.match_id, Game.id, Game.number, Game.mode, Game.created_at)
    .where(Game.match_id.in_(MATCH_IDS))
    .order_by(Game.match_id, Game.number)
)
ROUNDS = (
    select(Round.game_id, Round.created_at)
    .join(Game, Game.id == Round.game_id)
    .where(Game.match_id.in_(MATCH_IDS))
    .order_by(Round.game_id, Round.number)
)
CREATED = select(Match.id, Match.created_at).where(Match.id.in_(MATCH_IDS))


def match_times(match_ids: Sequence[int], finished_only: bool = True) -> dict[int, MatchTimes]:
    """The timelines of some matches, counting their finished games only (three queries).

    A score-only game is finished once entered, a cards game with its last round
    (``rules.HAND_SIZE``); with ``finished_only`` off, a game being played counts too.
    """
    if not match_ids:
        return {}
    ids = list(match_ids)
    rows = read(GAMES, match_ids=ids).all()
    rounds: dict[int, list[datetime]] = {}
    for game_id, moment in read(ROUNDS, match_ids=ids):
        rounds.setdefault(game_id, []).append(moment)
    created = dict(read(CREATED, match_ids=ids).all())
    per_match: dict[int, list[GameTimes]] = {}
    for match_id, game_id, number, mode, created_at in rows:
        times = GameTimes(number, mode, created_at, tuple(rounds.get(game_id, ())))
        per_match.setdefault(match_id, []).append(times)
    return {
        match_id: timeline(created[match_id], counted(per_match.get(match_id, []), finished_only))
        for match_id in match_ids
        if match_id in created
    }


def counted(games: Sequence[GameTimes], finished_only: bool = True) -> list[GameTimes]:
    """The games a match's time counts: with ``finished_only``, a cards game only once its
    last round is in (a score-only game is finished once entered)."""
    return [
        game
        for game in games
        if not finished_only or game.mode != "cards" or len(game.rounds) >= rules.HAND_SIZE
    ]
