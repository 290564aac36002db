"""Entering a game: starting cards, rounds, too-low row choices and typed scores, each
checked against the engine; bad entries refused next to the field, nothing stored."""

import random
import re

import pytest
from driver import (
    add_players,
    choose,
    enter_round,
    i_am,
    pending_of,
    play_game,
    score_game,
    start_game,
    start_match,
    state_of,
    summary_lines,
    table_snapshot,
    undo,
)

from companion import rules
from companion.db import db
from companion.derived import GameResult


def test_a_whole_cards_game_matches_the_engine(client):
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dan")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    expected = play_game(client, match_id, ids, random.Random(3))
    state = state_of(client, match_id)
    assert state.over
    assert state.standing.totals == expected.bulls()
    assert state.games[0].table.piles == expected.piles
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "The match is over" in page
    for name in ("Anna", "Ben", "Cleo", "Dan"):
        assert name in page


def test_derived_results_are_written_when_a_game_finishes(client, app):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    expected = play_game(client, match_id, ids, random.Random(5))
    with app.app_context():
        rows = db.session.execute(db.select(GameResult.player_id, GameResult.bulls)).all()
    assert dict(rows) == expected.bulls()


@pytest.mark.parametrize("seed", range(4))
def test_matches_to_the_end_with_every_too_low_choice(client, seed):
    rng = random.Random(seed)
    ids = add_players(client, *[f"P{i}" for i in range(rng.randint(2, 10))])
    match_id = start_match(client, ids, end_kind="more_than", end_value=30)
    games = []
    while not state_of(client, match_id).over:
        games.append(play_game(client, match_id, ids, rng).bulls())
        assert len(games) < 30
    expected = rules.standing(ids, games, rules.EndCondition("more_than", 30))
    state = state_of(client, match_id)
    assert state.standing == expected
    assert state.standing.winners == rules.lowest(expected.totals)


def test_a_too_low_choice_and_a_sixth_card_at_the_table(client, trio):
    (anna, ben, cleo), match_id = trio
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    assert enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    assert enter_round(client, match_id, {anna: 39, ben: 44, cleo: 3}).status_code == 303
    assert pending_of(client, match_id).player == cleo
    assert choose(client, match_id, cleo, 1).status_code == 303
    assert enter_round(client, match_id, {anna: 45, ben: 50, cleo: 4}).status_code == 303
    state = state_of(client, match_id)
    assert [(step.card, step.row, step.action) for step in state.current.last_round.steps] == [
        (4, 1, rules.PLACED),
        (45, 4, rules.SIXTH),
        (50, 4, rules.PLACED),
    ]
    assert state.current.table.rows == ((3, 4), (24,), (37, 39), (45, 50))
    assert state.current.bulls == {anna: 11, ben: 0, cleo: 1}
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert summary_lines(page) == [
        "Cleo 4 → row 1",
        "Anna 45: sixth card, took row 4, 11\u00a0bulls",
        "Ben 50 → row 4",
    ]
    # The explanation is one tap away: the round's replay.
    explain = re.search(r'class="explain" href="([^"#]+)', page).group(1)
    explained = client.get(explain.replace("&amp;", "&")).get_data(as_text=True)
    assert "45 would be the 6th card in row 4: Anna takes 5 cards, 11 bulls." in explained


def test_round_stops_until_the_too_low_player_chooses(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "suggested" in page.lower()
    # another round cannot be entered while Cleo chooses
    response = enter_round(client, match_id, {anna: 50, ben: 51, cleo: 52}, round_=2)
    assert response.status_code == 422
    assert "First Cleo chooses a row for 3" in response.get_data(as_text=True)


@pytest.mark.parametrize("row", [1, 2, 3, 4])
def test_any_row_may_be_taken_and_is_recorded(client, trio, row):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})
    assert choose(client, match_id, cleo, row).status_code == 303
    first = state_of(client, match_id).current.last_round.steps[0]
    assert (first.player, first.row) == (cleo, row)
    assert first.taken == ((12,), (24,), (37,), (40,))[row - 1]


@pytest.mark.parametrize("row", ["0", "5", "x", ""])
def test_bad_row_choice_is_rejected(client, trio, app, row):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})
    before = table_snapshot(app)
    response = choose(client, match_id, cleo, row)
    assert response.status_code == 422
    assert "Choose row 1, 2, 3 or 4" in response.get_data(as_text=True)
    assert table_snapshot(app) == before


def test_choice_by_the_wrong_player_is_rejected(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})
    response = choose(client, match_id, anna, 1)
    assert response.status_code == 422
    assert "Cleo" in response.get_data(as_text=True)


def test_choice_without_a_too_low_card_is_rejected(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 43})
    response = client.post(
        f"/matches/{match_id}/choice",
        data={"player": str(cleo), "row": "1", "game": "1", "round": "1"},
    )
    assert response.status_code == 422
    assert "No card is waiting" in response.get_data(as_text=True)


