"""A move to a new machine: a household's evening exported, imported into a fresh server,
and every page the household sees is the same there, byte for byte (the match links'
secrets aside: an imported match gets new ones). Also from SQLite to PostgreSQL and back.
"""

from __future__ import annotations

import html
import random
import re
from datetime import datetime, timedelta
from itertools import combinations

import conftest
import pytest
from backups import export, upload
from conftest import make_app
from correcting import correct, inputs_of
from driver import add_players, play_game, score_game, start_game, start_match
from sqlalchemy import select

from companion import create_app
from companion.backup import columns
from companion.db import db
from companion.derived import rebuild
from companion.models import Correction, Game, Match
from companion.store import fill_all_missing_luck

EVENING = datetime(2026, 11, 27, 19, 30, 12, 345678)
# A CSRF token (itsdangerous: payload, time, signature): each session has its own.
CSRF = re.compile(r"[\w-]{20,}\.[\w-]{6}\.[\w-]{20,}")
# The write counters a page's live updates ask from (since=, table=): a count of the
# writes a server took, not of what was played; a new server's start again at 0.
COUNTERS = re.compile(r"since=\d+&amp;table=\d+")


def evening(client) -> list[int]:
    """Four players' evening: a match of two games (one corrected after it ended), its
    rematch, and a pro match still being played; rounds minutes apart, pauses between
    games. The matches' ids."""
    anna, ben, cleo, dora = ids = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    first = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, first, ids, random.Random(11), chooser=lambda pending: pending.suggested)
    assert score_game(client, first, {anna: 5, ben: [55, 11], cleo: 0, dora: 3}).status_code
    correct_a_round(client, first)
    response = client.post(f"/matches/{first}/rematch")
    assert response.status_code == 303
    rematch = int(response.headers["Location"].rsplit("/", 1)[1])
    for seed in (12, 13):
        play_game(client, rematch, ids, random.Random(seed), chooser=lambda p: p.suggested)
    pro = start_match(client, [anna, cleo], deck="pro")
    assert start_game(client, pro, [10, 12, 14, 16]).status_code == 303
    with client.application.app_context():
        spread()
    return [first, rematch, pro]


def correct_a_round(client, match_id: int) -> None:
    """Swap two players' cards in the first round of game 1 where that needs no row
    choice: a correction made after the game ended."""
    _, rounds = inputs_of(client, match_id, 1)
    for number, (plays, _) in enumerate(rounds, 1):
        for (one, first), (other, second) in combinations(plays, 2):
            response = correct(client, match_id, 1, number, cards={one: second, other: first})
            if response.status_code == 303:
                return
    raise AssertionError("no round of game 1 could be corrected")


def spread() -> None:
    """The evening's times: rounds 1 to 4 minutes apart, 25 minutes between games, the
    correction after the round it corrects; derived figures rebuilt to follow."""
    rng = random.Random(27)
    moment = EVENING
    for match in db.session.scalars(select(Match).order_by(Match.id)):
        match.created_at = moment
        for game in match.games:
            moment += timedelta(minutes=25, seconds=rng.randint(0, 59))
            game.created_at = moment
            for round_ in game.rounds:
                moment += timedelta(minutes=rng.randint(1, 4), microseconds=rng.randint(1, 999))
                round_.created_at = moment
            for correction in game.corrections:
                correction.created_at = moment + timedelta(minutes=2)
        moment += timedelta(minutes=10)
    db.session.commit()
    rebuild(check=False, echo=lambda _line: None)
    db.session.commit()


def pages(app, match_ids: list[int]) -> dict[str, str]:
    """Every page the household sees, by URL, on a phone that holds every match's player
    link; their secrets replaced by their match's id, the CSRF tokens and the write
    counters by a word."""
    urls = ["/history", "/leaderboard", "/leaderboard/head-to-head", "/review/2026"]
    for match_id in match_ids:
        urls += [f"/matches/{match_id}", f"/matches/{match_id}/scoreboard"]
        urls += [f"/matches/{match_id}/export.csv", f"/matches/{match_id}/games/1/replay"]
        urls.append(f"/matches/{match_id}/table")  # not the invite: its QR codes are the links
    urls += [f"/players/{player}/stats" for player in range(1, 5)]
    with app.app_context():
        tokens = db.session.execute(select(Match.id, Match.player_token, Match.watch_token))
        links = {id_: (player, watch) for id_, player, watch in tokens}
    secrets = {token: f"link-{id_}" for id_, pair in links.items() for token in pair}
    phone, seen = app.test_client(), {}
    for match_id, (player, _) in links.items():
        assert phone.get(f"/matches/{match_id}/join/{player}").status_code == 303
    for url in urls:
        response = phone.get(url)
        assert response.status_code == 200, url
        text = response.get_data(as_text=True)
        text = re.sub("|".join(map(re.escape, secrets)), lambda m: secrets[m[0]], text)
        seen[url] = COUNTERS.sub("since=…", CSRF.sub("csrf", text))
    return seen


def moved(source, target) -> None:
    """The source's backup imported into the target, through the page, and its luck
    figured as the server's helper process figures it right after (backup.apart)."""
    assert upload(target, export(source)).status_code == 303
    with target.application.app_context():
        fill_all_missing_luck()


def assert_same_pages(before: dict[str, str], after: dict[str, str]) -> None:
    for url, page in before.items():
        assert after[url] == page, url


@pytest.fixture
def household(client) -> list[int]:
    return evening(client)


