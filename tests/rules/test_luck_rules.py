"""Luck (issue 34): each play's chance of taking a row, and the bulls it was expected to
take, from its own player's point of view.

The player sees the rows and their own card. They could not see the deck less the game's
four starting cards, less every card of the earlier rounds, less their own cards from
this round on (the ten they played once the game is over, only the round's card while it
runs). The others' cards are any distinct cards of that set, all equally likely, and every
too-low card takes the row ``suggest_row`` advises.

The hand-made positions are counted by hand on small pro decks (the comments show the
count); the rest is checked against the engine itself: every set of the others' cards
placed by ``Table``, each too-low card on the advised row.
"""

import random
from fractions import Fraction
from itertools import combinations
from math import comb, isclose, sqrt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion import rules
from companion.rules import PLACED, ROW_LIMIT, SIXTH, TOO_LOW, bulls, deck_size, luck, resolve_round

ME, YOU, THEM = 1, 2, 3
# The spec's figures: every set is counted up to this many, else this many are drawn.
EXACT_AT_MOST = 20_000
SAMPLES = 4_000

# ---------------------------------------------------------------------------
# Helpers: a whole game, what each player could not see, the engine's own count


def advised(rows, plays):
    """A round placed by the engine, every too-low card on the row the advice suggests."""
    table = rules.Table(rows)
    table.start_round(plays)
    choices = {}
    while (pending := table.run(choices)) is not None:
        choices[pending.player] = pending.suggested
    return table.round_result()


def random_game(rng, players, deck, first_seat=0):
    """A whole game dealt from 1..deck to the players first_seat, first_seat + 1, ...; the
    too-low cards' players choose any row, as real players do, not always the advised
    one."""
    cards = rng.sample(range(1, deck + 1), 10 * players + 4)
    starting = cards[:4]
    hands = [cards[4 + 10 * seat : 14 + 10 * seat] for seat in range(players)]
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        table.start_round([(first_seat + seat, hands[seat][turn]) for seat in range(players)])
        choices = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = rng.randint(1, 4)
        rounds.append(table.round_result())
    return starting, rounds


def hidden_by_round(starting, rounds, deck, whole_hands):
    """Round by round: the rows before it, the round, and by player the cards they could
    not see (issue 34's words, counted here with sets)."""
    hands = {}
    for result in rounds:
        for step in result.steps:
            hands.setdefault(step.player, []).append(step.card)
    rows = tuple((card,) for card in starting)
    seen = set(starting)
    for number, result in enumerate(rounds):
        hidden = {}
        for step in result.steps:
            own = hands[step.player][number:] if whole_hands else [step.card]
            hidden[step.player] = sorted(set(range(1, deck + 1)) - seen - set(own))
        yield rows, result, hidden
        seen |= {step.card for step in result.steps}
        rows = result.rows


def by_the_engine(rows, card, hidden, others):
    """Every set of ``others`` cards of ``hidden`` placed with ``card`` by the engine:
    the exact chance that ``card`` takes a row, its expected bulls and the mean of its
    bulls squared."""
    sets = took = taken = squares = 0
    for cards in combinations(hidden, others):
        result = advised(rows, [("own", card), *enumerate(cards)])
        step = next(step for step in result.steps if step.player == "own")
        sets += 1
        took += step.action != PLACED
        taken += step.bulls
        squares += step.bulls**2
    return Fraction(took, sets), Fraction(taken, sets), Fraction(squares, sets)


def figures(odds):
    return [(play.player, play.card, play.chance, play.expected) for play in odds]


def by_player(odds):
    return {play.player: play for play in odds}


def hidden_from(deck, seen, plays):
    """What each player of ``plays`` could not see when everyone saw ``seen``."""
    return {player: luck.unseen(deck, [*seen, card]) for player, card in plays}


def table_cards(rows):
    return [card for row in rows for card in row]


# ---------------------------------------------------------------------------
# Two players, counted by hand (the pro deck of two players: 1..24)

DECK_2 = deck_size(2, pro=True)
# Bulls below 25: 5, 15 -> 2; 10, 20 -> 3; 11, 22 -> 5; every other card -> 1.


