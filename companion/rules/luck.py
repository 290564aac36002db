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

Every set of a round is weighed at once, as arrays (numpy), and a card's fate is counted
rather than placed (``own_fates``): which row it goes on and how many of the others'
cards go there before it follow from the rows as the round began. The draws of every
player of a round are turned into sets together (``in_rising_order``). ``Lines`` places
whole rounds, for the review's playouts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import chain, combinations
from math import comb
from typing import NamedTuple

import numpy as np

from companion.rules.cards import BULLS, ROW_LIMIT, ROWS, Player, Rows, pile_bulls
from companion.rules.table import RoundResult, row_options, suggest_row

EXACT_AT_MOST = 20_000
SAMPLES = 4_000
# A take this unlikely is improbable: the round's summary says its chance ("a 4 % chance").
IMPROBABLE = 0.10

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
    return np.flatnonzero(hidden).astype(np.int16)


def others_sets(
    hidden: np.ndarray, others: int, seeds: Sequence[Sequence[int]]
) -> tuple[np.ndarray, int]:
    """The sets of the others' cards, as columns: ``hidden`` holds, a line per seed, the
    cards (in rising order) a player could not see; for each, the sets of ``others``
    distinct cards of its line: every set when there are at most ``EXACT_AT_MOST``, else
    ``SAMPLES`` drawn (uniformly, without replacement within a set) by a generator seeded
    with the seed. Shape (others, sets): the sets of the first line, then the next; a
    column is a set in rising order. With the sample size, 0 for every set."""
    players, total = hidden.shape
    if comb(total, others) <= EXACT_AT_MOST:
        every = np.fromiter(
            chain.from_iterable(combinations(range(total), others)), dtype=np.int16
        ).reshape(-1, others)
        picked, samples = np.tile(every.T, (1, players)), 0
    else:
        picked, samples = np.empty((others, players * SAMPLES), dtype=np.int16), SAMPLES
        for seed, block in zip(seeds, np.hsplit(picked, players), strict=True):
            draw(total, block, np.random.default_rng(list(seed)))
        in_rising_order(picked)
    sets = np.empty_like(picked)
    for line, block, into in zip(
        hidden, np.hsplit(picked, players), np.hsplit(sets, players), strict=True
    ):
        np.take(line, block, out=into, mode="clip")  # indices below ``total``: none clipped
    return sets, samples


def draw(total: int, into: np.ndarray, generator: np.random.Generator) -> None:
    """Fill ``into`` with draws, a row per card: the i-th card's uniform below
    ``total - i`` (it picks among the indices the earlier ones left)."""
    for index, row in enumerate(into):
        row[:] = generator.integers(0, total - index, size=len(row), dtype=np.int32)


def in_rising_order(picked: np.ndarray) -> None:
    """Turn each column's draws (``draw``) into distinct indices in rising order: the i-th
    draw picks among the indices not drawn yet, by stepping past the drawn ones in rising
    order, then takes its place among them (uniform sets)."""
    for index, pick in enumerate(picked):
        done = picked[:index]
        for before in done:
            pick += pick >= before
        for row in done:  # insert: each row keeps the lower, the higher moves on
            lower = np.minimum(row, pick)
            np.maximum(row, pick, out=pick)
            row[:] = lower


