"""A correction of a past round: the game replayed with it, and what changed.

A correction changes one round's inputs. The rounds after it keep their cards; a row
choice a later round no longer needs is dropped, and a later round that now needs one
stops the game there until the choice is made (``replay_game`` stops at it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from companion.rules.cards import TOO_LOW, Player
from companion.rules.game import GameState, replay_game
from companion.rules.table import RoundResult, Step

RoundInputs = tuple[Sequence[tuple[Player, int]], Mapping[Player, int]]


class Dropped(NamedTuple):
    """A row choice a round no longer needs after a correction."""

    round: int  # 1-10
    player: Player
    row: int


class Settled(NamedTuple):
    """A game's inputs after a correction: the rounds, the choices dropped, the replay."""

    rounds: list[RoundInputs]
    dropped: tuple[Dropped, ...]
    game: GameState


def settle(
    starting: Sequence[int], rounds: Sequence[RoundInputs], players: Sequence[Player] = ()
) -> Settled:
    """Replay a game's inputs, dropping each row choice a placed round did not use.

    A round that waits for a choice keeps its choices (the ones for cards still to come
    are not judged yet), and so do the rounds after it: they are judged once it goes on.
    """
    kept: list[RoundInputs] = []
    dropped: list[Dropped] = []
    for number, (plays, choices) in enumerate(rounds, 1):
        game = replay_game(starting, [*kept, (plays, choices)], players)
        result = game.rounds[-1] if len(game.rounds) == number else None
        if result is not None and result.pending is None:
            used = {step.player for step in result.steps if step.action == TOO_LOW}
            unused = [player for player in choices if player not in used]
            dropped += [Dropped(number, player, choices[player]) for player in unused]
            choices = {player: row for player, row in choices.items() if player in used}
        kept.append((plays, choices))
    return Settled(kept, tuple(dropped), replay_game(starting, kept, players))


class Placement(NamedTuple):
    """One card of a round whose placement differs: before (None: not placed) and now."""

    player: Player
    card: int
    before: Step | None
    after: Step | None


class RoundChange(NamedTuple):
    """What a correction changed in one round: placements, rows taken and bulls."""

    number: int
    placements: tuple[Placement, ...]
    bulls: dict[Player, tuple[int, int]]  # the round's bulls that differ: before, after
    waits: bool  # the round now waits for a row choice


def compare(before: GameState, after: GameState) -> tuple[RoundChange, ...]:
    """Every round of a game whose placements, rows taken or bulls differ, in order."""
    changes = []
    for index in range(max(len(before.rounds), len(after.rounds))):
        old = before.rounds[index] if index < len(before.rounds) else None
        new = after.rounds[index] if index < len(after.rounds) else None
        change = round_change(index + 1, old, new)
        if change.placements or change.bulls or change.waits:
            changes.append(change)
    return tuple(changes)


def round_change(number: int, old: RoundResult | None, new: RoundResult | None) -> RoundChange:
    """How round ``number`` differs between two replays (None: not placed in that one)."""
    old_steps = {step.card: step for step in old.steps} if old else {}
    new_steps = {step.card: step for step in new.steps} if new else {}
    placements = tuple(
        Placement(step.player, card, old_steps.get(card), new_steps.get(card))
        for card in sorted({*old_steps, *new_steps})
        for step in [new_steps.get(card) or old_steps[card]]
        if placed(old_steps.get(card)) != placed(new_steps.get(card))
    )
    old_bulls = old.bulls_by_player() if old else {}
    new_bulls = new.bulls_by_player() if new else {}
    bulls = {
        player: (old_bulls.get(player, 0), new_bulls.get(player, 0))
        for player in {*old_bulls, *new_bulls}
        if old_bulls.get(player, 0) != new_bulls.get(player, 0)
    }
    waits = new is not None and new.pending is not None and (old is None or old.pending is None)
    return RoundChange(number, placements, bulls, waits)


def placed(step: Step | None) -> tuple | None:
    """What matters of a placement: its player, row, what happened and what was taken."""
    return None if step is None else (step.player, step.row, step.action, step.taken)
