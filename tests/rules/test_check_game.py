"""A game checked from inputs nobody has checked yet (a backup file's): ``check_game``
replays it as ``replay_game`` does, with every rule, and names the first round refused.

Its quick way (the whole game's cards at once) must accept only what its careful way
(round by round, with ``play_round``) accepts, and give the same replay.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion import rules
from companion.rules.game import checked_round_by_round, placed_at_once

SEATS = ["Anna", "Ben", "Cleo"]
STARTING = [12, 24, 37, 40]


def legal_game(rng: random.Random, seats: list[str], deck: int = 104):
    """A whole legal game: starting cards and ten rounds of (cards, choices); too-low
    cards take the suggested row."""
    cards = rng.sample(range(1, deck + 1), 10 * len(seats) + 4)
    starting, hands = cards[:4], [cards[4 + 10 * i : 14 + 10 * i] for i in range(len(seats))]
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        played = [hand[turn] for hand in hands]
        table.start_round(zip(seats, played, strict=True))
        choices: dict[str, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
        rounds.append((played, choices))
    return starting, rounds


def test_a_legal_game_is_replayed_as_the_table_replays_it():
    starting, rounds = legal_game(random.Random(4), SEATS)
    checked = rules.check_game(starting, rounds, SEATS)
    stored = [(list(zip(SEATS, cards, strict=True)), choices) for cards, choices in rounds]
    assert checked == rules.replay_game(starting, stored, SEATS)
    assert checked.finished and sum(checked.bulls().values()) > 0


@pytest.mark.parametrize(
    ("rounds", "number", "words"),
    [
        ([([41, 42, 43], {}), ([44, 42, 45], {})], 2, "42 already lies in row 4."),
        ([([41, 41, 43], {})], 1, "Anna and Ben both entered 41: each card exists once."),
        ([([12, 42, 43], {})], 1, "12 already lies in row 1."),
        ([([41, 105, 43], {})], 1, "There is no card 105 in this deck"),
        ([([41, 42], {})], 1, "A round has one card per seat: 3 cards, not 2."),
        ([([41, 42, 43], {"Ben": 1})], 1, "Ben's 42 is not too low, so Ben has no row to"),
        ([([41, 42, 43], {"Zoe": 1})], 1, "Zoe has no card in this round"),
        # Anna's 1 waits for her choice; without a correction no round may follow it.
        ([([1, 42, 43], {}), ([44, 45, 46], {})], 2, "Anna's 1 is too low, but no row choice"),
    ],
)
def test_the_first_round_refused_is_named_with_the_rules_words(rounds, number, words):
    with pytest.raises(rules.RoundRefused) as refused:
        rules.check_game(STARTING, rounds, SEATS)
    assert refused.value.number == number
    assert words in refused.value.message()


def test_a_corrected_game_may_wait_before_its_last_round():
    rounds = [([1, 42, 43], {}), ([44, 45, 46], {})]  # round 1 waits for Anna's choice
    state = rules.check_game(STARTING, rounds, SEATS, corrected=True)
    assert state.pending.player == "Anna" and state.later == 1 and len(state.rounds) == 1
    with pytest.raises(rules.RoundRefused) as refused:  # the waiting rounds' cards count
        rules.check_game(STARTING, [*rounds, ([44, 47, 48], {})], SEATS, corrected=True)
    assert refused.value.number == 3
    assert "44 was already played in this game." in refused.value.message()


def test_a_game_has_ten_rounds_at_most():
    starting, rounds = legal_game(random.Random(5), SEATS)
    with pytest.raises(rules.RuleError, match="at most 10 rounds, not 11"):
        rules.check_game(starting, [*rounds, ([1, 2, 3], {})], SEATS)


def mutated(rounds: list, how: str, rng: random.Random, seats: list[str]) -> list:
    """The rounds with one change that may or may not break them."""
    rounds = [(list(cards), dict(choices)) for cards, choices in rounds]
    cards, choices = rng.choice(rounds)
    if how == "swap":
        other, _ = rng.choice(rounds)
        cards[0], other[-1] = other[-1], cards[0]
    elif how == "duplicate":
        cards[-1] = rng.choice(rng.choice(rounds)[0])
    elif how == "drop choices":
        choices.clear()
    elif how == "extra choice":
        choices[rng.choice([*seats, "Zoe"])] = rng.randint(1, 4)
    elif how == "cut":
        rounds = rounds[: rng.randint(0, len(rounds))]
    elif how == "short":
        cards.pop()
    return rounds


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 10),
    how=st.sampled_from(
        ["none", "swap", "duplicate", "drop choices", "extra choice", "cut", "short"]
    ),
    corrected=st.booleans(),
)
def test_the_quick_way_accepts_only_what_the_careful_way_accepts(seed, players, how, corrected):
    rng = random.Random(seed)
    seats = ["Anna", "Ben", "Cleo", "Dora", "Emil", "Fritz", "Gabi", "Hugo", "Ida", "Jo"]
    seats = seats[:players]
    starting, rounds = legal_game(rng, seats)
    rounds = mutated(rounds, how, rng, seats)
    quick = placed_at_once(starting, rounds, seats, 104, corrected)
    try:
        careful = checked_round_by_round(starting, rounds, seats, 104, corrected)
    except rules.RoundRefused:
        careful = None
    if quick is not None:
        assert quick == careful
    if how == "none":
        assert quick is not None
