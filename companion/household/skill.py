"""Skill ratings: OpenSkill's Plackett-Luce model over finished matches, kept in memory.

Each finished match is one multiplayer game for the model, every player a team of one,
ranked by total bulls: fewest first, equal totals share a rank (``PlayerMatchStat.rank``).
A player's Skill is the model's mu, shown with sigma as its uncertainty (±); everyone
starts at mu 25, sigma 25/3. Skill is the one scale players see: the leaderboard's
column, its change in the last match, the player's chart and the year's most improved
all count in ``Rating.skill``. The leaderboard's default order goes by the conservative
ordinal mu - 3 sigma (the skill a player surely has), a key that is never shown as a
number. ``companion.derived.ratings`` rates one match (``rate``) and keeps each match's
ratings of all time in the database, for the year's review.

Why in memory: ratings are a pure function of the ordered list of rated matches, which
the derived tables give in one query. Rating 5,000 matches takes about a third of a
second, so the run is cached per filter (``companion.memo``). A request whose list
begins with the cached list (matches finished since) rates only the new matches; any
other change (an undo, a deleted match, an import of older ones) rates from scratch.
A restart simply rates again on the first request.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple

from openskill.models import PlackettLuceRating

from companion.derived.ratings import MODEL, Ranked, rate
from companion.memo import Memo

__all__ = ["START", "Ranked", "Rating", "RatingRun", "rated"]

RUNS = Memo("ratings", 16)  # runs kept, one per filter; a household uses a handful


class Rating(NamedTuple):
    """A player's skill after some matches: the model's mu and sigma."""

    mu: float
    sigma: float

    @property
    def skill(self) -> float:
        """Skill, as players see it: the model's mu (the one scale of every shown figure)."""
        return self.mu

    @property
    def ordinal(self) -> float:
        """The skill a player surely has, mu - 3 sigma: the default order, never shown."""
        return self.mu - 3 * self.sigma


START = Rating(MODEL.rating().mu, MODEL.rating().sigma)  # everyone's before a first match


class RatingRun:
    """The ratings after an ordered list of matches, with each player's history."""

    def __init__(self) -> None:
        self.inputs: list[Ranked] = []
        # The model's own rating objects; ``rate`` returns new ones, so they are shared.
        self.current: dict[int, PlackettLuceRating] = {}
        # Each player's rating before their latest match, for the trend (None: the start).
        self.before: dict[int, PlackettLuceRating | None] = {}
        # Each player's Skill after each of their matches: (index into inputs, skill).
        self.history: dict[int, list[tuple[int, float]]] = {}

    def extended(self, more: Sequence[Ranked]) -> RatingRun:
        """A new run: this one's ratings, then ``more`` matches (this run stays as it is)."""
        run = RatingRun()
        run.inputs = [*self.inputs, *more]
        run.current, run.before = dict(self.current), dict(self.before)
        run.history = {player: list(points) for player, points in self.history.items()}
        for index, match in enumerate(more, len(self.inputs)):
            run.rate(index, match)
        return run

    def rate(self, index: int, match: Ranked) -> None:
        """Update the ratings of one match's players."""
        for player, previous, new in rate(self.current, match):
            self.before[player] = previous
            self.current[player] = new
            self.history.setdefault(player, []).append((index, Rating(new.mu, new.sigma).skill))


def rated(key: Hashable, inputs: Sequence[Ranked]) -> RatingRun:
    """The ratings after ``inputs``, reusing the cached run for ``key`` where it can."""
    run = RUNS.get(key) or RatingRun()
    done = len(run.inputs)
    if done > len(inputs) or run.inputs != list(inputs[:done]):
        run, done = RatingRun(), 0
    if done < len(inputs):
        run = run.extended(inputs[done:])  # a new run: a cached one is never changed
    return RUNS.put(key, run)
