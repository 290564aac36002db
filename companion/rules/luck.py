"""Luck: each play's chance of taking a row, and the bulls it was expected to take.

From the point of view of the play's player, who sees the rows and their own card but
not the others' cards of the round. What they could not see (``unseen``): the deck, less
the game's four starting cards, less every card of the earlier rounds, less their own
cards from this round on. The others' cards are any distinct cards of that set, all
equally likely; which player holds which does not matter. Every too-low card, the
player's own and the others', takes the row ``suggest_row`` advises (fewest bulls, then
fewest cards, then the lower row).

``chance`` is the probability that the card takes a row (as a sixth card or a too-low
card), ``expected`` the bulls it is expected to take; ``bulls`` is what it took with the
real row choices. The sets of the others' cards are enumerated when there are at most
``EXACT_AT_MOST`` (two and three players, and late rounds); beyond that ``SAMPLES`` sets
are drawn by a generator seeded from the caller's key, the round and the player, so the
figures never change between requests.

Every set of a round is placed at once, as arrays (numpy): only the others' cards below a
play's card come before it, so each set is placed up to that card.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import chain, combinations
from math import comb
from typing import NamedTuple

import numpy as np

from companion.rules.cards import BULLS, ROW_LIMIT, ROWS, Player, Rows
from companion.rules.table import RoundResult

EXACT_AT_MOST = 20_000
SAMPLES = 4_000

_BULLS = np.array(BULLS, dtype=np.int16)
_ROW_NUMBER = np.arange(ROWS, dtype=np.int32)


class Odds(NamedTuple):
    """One play's figures: its chance of taking a row, the bulls it was expected to take
    and the bulls it took; ``samples`` is 0 when every set of the others' cards was
    counted, else how many were drawn."""

    player: Player
    card: int
    chance: float
    expected: float
    bulls: int
    samples: int


class PlayerLuck(NamedTuple):
    """A player's game: the bulls their cards were expected to cost, the bulls they took,
    and ``luck``, the difference (positive: fewer bulls than expected)."""

    player: Player
    expected: float
    bulls: int

    @property
    def luck(self) -> float:
        """Expected bulls less the bulls taken: positive when luck was on their side."""
        return self.expected - self.bulls


def unseen(deck: int, seen: Sequence[int]) -> np.ndarray:
    """The cards 1..deck that are not in ``seen``, in rising order."""
    hidden = np.ones(deck + 1, dtype=bool)
    hidden[0] = False
    hidden[np.asarray(seen, dtype=np.int64)] = False
    return np.flatnonzero(hidden).astype(np.int32)


def others_sets(cards: np.ndarray, others: int, seed: Sequence[int]) -> tuple[np.ndarray, int]:
    """The sets of ``others`` distinct cards of ``cards``, one per line: every set when
    there are at most ``EXACT_AT_MOST``, else ``SAMPLES`` drawn (uniformly, without
    replacement within a set) by a generator seeded with ``seed``. With the sample size,
    0 for every set."""
    total = len(cards)
    if comb(total, others) <= EXACT_AT_MOST:
        picked = np.fromiter(
            chain.from_iterable(combinations(range(total), others)), dtype=np.int32
        ).reshape(-1, others)
        return cards[picked], 0
    return cards[drawn_indices(total, others, np.random.default_rng(list(seed)))], SAMPLES


def drawn_indices(total: int, others: int, generator: np.random.Generator) -> np.ndarray:
    """``SAMPLES`` lines of ``others`` distinct indices below ``total``, each line uniform:
    the i-th index is uniform over the ``total - i`` not drawn yet, found by stepping past
    the drawn ones in rising order."""
    drawn = np.empty((SAMPLES, others), dtype=np.int32)
    for index in range(others):
        pick = generator.integers(0, total - index, size=SAMPLES, dtype=np.int32)
        for before in np.sort(drawn[:, :index], axis=1).T:
            pick += pick >= before
        drawn[:, index] = pick
    return drawn


def place_up_to(rows: Rows, others: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Place each line's cards below its own card, lowest first, then the own card: for
    each line, whether the own card took a row and the bulls it took.

    The lines are ordered by how many of their cards lie below their own card, most
    first: the n-th card of every line is then placed on a leading slice of the lines,
    and no work is spent on cards that come after the own card."""
    others = np.sort(others, axis=1)
    before = (others < own[:, None]).sum(axis=1)
    order = np.argsort(-before, kind="stable")
    others, own = others[order], own[order]
    placing = np.bincount(before, minlength=others.shape[1] + 1)[::-1].cumsum()[::-1]
    table = Lines(rows, len(own))
    for index in range(others.shape[1]):
        lines = int(placing[index + 1])  # the lines with more than ``index`` cards below
        if not lines:
            break
        table.place(others[:lines, index])
    took, taken = table.place(own)
    unsorted = np.empty_like(order)
    unsorted[order] = np.arange(len(order))
    return took[unsorted], taken[unsorted]


