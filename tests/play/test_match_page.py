"""Whole matches through the test client: every total checked against the engine."""

import random
import re

import pytest
from driver import (
    add_players,
    enter_round,
    play_game,
    score_game,
    start_game,
    start_match,
    state_of,
)

from companion.db import db
from companion.derived import GameResult

# --- a whole game, card by card ---------------------------------------------


# --- too-low choices ---------------------------------------------------------


# --- bad input changes nothing ----------------------------------------------


def test_unknown_match_is_404(client):
    assert client.get("/matches/999").status_code == 404
    assert client.post("/matches/999/rounds", data={}).status_code == 404


# --- score-only and mixed games ---------------------------------------------


# --- the end of a match -------------------------------------------------------


# --- undo ---------------------------------------------------------------------


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


def test_the_score_counts_the_bulls_of_the_game_in_progress(client):
    """Anna had the fewest bulls after game 1, then took 11 in game 2: she leads no more,
    on the phone, the scoreboard and the table view, and every limit distance moves.
    Ben and Cleo share the fewest, so nobody leads (issue 57: a tie has no leader)."""
    anna, ben, cleo = ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    score_game(client, match_id, {anna: 5, ben: 8, cleo: 8})
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    enter_round(client, match_id, {anna: 45, ben: 44, cleo: 13})  # 45 is row 4's sixth
    state = state_of(client, match_id)
    replayed = {
        player: state.finished_games[0].bulls[player] + state.current.bulls[player]
        for player in ids
    }
    assert replayed == {anna: 16, ben: 8, cleo: 8}
    for path in ("", "/scoreboard", "/table"):
        page = client.get(f"/matches/{match_id}{path}").get_data(as_text=True)
        assert shown_score(page) == {
            "Anna": (16, 11, 50, False),
            "Ben": (8, 0, 58, False),
            "Cleo": (8, 0, 58, False),
        }, path
    scoreboard = client.get(f"/matches/{match_id}/scoreboard").get_data(as_text=True)
    assert "Leading:" not in scoreboard
    assert re.search(r'<tr class="so-far"><th scope="row">2 <span class="tag">so far', scoreboard)


@pytest.mark.parametrize(
    ("bulls", "leader"), [((0, 0, 0), None), ((4, 4, 9), None), ((9, 4, 9), "Ben")]
)
def test_a_tie_for_the_fewest_bulls_has_no_leader(client, bulls, leader):
    """The finding (issue 57): three "leads" at 0-0-0. On the match page, the TV between
    games, the scoreboard, the home page and the history."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_value=200)
    assert score_game(client, match_id, dict(zip(ids, bulls, strict=True))).status_code == 303
    for path in (f"/matches/{match_id}", f"/matches/{match_id}/table"):
        page = client.get(path).text
        assert page.count(">leads<") == (1 if leader else 0), path
    scoreboard = client.get(f"/matches/{match_id}/scoreboard").text
    assert ("Leading: Ben" in scoreboard) == bool(leader)
    for path in ("/", "/history"):
        page = client.get(path).text
        if leader:
            assert f"In progress · leading: {leader}<" in page, path
        else:
            assert "leading:" not in page and "In progress · nobody leads" in page, path


def test_nobody_leads_before_the_first_bull(client, trio):
    _, match_id = trio
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert ">leads<" not in page
    assert set(shown_score(page).values()) == {(0, None, 66, False)}


def shown_score(page: str) -> dict[str, tuple]:
    """The totals table: name -> (total, this game or None, to the limit, tagged "leads")."""
    table = re.search(r'<table class="totals fixed">.*?</table>', page, re.S).group(0)
    score = {}
    for row in re.findall(r"<tr[^>]*>\s*<th scope=\"row\">.*?</tr>", table, re.S):
        name = re.search(r'<span class="name"[^>]*>([^<]*)</span>', row).group(1)
        numbers = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row)]
        game = numbers[1] if len(numbers) == 3 else None
        score[name] = (numbers[0], game, numbers[-1], ">leads<" in row)
    return score


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


def test_card_grid_disables_the_cards_seen_in_this_game(client, trio):
    (anna, ben, cleo), match_id = trio
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43})
    html = client.get(f"/matches/{match_id}/grid").get_data(as_text=True)
    assert html.count("<button") == 104
    disabled = set(re.findall(r'value="(\d+)" disabled', html))
    assert disabled == {"12", "24", "37", "40", "41", "42", "43"}
    assert 'class="bulls-7" value="55"' in html


def test_the_first_start_after_an_upgrade_derives_missing_statistics(client, app):
    from companion.derived import PlayerMatchStat
    from companion.store import fill_statistics

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