def test_the_pro_deck_of_two_is_24_cards():
    assert DECK_2 == 24
    assert [card for card in range(1, 25) if bulls(card) > 1] == [5, 10, 11, 15, 20, 22]


def test_a_sixth_card_takes_its_row_unless_an_unseen_card_lies_in_the_gap():
    # Row 1 ends at 6 with five cards (1, 2, 3, 5, 6: 1+1+1+2+1 = 6 bulls); my 9 goes
    # there, the nearest end below it. Seen: the 8 cards on the table and my 9.
    rows = ((1, 2, 3, 5, 6), (12,), (16,), (19,))
    seen = table_cards(rows)
    hidden = [4, 7, 8, 10, 11, 13, 14, 15, 17, 18, 20, 21, 22, 23, 24]
    assert list(luck.unseen(DECK_2, [*seen, 9])) == hidden  # 24 - 9 = 15 cards
    # Your card is one of these 15:
    # - 7 or 8 lies between 6 and my 9: it is the sixth card, my 9 starts the row again;
    # - 4 is too low: it takes the advised row, row 2 (1 bull, 1 card, the lowest number
    #   of the three one-bull rows), and my 9 still goes on row 1 as its sixth card;
    # - 10 and up come after my 9.
    # 13 of the 15 leave me the row: chance 13/15, expected 13/15 x 6 bulls = 26/5.
    plays = [(ME, 9), (YOU, 21)]
    result = resolve_round(rows, plays, {})
    odds = by_player(luck.round_odds(rows, result, hidden_from(DECK_2, seen, plays), (1,)))
    assert odds[ME].chance == pytest.approx(13 / 15)
    assert odds[ME].expected == pytest.approx(26 / 5)
    assert odds[ME].bulls == 6  # your 21 came after my 9: I took the row
    assert odds[ME].samples == 0  # 15 sets: every one counted
    # Your 21 goes on row 4 (19, one card): only a 20 of mine could join it first, and
    # two cards on a one-card row never make a sixth (a too-low 4 of mine takes row 2).
    # It can never take a row: exactly 0.
    assert (odds[YOU].chance, odds[YOU].expected, odds[YOU].bulls) == (0, 0, 0)


def test_a_too_low_card_of_the_other_player_can_empty_the_row_for_me():
    # Row 1 (2, 3, 4, 6, 7) has five cards and 5 bulls, fewer than any other row
    # (row 2: 3+5 = 8, row 3: 3+5 = 8, row 4: 2+1+1+1+1 = 6): a too-low card takes it.
    rows = ((2, 3, 4, 6, 7), (10, 11), (20, 22), (15, 16, 17, 18, 19))
    seen = table_cards(rows)
    # My 9 goes on row 1 (end 7) as its sixth card. Unseen: 24 - 14 on the table - my 9.
    assert list(luck.unseen(DECK_2, [*seen, 9])) == [1, 5, 8, 12, 13, 14, 21, 23, 24]
    # - 1 or 5 is too low (below 7, the lowest end): it takes row 1, the advised one, and
    #   my 9 goes on it as a second card;
    # - 8 comes between 7 and 9: it is the sixth card, and my 9 goes on it;
    # - 12, 13, 14, 21, 23, 24 come after me: I take row 1.
    # Chance 6/9 = 2/3, expected 6/9 x 5 = 10/3.
    #
    # Your 5 (you see the table and your 5; unseen: 1, 8, 9, 12, 13, 14, 21, 23, 24) is
    # too low unless my card is the 1, which takes row 1 first and your 5 goes on it.
    # Otherwise your 5 takes the advised row 1: chance 8/9, expected 8/9 x 5 = 40/9.
    plays = [(ME, 9), (YOU, 5)]
    hidden = hidden_from(DECK_2, seen, plays)
    assert list(hidden[YOU]) == [1, 8, 9, 12, 13, 14, 21, 23, 24]

    result = resolve_round(rows, plays, {YOU: 1})  # you take the advised row
    odds = by_player(luck.round_odds(rows, result, hidden, (1,)))
    assert (odds[ME].chance, odds[ME].expected) == (pytest.approx(2 / 3), pytest.approx(10 / 3))
    assert (odds[YOU].chance, odds[YOU].expected) == (pytest.approx(8 / 9), pytest.approx(40 / 9))
    assert (odds[YOU].bulls, odds[ME].bulls) == (5, 0)  # your 5 took row 1; my 9 went on it

    # Had you taken row 2 instead (8 bulls), my 9 would have been row 1's sixth card. The
    # odds assume the advice; the bulls are what the real choice cost.
    result = resolve_round(rows, plays, {YOU: 2})
    other = by_player(luck.round_odds(rows, result, hidden, (1,)))
    assert [play.player for play in result.steps] == [YOU, ME]
    assert (other[YOU].bulls, other[ME].bulls) == (8, 5)
    for player in (ME, YOU):
        assert (other[player].chance, other[player].expected) == (
            odds[player].chance,
            odds[player].expected,
        )


