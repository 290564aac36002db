"""A game: the starting cards and the rounds played so far, replayed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any, NamedTuple

from companion.rules.cards import (
    HAND_SIZE,
    N_,
    ROWS,
    STANDARD_DECK,
    TOO_LOW,
    Player,
    Rows,
    pile_bulls,
)
from companion.rules.checks import RuleError, check_choices, check_plays
from companion.rules.table import (
    ChoiceNeeded,
    RoundResult,
    Table,
    play_round,
    unused_choice,
)

ACTION = attrgetter("action")


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
    results: list[RoundResult] = []
    rounds = list(rounds)
    for plays, choices in rounds:
        if table.pending is not None:
            break
        table.start_round(plays)
        table.run(choices)
        results.append(table.round_result())
    return game_state(table.rows, results, players, len(rounds))


def game_state(
    rows: Rows, results: Sequence[RoundResult], players: Iterable[Player], stored: int
) -> GameState:
    """The state after ``results``, the rounds placed of ``stored``: each pile is what
    its player took."""
    piles: dict[Player, list[int]] = {player: [] for player in players}
    for result in results:
        for step in result.steps:
            if step.taken:  # most cards are placed, taking nothing
                piles.setdefault(step.player, []).extend(step.taken)
    frozen = {player: tuple(sorted(pile)) for player, pile in piles.items()}
    return GameState(rows, frozen, tuple(results), stored - len(results))


class RoundRefused(RuleError):
    """A game's round that the rules refuse: which one (1 = the first), and why."""

    def __init__(self, number: int, error: RuleError) -> None:
        super().__init__(error.template, error.subject, **error.params)
        self.number = number


def check_game(
    starting: Sequence[int],
    rounds: Sequence[tuple[Sequence[int], Mapping[Player, Any]]],
    players: Sequence[Player],
    deck: int = STANDARD_DECK,
    corrected: bool = False,
) -> GameState:
    """Replay a game from inputs nobody has checked yet (a backup file's) with every rule
    of the table, as ``replay_game`` replays it; raise RoundRefused at the first round
    the rules refuse (RuleError for more than ten rounds).

    ``rounds``: each round's cards, whole numbers, one per player in ``players``' order,
    and its row choices. Only the newest round may wait for a row choice, unless the
    game was ``corrected``: a correction can make an earlier round wait, and the rounds
    after it wait with it, their cards checked but not placed. The starting cards are
    checked apart (``check_starting_cards``).

    Most games are right: all of a game's cards are checked at once, at C speed, and its
    rounds placed. Only a game that fails that is checked round by round, which finds
    the first problem and words it.
    """
    if len(rounds) > HAND_SIZE:
        raise RuleError(N_("A game has at most 10 rounds, not %(count)d."), count=len(rounds))
    placed = placed_at_once(starting, rounds, players, deck, corrected)
    if placed is None:
        placed = checked_round_by_round(starting, rounds, players, deck, corrected)
    rows, results = placed
    return game_state(rows, results, players, len(rounds))


def placed_at_once(starting, rounds, players, deck, corrected):
    """A right game's rows and placed rounds; None where anything looks wrong."""
    cards = list(chain(starting, *(played for played, _ in rounds)))
    # type(), not isinstance(): True is no card. Whole-list calls run at C speed.
    if set(map(type, cards)) != {int} or min(cards) < 1 or max(cards) > deck:
        return None
    if len(set(cards)) != len(cards):  # a card twice: on the table, in the game, a round
        return None
    seated = set(players)
    table, results = Table([(card,) for card in starting]), []
    for played, choices in rounds:
        if len(played) != len(players) or (choices and not plain(choices, seated)):
            return None
        if table.pending is not None:
            if not corrected:
                return None
            continue  # waits with the round before: checked, not placed
        table.start_round(zip(players, played, strict=True))
        table.run(choices)
        if choices and not all_used(table, choices):
            return None
        results.append(table.round_result())
    return table.rows, results


def plain(choices: Mapping[Player, Any], seated: set) -> bool:
    """True when every row choice is a seated player's, of a row 1-4."""
    return all(
        player in seated and type(row) is int and 1 <= row <= ROWS
        for player, row in choices.items()
    )


def all_used(table: Table, choices: Mapping[Player, int]) -> bool:
    """True when every row choice of the round just placed was needed.

    The engine asks for a choice only for a too-low card, one card per player: in a
    round placed to the end, the choices were all needed when there are as many as
    too-low cards. A round that waits for a choice asks ``unused_choice``.
    """
    if table.pending is not None:
        return unused_choice(table.round_result(), choices) is None
    return len(choices) == list(map(ACTION, table.steps)).count(TOO_LOW)


def checked_round_by_round(starting, rounds, players, deck, corrected):
    """The game's rows and placed rounds, each round checked by ``play_round``, which
    words any problem; RoundRefused at the first."""
    rows: Rows = tuple((card,) for card in starting)
    played: set[int] = set()
    results: list[RoundResult] = []
    pending: ChoiceNeeded | None = None
    for number, (cards, choices) in enumerate(rounds, 1):
        context = {"deck": deck, "players": players, "played": played, "starting": starting}
        try:
            if len(cards) != len(players):
                raise RuleError(
                    N_("A round has one card per seat: %(expected)d cards, not %(count)d."),
                    expected=len(players),
                    count=len(cards),
                )
            plays = list(zip(players, cards, strict=True))
            if pending is None:
                result = play_round(rows, plays, choices, **context)
                rows, pending = result.rows, result.pending
                results.append(result)
            elif corrected:  # waits with the round before: checked, not placed
                check_plays(rows, plays, **context)
                check_choices(plays, choices)
            else:
                raise RuleError(
                    N_("%(player)s's %(card)d is too low, but no row choice is recorded for it."),
                    player=pending.player,
                    card=pending.card,
                )
        except RuleError as error:
            raise RoundRefused(number, error) from None
        played.update(cards)
    return rows, results
