"""Invariants of the rules engine over random positions (hypothesis)."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.rules import (
    ROW_LIMIT,
    SIXTH,
    TOO_LOW,
    bulls,
    check_rows,
    continue_round,
    pile_bulls,
    replay_game,
    resolve_round,
)


@st.composite
def positions(draw, max_players=10):
    """A legal table (4 rising rows of 1-5 cards), plays by distinct players, choices."""
    lengths = draw(st.lists(st.integers(1, ROW_LIMIT), min_size=4, max_size=4))
    players = draw(st.integers(1, max_players))
    cards = draw(
        st.lists(
            st.integers(1, 104),
            min_size=sum(lengths) + players,
            max_size=sum(lengths) + players,
            unique=True,
        )
    )
    rows, start = [], 0
    for length in lengths:
        rows.append(tuple(sorted(cards[start : start + length])))
        start += length
    plays = [(f"P{i}", card) for i, card in enumerate(cards[start:])]
    choices = {f"P{i}": draw(st.integers(1, 4)) for i in range(players)}
    return tuple(rows), plays, choices


def table_cards(rows):
    return [card for row in rows for card in row]


@given(positions())
def test_no_card_is_lost_or_duplicated(position):
    rows, plays, choices = position
    result = resolve_round(rows, plays, choices)
    taken = [card for step in result.steps for card in step.taken]
    after = Counter(table_cards(result.rows)) + Counter(taken)
    before = Counter(table_cards(rows)) + Counter(card for _, card in plays)
    assert after == before
    assert max(after.values()) == 1


@given(positions())
def test_rows_stay_rising_with_at_most_five_cards(position):
    rows, plays, choices = position
    result = resolve_round(rows, plays, choices)
    check_rows(result.rows)  # raises if a row is empty, too long or not rising


@given(positions())
def test_taken_bulls_add_up(position):
    rows, plays, choices = position
    result = resolve_round(rows, plays, choices)
    for step in result.steps:
        assert step.bulls == sum(bulls(card) for card in step.taken)
    total_before = pile_bulls(table_cards(rows)) + pile_bulls(card for _, card in plays)
    total_after = pile_bulls(table_cards(result.rows)) + sum(s.bulls for s in result.steps)
    assert total_before == total_after


@given(positions())
def test_resolution_is_deterministic_and_ignores_input_order(position):
    rows, plays, choices = position
    first = resolve_round(rows, plays, choices)
    assert resolve_round(rows, list(reversed(plays)), dict(reversed(choices.items()))) == first


@given(positions())
def test_cards_are_placed_lowest_first(position):
    rows, plays, choices = position
    cards = [step.card for step in resolve_round(rows, plays, choices).steps]
    assert cards == sorted(cards)


@given(positions())
def test_a_too_low_card_always_stops_for_a_choice(position):
    rows, plays, _ = position
    result = resolve_round(rows, plays, {})
    assert all(step.action != TOO_LOW for step in result.steps)
    if result.pending is not None:
        pending = result.pending
        assert all(row[-1] > pending.card for row in result.rows)
        assert [option.cards for option in pending.options] == list(result.rows)
        assert pending.suggested in (1, 2, 3, 4)
    else:
        assert len(result.steps) == len(plays)


@given(positions())
def test_every_placed_card_went_to_the_closest_lower_end(position):
    rows, plays, choices = position
    for step in resolve_round(rows, plays, choices).steps:
        lower = [end for end in step.ends if end < step.card]
        if step.action == TOO_LOW:
            assert not lower
        else:
            assert step.ends[step.row - 1] == max(lower)
            assert (step.action == SIXTH) == (len(step.taken) == ROW_LIMIT)


@given(positions())
def test_stopping_and_going_on_equals_resolving_at_once(position):
    rows, plays, choices = position
    result = resolve_round(rows, plays, {})
    given_choices = {}
    while result.pending is not None:
        given_choices[result.pending.player] = choices[result.pending.player]
        result = continue_round(result, plays, given_choices)
    assert result == resolve_round(rows, plays, given_choices)


@settings(max_examples=50)
@given(st.randoms(use_true_random=False), st.integers(2, 10))
def test_a_whole_game_conserves_cards_and_bulls(rng, players):
    dealt = rng.sample(range(1, 105), 10 * players + 4)
    names = [f"P{i}" for i in range(players)]
    rounds = []
    for turn in range(10):
        plays = [(name, dealt[seat * 10 + turn]) for seat, name in enumerate(names)]
        choices = {name: rng.randint(1, 4) for name in names}
        rounds.append((plays, choices))
    game = replay_game(dealt[-4:], rounds, names)
    on_piles = [card for pile in game.piles.values() for card in pile]
    assert sorted(on_piles + table_cards(game.rows)) == sorted(dealt)
    assert sum(game.bulls().values()) + pile_bulls(table_cards(game.rows)) == pile_bulls(dealt)
    check_rows(game.rows)


@given(st.text(), st.integers(0, 2**64), st.integers(0, 2**64))
def test_whole_number_never_raises_and_agrees_with_int(text, low, high):
    """Any text is a number in range (what int() makes of its ASCII digits) or None."""
    from companion.rules import whole_number

    number = whole_number(text, low, high)
    digits = text.strip()
    if digits.isascii() and digits.isdigit() and low <= int(digits) <= high:
        assert number == int(digits)
    else:
        assert number is None


@given(st.integers(0, 2**70), st.integers(0, 2**64), st.integers(0, 2**64))
def test_whole_number_reads_every_number_in_range(value, low, high):
    from companion.rules import whole_number

    expected = value if low <= value <= high else None
    assert whole_number(f" {value:0>8} ", low, high) == expected