def test_a_too_low_card_takes_the_advised_row_unless_a_lower_card_comes_first():
    # My 2 is below every row end: too low. The advice: row 1 (4, 8), 1+1 = 2 bulls, the
    # fewest (row 2: 5, row 3: 1+1+2 = 4, row 4: 3).
    rows = ((4, 8), (11,), (13, 14, 15), (20,))
    seen = table_cards(rows)
    hidden = luck.unseen(DECK_2, [*seen, 2])
    assert len(hidden) == 16 and hidden[0] == 1  # 24 - 7 - my 2; the 1 is the only lower
    # Only your 1 comes first: it takes row 1 and my 2 goes on it. Chance 15/16, and I
    # take row 1's 2 bulls when I take: expected 15/16 x 2 = 15/8.
    plays = [(ME, 2), (YOU, 3)]
    result = resolve_round(rows, plays, {ME: 1})
    odds = by_player(luck.round_odds(rows, result, hidden_from(DECK_2, seen, plays), (1,)))
    assert odds[ME].chance == pytest.approx(15 / 16)
    assert odds[ME].expected == pytest.approx(15 / 8)
    assert odds[ME].bulls == 2
    # Your 3 (unseen to you: 16 cards, the 1 and my 2 among them) is too low and takes
    # row 1 unless my card is the 1 or the 2: it would come first, take row 1, and your 3
    # would go on it. Chance 14/16, expected 14/16 x 2 = 7/4.
    assert odds[YOU].chance == pytest.approx(14 / 16)
    assert odds[YOU].expected == pytest.approx(7 / 4)
    assert odds[YOU].bulls == 0  # my 2 came first: your 3 went on it


# ---------------------------------------------------------------------------
# Three players, counted by hand (the pro deck of three: 1..34)


def test_three_players_a_sixth_card_needs_exactly_one_card_in_the_gap():
    # Row 1 has four cards ending at 7 (4 bulls); my 10 goes there. Seen: the 8 cards on
    # the table and my 10; unseen: 34 - 9 = 25 cards, 2 of them (8 and 9) in the gap.
    deck = deck_size(3, pro=True)
    assert deck == 34
    rows = ((3, 4, 6, 7), (12,), (20, 21), (27,))
    seen = table_cards(rows)
    assert len(luck.unseen(deck, [*seen, 10])) == 25
    # Your two cards are one of C(25, 2) = 300 pairs.
    # - Exactly one of 8, 9 (2 x 23 = 46 pairs): it is row 1's fifth card and my 10 its
    #   sixth. I take 3, 4, 6, 7 and the 8 or 9: 5 bulls.
    # - Both 8 and 9 (1 pair): the 9 is the sixth card, my 10 goes on it.
    # - Neither (253 pairs): my 10 is the fifth card. A too-low card (1, 2, 5) takes the
    #   advised row 2 (1 bull, 1 card, lower than row 4), never row 1 (4 bulls); a
    #   second too-low card is then no longer too low, it goes on it.
    # Chance 46/300 = 23/150, expected 46/300 x 5 = 23/30.
    plays = [(ME, 10), (YOU, 8), (THEM, 30)]
    result = resolve_round(rows, plays, {})
    odds = by_player(luck.round_odds(rows, result, hidden_from(deck, seen, plays), (1,)))
    assert odds[ME].chance == pytest.approx(23 / 150)
    assert odds[ME].expected == pytest.approx(23 / 30)
    assert odds[ME].bulls == 5  # your 8 was the one card in the gap
    assert odds[ME].samples == 0
    # Their 30 goes on row 4 (27, one card): at most the two others' cards (28, 29) join
    # it, and a too-low card takes row 2 first. It can never take a row: exactly 0.
    assert (odds[THEM].chance, odds[THEM].expected, odds[THEM].bulls) == (0, 0, 0)
    # Your 8 is row 1's fifth card: nothing lies between 7 and 8, and too-low cards take
    # row 2. Exactly 0 too.
    assert (odds[YOU].chance, odds[YOU].expected) == (0, 0)


