"""The review of a finished game, play by play: was there a better card in the hand?

Luck (``luck``) says how much the others' cards did to a player in each round, given
the card they chose. The review weighs the choice itself, from the player's own information: once a
game is over each hand is known (the ten cards its player played), so for every round
the cards the player still held are known, and each of them is figured as if it had
been played instead.

For every play, each card the player still held gets:

- ``this_round``: the bulls it was expected to take in this round, luck's model exactly
  (the others' cards drawn from what the player could not see, as ``luck`` draws them,
  with the same seed: for the card played it is luck's ``expected``);
- ``to_game_end``: the bulls the player was expected to take from this round to the
  game's end had it been played: ``this_round``, counted as above, and the later rounds'
  bulls, the rest of the game played out ``SAMPLES`` times, the others' hands drawn from
  what the player could not see, the player's own later cards those they held, everyone
  playing their cards in a random order and every too-low card taking the row
  ``suggest_row`` advises (a plain Monte Carlo); the same draws for every card of the
  hand, so the comparison is fair. In round 10 nothing is left to sample: it is
  ``this_round`` exactly, and it is never less than ``this_round``.

``loss`` is the card played's ``to_game_end`` less the hand's lowest, with its sampling
noise (one standard error of the difference between the card played and the hand's
best, draw for draw: about 0.4 bulls with ``SAMPLES`` playouts, none in round 10).

A too-low card's row is weighed too (``row_choices``): with the round's cards as they
were (the player saw them when choosing), each of the four rows taken, then the later
rounds played out as above from the rows it leaves, the same draws for every row. Its
``row_loss`` is the row chosen's figure less the best row's, with its noise.

The play's grade weighs what its player chose, card and row together: its ``cost`` (the
loss and the row loss) by ``GRADES``, "best" while it is within ``NOISE_WIDTH`` standard
errors (the two noises together: their draws are apart).

A player's game is then: bulls taken = the cards dealt + the choices' cost - the others'
cards, where the cards dealt are the bulls expected to the game's end from the first
round with the hand's best card then, the choices' cost the sum of the losses (the
rows' too), and the others' cards what is left (positive: fewer bulls than the deal and
the choices made likely). The others' cards are not luck: a household's luck is
``luck``'s figure, which weighs each round's card alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from math import hypot
from typing import NamedTuple

import numpy as np

from companion.rules.cards import TOO_LOW, Player, Rows
from companion.rules.luck import Lines, others_sets, own_fates, unseen
from companion.rules.table import RoundResult, Step, Table

SAMPLES = 400  # playouts of the rest of the game per play, shared by every card of the hand
NOISE_WIDTH = 2.0  # standard errors within which a card is as good as the hand's best
# A play's grade by its loss in bulls to the game's end (past the noise): the first whose
# bound the loss is under.
GRADES = (("good", 2.0), ("inaccuracy", 4.0), ("mistake", 7.0), ("blunder", float("inf")))
BEST = "best"
GOOD_GRADES = frozenset({BEST, "good"})


class CardFigures(NamedTuple):
    """A card of the hand, had it been played: bulls expected this round, and from this
    round to the game's end."""

    card: int
    this_round: float
    to_game_end: float


class RowFigures(NamedTuple):
    """A row a too-low card could take: the bulls its player was expected to take from
    this round to the game's end had they chosen it (the round's cards as they were)."""

    row: int  # 1-4
    to_game_end: float


