"""Every rule of RULES.md, and every rejection it lists, as a test of companion.rules."""

from collections import Counter

import pytest

from companion import rules
from companion.rules import (
    PLACED,
    SIXTH,
    TOO_LOW,
    EndCondition,
    RuleError,
    Step,
    bulls,
    check_plays,
    check_rows,
    check_starting_cards,
    continue_round,
    deck_size,
    explain,
    explain_choice,
    parse_card,
    parse_row_choice,
    pile_bulls,
    play_round,
    replay_game,
    resolve_round,
    row_options,
    standing,
    suggest_row,
)

# ---------------------------------------------------------------------------
# Cards and bulls


def test_deck_holds_104_cards_and_171_bulls():
    assert pile_bulls(range(1, 105)) == 171


@pytest.mark.parametrize(
    ("card", "expected"),
    [
        (55, 7),  # double and multiple of 5
        (11, 5),
        (22, 5),
        (33, 5),
        (44, 5),
        (66, 5),
        (77, 5),
        (88, 5),
        (99, 5),
        (10, 3),
        (20, 3),
        (50, 3),
        (100, 3),
        (5, 2),
        (15, 2),
        (45, 2),
        (95, 2),
        (1, 1),
        (2, 1),
        (47, 1),
        (101, 1),
        (104, 1),
    ],
)
def test_bulls_per_card(card, expected):
    assert bulls(card) == expected


def test_bull_counts_over_the_deck():
    counts = Counter(bulls(card) for card in range(1, 105))
    assert counts == {1: 76, 2: 9, 3: 10, 5: 8, 7: 1}


@pytest.mark.parametrize(("players", "highest"), [(2, 24), (3, 34), (4, 44), (6, 64)])
def test_pro_deck_uses_ten_per_player_plus_four(players, highest):
    assert deck_size(players, pro=True) == highest


def test_standard_deck_is_104_whatever_the_players():
    assert deck_size(3) == deck_size(10) == 104


# ---------------------------------------------------------------------------
# A round


def test_cards_are_placed_lowest_first_whatever_the_order_given():
    rows = ((10,), (20,), (30,), (40,))
    result = resolve_round(rows, [("Ben", 35), ("Anna", 21), ("Cleo", 22)])
    assert [step.card for step in result.steps] == [21, 22, 35]
    assert result.rows == ((10,), (20, 21, 22), (30, 35), (40,))


def test_card_goes_to_the_closest_lower_end():
    rows = ((5,), (44,), (30,), (41,))
    (step,) = resolve_round(rows, [("Anna", 47)]).steps
    assert (step.row, step.action, step.taken, step.bulls) == (2, PLACED, (), 0)


def test_a_higher_end_is_never_a_target_even_when_closer():
    rows = ((5,), (48,), (30,), (41,))
    (step,) = resolve_round(rows, [("Anna", 47)]).steps
    assert step.row == 4  # 48 is closer but higher


def test_each_placement_changes_the_rows_for_the_next_card():
    rows = ((10,), (60,), (70,), (80,))
    result = resolve_round(rows, [("Anna", 20), ("Ben", 30)])
    assert [step.row for step in result.steps] == [1, 1]
    assert result.rows[0] == (10, 20, 30)


def test_sixth_card_takes_the_five_and_starts_the_row():
    rows = ((1,), (2,), (3,), (10, 11, 12, 13, 15))
    (step,) = resolve_round(rows, [("Ben", 20)]).steps
    assert step.action == SIXTH
    assert step.taken == (10, 11, 12, 13, 15)
    assert step.bulls == 3 + 5 + 1 + 1 + 2
    assert resolve_round(rows, [("Ben", 20)]).rows[3] == (20,)


def test_fifth_card_is_still_placed():
    rows = ((1,), (2,), (3,), (10, 11, 12, 13))
    result = resolve_round(rows, [("Ben", 20)])
    assert result.steps[0].action == PLACED
    assert result.rows[3] == (10, 11, 12, 13, 20)