# ---------------------------------------------------------------------------
# Whole hands: the player's own later cards are not among the others' cards


def test_a_finished_game_knows_my_later_cards_are_not_yours():
    # Starting rows 5, 12, 16, 19 (2, 1, 1, 1 bulls). Round 1: my 2 is too low and takes
    # the advised row 2 (1 bull, 1 card, the lowest such row). Round 2: I play the 1.
    starting = [5, 12, 16, 19]
    first = resolve_round([(card,) for card in starting], [(ME, 2), (YOU, 10)], {ME: 2})
    second = resolve_round(first.rows, [(ME, 1), (YOU, 7)], {ME: 2})
    rounds = [first, second]
    assert [step.bulls for step in first.steps] == [1, 0]
    # While the game runs, my 1 is unseen in round 1 like any other card (24 - 4 - my 2 =
    # 19 cards): had you held it, it would have come first and my 2 would have gone on
    # it. Chance 18/19, and 1 bull when I take: expected 18/19.
    running = luck.game_odds(starting, rounds, DECK_2, whole_hands=False)
    mine = by_player(running[0])[ME]
    assert (mine.chance, mine.expected) == (pytest.approx(18 / 19), pytest.approx(18 / 19))
    # Once the game is over my hand is known: the 1 was mine, you could not hold it.
    # Nothing unseen lies below my 2: chance 1, expected 1.
    over = luck.game_odds(starting, rounds, DECK_2, whole_hands=True)
    mine = by_player(over[0])[ME]
    assert (mine.chance, mine.expected, mine.bulls) == (1, 1, 1)
    # In the last round played my later cards are only the round's card: both agree.
    assert figures(over[-1]) == figures(running[-1])


@settings(max_examples=20, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from([(2, 24), (3, 34), (4, 104)]))
def test_the_last_round_is_the_same_whole_hand_or_not(rng, game):
    players, deck = game
    starting, rounds = random_game(rng, players, deck)
    numbers = {rules.HAND_SIZE}
    over = luck.game_odds(starting, rounds, deck, True, (5,), numbers)
    running = luck.game_odds(starting, rounds, deck, False, (5,), numbers)
    assert over == running
    assert all(odds == [] for odds in over[:-1])


# ---------------------------------------------------------------------------
# A card nothing unseen can come before


@st.composite
def undisturbed_rounds(draw):
    """A round on any deck where every card below the player's own was played in earlier
    rounds: nothing they could not see comes before their card."""
    deck = draw(st.sampled_from(rules.DECKS))
    players = draw(st.integers(2, rules.players_for_deck(deck)))
    lengths = draw(st.lists(st.integers(1, ROW_LIMIT), min_size=4, max_size=4))
    cards = draw(st.permutations(range(1, deck + 1)))
    rows, start = [], 0
    for length in lengths:
        rows.append(tuple(sorted(cards[start : start + length])))
        start += length
    rest = cards[start:]
    own = draw(st.sampled_from(sorted(rest)[: len(rest) - (players - 1)]))
    above = [card for card in rest if card > own]  # in dealt order
    seen = [card for card in range(1, own) if card not in cards[:start]]
    return deck, tuple(rows), own, above[: players - 1], table_cards(rows) + seen