class PlayReview(NamedTuple):
    """A play weighed against the rest of the hand: its loss in bulls to the game's end
    against the hand's best card, the sampling noise of that loss (one standard error),
    and every card of the hand (the card played among them). A too-low card's ``rows``:
    each of the four rows it could take (else empty), ``row`` the one chosen, and
    ``row_noise`` the noise of its row loss."""

    player: Player
    card: int
    loss: float
    noise: float
    hand: tuple[CardFigures, ...]
    rows: tuple[RowFigures, ...] = ()
    row: int = 0
    row_noise: float = 0.0

    @property
    def cost(self) -> float:
        """What the whole choice cost, card and row: the loss and the row loss."""
        return self.loss + self.row_loss

    @property
    def grade(self) -> str:
        """The grade of the whole choice (``grade``): its cost, within the two noises."""
        return grade(self.cost, hypot(self.noise, self.row_noise))

    @property
    def row_loss(self) -> float:
        """The row chosen's bulls to the game's end less the best row's (0 when the card
        was not too low)."""
        chosen = [figures.to_game_end for figures in self.rows if figures.row == self.row]
        if not chosen:
            return 0.0
        return max(0.0, chosen[0] - min(figures.to_game_end for figures in self.rows))

    @property
    def better(self) -> CardFigures:
        """The hand's card with the fewest bulls expected to the game's end."""
        return min(self.hand, key=lambda figures: (figures.to_game_end, figures.card))

    @property
    def played(self) -> CardFigures:
        """The card played's figures."""
        return next(figures for figures in self.hand if figures.card == self.card)


class PlayerReview(NamedTuple):
    """A player's game: the bulls taken, what the cards dealt made likely, what the
    choices cost (the sum of the losses, the rows' too), what the others' cards did
    (what is left: positive when fewer bulls) and the share of plays graded best or
    good. Named as the pages name them: a household's luck is ``luck``'s figure alone."""

    player: Player
    bulls: int
    cards_dealt: float
    choices_cost: float
    others_cards: float
    accuracy: float


def hands(rounds: Sequence[RoundResult]) -> dict[Player, list[int]]:
    """Each player's cards in the order they played them."""
    held: dict[Player, list[int]] = {}
    for result in rounds:
        for step in result.steps:
            held.setdefault(step.player, []).append(step.card)
    return held


def review_game(
    starting: Sequence[int], rounds: Sequence[RoundResult], deck: int, seed: Sequence[int] = ()
) -> list[list[PlayReview]]:
    """Every play of a finished game reviewed, round by round in the order the cards were
    placed. ``seed``: the game's key, as ``luck.game_odds`` takes it (each round adds its
    number, each player itself), so ``this_round`` of a card played is luck's figure."""
    return list(review_rounds(starting, rounds, deck, seed))


def review_rounds(
    starting: Sequence[int], rounds: Sequence[RoundResult], deck: int, seed: Sequence[int] = ()
) -> Iterator[list[PlayReview]]:
    """``review_game`` a round at a time (a tenth of a 10-player game's seconds each): a
    caller with more urgent work can do it between two rounds."""
    rows: Rows = tuple((card,) for card in starting)
    seen = list(starting)
    held = hands(rounds)
    for number, result in enumerate(rounds, 1):
        yield [
            review_step(
                rows,
                result,
                step,
                seen,
                held[step.player][number - 1 :],
                deck,
                (*seed, number, step.player),
            )
            for step in result.steps
        ]
        seen += [step.card for step in result.steps]
        rows = result.rows


def review_step(
    rows: Rows, result: RoundResult, step: Step, seen: list[int], hand: list[int], deck: int, key
) -> PlayReview:
    """One play of a placed round, its row too when it was too low: ``seen``, the cards
    seen before the round; ``hand``, the player's cards from it on."""
    play = review_play(rows, unseen(deck, seen + hand), hand, len(result.steps) - 1, key, step)
    if step.action != TOO_LOW:
        return play
    later = unseen(deck, seen + [other.card for other in result.steps] + hand)
    choices, noise = row_choices(rows, result, step, later, hand[1:], key)
    return play._replace(rows=choices, row=step.row, row_noise=noise)