def test_too_low_card_stops_and_asks_its_player():
    rows = ((12,), (24, 25), (37,), (40, 50, 55))
    result = resolve_round(rows, [("Anna", 39), ("Cleo", 3)])
    assert not result.resolved
    assert result.steps == ()
    pending = result.pending
    assert (pending.player, pending.card) == ("Cleo", 3)
    assert [option.row for option in pending.options] == [1, 2, 3, 4]
    assert pending.options[1].cards == (24, 25)
    assert pending.options[3].bulls == 3 + 7 + 3
    assert pending.suggested == 1  # rows 1 and 3 both hold 1 card with 1 bull: the lower


def test_suggestion_fewest_bulls_then_fewest_cards_then_lower_row():
    options = row_options(((12, 13), (24,), (37,), (40, 50)))
    # rows 2 and 3 have 1 bull and 1 card: the lower row number wins
    assert suggest_row(options) == 2
    options = row_options(((12, 13), (22,), (55,), (10,)))
    # 2 bulls (two cards) vs 5 vs 7 vs 3: fewest bulls first
    assert suggest_row(options) == 1
    options = row_options(((1, 2), (3,), (50,), (60,)))
    # rows 1 and 2 both carry... row 1 has 2 bulls, row 2 has 1
    assert suggest_row(options) == 2


def test_suggestion_prefers_fewer_cards_on_equal_bulls():
    options = row_options(((1, 2), (10,), (50,), (60,)))  # row 1: 2 bulls/2 cards, 10: 3
    assert suggest_row(options) == 1
    options = row_options(((1, 2), (5,), (50,), (60,)))  # 2 bulls each: 5 has 1 card
    assert suggest_row(options) == 2


def test_too_low_player_may_take_any_row_and_it_is_recorded():
    rows = ((12,), (24, 25), (37,), (40, 50, 55))
    for row in (1, 2, 3, 4):
        result = resolve_round(rows, [("Anna", 39), ("Cleo", 3)], {"Cleo": row})
        first = result.steps[0]
        assert (first.player, first.action, first.row) == ("Cleo", TOO_LOW, row)
        assert first.taken == rows[row - 1]
        assert result.rows[row - 1][0] == 3


def test_choice_changes_the_rest_of_the_round():
    rows = ((12,), (24,), (37,), (41,))
    # Cleo takes row 3 (37): then Anna's 39 goes to row 2 (24) instead of row 3.
    took_3 = resolve_round(rows, [("Anna", 39), ("Cleo", 3)], {"Cleo": 3})
    took_1 = resolve_round(rows, [("Anna", 39), ("Cleo", 3)], {"Cleo": 1})
    assert took_3.steps[1].row == 2
    assert took_1.steps[1].row == 3


def test_second_too_low_card_lands_on_the_first():
    rows = ((12,), (24,), (37,), (41,))
    result = resolve_round(rows, [("Ben", 5), ("Cleo", 3)], {"Cleo": 2})
    assert [(s.player, s.action, s.row) for s in result.steps] == [
        ("Cleo", TOO_LOW, 2),
        ("Ben", PLACED, 2),
    ]


def test_worked_example_from_rules():
    rows = ((5, 12), (20, 24), (30, 37), (31, 32, 33, 34, 40))
    plays = [("Anna", 39), ("Ben", 42), ("Cleo", 3)]
    stopped = resolve_round(rows, plays)
    assert stopped.pending.player == "Cleo"
    result = resolve_round(rows, plays, {"Cleo": 1})
    assert [(s.player, s.card, s.row, s.action, s.taken, s.bulls) for s in result.steps] == [
        ("Cleo", 3, 1, TOO_LOW, (5, 12), 3),
        ("Anna", 39, 3, PLACED, (), 0),
        ("Ben", 42, 4, SIXTH, (31, 32, 33, 34, 40), 11),
    ]
    assert result.rows == ((3,), (20, 24), (30, 37, 39), (42,))
    assert result.bulls_by_player() == {"Cleo": 3, "Anna": 0, "Ben": 11}


def test_continue_round_equals_resolving_again():
    rows = ((5, 12), (20, 24), (30, 37), (31, 32, 33, 34, 40))
    plays = [("Anna", 39), ("Ben", 42), ("Cleo", 3), ("Dan", 1)]
    stopped = resolve_round(rows, plays)
    assert stopped.pending.player == "Dan"
    middle = continue_round(stopped, plays, {"Dan": 2})
    assert middle.resolved  # Cleo's 3 now follows Dan's 1 in row 2
    assert middle == resolve_round(rows, plays, {"Dan": 2})


