"""Rejections: what a player, a form or the API may not enter, with the reason."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from companion.rules.cards import (
    HAND_SIZE,
    N_,
    ROW_LIMIT,
    ROWS,
    STANDARD_DECK,
    Gettext,
    Player,
    Rows,
    _identity,
    bulls,
    pile_bulls,
    players_for_deck,
)


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


def most_taken(players: int, deck: int = STANDARD_DECK) -> int:
    """The most bulls one game of ``players`` hands out: each row still holds a card at
    its end, so of the 10 cards a player and the 4 starting cards at most 10 a player are
    taken, and at best the bulliest of the deck."""
    bulliest = sorted(map(bulls, range(1, deck + 1)), reverse=True)
    return sum(bulliest[: HAND_SIZE * players])


def check_game_bulls(scores: Sequence[int], deck: int = STANDARD_DECK) -> None:
    """Refuse a score-only game whose bulls add up to more than a game hands out."""
    total, most = sum(scores), most_taken(len(scores), deck)
    if total > most:
        raise RuleError(
            N_(
                "The scores add up to %(total)d bulls, but a game of %(players)d players "
                "hands out at most %(most)d."
            ),
            "scores",
            total=total,
            players=len(scores),
            most=most,
        )


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


def repeated_cards(cards: Mapping[Player, int]) -> list[tuple[int, list[Player]]]:
    """The cards that more than one player holds in ``cards`` (each card exists once, so
    one of them typed it wrong), lowest first, each with its players in ``cards``'s order."""
    holders: dict[int, list[Player]] = {}
    for player, card in cards.items():
        holders.setdefault(card, []).append(player)
    return sorted((card, players) for card, players in holders.items() if len(players) > 1)


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