@settings(max_examples=60, deadline=None)
@given(undisturbed_rounds())
def test_a_card_nothing_unseen_can_come_before_has_chance_0_or_1(position):
    deck, rows, own, others, seen = position
    plays = [(ME, own), *((10 + seat, card) for seat, card in enumerate(others))]
    result = advised(rows, plays)
    odds = by_player(luck.round_odds(rows, result, hidden_from(deck, seen, plays), (3, 4)))[ME]
    alone = advised(rows, [(ME, own)]).steps[0]  # my card on the rows as they are
    assert odds.chance in (0.0, 1.0)
    assert odds.chance == (alone.action in (SIXTH, TOO_LOW))
    assert odds.expected == alone.bulls == odds.bulls


# ---------------------------------------------------------------------------
# Bounds over whole random games


@settings(max_examples=30, deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.sampled_from([(2, 24), (3, 34), (4, 44), (2, 104), (3, 104), (5, 104), (6, 64)]),
    st.booleans(),
)
def test_chances_and_expected_bulls_stay_in_bounds(rng, game, whole_hands):
    players, deck = game
    starting, rounds = random_game(rng, players, deck)
    odds = luck.game_odds(starting, rounds, deck, whole_hands, (rng.randint(0, 99),))
    assert len(odds) == len(rounds)
    for plays, (rows, result, hidden) in zip(
        odds, hidden_by_round(starting, rounds, deck, whole_hands), strict=True
    ):
        assert [(play.player, play.card, play.bulls) for play in plays] == [
            (step.player, step.card, step.bulls) for step in result.steps
        ]
        for play in plays:
            unseen = hidden[play.player]
            assert 0 <= play.chance <= 1
            # A row taken holds 1 to 5 cards, of the table and of the unseen cards, each
            # of at least 1 bull: between 1 bull and the five heaviest of those cards.
            heaviest = sum(sorted(map(bulls, table_cards(rows) + unseen))[-ROW_LIMIT:])
            assert play.chance - 1e-9 <= play.expected <= play.chance * heaviest + 1e-9
            if play.chance == 0:
                assert play.expected == 0
            exact = comb(len(unseen), players - 1) <= EXACT_AT_MOST
            assert play.samples == (0 if exact else SAMPLES)
            if play.samples:  # a mean of 4000 draws
                assert (play.chance * SAMPLES) == pytest.approx(round(play.chance * SAMPLES))


# ---------------------------------------------------------------------------
# Exact figures: the engine's own count over every set of the others' cards


@settings(max_examples=12, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from([(2, 24), (3, 34), (2, 104)]))
def test_exact_figures_are_the_engines_count_over_every_set(rng, game):
    players, deck = game
    whole_hands = rng.random() < 0.5
    starting, rounds = random_game(rng, players, deck)
    odds = luck.game_odds(starting, rounds, deck, whole_hands, (1,))
    for plays, (rows, _, hidden) in zip(
        odds, hidden_by_round(starting, rounds, deck, whole_hands), strict=True
    ):
        for play in plays:
            chance, expected, _ = by_the_engine(rows, play.card, hidden[play.player], players - 1)
            assert play.samples == 0
            assert isclose(play.chance, chance, abs_tol=1e-12)
            assert isclose(play.expected, expected, abs_tol=1e-12)


def test_three_players_on_the_full_deck_are_counted_exactly_too():
    # Round 1 of three players on 104 cards: C(90, 2) = 4005 pairs of the others' cards
    # (the player's own ten and the starting four are known once the game is over).
    players, deck = 3, 104
    starting, rounds = random_game(random.Random(34), players, deck)
    rows, _, hidden = next(hidden_by_round(starting, rounds, deck, True))
    odds = luck.game_odds(starting, rounds, deck, True, (2,), {1})[0]
    for play in odds:
        assert comb(len(hidden[play.player]), 2) == 4005
        chance, expected, _ = by_the_engine(rows, play.card, hidden[play.player], players - 1)
        assert play.samples == 0
        assert isclose(play.chance, chance, abs_tol=1e-12)
        assert isclose(play.expected, expected, abs_tol=1e-12)


# ---------------------------------------------------------------------------
# Sampled figures: within sampling error of the exact count


