"""A game: the starting cards and the rounds played so far, replayed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from companion.rules.cards import (
    HAND_SIZE,
    Player,
    Rows,
    pile_bulls,
)
from companion.rules.table import (
    ChoiceNeeded,
    RoundResult,
    Table,
)


def game_finished(rounds_placed: int, pending: ChoiceNeeded | None) -> bool:
    """A game is over once every player's hand is played: ten rounds, the last one placed
    to the end (no row choice still to make)."""
    return rounds_placed == HAND_SIZE and pending is None


class GameState(NamedTuple):
    """A game replayed from its inputs: the table, the piles and every round's steps."""

    rows: Rows
    piles: dict[Player, tuple[int, ...]]
    rounds: tuple[RoundResult, ...]
    # Stored rounds after one that waits for a row choice: a correction of an earlier
    # round can make a later one need a choice; the rounds after it wait for it.
    later: int = 0

    @property
    def pending(self) -> ChoiceNeeded | None:
        """The choice the last round waits for, if any."""
        return self.rounds[-1].pending if self.rounds else None

    @property
    def finished(self) -> bool:
        """True once the game is over (``game_finished``)."""
        return game_finished(len(self.rounds), self.pending)

    @property
    def played(self) -> frozenset[int]:
        """Every card played so far in this game."""
        return frozenset(step.card for result in self.rounds for step in result.steps)

    def bulls(self) -> dict[Player, int]:
        """Return the bulls on each player's pile."""
        return {player: pile_bulls(pile) for player, pile in self.piles.items()}


def replay_game(
    starting: Sequence[int],
    rounds: Iterable[tuple[Sequence[tuple[Player, int]], Mapping[Player, int]]],
    players: Iterable[Player] = (),
) -> GameState:
    """Replay a game's stored rounds (plays and row choices) from its starting cards.

    The inputs were checked when they were entered. The replay stops at a round that
    waits for a choice: usually the last one, but after a correction of an earlier
    round any round may; the rounds after it are counted in ``later``, not placed.
    """
    table = Table([(card,) for card in starting])
    piles: dict[Player, list[int]] = {player: [] for player in players}
    results: list[RoundResult] = []
    rounds = list(rounds)
    for plays, choices in rounds:
        if table.pending is not None:
            break
        table.start_round(plays)
        table.run(choices)
        result = table.round_result()
        for step in result.steps:
            piles.setdefault(step.player, []).extend(step.taken)
        results.append(result)
    frozen = {player: tuple(sorted(pile)) for player, pile in piles.items()}
    return GameState(table.rows, frozen, tuple(results), len(rounds) - len(results))
