"""Presentation helpers: what a page shows of a round, all of it from the rules engine."""

import pytest

from companion import rules
from companion.web import present

ROWS = [[5, 12], [20, 24], [30, 37], [31, 32, 33, 34, 40]]
PLAYS = [("Anna", 39), ("Ben", 42), ("Cleo", 3)]


def test_step_views_of_the_worked_example(app):
    result = rules.resolve_round(ROWS, PLAYS, {"Cleo": 1})
    with app.test_request_context():
        views = present.step_views(result.steps, name=str.upper)
    assert [(v.player, v.card, v.card_bulls, v.row, v.action, v.taken, v.bulls) for v in views] == [
        ("CLEO", 3, 1, 1, rules.TOO_LOW, (5, 12), 3),
        ("ANNA", 39, 1, 3, rules.PLACED, (), 0),
        ("BEN", 42, 1, 4, rules.SIXTH, (31, 32, 33, 34, 40), 11),
    ]
    assert views[2].text == rules.explain(result.steps[2], name=str.upper)
    assert "BEN takes 5 cards, 11 bulls" in views[2].text


def test_step_views_speak_german(app):
    result = rules.resolve_round(ROWS, PLAYS, {"Cleo": 1})
    with app.test_request_context(headers={"Accept-Language": "de"}):
        views = present.step_views(result.steps)
    assert views[1].text.startswith("39 kommt in Reihe 3")


def test_choice_view_marks_the_suggested_row(app):
    pending = rules.resolve_round(ROWS, PLAYS).pending
    with app.test_request_context():
        view = present.choice_view(pending, name=str.upper)
    assert (view.player, view.card, view.card_bulls, view.suggested) == ("CLEO", 3, 1, 1)
    assert [(o.row, o.cards, o.bulls, o.suggested) for o in view.options] == [
        (1, (5, 12), 3, True),
        (2, (20, 24), 4, False),
        (3, (30, 37), 4, False),
        (4, (31, 32, 33, 34, 40), 11, False),
    ]
    assert view.text == rules.explain_choice(pending, name=str.upper)


def test_row_views_total_the_bulls_and_mark_changes():
    views = present.row_views(ROWS, changed=(2,))
    assert [(v.number, v.cards, v.bulls, v.changed, v.full) for v in views] == [
        (1, (5, 12), 3, False, False),
        (2, (20, 24), 4, True, False),
        (3, (30, 37), 4, False, False),
        (4, (31, 32, 33, 34, 40), 11, False, True),
    ]


def test_changed_rows_are_the_rows_cards_went_to():
    result = rules.resolve_round(ROWS, PLAYS, {"Cleo": 1})
    assert present.changed_rows(result.steps) == (1, 3, 4)


@pytest.mark.parametrize(
    ("lang", "end", "sentence"),
    [
        ("en", rules.EndCondition(), "someone has more than 66 bulls."),
        ("en", rules.EndCondition(rules.AT_LEAST), "someone has 66 bulls or more."),
        ("en", rules.EndCondition(rules.GAMES, 5), "The match ends after 5 games."),
        ("en", rules.EndCondition(rules.GAMES, 1), "The match ends after 1 game."),
        ("en", rules.EndCondition(rules.MORE_THAN, 1), "more than 1 bull."),
        ("de", rules.EndCondition(rules.GAMES, 1), "Die Partieserie endet nach 1 Partie."),
        ("de", rules.EndCondition(rules.GAMES, 3), "Die Partieserie endet nach 3 Partien."),
        ("fr", rules.EndCondition(rules.GAMES, 1), "La partie se termine après 1\u00a0manche."),
        ("fr", rules.EndCondition(rules.GAMES, 3), "La partie se termine après 3\u00a0manches."),
    ],
)
def test_the_end_condition_is_a_sentence_with_its_plural(app, lang, end, sentence):
    """ "The match ends after 1 game." in every language: singular and plural."""
    with app.test_request_context(headers={"Accept-Language": lang}):
        assert sentence in present.end_sentence(end)
