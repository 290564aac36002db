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

from itertools import chain

from companion import rules


class NotQuick(Exception):
    """This game needs the careful check (it is probably wrong somewhere)."""


def quick_rounds(
    starting: list[int], entries: list, seats: list[str], deck: int
) -> tuple[list[tuple[list[int], dict[str, int]]], list[rules.RoundResult]]:
    """A game's rounds (cards, choices) and the engine's results, or NotQuick."""
    if len(entries) > rules.HAND_SIZE:
        raise NotQuick
    rounds = [round_entry(entry, seats) for entry in entries]
    cards = list(chain.from_iterable(played for played, _ in rounds))
    # type(), not isinstance(): True is no card. Whole-list calls run at C speed.
    if cards and (set(map(type, cards)) != {int} or min(cards) < 1 or max(cards) > deck):
        raise NotQuick
    if len(set(cards).union(starting)) != len(cards) + len(starting):
        raise NotQuick  # a card twice: on the table, earlier in the game or this round
    table = rules.Table([(card,) for card in starting])
    results = []
    for played, choices in rounds:
        if results and results[-1].pending is not None:
            raise NotQuick  # only the newest round may wait for a row choice
        table.start_round(zip(seats, played, strict=True))
        table.run(choices)
        result = table.round_result()
        if choices and rules.unused_choice(result, choices) is not None:
            raise NotQuick
        results.append(result)
    return rounds, results


def round_entry(entry, seats: list[str]) -> tuple[list, dict[str, int]]:
    """A round's cards (checked with the game's) and choices, if plainly right."""
    if type(entry) is not dict:
        raise NotQuick
    cards = entry.get("cards")
    choices = entry.get("choices", {})
    if len(entry) != 1 + ("choices" in entry) or type(cards) is not list:
        raise NotQuick
    if len(cards) != len(seats) or type(choices) is not dict:
        raise NotQuick
    for player, row in choices.items():
        if player not in seats or type(row) is not int or not 1 <= row <= rules.ROWS:
            raise NotQuick
    return cards, choices