def test_taken_cards_go_to_the_takers_pile_and_never_return():
    game = replay_game(
        [12, 24, 37, 40],
        [
            ([("Anna", 39), ("Ben", 42), ("Cleo", 3)], {"Cleo": 1}),
            ([("Anna", 2), ("Ben", 43), ("Cleo", 50)], {"Anna": 1}),
        ],
        players=["Anna", "Ben", "Cleo"],
    )
    assert game.piles == {"Anna": (3,), "Ben": (), "Cleo": (12,)}
    assert game.rows == ((2,), (24,), (37, 39), (40, 42, 43, 50))
    assert game.bulls() == {"Anna": 1, "Ben": 0, "Cleo": 1}
    assert game.played == {39, 42, 3, 2, 43, 50}


# ---------------------------------------------------------------------------
# Explanations


def test_explanation_names_the_closest_end_and_the_runner_up():
    step = resolve_round(((5,), (44,), (30,), (41,)), [("Anna", 47)]).steps[0]
    assert explain(step) == "47 goes to row 2: 44 is the closest lower end (row 4 ends in 41)."


def test_explanation_of_a_single_lower_end():
    step = resolve_round(((5,), (60,), (70,), (80,)), [("Anna", 47)]).steps[0]
    assert explain(step) == "47 goes to row 1: 5 is the only lower end."


def test_explanation_of_a_sixth_card_names_taker_cards_and_bulls():
    rows = ((5, 12), (20, 24), (30, 37), (31, 32, 33, 34, 48))
    step = resolve_round(rows, [("Ben", 52)]).steps[0]
    assert explain(step) == (
        "52 would be the 6th card in row 4: Ben takes 5 cards, 9 bulls. "
        "48 is the closest lower end (row 3 ends in 37)."
    )


def test_explanation_of_a_too_low_card_and_singular_words():
    step = resolve_round(((12,), (24,), (37,), (40,)), [("Cleo", 3)], {"Cleo": 1}).steps[0]
    assert explain(step) == (
        "3 is lower than every row's end (12, 24, 37, 40): Cleo chose row 1 and takes "
        "1 card, 1 bull."
    )


def test_explanation_uses_the_given_translation_and_names():
    step = Step(7, 3, 1, TOO_LOW, (12,), 1, (12, 24, 37, 40))
    german = {"%(num)d card": "%(num)d Karte", "%(num)d bull": "%(num)d Hornochse"}
    text = explain(
        step,
        name={7: "Cleo"}.get,
        gettext=lambda s: s.replace("is lower than every row's end", "ist kleiner als jedes Ende"),
        ngettext=lambda s, p, n: german[s] if n == 1 else p,
    )
    assert text.startswith("3 ist kleiner als jedes Ende (12, 24, 37, 40): Cleo chose row 1")
    assert text.endswith("1 Karte, 1 Hornochse.")


def test_choice_prompt_names_player_and_suggestion():
    pending = resolve_round(((12,), (24,), (37,), (40,)), [("Cleo", 3)]).pending
    assert explain_choice(pending) == (
        "3 is lower than every row's end: Cleo takes a row of their choice (fewest bulls: row 1)."
    )


# ---------------------------------------------------------------------------
# What the companion must reject

TABLE = ((12,), (24,), (37,), (40,))


@pytest.mark.parametrize(
    "value",
    [0, 105, -1, "0", "105", "abc", "", "  ", "7.5", 7.5, True, None, "1e3", "٣", "+5", [5]],
)
def test_card_outside_the_deck_is_rejected(value):
    with pytest.raises(RuleError):
        parse_card(value)


def test_card_accepts_digits_with_spaces():
    assert parse_card(" 47 ") == 47
    assert parse_card(104) == 104


def test_pro_deck_rejects_cards_above_its_range():
    deck = deck_size(3, pro=True)
    assert parse_card(34, deck) == 34
    with pytest.raises(RuleError, match="from 1 to 34"):
        parse_card(35, deck)


