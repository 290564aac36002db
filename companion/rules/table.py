"""A round on the table: the cards placed lowest first, a sixth card, a too-low card."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from companion.rules.cards import (
    BULLS,
    N_,
    PLACED,
    ROW_LIMIT,
    SIXTH,
    STANDARD_DECK,
    TOO_LOW,
    Player,
    Rows,
    pile_bulls,
)
from companion.rules.checks import (
    RuleError,
    check_choices,
    check_plays,
    check_rows,
    parse_card,
)


class Step(NamedTuple):
    """One placed card: where it went and what its player took."""

    player: Player
    card: int
    row: int  # 1-4
    action: str  # PLACED, SIXTH or TOO_LOW
    taken: tuple[int, ...]
    bulls: int
    ends: tuple[int, ...]  # the four row ends just before this card was placed


class RowOption(NamedTuple):
    """A row that a too-low card's player may take."""

    row: int
    cards: tuple[int, ...]
    bulls: int


class ChoiceNeeded(NamedTuple):
    """A too-low card whose player must choose a row before the round goes on."""

    player: Player
    card: int
    options: tuple[RowOption, ...]
    suggested: int


class RoundResult(NamedTuple):
    """The outcome of placing a round's cards, complete or stopped at a choice."""

    steps: tuple[Step, ...]
    rows: Rows
    pending: ChoiceNeeded | None

    @property
    def resolved(self) -> bool:
        """True when every card of the round is placed."""
        return self.pending is None

    def bulls_by_player(self) -> dict[Player, int]:
        """Return the bulls each player took in the steps placed so far."""
        totals: dict[Player, int] = {}
        for step in self.steps:
            totals[step.player] = totals.get(step.player, 0) + step.bulls
        return totals


def row_options(rows: Sequence[Sequence[int]]) -> tuple[RowOption, ...]:
    """Return every row as an option to take, with its cards and bulls."""
    return tuple(
        _new(RowOption, (number, tuple(row), pile_bulls(row))) for number, row in enumerate(rows, 1)
    )


def suggest_row(options: Sequence[RowOption]) -> int:
    """Return the usual advice: fewest bulls, then fewest cards, then the lower row."""
    return min((option.bulls, len(option.cards), option.row) for option in options)[2]


_card_of = itemgetter(1)
# NamedTuple's generated __new__ is a Python call; building from a tuple is C.
_new = tuple.__new__


_NO_CHOICES: Mapping[Player, int] = {}


class Table:
    """The four rows during a game, placing each round's cards lowest first.

    It stops at a too-low card whose player has not chosen a row yet: ``run`` returns
    what that player must choose from, and ``run`` again with the choice goes on.
    ``resolve_round`` and ``replay_game`` are the usual ways in; a caller that answers
    choices as they come up (a simulation, say) keeps one Table for a whole game.
    """

    __slots__ = (
        "_bulls",
        "_ends",
        "_next",
        "_order",
        "_queue",
        "_sorted_ends",
        "_table",
        "pending",
        "steps",
    )

    def __init__(self, rows: Sequence[Sequence[int]]) -> None:
        self._table = table = list(map(list, rows))
        self._ends = ends = [row[-1] for row in table]
        self._bulls = [pile_bulls(row) for row in table]
        # The row ends in rising order, and the row each one belongs to. A card goes to
        # the row of the largest end below it (cards are unique, so that is the closest).
        # Placing it there keeps the order: no other end lies between that end and the
        # card. Only a too-low card, the new lowest end, moves its row to the front.
        self._sorted_ends = sorted(ends)
        self._order = list(map(ends.index, self._sorted_ends))
        self._queue: list[tuple[Player, int]] = []
        self._next = 0
        self.steps: list[Step] = []
        self.pending: ChoiceNeeded | None = None

    def start_round(self, plays: Iterable[tuple[Player, int]]) -> None:
        """Take a new round's revealed cards; the previous round must be finished."""
        self._queue = sorted(plays, key=_card_of)
        self._next = 0
        self.steps = []
        self.pending = None

    def run(self, choices: Mapping[Player, int] = _NO_CHOICES) -> ChoiceNeeded | None:
        """Place cards until the round is done (None) or a player must choose a row."""
        table, ends, row_bulls = self._table, self._ends, self._bulls
        sorted_ends, order, steps = self._sorted_ends, self._order, self.steps
        queue = self._queue
        for turn in range(self._next, len(queue)):
            player, card = queue[turn]
            position = bisect_left(sorted_ends, card) - 1
            before = tuple(ends)
            if position < 0:
                row = choices.get(player)
                if row is None:
                    self._next = turn
                    self.pending = self._choice_needed(player, card)
                    return self.pending
                index = row - 1
                taken = tuple(table[index])
                taken_bulls = row_bulls[index]
                action = TOO_LOW
                table[index] = [card]
                row_bulls[index] = BULLS[card]
                position = order.index(index)
                del order[position], sorted_ends[position]
                order.insert(0, index)
                sorted_ends.insert(0, card)
            else:
                index = order[position]
                sorted_ends[position] = card
                target = table[index]
                if len(target) < ROW_LIMIT:
                    target.append(card)
                    row_bulls[index] += BULLS[card]
                    ends[index] = card
                    steps.append(_new(Step, (player, card, index + 1, PLACED, (), 0, before)))
                    continue
                taken = tuple(target)
                taken_bulls = row_bulls[index]
                action = SIXTH
                table[index] = [card]
                row_bulls[index] = BULLS[card]
            ends[index] = card
            steps.append(_new(Step, (player, card, index + 1, action, taken, taken_bulls, before)))
        self._next = len(queue)
        self.pending = None
        return None

    def _choice_needed(self, player: Player, card: int) -> ChoiceNeeded:
        # Spelled out for the four rows: this runs on most rounds of a simulated game,
        # and the loop version costs twice as much. The advice is suggest_row's.
        row1, row2, row3, row4 = self._table
        bulls1, bulls2, bulls3, bulls4 = self._bulls
        options = (
            _new(RowOption, (1, tuple(row1), bulls1)),
            _new(RowOption, (2, tuple(row2), bulls2)),
            _new(RowOption, (3, tuple(row3), bulls3)),
            _new(RowOption, (4, tuple(row4), bulls4)),
        )
        suggested = min(
            (bulls1, len(row1), 1),
            (bulls2, len(row2), 2),
            (bulls3, len(row3), 3),
            (bulls4, len(row4), 4),
        )[2]
        return _new(ChoiceNeeded, (player, card, options, suggested))

    @property
    def rows(self) -> Rows:
        """The rows as they lie now."""
        return tuple(map(tuple, self._table))

    def round_result(self) -> RoundResult:
        """Return this round's steps so far, the rows now, and any pending choice."""
        return _new(RoundResult, (tuple(self.steps), self.rows, self.pending))