@pytest.mark.parametrize(
    ("cards", "field", "message"),
    [
        ({"Anna": "abc", "Ben": "50", "Cleo": "60"}, "Anna", "is not a card"),
        ({"Anna": "7.5", "Ben": "50", "Cleo": "60"}, "Anna", "is not a card"),
        ({"Anna": "0", "Ben": "50", "Cleo": "60"}, "Anna", "no card 0"),
        ({"Anna": "105", "Ben": "50", "Cleo": "60"}, "Anna", "no card 105"),
        ({"Anna": "50", "Ben": "50", "Cleo": "60"}, "Ben", "both entered 50"),
        ({"Anna": "24", "Ben": "50", "Cleo": "60"}, "Anna", "24 already lies in row 2"),
        ({"Anna": "39", "Ben": "50", "Cleo": "60"}, "Anna", "39 already lies in row 3"),
    ],
)
def test_bad_round_is_rejected_next_to_the_field(client, trio, app, cards, field, message):
    (anna, ben, cleo), match_id = trio
    ids = {"Anna": anna, "Ben": ben, "Cleo": cleo}
    start_game(client, match_id, [12, 24, 37, 41])
    enter_round(client, match_id, {anna: 39, ben: 42, cleo: 43})
    before = table_snapshot(app)
    response = enter_round(client, match_id, {ids[name]: card for name, card in cards.items()})
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert message in page
    assert f'<p class="field-error" id="field-card-{ids[field]}-note">' in page
    assert 'aria-invalid="true"' in page
    for card in cards.values():  # the user's values come back
        assert f'value="{card}"' in page or card == ""
    assert table_snapshot(app) == before


def test_a_starting_or_earlier_card_cannot_be_played(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    enter_round(client, match_id, {anna: 44, ben: 45, cleo: 46})  # 40 row full: 46 takes it
    response = enter_round(client, match_id, {anna: 40, ben: 50, cleo: 60})
    assert response.status_code == 422
    assert "40 is one of this game&#39;s starting cards" in response.get_data(as_text=True)
    response = enter_round(client, match_id, {anna: 41, ben: 50, cleo: 60})
    assert response.status_code == 422
    assert "41 was already played in this game" in response.get_data(as_text=True)


def test_an_empty_round_form_is_refused(client, trio, app):
    (anna, *_), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    before = table_snapshot(app)
    i_am(client, match_id, anna)
    response = enter_round(client, match_id, {})
    assert response.status_code == 422
    assert "Enter at least one card" in response.get_data(as_text=True)
    assert table_snapshot(app) == before


def test_one_phone_entering_for_everybody_must_fill_every_field(client, trio, app):
    """A blank field is a forgotten card: the message sits next to it, nothing is stored."""
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    before = table_snapshot(app)
    response = enter_round(client, match_id, {anna: 41, cleo: 43})
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    field = page.split(f'id="field-card-{ben}"')[1].split("</div>")[0]
    assert 'aria-invalid="true"' in field and "Ben&#39;s card is missing." in field
    assert 'value="41"' in page.split(f'id="field-card-{anna}"')[1][:200]  # kept
    assert table_snapshot(app) == before
    # The form comes back with the focus on the missing card.
    assert f'id="field-card-{ben}"' in page.split("autofocus")[0][-400:]


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_several_missing_cards_are_one_sentence_above_the_fields(client, trio, app, lang):
    """Two blank fields: one sentence names both players (in the page's language), each
    blank field is marked and points to it, and no line of its own pushes *Send* down."""
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    before = table_snapshot(app)
    data = {f"card-{anna}": "41", "game": "1", "round": "1"}
    response = client.post(
        f"/matches/{match_id}/rounds", data=data, headers={"Accept-Language": lang}
    )
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    sentence = {
        "en": "Cards missing: Ben and Cleo.",
        "de": "Karten fehlen: Ben und Cleo.",
        "fr": "Cartes manquantes\u00a0: Ben et Cleo.",
    }[lang]
    assert f'<p class="form-error" id="form-error" role="alert">{sentence}</p>' in page
    for player in (ben, cleo):
        field = page.split(f'id="field-card-{player}"')[1].split("</div>")[0]
        assert 'aria-invalid="true"' in field and 'aria-describedby="form-error"' in field
    assert 'class="field-error"' not in page
    assert 'value="41"' in page.split(f'id="field-card-{anna}"')[1][:200]  # kept
    assert f'id="field-card-{ben}"' in page.split("autofocus")[0][-400:]  # the first blank
    assert table_snapshot(app) == before


def test_a_refused_round_swaps_in_with_its_form_at_the_top(client, trio):
    """htmx swaps the page in scrolled to the form (message, fields, button), not to the
    top of the rows; a plain post gets the page as it is."""
    (anna, _ben, _cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    data = {f"card-{anna}": "41", "game": "1", "round": "1"}
    hx = client.post(f"/matches/{match_id}/rounds", data=data, headers={"HX-Request": "true"})
    assert hx.status_code == 422
    assert hx.headers["HX-Reswap"] == "outerHTML show:#entry:top"


@pytest.mark.parametrize(
    ("cards", "message"),
    [
        ([12, 24, 37], "Enter a card number"),
        ([12, 24, 37, 12], "already the starting card"),
        ([12, 24, 37, 105], "no card 105"),
        ([12, 24, 37, "x"], "is not a card"),
    ],
)
def test_bad_starting_cards_are_rejected(client, trio, app, cards, message):
    _, match_id = trio
    before = table_snapshot(app)
    response = start_game(client, match_id, cards)
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)
    assert table_snapshot(app) == before


def test_a_stale_form_from_another_phone_is_refused(client, trio, app):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    before = table_snapshot(app)
    response = enter_round(client, match_id, {anna: 44, ben: 45, cleo: 46}, round_=1)
    assert response.status_code == 422
    assert "moved on" in response.get_data(as_text=True)
    assert table_snapshot(app) == before


def test_score_only_game_typed_or_counted_from_the_pile(client, trio):
    (anna, ben, cleo), match_id = trio
    response = score_game(client, match_id, {anna: 12, ben: [5, 22, 47, 55], cleo: 0})
    assert response.status_code == 303
    state = state_of(client, match_id)
    assert state.standing.totals == {anna: 12, ben: 2 + 5 + 1 + 7, cleo: 0}


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ({"Anna": "", "Ben": 1, "Cleo": 2}, "Enter the bulls"),
        ({"Anna": "-3", "Ben": 1, "Cleo": 2}, "from 0 to 171"),
        ({"Anna": "172", "Ben": 1, "Cleo": 2}, "from 0 to 171"),
        ({"Anna": "x", "Ben": 1, "Cleo": 2}, "from 0 to 171"),
        ({"Anna": [5, 105], "Ben": 1, "Cleo": 2}, "no card 105"),
        ({"Anna": [5, 6], "Ben": [6], "Cleo": 2}, "6 is entered twice"),
    ],
)
def test_bad_scores_are_rejected(client, trio, app, scores, message):
    (anna, ben, cleo), match_id = trio
    ids = {"Anna": anna, "Ben": ben, "Cleo": cleo}
    before = table_snapshot(app)
    response = score_game(client, match_id, {ids[name]: score for name, score in scores.items()})
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)
    assert table_snapshot(app) == before


