"""A cards game of a backup checked in one go: the quick way through a file that is right.

``check.careful_rounds`` checks a game round by round with the rules' own checks, which
word every problem. Over a history of thousands of games that is most of an import's
time, so each game is first checked here in bulk: the shape of every round, then the
cards of the whole game at once (whole numbers of the deck, none twice: not on the
table, not earlier in the game, not twice in a round), then the rounds placed by the
engine's ``Table``. A game that passes is one the careful way accepts; anything else
raises ``NotQuick`` and goes the careful way, which finds the problem and words it.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import attrgetter
from typing import NamedTuple

from companion import rules

ACTION = attrgetter("action")


class NotQuick(Exception):
    """This game needs the careful check (it is probably wrong somewhere)."""


class Replay(NamedTuple):
    """A cards game as the engine placed it, kept as the import needs it."""

    steps: tuple[tuple[rules.Step, ...], ...]  # each round's
    rows: rules.Rows  # after the last round
    pending: rules.ChoiceNeeded | None  # the choice the last round waits for

    @property
    def finished(self) -> bool:
        """True when the game is over (``rules.game_finished``)."""
        return rules.game_finished(len(self.steps), self.pending)

    def state(self) -> rules.GameState:
        """The engine's replay for ``figures.game_rows``, which reads each round's steps.

        The rows between rounds are not kept (nothing of the import needs them).
        """
        new = tuple.__new__  # as the engine builds its results: C, not NamedTuple's __new__
        rounds = tuple(new(rules.RoundResult, (steps, (), None)) for steps in self.steps)
        return rules.GameState(self.rows, {}, rounds)


def quick_rounds(
    starting: list[int], entries: list, seats: list[str], deck: int
) -> tuple[list[tuple[list[int], dict[str, int]]], Replay]:
    """A game's rounds (cards, choices) and the engine's replay, or NotQuick."""
    if len(entries) > rules.HAND_SIZE:
        raise NotQuick
    rounds = list(map(round_entry, entries, repeat(seats)))
    cards = list(chain(starting, *(played for played, _ in rounds)))
    # type(), not isinstance(): True is no card. Whole-list calls run at C speed.
    if set(map(type, cards)) != {int} or min(cards) < 1 or max(cards) > deck:
        raise NotQuick
    if len(set(cards)) != len(cards):
        raise NotQuick  # a card twice: on the table, earlier in the game or this round
    table = rules.Table([(card,) for card in starting])
    steps = []
    for played, choices in rounds:
        if table.pending is not None:
            raise NotQuick  # only the newest round may wait for a row choice
        table.start_round(zip(seats, played, strict=True))
        table.run(choices)
        if choices and not all_used(table, choices):
            raise NotQuick
        steps.append(tuple(table.steps))
    return rounds, Replay(tuple(steps), table.rows, table.pending)


def all_used(table: rules.Table, choices: dict[str, int]) -> bool:
    """True when every row choice of the round just placed was needed.

    The engine asks for a choice only for a too-low card, one card per player: in a
    round placed to the end, the choices were all needed when there are as many as
    too-low cards. A round that waits for a choice asks the rules.
    """
    if table.pending is not None:
        return rules.unused_choice(table.round_result(), choices) is None
    return len(choices) == list(map(ACTION, table.steps)).count(rules.TOO_LOW)


def round_entry(entry, seats: list[str]) -> tuple[list, dict[str, int]]:
    """A round's cards (checked with the game's) and choices, if plainly right (its
    time, "at", is read by ``check.round_times``)."""
    if type(entry) is not dict:
        raise NotQuick
    cards = entry.get("cards")
    if type(cards) is not list or len(cards) != len(seats):
        raise NotQuick
    fields = len(entry) - ("at" in entry)
    if fields == 1:
        return cards, {}
    choices = entry.get("choices")
    if fields != 2 or type(choices) is not dict:
        raise NotQuick
    for player, row in choices.items():
        if player not in seats or type(row) is not int or not 1 <= row <= rules.ROWS:
            raise NotQuick
    return cards, choices
