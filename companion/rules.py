"""The rules of 6 nimmt!: pure functions and small value types, no Flask, no database.

Everything else in the companion calls into this module; nothing re-implements a rule.
The specification is ``shared/rules/RULES.md``. Players are any hashable keys (names in
the JSON API, ids in stored matches); cards are ints; rows are numbered 1-4 wherever a
human or the outside world sees them and 0-3 only inside this module.

Messages are plain English templates marked with ``N_``/``NP_`` so Babel extracts them;
callers pass their own ``gettext``/``ngettext`` to get them in the player's language.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

ROWS = 4
ROW_LIMIT = 5
HAND_SIZE = 10
STANDARD_DECK = 104
MIN_PLAYERS = 2
MAX_PLAYERS = 10
PRO_MAX_PLAYERS = 6
DEFAULT_LIMIT = 66

PLACED = "placed"
SIXTH = "sixth"
TOO_LOW = "too_low"

Player = Hashable
Rows = tuple[tuple[int, ...], ...]
Gettext = Callable[[str], str]
Ngettext = Callable[[str, str, int], str]


def N_(message: str) -> str:
    """Mark a message for extraction; it is translated where it is shown."""
    return message


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a singular/plural message pair for extraction."""
    return singular, plural


def _identity(message: str) -> str:
    return message


def _english_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


# ---------------------------------------------------------------------------
# Cards and bulls


def _bulls_of(card: int) -> int:
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


# Index by card number; looked up on the hot path instead of recomputing.
BULLS: tuple[int, ...] = (0, *(_bulls_of(card) for card in range(1, STANDARD_DECK + 1)))


def bulls(card: int) -> int:
    """Return the bulls (Hornochsen) printed on one card."""
    return BULLS[card]


def pile_bulls(cards: Iterable[int]) -> int:
    """Return the bulls on a pile of cards."""
    return sum(map(BULLS.__getitem__, cards))


def deck_size(players: int, pro: bool = False) -> int:
    """Return the highest card in use: 104, or 10 x players + 4 in the pro variant."""
    return 10 * players + 4 if pro else STANDARD_DECK


PRO_DECKS: tuple[int, ...] = tuple(
    deck_size(n, pro=True) for n in range(MIN_PLAYERS, PRO_MAX_PLAYERS + 1)
)
DECKS: tuple[int, ...] = (*PRO_DECKS, STANDARD_DECK)


def players_for_deck(deck: int) -> int:
    """Return how many players a deck serves at most (10 for the standard deck)."""
    return MAX_PLAYERS if deck == STANDARD_DECK else (deck - 4) // 10


# ---------------------------------------------------------------------------
# Rejections


class RuleError(ValueError):
    """An input that the rules reject; carries a translatable message and its subject.

    ``subject`` names what the message is about, so a form can show it next to the
    right field: a player key, ``("row", n)``, ``"rows"``, ``"plays"`` or ``None``.
    """

    def __init__(self, template: str, subject: Any = None, **params: Any) -> None:
        self.template = template
        self.subject = subject
        self.params = params
        super().__init__(template % params)

    def message(self, gettext: Gettext = _identity) -> str:
        """Return the message in the language of ``gettext``."""
        return gettext(self.template) % self.params


def whole_number(value: str, low: int, high: int) -> int | None:
    """``value`` as a whole number from ``low`` to ``high``, or None if it is not one.

    Only ASCII digits count (``str.isdigit`` also takes "²", which ``int`` refuses, and
    ``int`` takes Arabic-Indic digits no form sends), and their length is bounded
    before converting: ``int`` refuses more than 4,300 digits with a ValueError.
    """
    text = value.strip()
    digits = text.lstrip("0") or text[-1:]  # leading zeros do not count towards the bound
    if not (digits.isascii() and digits.isdigit()) or len(digits) > len(str(high)):
        return None
    number = int(digits)
    return number if low <= number <= high else None