@pytest.mark.parametrize(
    ("players", "numbers", "seed"),
    [(4, {1, 5, 10}, 4), (5, {6, 8}, 5), (6, {9}, 6)],
)
def test_sampled_figures_are_within_sampling_error_of_the_exact_ones(
    monkeypatch, players, numbers, seed
):
    # Small pro decks keep the engine's count feasible; drawing is forced for every play.
    monkeypatch.setattr(luck, "EXACT_AT_MOST", 0)
    deck = deck_size(players, pro=True)
    starting, rounds = random_game(random.Random(seed), players, deck)
    odds = luck.game_odds(starting, rounds, deck, True, (seed,), numbers)
    checked = 0
    for number, (plays, (rows, _, hidden)) in enumerate(
        zip(odds, hidden_by_round(starting, rounds, deck, True), strict=True), 1
    ):
        if number not in numbers:
            assert plays == []
            continue
        for play in plays:
            chance, expected, squares = by_the_engine(
                rows, play.card, hidden[play.player], players - 1
            )
            assert play.samples == SAMPLES
            # Four standard errors of a mean of 4000 independent draws.
            spread = sqrt(chance * (1 - chance) / SAMPLES)
            assert abs(play.chance - chance) <= 4 * spread + 1e-9
            spread = sqrt((squares - expected**2) / SAMPLES)
            assert abs(play.expected - expected) <= 4 * spread + 1e-9
            checked += 1
    assert checked == players * len(numbers)


def test_four_players_counted_by_hand_then_drawn(monkeypatch):
    # The pro deck of four: 1..44. My 44 goes on row 1 (36..40: 1+1+1+1+3 = 7 bulls) as
    # its sixth card unless one of 41, 42, 43 comes first; 41 and 43 were played in
    # earlier rounds, 42 is unseen. Nothing lies below row 2's 1: no card is too low, and
    # every other unseen card goes on rows 2-4, never on mine.
    deck = deck_size(4, pro=True)
    rows = ((36, 37, 38, 39, 40), (1,), (10,), (20,))
    hidden = [3, 5, 12, 15, 22, 25, 28, 31, 33, 42]
    seen = [card for card in range(1, deck) if card not in hidden]  # all but 44 and those
    assert list(luck.unseen(deck, [*seen, 44])) == hidden
    # The others' three cards are one of C(10, 3) = 120 sets; C(9, 3) = 84 leave out the
    # 42: chance 84/120 = 7/10, expected 7/10 x 7 = 4.9.
    plays = [(ME, 44), (YOU, 3), (THEM, 42), (4, 22)]
    result = resolve_round(rows, plays, {})
    hidden_sets = hidden_from(deck, seen, plays)
    counted = by_player(luck.round_odds(rows, result, hidden_sets, (4,)))[ME]
    assert counted.samples == 0
    assert (counted.chance, counted.expected) == (pytest.approx(0.7), pytest.approx(4.9))
    assert counted.bulls == 0  # their 42 took row 1, my 44 went on it
    # Drawn instead of counted: 4000 sets, within four standard errors (the chance's
    # 0.7 x 0.3, the bulls' 0.7 x 0.3 x 7^2).
    monkeypatch.setattr(luck, "EXACT_AT_MOST", 0)
    drawn = by_player(luck.round_odds(rows, result, hidden_sets, (4,)))[ME]
    assert drawn.samples == SAMPLES
    assert abs(drawn.chance - 0.7) <= 4 * sqrt(0.21 / SAMPLES)
    assert abs(drawn.expected - 4.9) <= 4 * sqrt(0.21 * 49 / SAMPLES)


def test_four_players_on_the_full_deck_are_sampled_on_their_own():
    # Round 1 of four players on 104 cards: C(89, 3) = 113,564 sets, more than 20,000.
    starting, rounds = random_game(random.Random(44), 4, 104)
    for play in luck.game_odds(starting, rounds, 104, True, (3,), {1})[0]:
        assert play.samples == SAMPLES


# ---------------------------------------------------------------------------
# The figures never change between calls


def side_by_side(first, second):
    """The plays of two figurings of the same game, pair by pair."""
    return [
        (mine, theirs)
        for ours, others in zip(first, second, strict=True)
        for mine, theirs in zip(ours, others, strict=True)
    ]


