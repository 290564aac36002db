"""A match: totals, the end condition and the winners."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from companion.rules.cards import (
    DEFAULT_LIMIT,
    N_,
    Player,
)
from companion.rules.checks import RuleError

MORE_THAN = "more_than"
AT_LEAST = "at_least"
GAMES = "games"


@dataclass(frozen=True, slots=True)
class EndCondition:
    """When a match ends: a bulls limit (more than / at least) or a number of games."""

    kind: str = MORE_THAN
    value: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        if self.kind not in (MORE_THAN, AT_LEAST, GAMES):
            raise RuleError(N_("Unknown end condition."), "end")
        if not 1 <= self.value <= 1000:
            raise RuleError(N_("The end value must be between 1 and 1000."), "end")

    def is_met(self, totals: Mapping[Player, int], games_played: int) -> bool:
        """Return True when the match is over after ``games_played`` complete games."""
        if self.kind == GAMES:
            return games_played >= self.value
        if not totals:
            return False
        highest = max(totals.values())
        return highest > self.value if self.kind == MORE_THAN else highest >= self.value

    def remaining(self, total: int) -> int | None:
        """Return how many more bulls a player can take before the match ends (limits)."""
        if self.kind == GAMES:
            return None
        return self.value - total if self.kind == MORE_THAN else self.value - 1 - total


class Standing(NamedTuple):
    """A match's score: totals, whether it is over and who won."""

    totals: dict[Player, int]
    games_played: int
    over: bool
    winners: tuple[Player, ...]  # the fewest bulls once it is over; a tie shares the win
    leaders: tuple[Player, ...]  # the one with the fewest bulls; none on a tie (``leader``)


def match_totals(players: Iterable[Player], games: Iterable[Mapping[Player, int]]) -> dict:
    """Return each player's total bulls over the complete games."""
    totals = dict.fromkeys(players, 0)
    for game in games:
        for player, count in game.items():
            totals[player] = totals.get(player, 0) + count
    return totals


def lowest(totals: Mapping[Player, int]) -> tuple[Player, ...]:
    """Return the players with the fewest bulls; equal lowest totals share the place."""
    if not totals:
        return ()
    best = min(totals.values())
    return tuple(player for player, total in totals.items() if total == best)


def leader(totals: Mapping[Player, int]) -> tuple[Player, ...]:
    """Return the one player with the fewest bulls, or none when two or more share the
    fewest (everyone equal included): nobody leads a tie (issue 57)."""
    fewest = lowest(totals)
    return fewest if len(fewest) == 1 else ()


def standing(
    players: Sequence[Player],
    games: Sequence[Mapping[Player, int]],
    end: EndCondition = EndCondition(),
) -> Standing:
    """Score a match from its complete games' bulls per player."""
    totals = match_totals(players, games)
    over = end.is_met(totals, len(games))
    return Standing(totals, len(games), over, lowest(totals) if over else (), leader(totals))


class Running(NamedTuple):
    """A match's score with the game in progress counted so far.

    For display only: the match ends, and is won, on complete games (``standing``).
    """

    totals: dict[Player, int]
    leaders: tuple[Player, ...]  # the one with the fewest bulls; none on a tie (``leader``)
    to_limit: dict[Player, int] | None  # bulls left before the limit; None for a games count
    ranking: tuple[Player, ...]  # fewest bulls first; equal totals keep their seats


def running(
    players: Sequence[Player],
    games: Sequence[Mapping[Player, int]],
    current: Mapping[Player, int],
    end: EndCondition = EndCondition(),
) -> Running:
    """Score a match from its complete games and the bulls taken so far in the open one."""
    totals = match_totals(players, [*games, current])
    leaders = leader(totals)
    to_limit = (
        None
        if end.kind == GAMES
        else {player: max(end.remaining(total) or 0, 0) for player, total in totals.items()}
    )
    ranking = tuple(sorted(totals, key=totals.__getitem__))  # sorted() is stable
    return Running(totals, leaders, to_limit, ranking)