@pytest.mark.parametrize(
    ("plays", "fragment"),
    [
        ([("Anna", 50), ("Ben", 50), ("Cleo", 60)], "both entered 50"),
        ([("Anna", 24), ("Ben", 50), ("Cleo", 60)], "24 already lies in row 2"),
        ([("Anna", 7), ("Ben", 50), ("Cleo", 60)], "was already played"),
        ([("Anna", 9), ("Ben", 50), ("Cleo", 60)], "starting cards"),
        ([("Anna", 51), ("Ben", 50)], "No card entered for Cleo"),
        ([("Anna", 51), ("Ben", 50), ("Cleo", 60), ("Zoe", 61)], "Zoe is not playing"),
        ([("Anna", 51), ("Anna", 50), ("Cleo", 60)], "Anna has two cards"),
        ([("Anna", 105), ("Ben", 50), ("Cleo", 60)], "no card 105"),
        ([("Anna", "abc"), ("Ben", 50), ("Cleo", 60)], "not a card"),
        ([("Anna", ""), ("Ben", 50), ("Cleo", 60)], "Enter a card"),
        ([], "at least one"),
    ],
)
def test_bad_round_is_rejected_with_a_precise_message(plays, fragment):
    with pytest.raises(RuleError, match=fragment) as error:
        check_plays(
            TABLE, plays, players=["Anna", "Ben", "Cleo"], played={7}, starting={9, 12, 24, 37, 40}
        )
    if plays:
        assert error.value.subject in {"Anna", "Ben", "Cleo", "Zoe"}


def test_more_players_than_the_pro_deck_serves_are_rejected():
    plays = [("A", 1), ("B", 2), ("C", 3), ("D", 4)]
    with pytest.raises(RuleError, match="At most 3 players"):
        check_plays(((20,), (21,), (22,), (23,)), plays, deck=34)


@pytest.mark.parametrize("value", [0, 5, -1, "x", "", 1.0, True, None, "2.5"])
def test_row_choice_outside_1_to_4_is_rejected(value):
    with pytest.raises(RuleError, match="row 1, 2, 3 or 4"):
        parse_row_choice(value)


def test_row_choice_accepts_form_text():
    assert parse_row_choice("3") == 3


def test_choice_for_a_card_that_is_not_too_low_is_rejected():
    with pytest.raises(RuleError, match="Anna's 39 is not too low"):
        play_round(TABLE, [("Anna", 39), ("Cleo", 3)], {"Cleo": 1, "Anna": 2})


def test_choice_for_a_card_that_stopped_being_too_low_is_rejected():
    # Cleo's 3 takes a row; Ben's 5 then follows the 3 and is no longer too low.
    with pytest.raises(RuleError, match="Ben's 5 is not too low"):
        play_round(TABLE, [("Ben", 5), ("Cleo", 3)], {"Cleo": 1, "Ben": 2})


def test_choice_for_a_player_without_a_card_is_rejected():
    with pytest.raises(RuleError, match="Zoe has no card"):
        play_round(TABLE, [("Anna", 39)], {"Zoe": 1})


def test_choice_for_a_card_still_to_come_is_kept_for_later():
    result = play_round(TABLE, [("Ben", 5), ("Cleo", 3)], {"Ben": 2})
    assert result.pending.player == "Cleo"


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [
        (((1,), (2,), (3,)), "exactly 4 rows"),
        (((1,), (2,), (3,), ()), "1 to 5 cards"),
        (((1,), (2,), (3,), (4, 5, 6, 7, 8, 9)), "1 to 5 cards"),
        (((1,), (2,), (3,), (9, 8)), "must rise"),
        (((1,), (2,), (3,), (1, 8)), "appears twice"),
        (((1,), (2,), (3,), (0,)), "no card 0"),
    ],
)
def test_impossible_table_is_rejected(rows, fragment):
    with pytest.raises(RuleError, match=fragment):
        check_rows(rows)


