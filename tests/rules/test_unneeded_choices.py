"""rules.unneeded_choices: the row choices a round no longer uses once its cards changed."""

from hypothesis import given
from hypothesis import strategies as st

from companion import rules

ROWS = [[12], [24], [37], [40]]


def test_a_choice_for_a_card_that_is_not_too_low_is_unneeded():
    plays = [("anna", 44), ("ben", 50)]
    assert rules.unneeded_choices(ROWS, plays, {"anna": 1}) == {"anna": 1}


def test_a_choice_for_a_too_low_card_is_kept():
    plays = [("anna", 2), ("ben", 50)]
    assert rules.unneeded_choices(ROWS, plays, {"anna": 3}) == {}


def test_a_choice_whose_card_follows_an_earlier_too_low_one_is_unneeded():
    """Anna's 2 takes row 1 and leaves [2] there: Ben's 3 then goes after it."""
    plays = [("anna", 2), ("ben", 3)]
    assert rules.unneeded_choices(ROWS, plays, {"anna": 1, "ben": 4}) == {"ben": 4}


def test_wrong_cards_are_left_to_play_round():
    assert rules.unneeded_choices(ROWS, [("anna", 105)], {"anna": 1}) == {}
    assert rules.unneeded_choices(ROWS, [("anna", "x")], {"anna": 1}) == {}


@given(
    cards=st.lists(st.integers(1, 104), min_size=2, max_size=6, unique=True).filter(
        lambda cards: not {12, 24, 37, 40} & set(cards)
    ),
    rows=st.lists(st.integers(1, 4), min_size=6, max_size=6),
)
def test_without_the_unneeded_choices_play_round_takes_the_round(cards, rows):
    """Given a row choice for every player, what is left after dropping the unneeded
    ones is exactly what the round needs: play_round accepts it and nothing waits."""
    plays = list(enumerate(cards))
    choices = dict(enumerate(rows[: len(cards)]))
    unneeded = rules.unneeded_choices(ROWS, plays, choices)
    kept = {player: row for player, row in choices.items() if player not in unneeded}
    result = rules.play_round(ROWS, plays, kept)
    assert result.pending is None
    assert set(unneeded) | set(kept) == set(choices)