def review_play(rows: Rows, hidden: np.ndarray, hand: list[int], others: int, key, step):
    """One play: every card of the hand figured this round (exactly, as luck does) and to
    the game's end (this round's figure and the later rounds' playouts), and the card
    played's loss with its noise: the later rounds' and, when luck drew this round's
    sets rather than count them all, this round's."""
    this_round, sets, drawn = expected_this_round(rows, hidden, hand, others, key, each=True)
    later = later_rounds(rows, hidden, hand, others, np.random.default_rng([7, *key]))
    to_end = this_round + later.mean(axis=1)
    played = hand.index(step.card)
    best = int(np.argmin(to_end))
    loss = max(0.0, float(to_end[played] - to_end[best]))
    variance = (later[played] - later[best]).var() / later.shape[1]
    if drawn:
        variance += (sets[played] - sets[best]).var() / sets.shape[1]
    figures = tuple(
        CardFigures(card, float(this_round[index]), float(to_end[index]))
        for index, card in enumerate(hand)
    )
    return PlayReview(step.player, step.card, loss, float(np.sqrt(variance)), figures)


def grade(loss: float, noise: float) -> str:
    """A play's grade: best within the noise, else by the loss (``GRADES``)."""
    if loss <= NOISE_WIDTH * noise or loss == 0:
        return BEST
    return next(name for name, bound in GRADES if loss < bound)


def expected_this_round(
    rows: Rows, hidden: np.ndarray, hand: list[int], others: int, key, each: bool = False
):
    """Each card of the hand's bulls expected this round: luck's sets of the others'
    cards (the same draws as ``luck.round_odds`` for this player), each card placed
    among every set. ``each``: with the bulls of every card in every set (a line per
    card) and whether the sets were drawn (else every set was counted)."""
    sets, samples = others_sets(hidden[None, :], others, [key])
    lines = sets.shape[1]
    own = np.repeat(np.asarray(hand, dtype=np.int16), lines)
    _took, taken = own_fates(rows, np.tile(sets, (1, len(hand))), own)
    taken = taken.reshape(len(hand), lines)
    expected = taken.mean(axis=1)
    return (expected, taken, samples > 0) if each else expected


def row_choices(
    rows: Rows, result: RoundResult, step: Step, hidden: np.ndarray, later: list[int], key
) -> tuple[RowFigures, ...]:
    """A too-low card on each of the four rows: the bulls of the row taken now, and the
    bulls expected in the later rounds from the rows it leaves (``future``: the others'
    hands drawn from ``hidden``, what the player could not see after this round; the
    player's ``later`` cards). The same draws for every row, so the comparison is fair.
    With the noise of the row chosen's loss against the best row (one standard error,
    draw for draw; 0 when no round comes after)."""
    others = len(result.steps) - 1
    choices, afters = [], []
    for row in range(1, len(rows) + 1):
        table = Table(rows)
        table.start_round([(other.player, other.card) for other in result.steps])
        table.run({step.player: row})
        placed = table.round_result()
        now = sum(taken.bulls for taken in placed.steps if taken.player == step.player)
        generator = np.random.default_rng([8, *key])
        after = future(placed.rows, hidden, later, others, generator) if later else np.zeros(1)
        choices.append(RowFigures(row, now + float(after.mean())))
        afters.append(after)
    best = min(choices, key=lambda figures: (figures.to_game_end, figures.row)).row
    difference = afters[step.row - 1] - afters[best - 1]
    return tuple(choices), float(difference.std() / np.sqrt(len(difference)))


def future(
    rows: Rows, hidden: np.ndarray, hand: list[int], others: int, generator: np.random.Generator
) -> np.ndarray:
    """The bulls the player takes in the rounds left, per playout: the others' hands
    drawn from ``hidden``, the player's ``hand`` and every other hand played in a random
    order."""
    their = drawn_hands(hidden, others * len(hand), generator).reshape(SAMPLES, len(hand), others)
    rank = np.argsort(generator.random((SAMPLES, len(hand))), axis=1)
    return played_out(rows, their, np.asarray(hand, dtype=np.int16)[rank])