@pytest.mark.parametrize(
    ("cards", "fragment"),
    [
        ([1, 2, 3], "exactly 4"),
        ([1, 2, 3, 3], "already the starting card"),
        ([1, 2, 3, 105], "no card 105"),
        ([1, 2, 3, 4, 5], "exactly 4"),
    ],
)
def test_bad_starting_cards_are_rejected(cards, fragment):
    with pytest.raises(RuleError, match=fragment):
        check_starting_cards(cards)


def test_rule_error_translates_its_template():
    with pytest.raises(RuleError) as error:
        parse_card(0)
    assert (
        error.value.message(lambda s: s.replace("There is no card", "Es gibt keine Karte"))
        == "Es gibt keine Karte 0 in this deck: cards go from 1 to 104."
    )


# ---------------------------------------------------------------------------
# A match


def test_default_end_is_more_than_66_checked_after_a_complete_game():
    end = EndCondition()
    assert not end.is_met({"Anna": 66, "Ben": 10}, 3)
    assert end.is_met({"Anna": 67, "Ben": 10}, 3)


def test_66_or_more_house_rule():
    end = EndCondition(rules.AT_LEAST, 66)
    assert end.is_met({"Anna": 66}, 1)
    assert not end.is_met({"Anna": 65}, 1)


def test_other_limit_house_rule():
    end = EndCondition(rules.MORE_THAN, 74)
    assert not end.is_met({"Anna": 74}, 4)
    assert end.is_met({"Anna": 75}, 4)


def test_fixed_number_of_games():
    end = EndCondition(rules.GAMES, 3)
    assert not end.is_met({"Anna": 200}, 2)
    assert end.is_met({"Anna": 0}, 3)


@pytest.mark.parametrize(
    ("kind", "value"), [("sometimes", 66), (rules.MORE_THAN, 0), (rules.GAMES, 1001)]
)
def test_bad_end_condition_is_rejected(kind, value):
    with pytest.raises(RuleError):
        EndCondition(kind, value)


def test_remaining_bulls_before_the_limit():
    assert EndCondition().remaining(60) == 6
    assert EndCondition(rules.AT_LEAST, 66).remaining(60) == 5
    assert EndCondition(rules.GAMES, 3).remaining(60) is None


def test_winner_has_the_fewest_bulls_once_the_match_is_over():
    games = [{"Anna": 30, "Ben": 10, "Cleo": 20}, {"Anna": 40, "Ben": 12, "Cleo": 2}]
    result = standing(["Anna", "Ben", "Cleo"], games)
    assert result.totals == {"Anna": 70, "Ben": 22, "Cleo": 22}
    assert result.over
    assert result.winners == ("Ben", "Cleo")  # equal lowest totals share the win


def test_no_winner_before_the_end():
    result = standing(["Anna", "Ben"], [{"Anna": 30, "Ben": 10}])
    assert not result.over
    assert result.winners == ()
    assert result.leaders == ("Ben",)


def test_players_without_games_start_at_zero():
    result = standing(["Anna", "Ben"], [])
    assert result.totals == {"Anna": 0, "Ben": 0}
    assert result.games_played == 0


@pytest.mark.parametrize("value", ["", "-1", "172", "1.5", "x", True, None, 172])
def test_bulls_outside_0_to_171_are_rejected(value):
    with pytest.raises(RuleError, match="from 0 to 171"):
        rules.parse_bulls(value)


def test_bulls_accept_zero_and_the_whole_deck():
    assert rules.parse_bulls("0") == 0
    assert rules.parse_bulls(" 171 ") == 171
    assert rules.parse_bulls(12) == 12


@pytest.mark.parametrize(
    "value",
    [
        "9" * 5000,
        "1" + "0" * 4999,
        "²",
        "٣",
        "\U0001d7d7",
        "-1",
        "+1",
        "1.0",
        "1e3",
        "",
        " ",
        "0x1",
    ],
)
def test_numbers_from_outside_are_bounded_before_they_are_converted(value):
    """int() would raise on 5,000 digits and on "²", and take "٣" as 3: none is a number."""
    assert rules.whole_number(value, 1, 10**6) is None
    with pytest.raises(RuleError):
        rules.parse_bulls(value)
    with pytest.raises(RuleError):
        rules.parse_row_choice(value)
    with pytest.raises(RuleError):
        rules.parse_card(value)


