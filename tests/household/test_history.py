"""Match history: newest first, paginated, winners and rules; deleting a match with care."""

import random
import re

import pytest
from driver import add_players, enter_round, play_game, score_game, start_game, start_match

from companion import derived
from companion.db import db
from companion.derived import GameResult
from companion.models import (
    Game,
    Match,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
    Seat,
)


def entries(page: str) -> list[str]:
    """The history entries of a page, as plain text."""
    items = re.findall(r'<li class="notice history-entry">(.*?)</li>', page, flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in items]


def test_no_match_yet(client):
    page = client.get("/history").get_data(as_text=True)
    assert "No match has been played yet." in page
    assert entries(page) == []


def test_each_match_with_date_players_winners_and_rules(client):
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    over = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, over, {anna: 3, ben: 9})
    # Two in the pro deck's 24 cards hand out at most 34 bulls a game (rules.most_taken).
    shared = start_match(client, [ben, cleo], end_kind="at_least", end_value=15, deck="pro")
    score_game(client, shared, {ben: 15, cleo: 15})
    playing = start_match(client, [anna, ben, cleo])
    score_game(client, playing, {anna: 10, ben: 4, cleo: 7})
    start_match(client, [cleo, anna])
    page = client.get("/history").get_data(as_text=True)
    assert "4 matches, newest first." in page
    newest, third, second, first = entries(page)
    assert re.search(
        r"Match 4 \w{3} \d+, \d{4} · 0 games played · ends above 66 bulls "
        r"Cleo, Anna In progress · no game finished yet",
        newest,
    )
    assert third.endswith("Anna, Ben, Cleo In progress · leading: Ben")
    assert "1 game played · ends at 15 bulls · pro variant" in second
    assert second.endswith("Ben, Cleo Shared win: Ben, Cleo")
    assert first.endswith("· 1 game played · ends after 1 game Anna, Ben Winner: Anna")
    assert f'href="/matches/{over}/scoreboard"' in page


def test_history_as_a_fragment(client):
    add_players(client, "Anna", "Ben")
    response = client.get("/history", headers={"HX-Request": "true"})
    text = response.get_data(as_text=True)
    assert "<html" not in text and text.lstrip().startswith('<section id="history"')
    assert "HX-Request" in response.headers["Vary"]
    assert "<html" in client.get("/history").get_data(as_text=True)


@pytest.fixture
def many(client):
    """45 matches, numbered in the order they were started."""
    ids = add_players(client, "Anna", "Ben")
    return [start_match(client, ids) for _ in range(45)]


def test_pages_of_twenty_with_plain_links(client, many):
    first = client.get("/history").get_data(as_text=True)
    assert "Page 1 of 3." in first
    assert [entry.split()[1] for entry in entries(first)] == [str(n) for n in range(45, 25, -1)]
    assert 'rel="next" href="/history?page=2"' in first and 'rel="prev"' not in first
    second = client.get("/history?page=2").get_data(as_text=True)
    assert [entry.split()[1] for entry in entries(second)] == [str(n) for n in range(25, 5, -1)]
    assert 'rel="prev" href="/history?page=1"' in second
    assert 'rel="next" href="/history?page=3"' in second
    assert 'hx-get="/history?page=3"' in second  # htmx swaps the list; the link works alone
    last = client.get("/history?page=3").get_data(as_text=True)
    assert [entry.split()[1] for entry in entries(last)] == ["5", "4", "3", "2", "1"]
    assert 'rel="next"' not in last


@pytest.mark.parametrize("page", ["abc", "-1", "0", "4", "1.5", "", "٣", "99999999999999999999"])
def test_a_page_that_does_not_exist_is_404(client, many, page):
    response = client.get(f"/history?page={page}")
    assert response.status_code == 404
    assert "This card is not in the deck" in response.get_data(as_text=True)


# --- delete ----------------------------------------------------------------------------


