"""Whole matches through the test client: every total checked against the engine."""

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
    undo,
)

from companion import rules
from companion.db import db
from companion.models import GameResult, Match, Play, Round, RowChoice


@pytest.fixture
def trio(client):
    """Anna, Ben and Cleo at the table in a default match."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    return ids, start_match(client, ids)


def table_snapshot(app):
    """Everything stored, to prove a rejected request changed nothing."""
    with app.app_context():
        return [
            db.session.execute(db.select(model.__table__)).all()
            for model in (Match, Round, Play, RowChoice, GameResult)
        ]


# --- a whole game, card by card ---------------------------------------------


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
    assert "Anna took row 4: 11 bulls" in page
    # The explanation is one tap away: the round's replay.
    explain = re.search(r'class="explain" href="([^"#]+)', page).group(1)
    explained = client.get(explain.replace("&amp;", "&")).get_data(as_text=True)
    assert "45 would be the 6th card in row 4: Anna takes 5 cards, 11 bulls." in explained


# --- too-low choices ---------------------------------------------------------


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


# --- bad input changes nothing ----------------------------------------------


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


def test_unknown_match_is_404(client):
    assert client.get("/matches/999").status_code == 404
    assert client.post("/matches/999/rounds", data={}).status_code == 404


# --- score-only and mixed games ---------------------------------------------


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


# --- the end of a match -------------------------------------------------------


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


# --- undo ---------------------------------------------------------------------


def test_undo_steps_back_through_choices_rounds_and_the_start(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    enter_round(client, match_id, {anna: 2, ben: 50, cleo: 3})
    choose(client, match_id, anna, 4)  # 2 takes row 4; 3 then follows 2
    history = [state_of(client, match_id)]
    assert [s.action for s in history[0].current.last_round.steps][:2] == [
        rules.TOO_LOW,
        rules.PLACED,
    ]
    assert undo(client, match_id).status_code == 303  # the choice
    assert pending_of(client, match_id).player == anna
    assert undo(client, match_id).status_code == 303  # round 2
    assert state_of(client, match_id).current.rounds_played == 1
    assert undo(client, match_id).status_code == 303  # round 1
    assert state_of(client, match_id).current.rounds_played == 0
    assert undo(client, match_id).status_code == 303  # the game's start
    assert state_of(client, match_id).games == []
    page = client.get(f"/matches/{match_id}/undo").get_data(as_text=True)
    assert "nothing to undo" in page


def test_undo_at_every_point_of_a_game_restores_the_state_before(client):
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dan")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    rng = random.Random(11)
    play_game(client, match_id, ids, rng)
    finished = state_of(client, match_id)
    seen = []
    while state_of(client, match_id).games:
        before = state_of(client, match_id)
        seen.append((len(before.games), before.games[-1].rounds_played))
        assert undo(client, match_id).status_code == 303
    assert finished.over and len(seen) >= 11  # 10 rounds + start (+ any choices)


def test_a_double_tap_undoes_only_once(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    page = client.get(f"/matches/{match_id}/undo").get_data(as_text=True)
    assert "round 1 of game 1" in page
    expect = re.search(r'name="expect" value="([^"]+)"', page).group(1)
    assert client.post(f"/matches/{match_id}/undo", data={"expect": expect}).status_code == 303
    second = client.post(f"/matches/{match_id}/undo", data={"expect": expect})
    assert second.status_code == 409
    assert state_of(client, match_id).current.rounds_played == 0


# --- pages ----------------------------------------------------------------------


def test_match_page_full_and_fragment(client, trio):
    _, match_id = trio
    full = client.get(f"/matches/{match_id}")
    fragment = client.get(f"/matches/{match_id}", headers={"HX-Request": "true"})
    assert "<html" in full.get_data(as_text=True)
    assert "<html" not in fragment.get_data(as_text=True)
    assert 'id="match"' in fragment.get_data(as_text=True)
    assert "HX-Request" in full.headers["Vary"]


def test_scoreboard_shows_games_chart_and_distance(client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    score_game(client, match_id, dict(zip(ids, [20, 5], strict=True)))
    score_game(client, match_id, dict(zip(ids, [10, 50], strict=True)))
    page = client.get(f"/matches/{match_id}/scoreboard").get_data(as_text=True)
    assert "<svg" in page and "polyline" in page
    assert "more than 66" in page
    assert ">30<" in page and ">55<" in page  # totals
    assert ">36<" in page and ">11<" in page  # bulls left before the limit


# --- the derived results can be rebuilt ----------------------------------------


def test_rebuild_finds_and_repairs_tampered_results(client, app, runner):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, match_id, ids, random.Random(2))
    score_game(client, match_id, dict(zip(ids, [4, 9], strict=True)))
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0
    assert "2 games replayed, 0 found differing" in result.output
    with app.app_context():
        db.session.execute(db.update(GameResult).values(bulls=99))
        db.session.commit()
    assert runner.invoke(args=["rebuild", "--check"]).exit_code == 1
    result = runner.invoke(args=["rebuild"])
    assert "2 rebuilt differing" in result.output
    assert "0 found differing" in runner.invoke(args=["rebuild", "--check"]).output


# --- starting a match ------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"seat_1": "A"}, "seats", "Seat 2 to 10 players"),
        ({"seat_1": "A", "seat_2": "A"}, "seat_2", "already has a seat"),
        ({"seat_1": "A", "seat_2": "999"}, "seat_2", "Choose a player from the list"),
        ({"seat_1": "A", "seat_2": "x"}, "seat_2", "Choose a player from the list"),
        ({"seat_1": "A", "new_player": "b"}, "new_player", "already a player called b"),
        ({"seat_1": "A", "seat_2": "B", "end_kind": "sometimes"}, "end_kind", "how the match"),
        ({"seat_1": "A", "seat_2": "B", "end_value": "0"}, "end_value", "from 1 to 1000"),
        ({"seat_1": "A", "seat_2": "B", "end_value": "abc"}, "end_value", "from 1 to 1000"),
        ({"seat_1": "A", "seat_2": "B", "end_value": ""}, "end_value", "from 1 to 1000"),
        ({**{f"seat_{i}": f"P{i}" for i in range(1, 8)}, "deck": "pro"}, "deck", "2 to 6"),
    ],
)
def test_bad_new_match_is_rejected(client, app, data, field, message):
    ids = dict(
        zip(
            ["A", "B", *[f"P{i}" for i in range(1, 8)]],
            add_players(client, "Anna", "B", *[f"P{i}" for i in range(1, 8)]),
            strict=True,
        )
    )
    form = {"end_kind": "more_than", "end_value": "66", "deck": "standard"}
    form.update({key: str(ids.get(value, value)) for key, value in data.items()})
    before = table_snapshot(app)
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)
    assert table_snapshot(app) == before


@pytest.mark.parametrize("seated", [10, 2])
def test_an_eleventh_seat_is_refused_not_dropped(client, app, seated):
    """A form with seat_11 filled (the page has ten seats) starts no match at all."""
    ids = add_players(client, *[f"P{i}" for i in range(1, 12)])
    form = {f"seat_{seat}": str(pid) for seat, pid in enumerate(ids[:seated], 1)}
    form.update(seat_11=str(ids[10]), end_kind="more_than", end_value="66", deck="standard")
    before = table_snapshot(app)
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert re.search(r'id="seats-error">Seat 2 to 10 players', response.get_data(as_text=True))
    assert table_snapshot(app) == before


def test_new_player_on_the_spot_takes_the_next_seat(client):
    (anna,) = add_players(client, "Anna")
    response = client.post(
        "/matches/",
        data={"seat_1": str(anna), "new_player": "Ben", "end_kind": "more_than", "end_value": "66"},
    )
    assert response.status_code == 303
    match_id = int(response.headers["Location"].rsplit("/", 1)[1])
    assert [player.name for player in state_of(client, match_id).players] == ["Anna", "Ben"]


def test_seating_order_is_kept(client):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, [cleo, anna, ben])
    assert [player.name for player in state_of(client, match_id).players] == ["Cleo", "Anna", "Ben"]


def test_pro_deck_with_three_players_uses_cards_to_34(client, app):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, deck="pro", end_kind="games", end_value=1)
    assert start_game(client, match_id, [1, 2, 3, 35]).status_code == 422
    assert start_game(client, match_id, [1, 2, 3, 34]).status_code == 303
    response = enter_round(client, match_id, dict(zip(ids, [10, 20, 35], strict=True)))
    assert response.status_code == 422
    assert "cards go from 1 to 34" in response.get_data(as_text=True)
    undo(client, match_id)
    expected = play_game(client, match_id, ids, random.Random(4), deck=34)
    assert state_of(client, match_id).standing.totals == expected.bulls()
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "Pro variant: cards 1\N{EN DASH}34" in page


def test_card_grid_disables_the_cards_seen_in_this_game(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    html = client.get(f"/matches/{match_id}/grid").get_data(as_text=True)
    assert html.count("<button") == 104
    disabled = set(re.findall(r'value="(\d+)" disabled', html))
    assert disabled == {"12", "24", "37", "40", "41", "42", "43"}
    assert 'class="bulls-7" value="55"' in html


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


def test_the_first_start_after_an_upgrade_derives_missing_statistics(client, app):
    from companion.derived import PlayerMatchStat
    from companion.serve import fill_statistics

    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, match_id, dict(zip(ids, [3, 9], strict=True)))
    with app.app_context():
        db.session.execute(db.delete(PlayerMatchStat))
        db.session.commit()
        fill_statistics()
        rows = db.session.execute(db.select(PlayerMatchStat.player_id, PlayerMatchStat.won)).all()
    assert sorted(rows) == sorted([(ids[0], True), (ids[1], False)])


# --- setting up at the table: tap to seat, rematch, who am I -----------------------


def seat_buttons(html: str) -> list[tuple[str, str]]:
    """(seat number shown, player name) of every seat button, in page order."""
    return re.findall(
        r'class="seat-pick[^"]*"[^>]*>\s*<span class="seat-number"[^>]*>(\d*)</span>'
        r'<span class="name"[^>]*>([^<]+)</span>',
        html,
    )


def test_tapping_names_seats_players_in_order_and_again_gives_the_seat_back(client, app):
    """Each tap posts the form back to /matches/new: nothing is stored, the seats change."""
    anna, _ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    before = table_snapshot(app)
    form = {"end_kind": "at_least", "end_value": "50", "deck": "standard"}
    page = client.post("/matches/new", data={**form, "tap": str(cleo)}).text
    assert seat_buttons(page) == [("", "Anna"), ("", "Ben"), ("1", "Cleo")]
    seats = {"seat_1": str(cleo)}
    page = client.post("/matches/new", data={**form, **seats, "tap": str(anna)}).text
    assert seat_buttons(page) == [("2", "Anna"), ("", "Ben"), ("1", "Cleo")]
    assert f'name="seat_1" value="{cleo}"' in page and f'name="seat_2" value="{anna}"' in page
    assert 'value="at_least" selected' in page and 'value="50"' in page  # the rules stay
    # Tapping Cleo again gives her seat back: Anna moves up to seat 1.
    seats = {"seat_1": str(cleo), "seat_2": str(anna)}
    page = client.post("/matches/new", data={**form, **seats, "tap": str(cleo)}).text
    assert seat_buttons(page) == [("1", "Anna"), ("", "Ben"), ("", "Cleo")]
    assert table_snapshot(app) == before


def test_tapping_seats_as_a_fragment_for_htmx(client):
    """htmx gets only the form section back; Vary tells caches the two answers apart."""
    (anna,) = add_players(client, "Anna")
    response = client.post("/matches/new", data={"tap": str(anna)}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section aria-labelledby="new-heading"')
    assert "HX-Request" in response.headers["Vary"]


@pytest.mark.parametrize("tap", ["999", "x", "9" * 5000, ""])
def test_tapping_an_unknown_player_seats_nobody(client, app, tap):
    add_players(client, "Anna")
    before = table_snapshot(app)
    response = client.post("/matches/new", data={"tap": tap})
    assert response.status_code == (422 if tap else 200)
    assert seat_buttons(response.text) == [("", "Anna")]
    assert table_snapshot(app) == before


def test_an_eleventh_tap_is_refused(client):
    ids = add_players(client, *[f"P{i}" for i in range(11)])
    seats = {f"seat_{seat}": str(pid) for seat, pid in enumerate(ids[:10], 1)}
    response = client.post("/matches/new", data={**seats, "tap": str(ids[10])})
    assert response.status_code == 422
    assert "Seat 2 to 10 players" in response.text
    seated = {name: number for number, name in seat_buttons(response.text)}
    assert [seated[f"P{i}"] for i in range(11)] == [*map(str, range(1, 11)), ""]


def test_rematch_starts_the_same_seats_and_rules_in_one_tap(client, app):
    ids = add_players(client, "Anna", "Ben", "Cleo")
    old = start_match(client, [ids[2], ids[0], ids[1]], end_kind="games", end_value=1, deck="pro")
    score_game(client, old, {ids[0]: 3, ids[1]: 5, ids[2]: 8})
    assert "Rematch" in client.get(f"/matches/{old}").text  # offered once it is over
    assert "Rematch" in client.get("/").text
    other_phone = app.test_client()  # any phone may ask; it then holds the new match's link
    response = other_phone.post(f"/matches/{old}/rematch")
    assert response.status_code == 303
    new = int(re.search(r"/matches/(\d+)$", response.headers["Location"]).group(1))
    with app.app_context():
        before, after = db.session.get(Match, old), db.session.get(Match, new)
        assert [seat.player_id for seat in after.seats] == [ids[2], ids[0], ids[1]]
        assert (after.end_kind, after.end_value, after.pro) == ("games", 1, True)
        assert after.created_at >= before.created_at and after.games == []
    assert start_game(other_phone, new, [1, 2, 3, 4]).status_code == 303


def test_rematch_of_an_unknown_match_is_404(client):
    assert client.post("/matches/999/rematch").status_code == 404


def test_i_am_is_offered_as_soon_as_the_match_exists(client, trio):
    _, match_id = trio
    page = client.get(f"/matches/{match_id}").text
    assert "Everyone on their own phone? Who are you?" in page
    assert page.count('name="player" value=') == 3
    assert "The four face-up starting cards" in page


def test_the_home_page_lists_matches_being_played_apart_from_finished_ones(client):
    anna, ben = add_players(client, "Anna", "Ben")
    finished = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, finished, {anna: 12, ben: 3})
    playing = start_match(client, [ben, anna])
    score_game(client, playing, {anna: 10, ben: 20})
    start_game(client, playing, [12, 24, 37, 40])
    enter_round(client, playing, {anna: 41, ben: 42})
    page = client.get("/").text
    being_played = page.split("Being played")[1].split("Finished")[0]
    done = page.split("Finished")[1]
    assert f"Match {playing}" in being_played and f"Match {finished}" not in being_played
    assert "Game 2 · round 2 of 10" in being_played
    assert "leading: Anna" in being_played and f'href="/matches/{playing}">Continue' in being_played
    assert f"Match {finished}" in done and "Winner: Ben" in done
    assert f'action="/matches/{finished}/rematch"' in done