def test_a_whole_number_may_carry_spaces_and_leading_zeros():
    assert rules.whole_number(" 007 ", 1, 10) == 7
    assert rules.whole_number("000", 0, 10) == 0
    assert rules.whole_number("0" * 4999 + "1", 1, 10) == 1  # no int() of 5,000 digits
    assert rules.whole_number("11", 1, 10) is None
    assert rules.whole_number("0", 1, 10) is None


def test_running_figures_count_the_game_in_progress():
    """What the scoreboards show during a game: complete games plus the bulls taken so far."""
    result = rules.running(
        ["Anna", "Ben", "Cleo"], [{"Anna": 5, "Ben": 8, "Cleo": 8}], {"Anna": 16}, EndCondition()
    )
    assert result.totals == {"Anna": 21, "Ben": 8, "Cleo": 8}
    assert result.leaders == ()  # two share the fewest: nobody leads (issue 57)
    assert result.to_limit == {"Anna": 45, "Ben": 58, "Cleo": 58}
    assert result.ranking == ("Ben", "Cleo", "Anna")  # equal totals keep their seats


def test_running_figures_past_the_limit_or_without_one():
    over = rules.running(["Anna", "Ben"], [{"Anna": 60, "Ben": 1}], {"Anna": 9}, EndCondition())
    assert over.to_limit == {"Anna": 0, "Ben": 65}
    games = rules.running(["Anna", "Ben"], [], {"Ben": 3}, EndCondition(rules.GAMES, 3))
    assert games.to_limit is None and games.leaders == ("Anna",)


def test_nobody_leads_while_everyone_has_the_same_total():
    assert rules.running(["Anna", "Ben"], [], {}, EndCondition()).leaders == ()
    assert rules.running(["Anna", "Ben"], [{"Anna": 4, "Ben": 4}], {}).leaders == ()


@pytest.mark.parametrize(
    ("totals", "leaders"),
    [
        ({"Anna": 0, "Ben": 0, "Cleo": 0}, ()),  # the finding: three "leads" at 0-0-0
        ({"Anna": 3, "Ben": 3, "Cleo": 5}, ()),  # two share the fewest
        ({"Anna": 5, "Ben": 3, "Cleo": 5}, ("Ben",)),  # a tie behind the leader
        ({"Anna": 9, "Ben": 3, "Cleo": 5}, ("Ben",)),
    ],
)
def test_only_a_lowest_total_of_ones_own_leads(totals, leaders):
    """Issue 57: nobody leads a tie for the fewest bulls, in the running score and in the
    standing after complete games (the lists' "leading: …")."""
    players = list(totals)
    assert rules.running(players, [totals], {}).leaders == leaders
    assert rules.standing(players, [totals]).leaders == leaders
    assert rules.standing(players, [totals]).winners == ()  # not over: no winner yet


@pytest.mark.parametrize(
    ("players", "deck", "most"),
    [
        (10, 104, 171 - 4),  # 100 of the 104 cards taken: the four 1-bull cards stay out
        (2, 104, 7 + 8 * 5 + 10 * 3 + 2),  # 55, the other doubles, the tens and a five
        (3, 34, 55 - 4),  # the pro deck of three: 34 cards, the four 1-bull cards stay out
    ],
)
def test_a_games_bulls_add_up_to_at_most_what_ten_cards_a_player_can_take(players, deck, most):
    """At a game's end each row still holds a card: of the 10 cards a player and the 4
    starting cards, at most 10 a player are taken, the bulliest of the deck at best."""
    bulliest = sorted((rules.bulls(card) for card in range(1, deck + 1)), reverse=True)
    assert rules.most_taken(players, deck) == sum(bulliest[: 10 * players]) == most
    rules.check_game_bulls([most - 1, 1, *[0] * (players - 2)], deck)
    with pytest.raises(rules.RuleError) as refused:
        rules.check_game_bulls([most, 1, *[0] * (players - 2)], deck)
    assert refused.value.message() == (
        f"The scores add up to {most + 1} bulls, but a game of {players} players "
        f"hands out at most {most}."
    )