def test_the_same_seed_draws_the_same_figures_and_another_seed_others():
    deck = deck_size(5, pro=True)  # 54: round 1 has C(40, 4) sets, round 10 one
    starting, rounds = random_game(random.Random(7), 5, deck)
    first = luck.game_odds(starting, rounds, deck, True, (7, 1))
    assert luck.game_odds(starting, rounds, deck, True, (7, 1)) == first
    other = luck.game_odds(starting, rounds, deck, True, (7, 2))
    sampled = [pair for pair in side_by_side(first, other) if pair[0].samples]
    exact = [pair for pair in side_by_side(first, other) if not pair[0].samples]
    assert sampled and exact  # early rounds are drawn, the last ones counted
    assert all(mine == theirs for mine, theirs in exact)
    assert any(
        (mine.chance, mine.expected) != (theirs.chance, theirs.expected) for mine, theirs in sampled
    )


def test_each_player_draws_their_own_sets():
    # The same game dealt to players 0-4 and to players 100-104: the player is part of
    # the seed, so the draws differ; the counted figures do not.
    deck = deck_size(5, pro=True)
    starting, rounds = random_game(random.Random(7), 5, deck)
    _, renamed = random_game(random.Random(7), 5, deck, first_seat=100)
    assert [step.card for result in renamed for step in result.steps] == [
        step.card for result in rounds for step in result.steps
    ]
    first = luck.game_odds(starting, rounds, deck, True, (7,))
    second = luck.game_odds(starting, renamed, deck, True, (7,))
    pairs = side_by_side(first, second)
    assert all(mine.player + 100 == theirs.player for mine, theirs in pairs)
    figures_of = [((m.chance, m.expected), (t.chance, t.expected), m.samples) for m, t in pairs]
    assert all(mine == theirs for mine, theirs, samples in figures_of if not samples)
    assert any(mine != theirs for mine, theirs, samples in figures_of if samples)


def test_a_round_alone_is_figured_as_within_its_game():
    # The game's key and the round's number (from 1) are the round's key.
    deck = 104
    starting, rounds = random_game(random.Random(8), 4, deck)
    whole = luck.game_odds(starting, rounds, deck, False, (9,))
    only = luck.game_odds(starting, rounds, deck, False, (9,), {2, 7})
    for number, (rows, result, hidden) in enumerate(
        hidden_by_round(starting, rounds, deck, False), 1
    ):
        unseen = {player: np.array(cards, dtype=np.int32) for player, cards in hidden.items()}
        alone = luck.round_odds(rows, result, unseen, (9, number))
        assert alone == whole[number - 1]
        assert only[number - 1] == (alone if number in (2, 7) else [])


# ---------------------------------------------------------------------------
# A player's luck over a game


@settings(max_examples=15, deadline=None)
@given(
    st.randoms(use_true_random=False),
    st.sampled_from([(2, 24), (3, 104), (4, 44), (6, 104)]),
    st.booleans(),
)
def test_a_players_luck_is_the_bulls_expected_less_the_bulls_taken(rng, game, whole_hands):
    players, deck = game
    starting, rounds = random_game(rng, players, deck)
    odds = luck.game_odds(starting, rounds, deck, whole_hands, (11,))
    lucks = rules.game_luck(odds)
    assert [player.player for player in lucks] == [step.player for step in rounds[0].steps]
    taken = {}
    for result in rounds:
        for player, bull in result.bulls_by_player().items():
            taken[player] = taken.get(player, 0) + bull
    for player in lucks:
        assert player.bulls == taken[player.player]
        mine = [play.expected for plays in odds for play in plays if play.player == player.player]
        assert len(mine) == rules.HAND_SIZE
        assert player.expected == pytest.approx(sum(mine))
        assert player.luck == pytest.approx(player.expected - player.bulls)
    everyone = sum(play.expected for plays in odds for play in plays)
    assert sum(player.expected for player in lucks) == pytest.approx(everyone)


# ---------------------------------------------------------------------------
# Counted, not placed (issue 42): each set's fate is the engine's, and the draws are
# those of stepping past the drawn indices, so the figures kept before stay right