def parse_card(value: Any, deck: int = STANDARD_DECK, subject: Any = None) -> int:
    """Return ``value`` as a card of the deck in use, or raise RuleError.

    Accepts ints and strings of digits (what a form sends); rejects everything else,
    so that "7.5", "abc", "" and True are never mistaken for cards.
    """
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise RuleError(N_("Enter a card number."), subject)
        card = whole_number(text, 0, 9999)
        if card is None:
            raise RuleError(
                N_("“%(value)s” is not a card: cards are whole numbers from 1 to %(deck)d."),
                subject,
                value=text[:12],
                deck=deck,
            )
    elif isinstance(value, int) and not isinstance(value, bool):
        card = value
    else:
        raise RuleError(
            N_("“%(value)s” is not a card: cards are whole numbers from 1 to %(deck)d."),
            subject,
            value=str(value)[:12],
            deck=deck,
        )
    if not 1 <= card <= deck:
        raise RuleError(
            N_("There is no card %(card)d in this deck: cards go from 1 to %(deck)d."),
            subject,
            card=card,
            deck=deck,
        )
    return card


def parse_bulls(value: Any, deck: int = STANDARD_DECK, subject: Any = None) -> int:
    """Return a player's bulls for one game (0 up to all the bulls in the deck)."""
    most = pile_bulls(range(1, deck + 1))
    text = str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""
    bulls = whole_number(text, 0, most)
    if bulls is None:
        raise RuleError(N_("Bulls are a whole number from 0 to %(most)d."), subject, most=most)
    return bulls


def parse_row_choice(value: Any, subject: Any = None) -> int:
    """Return a row number 1-4 from ``value``, or raise RuleError."""
    if isinstance(value, str):
        value = whole_number(value, 1, ROWS)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= ROWS:
        raise RuleError(N_("Choose row 1, 2, 3 or 4."), subject)
    return value


def check_starting_cards(cards: Sequence[int], deck: int = STANDARD_DECK) -> None:
    """Raise RuleError unless ``cards`` are four distinct cards of the deck in use."""
    if len(cards) != ROWS:
        raise RuleError(N_("A game starts with exactly 4 cards, one per row."), "rows")
    seen: dict[int, int] = {}
    for number, card in enumerate(cards, start=1):
        parse_card(card, deck, ("row", number))
        if card in seen:
            raise RuleError(
                N_("%(card)d is already the starting card of row %(other)d."),
                ("row", number),
                card=card,
                other=seen[card],
            )
        seen[card] = number


def check_rows(rows: Sequence[Sequence[Any]], deck: int = STANDARD_DECK) -> Rows:
    """Return ``rows`` as cards if they are a possible table: 4 rows of 1-5 rising cards.

    Raise RuleError otherwise.
    """
    if len(rows) != ROWS:
        raise RuleError(N_("The table has exactly 4 rows."), "rows")
    seen: dict[int, int] = {}
    table = []
    for number, row in enumerate(rows, start=1):
        subject = ("row", number)
        if not 1 <= len(row) <= ROW_LIMIT:
            raise RuleError(N_("Row %(row)d must hold 1 to 5 cards."), subject, row=number)
        previous = 0
        cards = tuple(parse_card(value, deck, subject) for value in row)
        table.append(cards)
        for card in cards:
            if card in seen:
                raise RuleError(
                    N_("%(card)d appears twice on the table (rows %(first)d and %(row)d)."),
                    subject,
                    card=card,
                    first=seen[card],
                    row=number,
                )
            if card <= previous:
                raise RuleError(
                    N_("Row %(row)d must rise from left to right: %(card)d follows %(prev)d."),
                    subject,
                    row=number,
                    card=card,
                    prev=previous,
                )
            seen[card] = number
            previous = card
    return tuple(table)