def test_mixed_match_cards_and_scores(client):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=3)
    first = play_game(client, match_id, ids, random.Random(8)).bulls()
    scores = dict(zip(ids, [10, 20, 30], strict=True))
    assert score_game(client, match_id, scores).status_code == 303
    third = play_game(client, match_id, ids, random.Random(9)).bulls()
    state = state_of(client, match_id)
    assert state.over
    assert state.standing.totals == {
        pid: first[pid] + extra + third[pid] for pid, extra in zip(ids, [10, 20, 30], strict=True)
    }


@pytest.mark.parametrize(
    ("kind", "value", "scores", "over"),
    [
        ("more_than", 66, [66, 10], False),
        ("more_than", 66, [67, 10], True),
        ("at_least", 66, [66, 10], True),
        ("at_least", 66, [65, 10], False),
        ("more_than", 74, [74, 0], False),
        ("more_than", 74, [75, 0], True),
        ("games", 1, [0, 0], True),
    ],
)
def test_every_end_condition(client, kind, value, scores, over):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind=kind, end_value=value)
    score_game(client, match_id, dict(zip(ids, scores, strict=True)))
    assert state_of(client, match_id).over is over


def test_tied_lowest_totals_share_the_win(client):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, match_id, dict(zip(ids, [5, 5, 70], strict=True)))
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "Shared win: Anna, Ben" in page


def test_nothing_can_be_entered_after_the_end(client, app):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, match_id, dict(zip(ids, [3, 4], strict=True)))
    before = table_snapshot(app)
    for response in (
        start_game(client, match_id, [1, 2, 3, 4]),
        score_game(client, match_id, dict(zip(ids, [1, 1], strict=True))),
    ):
        assert response.status_code == 422
        assert "This match has ended" in response.get_data(as_text=True)
    assert table_snapshot(app) == before
    assert undo(client, match_id).status_code == 303  # an undo of the last game is allowed
    assert not state_of(client, match_id).over


def test_the_database_refuses_a_card_twice_even_past_the_checks(client, trio, app, monkeypatch):
    """Unique keys back the checks: with the check gone, a repeated card is still refused."""
    from companion.play import entry as games

    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    before = table_snapshot(app)
    monkeypatch.setattr(games.rules, "check_plays", lambda *args, **kwargs: None)
    response = enter_round(client, match_id, {anna: 41, ben: 50, cleo: 60})
    assert response.status_code == 422
    assert "at the same moment on another phone" in response.get_data(as_text=True)
    assert table_snapshot(app) == before