@st.composite
def sets_on_rows(draw):
    """Rows of any lengths on the full deck, then sets of the others' cards (up to
    nine), each with an own card, from the cards left: many lines, often with a too-low
    card, sixth cards and rows that fill twice."""
    lengths = draw(st.lists(st.integers(1, ROW_LIMIT), min_size=4, max_size=4))
    cards = draw(st.permutations(range(1, 105)))
    rows, start = [], 0
    for length in lengths:
        rows.append(tuple(sorted(cards[start : start + length])))
        start += length
    rest = cards[start:]
    others = draw(st.integers(1, 9))
    if draw(st.booleans()):  # close together: rows fill, and fill again
        low = draw(st.integers(0, len(rest) - others - 4))
        rest = sorted(rest)[low : low + others + 4]
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        picked = draw(st.permutations(rest))[: others + 1]
        lines.append((picked[0], sorted(picked[1:])))
    return tuple(rows), lines


@settings(max_examples=150, deadline=None)
@given(sets_on_rows())
def test_each_own_cards_fate_is_counted_as_the_engine_places_it(position):
    rows, lines = position
    own = np.array([card for card, _ in lines], dtype=np.int16)
    others = np.array([theirs for _, theirs in lines], dtype=np.int16).T
    took, taken = luck.own_fates(rows, others, own)
    for line, (card, theirs) in enumerate(lines):
        result = advised(rows, [("own", card), *enumerate(theirs)])
        step = next(step for step in result.steps if step.player == "own")
        assert bool(took[line]) == (step.action != PLACED), (rows, card, theirs)
        assert int(taken[line]) == step.bulls, (rows, card, theirs)


def test_a_row_that_fills_twice_before_my_card_gives_me_the_last_five():
    # Row 1 is 10 (1 card); nine of the others' cards go on it before my 30: 11..14 fill
    # it, 15 takes it as its sixth card, 16..29 fill it again, and my 30 takes 15..29.
    rows = ((10,), (80,), (90,), (100,))
    theirs = [11, 12, 13, 14, 15, 16, 22, 25, 29]
    own = np.array([30], dtype=np.int16)
    took, taken = luck.own_fates(rows, np.array(theirs, dtype=np.int16)[:, None], own)
    assert took[0]
    assert (
        taken[0] == bulls(15) + bulls(16) + bulls(22) + bulls(25) + bulls(29) == 2 + 1 + 5 + 2 + 1
    )


def stepped(total, picks):
    """The i-th index of a line: the i-th pick stepped past the indices drawn before it, in
    rising order (how the figures kept since issue 34 were drawn)."""
    drawn = []
    for pick in picks:
        for before in sorted(drawn):
            pick += pick >= before
        drawn.append(pick)
    assert len(set(drawn)) == len(drawn) and max(drawn) < total
    return sorted(drawn)


@pytest.mark.parametrize(("total", "others"), [(90, 9), (40, 4), (12, 11), (104, 1)])
def test_the_drawn_sets_are_the_picks_stepped_past_the_drawn_ones(total, others):
    generator = np.random.default_rng([42, total])
    picks = np.empty((others, luck.SAMPLES), dtype=np.int16)
    luck.draw(total, picks, generator)
    assert all(
        0 <= pick < total - index for index, row in enumerate(picks) for pick in row.tolist()
    )
    wanted = [stepped(total, line) for line in picks.T.tolist()]
    luck.in_rising_order(picks)
    assert picks.T.tolist() == wanted


def test_every_player_draws_from_their_own_seed_in_one_batch():
    # Drawn together or one player at a time: the same sets.
    deck = 104
    hidden = np.stack([luck.unseen(deck, list(range(seat, seat + 14))) for seat in (1, 30, 60)])
    seeds = [(5, 1, seat) for seat in (1, 2, 3)]
    together, samples = luck.others_sets(hidden, 6, seeds)
    assert samples == SAMPLES and together.shape == (6, 3 * SAMPLES)
    for index, (line, seed) in enumerate(zip(hidden, seeds, strict=True)):
        alone, _ = luck.others_sets(line[None, :], 6, [seed])
        assert np.array_equal(together[:, index * SAMPLES : (index + 1) * SAMPLES], alone)
        assert np.isin(alone, line).all() and (np.diff(alone, axis=0) > 0).all()