def later_rounds(
    rows: Rows, hidden: np.ndarray, hand: list[int], others: int, generator: np.random.Generator
) -> np.ndarray:
    """The bulls the player takes after this round to the game's end, per card of the hand
    played now (a line each) and per playout (a column each): this round and the later
    ones played out, the others' hands drawn from ``hidden``, every hand played in a
    random order, the same draws for every card (this round's own bulls are luck's to
    count, exactly: ``expected_this_round``). None in the last round: nothing is drawn."""
    left = len(hand)
    if left == 1:
        return np.zeros((1, 1))
    drawn = drawn_hands(hidden, others * left, generator)  # (SAMPLES, others * left)
    their = drawn.reshape(SAMPLES, left, others)  # round by round: the others' cards
    order = own_orders(hand, generator)  # (cards, SAMPLES, left): the player's cards
    taken = played_out(rows, their, order.reshape(-1, left), first=1)
    return taken.reshape(len(hand), SAMPLES)


def played_out(rows: Rows, their: np.ndarray, order: np.ndarray, first: int = 0) -> np.ndarray:
    """The bulls the player takes in each line of ``order`` (the player's cards, round by
    round) from its round ``first`` on (from 0), the others playing ``their`` cards
    ((SAMPLES, rounds, others), the same for each block of ``SAMPLES`` lines), every
    too-low card on the advised row."""
    lines, left = order.shape
    others = their.shape[2]
    table = Lines(rows, lines)
    taken = np.zeros(lines, dtype=np.int32)
    for turn in range(left):
        cards = np.concatenate(
            [order[:, turn, None], np.tile(their[:, turn, :], (lines // SAMPLES, 1))], axis=1
        )
        placing = np.argsort(cards, axis=1, kind="stable")
        ordered = np.take_along_axis(cards, placing, axis=1)
        for position in range(others + 1):
            _took, bulls = table.place(ordered[:, position])
            if turn >= first:
                taken += np.where(placing[:, position] == 0, bulls, 0)
    return taken


def drawn_hands(hidden: np.ndarray, count: int, generator: np.random.Generator) -> np.ndarray:
    """``SAMPLES`` lines of ``count`` distinct cards of ``hidden`` each, in a random order."""
    keys = generator.random((SAMPLES, len(hidden)))
    return hidden[np.argsort(keys, axis=1)[:, :count]]


def own_orders(hand: list[int], generator: np.random.Generator) -> np.ndarray:
    """For each card of the hand played now, the player's cards round by round in each
    playout: that card first, then the rest in an order drawn once per playout (the same
    for every card played now, so their playouts differ in that card alone)."""
    cards = np.asarray(hand, dtype=np.int32)
    rank = np.argsort(generator.random((SAMPLES, len(hand))), axis=1)  # a random order
    later = cards[rank]  # (SAMPLES, left): the hand in a random order
    orders = np.empty((len(hand), SAMPLES, len(hand)), dtype=np.int32)
    for index, card in enumerate(hand):
        rest = later[later != card].reshape(SAMPLES, len(hand) - 1)
        orders[index, :, 0] = card
        orders[index, :, 1:] = rest
    return orders


def player_reviews(
    reviewed: Sequence[Sequence[PlayReview]], bulls: dict[Player, int]
) -> list[PlayerReview]:
    """Each player's game from their plays' reviews, in the order they first played:
    bulls = the cards dealt + the choices' cost - the others' cards; the accuracy counts
    the whole choices graded best or good."""
    plays: dict[Player, list[PlayReview]] = {}
    for round_plays in reviewed:
        for play in round_plays:
            plays.setdefault(play.player, []).append(play)
    found = []
    for player, theirs in plays.items():
        deal = theirs[0].better.to_game_end
        cost = sum(play.cost for play in theirs)
        good = sum(play.grade in GOOD_GRADES for play in theirs) / len(theirs)
        taken = bulls.get(player, 0)
        found.append(PlayerReview(player, taken, deal, cost, deal + cost - taken, good))
    return found