class Lines:
    """The same four rows, once per line, as flat arrays (four entries per line)."""

    def __init__(self, rows: Rows, lines: int) -> None:
        self.ends = np.tile(np.array([row[-1] for row in rows], dtype=np.int16), lines)
        self.counts = np.tile(np.array([len(row) for row in rows], dtype=np.int16), lines)
        piles = [sum(BULLS[card] for card in row) for row in rows]
        self.bulls = np.tile(np.array(piles, dtype=np.int16), lines)
        self.first = np.arange(lines) * ROWS  # each line's first entry

    def place(self, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place one card on each of the leading lines (as many as ``cards``): whether it
        took a row, and the bulls it took."""
        lines = len(cards)
        size = lines * ROWS
        ends = self.ends[:size].reshape(lines, ROWS)
        below = ends < cards[:, None]
        row = np.where(below, ends, -1).argmax(axis=1)
        too_low = np.flatnonzero(~below.any(axis=1))
        if too_low.size:
            counts = self.counts[:size].reshape(lines, ROWS)[too_low]
            piles = self.bulls[:size].reshape(lines, ROWS)[too_low]
            row[too_low] = ((piles * 8 + counts) * ROWS + _ROW_NUMBER).argmin(axis=1)
        at = self.first[:lines] + row
        count, pile = self.counts[at], self.bulls[at]
        took = count == ROW_LIMIT
        took[too_low] = True
        card_bulls = _BULLS[cards]
        self.counts[at] = np.where(took, 1, count + 1)
        self.bulls[at] = np.where(took, card_bulls, pile + card_bulls)
        self.ends[at] = cards
        return took, np.where(took, pile, 0)


def round_odds(
    rows: Rows,
    result: RoundResult,
    hidden_from: Mapping[Player, np.ndarray],
    seed: Sequence[int],
) -> list[Odds]:
    """The odds of every play of a placed round, in the order the cards were placed.

    ``rows``: the rows before the round; ``result``: the round placed (with the real row
    choices); ``hidden_from``: by player, what that player could not see (``unseen``);
    ``seed``: the key of the round (say, the game's id and the round's number), to which
    each player (an int) is added for their draws.
    """
    steps = result.steps
    others = len(steps) - 1
    own_cards, sets, sizes = [], [], []
    for step in steps:
        lines, samples = others_sets(hidden_from[step.player], others, (*seed, step.player))
        sets.append(lines)
        sizes.append((len(lines), samples))
        own_cards.append(np.full(len(lines), step.card, dtype=np.int32))
    took, taken = place_up_to(rows, np.concatenate(sets), np.concatenate(own_cards))
    odds, start = [], 0
    for step, (lines, samples) in zip(steps, sizes, strict=True):
        stop = start + lines
        chance = float(took[start:stop].mean())
        expected = float(taken[start:stop].mean())
        odds.append(Odds(step.player, step.card, chance, expected, step.bulls, samples))
        start = stop
    return odds


def game_odds(
    starting: Sequence[int],
    rounds: Sequence[RoundResult],
    deck: int,
    whole_hands: bool,
    seed: Sequence[int] = (),
    numbers: Collection[int] | None = None,
) -> list[list[Odds]]:
    """The odds of every play of a game's placed rounds (``round_odds``), round by round.

    A player's own cards from a round on are the cards they played from it on when
    ``whole_hands`` (a game that is over: their hand is the ten they played), else only
    the round's card (while the game runs, the later cards are not known yet).
    ``seed``: the game's key; each round adds its number (from 1). ``numbers``: only
    these rounds (from 1) are figured, the others left empty.
    """
    rows: Rows = tuple((card,) for card in starting)
    seen = list(starting)
    hands: dict[Player, list[int]] = {}
    if whole_hands:
        for result in rounds:
            for step in result.steps:
                hands.setdefault(step.player, []).append(step.card)
    odds = []
    for number, result in enumerate(rounds, 1):
        if numbers is not None and number not in numbers:
            odds.append([])
            seen += [step.card for step in result.steps]
            rows = result.rows
            continue
        hidden_from = {
            step.player: unseen(
                deck, seen + (hands[step.player][number - 1 :] if whole_hands else [step.card])
            )
            for step in result.steps
        }
        odds.append(round_odds(rows, result, hidden_from, (*seed, number)))
        seen += [step.card for step in result.steps]
        rows = result.rows
    return odds


def game_luck(odds: Sequence[Sequence[Odds]]) -> list[PlayerLuck]:
    """Each player's expected bulls and bulls taken over a game's plays (``game_odds``),
    in the order they first played."""
    expected: dict[Player, float] = {}
    taken: dict[Player, int] = {}
    for play in chain.from_iterable(odds):
        expected[play.player] = expected.get(play.player, 0.0) + play.expected
        taken[play.player] = taken.get(play.player, 0) + play.bulls
    return [PlayerLuck(player, expected[player], taken[player]) for player in expected]
