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
        ("de", rules.EndCondition(rules.GAMES, 1), "Das Spiel endet nach 1 Partie."),
        ("de", rules.EndCondition(rules.GAMES, 3), "Das Spiel endet nach 3 Partien."),
        ("fr", rules.EndCondition(rules.GAMES, 1), "La partie se termine après 1\u00a0manche."),
        ("fr", rules.EndCondition(rules.GAMES, 3), "La partie se termine après 3\u00a0manches."),
    ],
)
def test_the_end_condition_is_a_sentence_with_its_plural(app, lang, end, sentence):
    """ "The match ends after 1 game." in every language: singular and plural."""
    with app.test_request_context(headers={"Accept-Language": lang}):
        assert sentence in present.end_sentence(end)


def test_a_round_view_keeps_the_engines_order(app):
    """The worked example: Cleo's too-low 3, Anna's 39, then Ben's 42 that takes row 4;
    the summary lists the steps as the engine placed them, each card once."""
    result = rules.resolve_round(ROWS, PLAYS, {"Cleo": 1})
    with app.test_request_context():
        shown = present.round_view(2, present.step_views(result.steps))
    assert [(step.player, step.card, step.action) for step in shown.steps] == [
        ("Cleo", 3, rules.TOO_LOW),
        ("Anna", 39, rules.PLACED),
        ("Ben", 42, rules.SIXTH),
    ]
    assert shown.taken == {1: ("Cleo",), 4: ("Ben",)}
    assert shown.order == {3: 1, 39: 2, 42: 3}


@pytest.mark.parametrize(
    ("lang", "count", "words"),
    [("en", 1, "1\u00a0bull"), ("de", 7, "7\u00a0Hornochsen"), ("fr", 7, "7\u00a0têtes de bœuf")],
)
def test_bull_words_together_never_split_the_number_from_its_noun(app, lang, count, words):
    """In a sentence that may wrap: "7 bulls" stays on one line, in every language."""
    with app.test_request_context(headers={"Accept-Language": lang}):
        assert present.bull_words(count, together=True) == words
        # Without it, as a card says it: French has its no-break space in the catalog.
        plain = words if lang == "fr" else words.replace("\u00a0", " ")
        assert present.bull_words(count) == plain


@pytest.mark.parametrize(
    ("chance", "en", "de", "fr"),
    [
        (0.01, "a 1% chance", "eine Chance von 1 %", "1 % de chances"),
        (0.08, "an 8% chance", "eine Chance von 8 %", "8 % de chances"),
        (0.11, "an 11% chance", "eine Chance von 11 %", "11 % de chances"),
        (0.18, "an 18% chance", "eine Chance von 18 %", "18 % de chances"),
        (0.80, "an 80% chance", "eine Chance von 80 %", "80 % de chances"),
        (0.83, "an 83% chance", "eine Chance von 83 %", "83 % de chances"),
        (1.00, "a 100% chance", "eine Chance von 100 %", "100 % de chances"),
        (0.003, "a 0.3% chance", "eine Chance von 0,3 %", "0,3 % de chances"),
        (0.0001, "a <0.1% chance", "eine Chance von <0,1 %", "<0,1 % de chances"),
    ],
)
def test_a_chance_takes_the_article_its_number_is_said_with(app, chance, en, de, fr):
    """ "an 8% chance" (eight), "a 1% chance" (one): issue 43 read "a 8% chance"."""
    for lang, words in (("en", en), ("de", de), ("fr", fr)):
        with app.test_request_context(headers={"Accept-Language": lang}):
            said = present.chance_words(chance)
        assert said.replace("\u00a0", " ").replace("\u202f", " ") == words, lang


@pytest.mark.parametrize(
    ("number", "an"),
    [
        ("1", False),
        ("8", True),
        ("11", True),
        ("18", True),
        ("80", True),
        ("83", True),
        ("100", False),
        ("8%", True),
        ("800", True),
        ("899", True),
        ("110", False),
        ("8,000", True),
        ("11,000", True),
        ("18,500", True),
        ("1,800", False),
        ("0.8%", False),
        ("<0.1%", False),
        ("", False),
    ],
)
def test_says_an_before_numbers_spoken_with_a_vowel(number, an):
    assert present.says_an(number) is an