def resolve_round(
    rows: Sequence[Sequence[int]],
    plays: Iterable[tuple[Player, int]],
    choices: Mapping[Player, int] = _NO_CHOICES,
) -> RoundResult:
    """Place a round's cards, lowest first, and return the steps and the new rows.

    Assumes checked input (see ``play_round``). A too-low card whose player has no
    entry in ``choices`` stops the round: the result's ``pending`` says who must
    choose, from which rows, and which row the usual advice suggests.
    """
    table = Table(rows)
    table.start_round(plays)
    table.run(choices)
    return table.round_result()


def continue_round(
    stopped: RoundResult,
    plays: Iterable[tuple[Player, int]],
    choices: Mapping[Player, int],
) -> RoundResult:
    """Go on with a round that stopped for a choice, now that ``choices`` has it.

    Cards are placed lowest first, so the cards still to place, resolved on the rows
    at the stop, give exactly what resolving the whole round again would give.
    """
    placed = {step.card for step in stopped.steps}
    rest = [play for play in plays if play[1] not in placed]
    more = resolve_round(stopped.rows, rest, choices)
    return _new(RoundResult, (stopped.steps + more.steps, more.rows, more.pending))


def unused_choice(result: RoundResult, choices: Mapping[Player, int]) -> Player | None:
    """Return a player who was given a row choice their card did not need, if any.

    A choice for a player whose card is still to come (the round stopped before it)
    is not judged yet: earlier cards can change whether it is too low.
    """
    placed = {step.player: step.action for step in result.steps}
    for player in choices:
        if player in placed and placed[player] != TOO_LOW:
            return player
        if player not in placed and result.resolved:
            return player
    return None


def unneeded_choices(
    rows: Sequence[Sequence[int]],
    plays: Sequence[tuple[Player, Any]],
    choices: Mapping[Player, int],
    deck: int = STANDARD_DECK,
) -> dict[Player, int]:
    """The row choices a round has no use for (their cards are not too low), as a
    correction that changed the round's cards leaves them; {} when the cards or rows are
    wrong, which ``play_round`` then says. One at a time, as ``unused_choice`` finds them:
    dropping one may make a later card too low and another choice needed."""
    try:
        rows = check_rows(rows, deck)
        cards = [(player, parse_card(card, deck, player)) for player, card in plays]
        kept = dict(choices)
        unneeded: dict[Player, int] = {}
        while (player := unused_choice(resolve_round(rows, cards, kept), kept)) is not None:
            unneeded[player] = kept.pop(player)
    except RuleError:
        return {}
    return unneeded


def play_round(
    rows: Sequence[Sequence[int]],
    plays: Sequence[tuple[Player, Any]],
    choices: Mapping[Player, Any] | None = None,
    *,
    deck: int = STANDARD_DECK,
    players: Collection[Player] | None = None,
    played: Collection[int] = (),
    starting: Collection[int] = (),
    name: Callable[[Player], str] = str,
) -> RoundResult:
    """Check a round against every rule, then resolve it; raise RuleError if it is wrong."""
    rows = check_rows(rows, deck)
    check_plays(
        rows, plays, deck=deck, players=players, played=played, starting=starting, name=name
    )
    cards = [(player, parse_card(card, deck, player)) for player, card in plays]
    checked = check_choices(plays, choices or {}, name)
    result = resolve_round(rows, cards, checked)
    player = unused_choice(result, checked)
    if player is not None:
        card = next(card for who, card in cards if who == player)
        raise RuleError(
            N_("%(player)s's %(card)d is not too low, so %(player)s has no row to choose."),
            player,
            player=name(player),
            card=card,
        )
    return result


@dataclass
class Position:
    """A round to settle with no stored match: the rows, who plays which card, the row
    choices made so far, the deck. The JSON API reads one, the resolver form a
    ``TypedPosition`` of it."""

    rows: list = field(default_factory=list)
    plays: list = field(default_factory=list)
    choices: dict = field(default_factory=dict)
    deck: int = STANDARD_DECK

    def play(self, name: Callable[[Player], str] = str) -> RoundResult:
        """Check the round against every rule and resolve it (``play_round``)."""
        return play_round(self.rows, self.plays, self.choices, deck=self.deck, name=name)