@pytest.fixture
def played(client):
    """Two matches of the same players; the first has cards and scores, the second one game."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    doomed = start_match(client, ids, end_kind="games", end_value=3)
    play_game(client, doomed, ids, random.Random(4))
    score_game(client, doomed, {ids[0]: 4, ids[1]: [55], ids[2]: 0})
    start_game(client, doomed, [1, 2, 3, 4])
    enter_round(client, doomed, dict(zip(ids, [50, 60, 70], strict=True)))
    kept = start_match(client, ids, end_kind="games", end_value=1)
    play_game(client, kept, ids, random.Random(5))
    return ids, doomed, kept


def counts(app, match_id: int) -> dict[str, int]:
    """How many rows of each table belong to the match."""
    with app.app_context():
        game_ids = db.select(Game.id).where(Game.match_id == match_id).scalar_subquery()
        round_ids = db.select(Round.id).where(Round.game_id.in_(game_ids)).scalar_subquery()
        queries = {
            "match": db.select(Match.id).where(Match.id == match_id),
            "seats": db.select(Seat.id).where(Seat.match_id == match_id),
            "games": db.select(Game.id).where(Game.match_id == match_id),
            "rounds": db.select(Round.id).where(Round.game_id.in_(game_ids)),
            "plays": db.select(Play.id).where(Play.game_id.in_(game_ids)),
            "choices": db.select(RowChoice.id).where(RowChoice.round_id.in_(round_ids)),
            "scores": db.select(Score.id).where(Score.game_id.in_(game_ids)),
            "results": db.select(GameResult.id).where(GameResult.game_id.in_(game_ids)),
            "game stats": db.select(derived.PlayerGameStat.id).where(
                derived.PlayerGameStat.match_id == match_id
            ),
            "match stats": db.select(derived.PlayerMatchStat.id).where(
                derived.PlayerMatchStat.match_id == match_id
            ),
        }
        return {name: len(db.session.execute(query).all()) for name, query in queries.items()}


def version_of(client, match_id: int) -> str:
    page = client.get(f"/matches/{match_id}/delete").get_data(as_text=True)
    return re.search(r'name="version" value="(\d+)"', page).group(1)


def test_confirmation_page_says_what_goes(client, played):
    _, doomed, _ = played
    response = client.get(f"/matches/{doomed}/delete")
    page = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Delete match 1?" in page
    assert "Anna, Ben, Cleo" in page and "2 games played" in page
    assert "every statistic will be as if it had never been played. The players stay." in page
    assert '<form method="post" action="/matches/1/delete"' in page
    assert "hx-" not in page.split('id="delete"')[1]  # a plain form: works without JS
    fragment = client.get(f"/matches/{doomed}/delete", headers={"HX-Request": "true"})
    assert "<html" not in fragment.get_data(as_text=True)


def test_deleting_removes_the_match_and_everything_derived(client, app, played):
    ids, doomed, kept = played
    before = counts(app, doomed)
    assert all(before[name] for name in before), before
    kept_before = counts(app, kept)
    response = client.post(
        f"/matches/{doomed}/delete", data={"version": version_of(client, doomed)}
    )
    assert response.status_code == 303 and response.headers["Location"] == "/history"
    assert set(counts(app, doomed).values()) == {0}
    assert counts(app, kept) == kept_before
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Player.id))) == len(ids)
    page = client.get("/history").get_data(as_text=True)
    assert "Match 1 was deleted." in page
    assert [entry.split()[1] for entry in entries(page)] == [str(kept)]
    assert "Match 1 was deleted." not in client.get("/history").get_data(as_text=True)
    assert client.get(f"/matches/{doomed}/delete").status_code == 404
    assert client.get(f"/matches/{doomed}/scoreboard").status_code == 404
    # Every statistic is as if it never happened: the derived tables match a replay.
    result = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output


def test_a_stale_confirmation_deletes_nothing(client, app, played):
    ids, doomed, _ = played
    version = version_of(client, doomed)
    enter_round(client, doomed, dict(zip(ids, [51, 61, 71], strict=True)))  # meanwhile
    before = counts(app, doomed)
    response = client.post(f"/matches/{doomed}/delete", data={"version": version})
    assert response.status_code == 409
    assert "Nothing was deleted" in response.get_data(as_text=True)
    assert counts(app, doomed) == before


def test_a_match_being_played_is_deleted_only_from_a_player_phone(client, app, played):
    _, doomed, _ = played
    version = version_of(client, doomed)
    stranger = app.test_client()
    page = stranger.get(f"/matches/{doomed}/delete").get_data(as_text=True)
    assert "only a phone with its player link can delete it." in html_text(page)
    assert 'action="/matches/1/delete"' not in page
    assert stranger.post(f"/matches/{doomed}/delete", data={"version": version}).status_code == 403
    assert counts(app, doomed)["match"] == 1


def test_a_finished_match_is_history_any_phone_may_delete(client, app, played):
    _, _, kept = played
    stranger = app.test_client()
    version = version_of(stranger, kept)
    response = stranger.post(f"/matches/{kept}/delete", data={"version": version})
    assert response.status_code == 303
    assert counts(app, kept)["match"] == 0


def test_a_new_match_with_the_id_of_a_deleted_one_shows_its_own_players(client):
    """SQLite hands out a deleted match's id again, and the new match starts at the same
    version: what was kept of the deleted one in memory is not shown for it."""
    anna, ben, cleo, dan = add_players(client, "Anna", "Ben", "Cleo", "Dan")
    first = start_match(client, [anna, ben])
    assert "Anna" in client.get(f"/matches/{first}").text
    version = version_of(client, first)
    assert client.post(f"/matches/{first}/delete", data={"version": version}).status_code == 303
    second = start_match(client, [cleo, dan])  # the same id on SQLite
    page = client.get(f"/matches/{second}").text
    assert "Cleo" in page and "Anna" not in page


def test_deleting_a_match_that_does_not_exist(client):
    assert client.get("/matches/7/delete").status_code == 404
    assert client.post("/matches/7/delete", data={"version": "0"}).status_code == 404


def html_text(page: str) -> str:
    return page.replace("&#39;", "'")