def check_plays(
    rows: Sequence[Sequence[int]],
    plays: Sequence[tuple[Player, int]],
    *,
    deck: int = STANDARD_DECK,
    players: Collection[Player] | None = None,
    played: Collection[int] = (),
    starting: Collection[int] = (),
    name: Callable[[Player], str] = str,
) -> None:
    """Raise RuleError unless ``plays`` is a legal round on ``rows``.

    ``players``: when given, exactly these players must play. ``played``: cards played
    earlier in this game; ``starting``: this game's starting cards.
    """
    if not plays:
        raise RuleError(N_("Enter at least one played card."), "plays")
    if len(plays) > players_for_deck(deck):
        raise RuleError(
            N_("At most %(count)d players play with this deck."),
            "plays",
            count=players_for_deck(deck),
        )
    on_table = {card: number for number, row in enumerate(rows, 1) for card in row}
    owner: dict[int, Player] = {}
    seen_players: set[Player] = set()
    for player, value in plays:
        if player in seen_players:
            raise RuleError(
                N_("%(player)s has two cards in this round."), player, player=name(player)
            )
        if players is not None and player not in players:
            raise RuleError(
                N_("%(player)s is not playing in this match."), player, player=name(player)
            )
        seen_players.add(player)
        card = parse_card(value, deck, player)
        _check_card_unseen(card, player, owner, on_table, starting, played, name)
        owner[card] = player
    if players is not None:
        for player in players:
            if player not in seen_players:
                raise RuleError(N_("No card entered for %(player)s."), player, player=name(player))


def _check_card_unseen(card, player, owner, on_table, starting, played, name) -> None:
    """Raise RuleError if ``card`` was already seen in this game or this round."""
    if card in owner:
        raise RuleError(
            N_("%(other)s and %(player)s both entered %(card)d: each card exists once."),
            player,
            other=name(owner[card]),
            player=name(player),
            card=card,
        )
    if card in on_table:
        raise RuleError(
            N_("%(card)d already lies in row %(row)d."), player, card=card, row=on_table[card]
        )
    if card in starting:
        raise RuleError(N_("%(card)d is one of this game's starting cards."), player, card=card)
    if card in played:
        raise RuleError(N_("%(card)d was already played in this game."), player, card=card)


def check_choices(
    plays: Sequence[tuple[Player, int]],
    choices: Mapping[Player, Any],
    name: Callable[[Player], str] = str,
) -> dict[Player, int]:
    """Return ``choices`` with rows as ints, or raise RuleError for a bad one."""
    playing = {player for player, _ in plays}
    checked: dict[Player, int] = {}
    for player, value in choices.items():
        if player not in playing:
            raise RuleError(
                N_("%(player)s has no card in this round, so no row to choose."),
                player,
                player=name(player),
            )
        checked[player] = parse_row_choice(value, player)
    return checked


# ---------------------------------------------------------------------------
# A round


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


# ---------------------------------------------------------------------------
# Explanations: short sentences that settle a dispute at the table


def explain(
    step: Step,
    name: Callable[[Player], str] = str,
    gettext: Gettext = _identity,
    ngettext: Ngettext = _english_plural,
) -> str:
    """Return one sentence saying why ``step`` happened, in the language of ``gettext``."""
    if step.action == TOO_LOW:
        return _explain_too_low(step, name, gettext, ngettext)
    lower = sorted(
        ((end, number) for number, end in enumerate(step.ends, 1) if end < step.card),
        reverse=True,
    )
    closest = lower[0][0]
    if len(lower) > 1:
        reason = gettext(
            N_("%(end)d is the closest lower end (row %(other)d ends in %(other_end)d)")
        ) % {"end": closest, "other": lower[1][1], "other_end": lower[1][0]}
    else:
        reason = gettext(N_("%(end)d is the only lower end")) % {"end": closest}
    if step.action == PLACED:
        return gettext(N_("%(card)d goes to row %(row)d: %(reason)s.")) % {
            "card": step.card,
            "row": step.row,
            "reason": reason,
        }
    return gettext(
        N_(
            "%(card)d would be the 6th card in row %(row)d: %(player)s takes %(cards)s, "
            "%(bulls)s. %(reason)s."
        )
    ) % {
        "card": step.card,
        "row": step.row,
        "reason": reason,
        "player": name(step.player),
        "cards": _count_cards(len(step.taken), ngettext),
        "bulls": _count_bulls(step.bulls, ngettext),
    }


