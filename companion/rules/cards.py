"""Cards, bulls and decks; the message markers and the types every rule module uses."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

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