def test_an_evening_moves_to_a_new_machine_unchanged(app, client, household, tmp_path):
    target = make_app(tmp_path / "new-machine.sqlite")
    moved(client, target.test_client())
    assert_same_pages(pages(app, household), pages(target, household))


def test_the_evening_keeps_its_times_and_its_rematch(client, household, tmp_path):
    document = export(client)
    first, rematch, _ = document["matches"]
    assert first["rematch"] == 2 and "rematch" not in rematch
    rounds = first["games"][0]["rounds"]
    assert [entry["at"] for entry in rounds] == sorted({entry["at"] for entry in rounds})
    target = make_app(tmp_path / "new-machine.sqlite")
    moved(client, target.test_client())
    with target.app_context():
        links = dict(db.session.execute(select(Match.id, Match.rematch_id)).all())
        assert links == {1: 2, 2: None, 3: None}
        assert db.session.scalar(select(db.func.count(Correction.id))) == 1
    page = target.test_client().get("/matches/1").get_data(as_text=True)
    assert 'href="/matches/1/rematch"' in page and "Rematch: match 2" in page


def test_every_column_the_file_holds_comes_back_as_it_was(app, client, household, tmp_path):
    """Each column the backup carries (``columns.BACKED_UP``: the file's, the ids of the
    rows they belong to, the players) holds the same values on the new machine; a column
    declared in the file but not carried is named."""
    target = make_app(tmp_path / "new-machine.sqlite")
    moved(client, target.test_client())
    carried = (columns.FILE, columns.NESTED, columns.PLAYER, columns.COUNTED)
    for model, declared in columns.BACKED_UP.items():
        for name, how in declared.items():
            if how.kind in carried:
                query = select(model.__table__.c[name])
                values = []
                for installation in (app, target):
                    with installation.app_context():
                        values.append(sorted(db.session.scalars(query), key=repr))
                assert values[0] == values[1], f"{model.__tablename__}.{name}"


def sqlite_app(path):
    """An app on a SQLite file, whichever database the run is on."""
    app = create_app(conftest.testing_config(path, SQLALCHEMY_DATABASE_URI=f"sqlite:///{path}"))
    with app.app_context():
        db.create_all()
    return app


@pytest.mark.postgresql
def test_an_evening_moves_from_sqlite_to_postgresql_and_back(tmp_path):
    home = sqlite_app(tmp_path / "home.sqlite")
    match_ids = evening(home.test_client())
    club = make_app(tmp_path / "club.sqlite")  # this run's PostgreSQL
    assert club.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql")
    moved(home.test_client(), club.test_client())
    back = sqlite_app(tmp_path / "back-home.sqlite")
    moved(club.test_client(), back.test_client())
    seen = pages(home, match_ids)
    assert_same_pages(seen, pages(club, match_ids))
    assert_same_pages(seen, pages(back, match_ids))


def test_a_file_of_version_1_still_imports_with_what_it_holds(client, household, tmp_path):
    document = export(client)
    document["version"] = 1  # no round times, no rematch
    for match in document["matches"]:
        match.pop("rematch", None)
        for game in match["games"]:
            for entry in game.get("rounds", []):
                del entry["at"]
    target = make_app(tmp_path / "new-machine.sqlite")
    moved_file(target, document)
    with target.app_context():
        assert db.session.scalar(select(db.func.count(Match.rematch_id))) == 0
        for game in db.session.scalars(select(Game)):
            assert {round_.created_at for round_ in game.rounds} <= {game.created_at}


def test_two_matches_with_one_rematch_are_refused(client, household, tmp_path):
    document = export(client)
    document["matches"][0]["rematch"] = document["matches"][1]["rematch"] = 3
    target = make_app(tmp_path / "new-machine.sqlite")
    response = upload(target.test_client(), document)
    assert response.status_code == 422
    assert "Match 3 is already the rematch of match 1." in html.unescape(response.text)


def test_a_rematch_already_here_is_not_linked_to_the_match_it_came_from(
    client, household, tmp_path
):
    """The rematch was imported before, without the match it came from: importing that
    match now leaves the two apart. An import links only the matches it adds (issue 41: a
    link to a match here handed its link to whoever imported the match before it)."""
    document = export(client)
    _, rematch, _ = document["matches"]
    target = make_app(tmp_path / "new-machine.sqlite")
    moved_file(target, {**document, "matches": [rematch]})
    moved_file(target, document)
    with target.app_context():
        links = dict(db.session.execute(select(Match.id, Match.rematch_id)).all())
    assert links == {1: None, 2: None, 3: None}  # match 1 here is the rematch, imported first


def test_a_rematch_named_by_a_new_match_and_already_here_stays_apart(client, household):
    """A new match of the file names as its rematch a match here (the rematch of another
    already): the new match gets no link, and the match here keeps its own."""
    document = export(client)
    stranger = {**document["matches"][0], "created_at": "2025-11-27T19:30:00.000000Z"}
    stranger["rematch"] = 3  # the file's match 3 is the rematch here (id 2)
    document["matches"] = [stranger, *(document["matches"][:1]), document["matches"][1]]
    document["matches"][1].pop("rematch")
    moved_file(client.application, document)
    with client.application.app_context():
        links = dict(db.session.execute(select(Match.id, Match.rematch_id)).all())
    assert links == {1: 2, 2: None, 3: None, 4: None}


def moved_file(app, document: dict) -> None:
    response = upload(app.test_client(), document)
    assert response.status_code == 303, html.unescape(response.text)