def _explain_too_low(step: Step, name, gettext: Gettext, ngettext: Ngettext) -> str:
    ends = ", ".join(str(end) for end in step.ends)
    return gettext(
        N_(
            "%(card)d is lower than every row's end (%(ends)s): %(player)s chose row "
            "%(row)d and takes %(cards)s, %(bulls)s."
        )
    ) % {
        "card": step.card,
        "ends": ends,
        "player": name(step.player),
        "row": step.row,
        "cards": _count_cards(len(step.taken), ngettext),
        "bulls": _count_bulls(step.bulls, ngettext),
    }


def explain_choice(
    pending: ChoiceNeeded,
    name: Callable[[Player], str] = str,
    gettext: Gettext = _identity,
) -> str:
    """Return the sentence that asks a too-low card's player to choose a row."""
    return gettext(
        N_(
            "%(card)d is lower than every row's end: %(player)s takes a row of their choice "
            "(fewest bulls: row %(suggested)d)."
        )
    ) % {"card": pending.card, "player": name(pending.player), "suggested": pending.suggested}


_CARDS = NP_("%(num)d card", "%(num)d cards")
_BULLS = NP_("%(num)d bull", "%(num)d bulls")


def _count_cards(count: int, ngettext: Ngettext) -> str:
    return ngettext(*_CARDS, count) % {"num": count}


def _count_bulls(count: int, ngettext: Ngettext) -> str:
    return ngettext(*_BULLS, count) % {"num": count}


# ---------------------------------------------------------------------------
# A game: the starting cards and the rounds played so far, replayed


class GameState(NamedTuple):
    """A game replayed from its inputs: the table, the piles and every round's steps."""

    rows: Rows
    piles: dict[Player, tuple[int, ...]]
    rounds: tuple[RoundResult, ...]

    @property
    def pending(self) -> ChoiceNeeded | None:
        """The choice the last round waits for, if any."""
        return self.rounds[-1].pending if self.rounds else None

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

    The inputs were checked when they were entered; a round that waits for a choice
    can only be the last one.
    """
    table = Table([(card,) for card in starting])
    piles: dict[Player, list[int]] = {player: [] for player in players}
    results: list[RoundResult] = []
    for plays, choices in rounds:
        table.start_round(plays)
        table.run(choices)
        result = table.round_result()
        for step in result.steps:
            piles.setdefault(step.player, []).extend(step.taken)
        results.append(result)
    frozen = {player: tuple(sorted(pile)) for player, pile in piles.items()}
    return GameState(table.rows, frozen, tuple(results))


# ---------------------------------------------------------------------------
# A match: totals, the end condition and the winners

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

    def describe(self, gettext: Gettext = _identity) -> str:
        """Return the house rule in words, for the scoreboard."""
        templates = {
            MORE_THAN: N_(
                "The match ends after the game in which someone has more than %(value)d bulls."
            ),
            AT_LEAST: N_(
                "The match ends after the game in which someone has %(value)d bulls or more."
            ),
            GAMES: N_("The match ends after %(value)d games."),
        }
        return gettext(templates[self.kind]) % {"value": self.value}

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
    winners: tuple[Player, ...]
    leaders: tuple[Player, ...]


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


def standing(
    players: Sequence[Player],
    games: Sequence[Mapping[Player, int]],
    end: EndCondition = EndCondition(),
) -> Standing:
    """Score a match from its complete games' bulls per player."""
    totals = match_totals(players, games)
    over = end.is_met(totals, len(games))
    leaders = lowest(totals)
    return Standing(totals, len(games), over, leaders if over else (), leaders)