def own_fates(rows: Rows, others: np.ndarray, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each set of the others' cards (a column of ``others``, in rising order) and its
    own card (``own``), placed on ``rows`` lowest first: whether the own card took a row,
    and the bulls it took.

    Counted, not placed. Only the lowest card of a set can be too low; it takes the
    advised row, the same for every set, which then ends with it. Every other card goes
    on the row of the largest end below it, and that stays true as cards are placed: so
    the own card's row is the row of the largest end below it, and the cards placed on
    it before are the others' cards between that end and the own card. Its count before
    the own card comes is the row's count plus theirs, a sixth card taking it at five."""
    lowest = others[0] if len(others) else np.full_like(own, len(BULLS))
    before = RowsBefore(rows)
    own_low = own < np.minimum(lowest, before.low_end)  # too low, and the first card placed
    restart = lowest < np.minimum(own, before.low_end)  # the advised row restarts with it
    row_end, count, pile = before.own_row(own, restart, lowest)
    below = (others < own).sum(axis=0, dtype=np.int8)
    cards = count + below - (others <= row_end).sum(axis=0, dtype=np.int8)  # when own comes
    took = own_low | (cards % ROW_LIMIT == 0)
    taken = np.where(own_low, before.piles[before.advised], 0).astype(np.int16)
    sixth = np.flatnonzero(took & ~own_low)
    first = cards[sixth] == ROW_LIMIT
    taken[sixth] = row_bulls(others[:, sixth], below[sixth], first, row_end[sixth], pile[sixth])
    return took, taken


class RowsBefore:
    """The rows as a round began, looked up by card (``own_row``): the row of the largest
    end below it, as they are, and once the advised row restarted with a lower card."""

    def __init__(self, rows: Rows) -> None:
        ends = np.array([row[-1] for row in rows], dtype=np.int16)
        self.counts = np.array([len(row) for row in rows], dtype=np.int16)
        self.piles = np.array([pile_bulls(row) for row in rows], dtype=np.int16)
        self.ends, self.low_end = ends, ends.min()
        self.advised = suggest_row(row_options(rows)) - 1
        cards = np.arange(len(BULLS), dtype=np.int16)
        self.row = rows_below(ends, cards)
        others = np.flatnonzero(np.arange(ROWS) != self.advised)
        self.row_after = others[rows_below(ends[others], cards)]
        self.row_after[cards < np.sort(ends[others])[0]] = self.advised

    def own_row(self, own, restart, lowest) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each own card: its row's end, count and bulls before the others' cards
        between them come; after a restart (``restart``, by ``lowest``) where it is one."""
        row = np.where(restart, self.row_after[own], self.row[own])
        restarted = restart & (row == self.advised)
        row_end = np.where(restarted, lowest, self.ends[row])
        count = np.where(restarted, 1, self.counts[row]).astype(np.int8)
        return row_end, count, np.where(restarted, _BULLS[lowest], self.piles[row])


def rows_below(ends: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """For each card, the row (an index of ``ends``) of the largest end below it; any row
    for a card below every end."""
    order = np.argsort(ends)
    return order[np.searchsorted(ends[order], cards) - 1]


def row_bulls(others, below, first, row_end, pile) -> np.ndarray:
    """The bulls of the row a sixth card takes: the others' cards placed on it before,
    those between its end and the own card (``below`` of them below the own card), with
    the row's own cards (``pile``) when it is the ``first`` time the row fills, else
    only the last five (the row was taken before and restarted)."""
    bulls = _BULLS[others]
    position = np.arange(len(others))[:, None]
    bulls *= (others > row_end) & (position < below)  # on the row
    placed = bulls.sum(axis=0, dtype=np.int16)
    bulls *= position >= below - ROW_LIMIT
    return np.where(first, pile + placed, bulls.sum(axis=0, dtype=np.int16))


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
    hidden = np.stack([hidden_from[step.player] for step in steps])  # the same size for all
    seeds = [(*seed, step.player) for step in steps]
    sets, samples = others_sets(hidden, len(steps) - 1, seeds)
    lines = sets.shape[1] // len(steps)
    own = np.repeat(np.array([step.card for step in steps], dtype=np.int16), lines)
    took, taken = own_fates(rows, sets, own)
    chances = took.reshape(len(steps), lines).mean(axis=1)
    expected = taken.reshape(len(steps), lines).mean(axis=1)
    return [
        Odds(
            step.player,
            step.card,
            float(chances[index]),
            float(expected[index]),
            step.bulls,
            samples,
        )
        for index, step in enumerate(steps)
    ]


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
