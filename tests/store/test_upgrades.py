"""An upgrade keeps everything (issue 58): a household's database as each Alembic revision
left it, upgraded to the newest, shows a visitor and the table's phones what the same
household shows at the newest schema, ``flask rebuild --check`` finds nothing that
differs, and the unfinished match plays on.

The household is played once through the app (``household``): a finished match of a card
game, with row choices and a corrected round, and a score-only game, with a note, its
reviews kept and a rematch; the rematch is under way, two of its three cards of the round
hidden, its links made new. Its rows go into the tables of each revision as far as that
revision has them (``write_rows``): what a revision has no column or table for, a household
at that revision never had. The derived rows go in too, where the revision kept them, so
that what its migrations do with them runs. The database is then upgraded, and the server's
start and its background process do what they do after an upgrade (``as_after_a_start``).
What it must show is the same household, as far as the revision held it, written straight
into the newest schema with the derived rows the app figured (``expected``).

Every revision is walked from Alembic's own list (``REVISIONS``): a new one is covered by
adding it. Downgrades are not asked for.
"""

from __future__ import annotations

import difflib
import logging.config
import random
import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import conftest
import pytest
from alembic.script import ScriptDirectory
from correcting import correct, form_values
from driver import (
    add_players,
    i_am,
    phone,
    play_game,
    play_rounds,
    score_game,
    start_match,
)
from flask import Flask
from flask_migrate import upgrade
from sqlalchemy import MetaData, Table, func, insert, select

from companion import create_app, store
from companion.backup.columns import DERIVED
from companion.db import db
from companion.derived.audit import broken_rows
from companion.models import Match, PendingCard, utcnow

pytestmark = pytest.mark.database  # every revision's migrations on PostgreSQL too

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
SCRIPTS = ScriptDirectory(str(MIGRATIONS))
# Every revision a household could hold, the oldest first (the first makes no tables).
REVISIONS = [script.revision for script in reversed(list(SCRIPTS.walk_revisions()))]
DERIVED_TABLES = {model.__tablename__ for model in DERIVED}
NAMES = ("Anna", "Ben", "Cleo")
ROUNDS_PLAYED = 3  # of the unfinished match's game, its next round's cards partly in


@dataclass
class Household:
    """The household's rows at the newest schema, by table (each table's by id); the cards
    its unfinished match waits for, {match: {player: card}}; the pages it reads."""

    rows: dict[str, list[dict]]
    next_cards: dict[int, dict[int, int]]
    pages: list[str]


@pytest.fixture(scope="session")
def household(tmp_path_factory) -> Household:
    """Played once through the app, on SQLite whatever the session's database: the same
    rows go into every revision's tables, on either engine."""
    path = tmp_path_factory.mktemp("household") / "household.sqlite"
    app = conftest.make_app(path, SQLALCHEMY_DATABASE_URI=f"sqlite:///{path}")
    client = app.test_client()
    ids = add_players(client, *NAMES)
    rng = random.Random(58)
    finished = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, finished, ids, rng)
    last = form_values(client, finished, 1, 10)  # Anna's and Ben's cards swapped
    swapped = {ids[0]: last[f"card-{ids[1]}"], ids[1]: last[f"card-{ids[0]}"]}
    assert correct(client, finished, 1, 10, cards=swapped).status_code == 303
    assert score_game(client, finished, {ids[0]: 5, ids[1]: [55, 3], ids[2]: 0}).status_code == 303
    assert client.post(f"/matches/{finished}/note", data={"note": "Oma's 80th"}).status_code == 303
    rematch = client.post(f"/matches/{finished}/rematch").headers["Location"]
    under_way = int(rematch.rsplit("/", 1)[1])
    assert client.post(f"/matches/{under_way}/invite/renew").status_code == 303
    hands = play_rounds(client, under_way, ids, rng, ROUNDS_PLAYED)
    next_cards = {player: hands[seat][ROUNDS_PLAYED] for seat, player in enumerate(ids)}
    for player in ids[:2]:  # Anna's and Ben's phones sent theirs, hidden; Cleo's is to come
        assert send_card(app, under_way, player, next_cards[player]).status_code == 303
    with app.app_context():
        assert store.review_after(finished) == 1  # as the background does after a game
        rows = {
            table.name: [row._asdict() for row in db.session.execute(select(table))]
            for table in db.metadata.sorted_tables
        }
    assert all(rows[name] for name in ("row_choice", "correction", "pending_card", "score"))
    return Household(rows, {under_way: next_cards}, pages_of(rows))


def pages_of(rows: dict[str, list[dict]]) -> list[str]:
    """The household's pages: its history, leaderboard and year, each player's figures,
    each match's pages and each card game's luck and review (what the derived rows show),
    and the backup's file (every input)."""
    pages = ["/history", "/leaderboard", f"/review/{utcnow().year}", "/backup/export.json"]
    pages += [f"/players/{player['id']}/stats" for player in rows["player"]]
    for match in rows["match"]:
        pages += match_pages(match["id"])
    for game in rows["game"]:
        if game["mode"] == "cards":
            at = f"/matches/{game['match_id']}/games/{game['number']}"
            pages += [f"{at}/luck.json", f"{at}/review.json"]
    return pages


def match_pages(match_id: int) -> list[str]:
    """A match's page and scoreboard as a visitor sees them, its page on a phone of the
    table (the player link: its forms, its hidden cards)."""
    return [f"/matches/{match_id}", f"/matches/{match_id}/scoreboard", f"phone {match_id}"]


def send_card(app: Flask, match_id: int, player: int, card: int):
    """A player's phone (the player link, "I am …") sends its card for the next round."""
    with app.app_context():
        match = db.session.get(Match, match_id)
        token, game = match.player_token, match.games[-1]
        number = len(game.rounds) + 1
    joined = phone(app, match_id, token)
    i_am(joined, match_id, player)
    data = {f"card-{player}": str(card), "game": str(game.number), "round": str(number)}
    return joined.post(f"/matches/{match_id}/rounds", data=data)


@pytest.fixture
def quiet_migrations(monkeypatch):
    """env.py configures logging from alembic.ini; not our business inside pytest."""
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)


@pytest.fixture(scope="session")
def expected() -> dict:
    """What the household shows, written straight into the newest schema, by the input
    columns a revision held: revisions that held the same show the same (figured once)."""
    return {}


@pytest.mark.parametrize("revision", REVISIONS)
def test_an_upgrade_keeps_everything(revision, household, expected, tmp_path, quiet_migrations):
    old = create_app(
        conftest.testing_config(
            tmp_path / "old.sqlite",
            SQLALCHEMY_DATABASE_URI=conftest.database_url(tmp_path / "old.sqlite", empty=True),
        )
    )
    old.jinja_env.bytecode_cache = conftest.COMPILED_TEMPLATES.get("cache")
    with old.app_context():
        upgrade(revision=revision)
        held = write_rows(household.rows, reflected())
        upgrade()
        assert broken_rows() == []  # nothing lost that another row refers to
        as_after_a_start()
    signature = frozenset((table, column) for table, columns in held.items() for column in columns)
    if signature not in expected:
        new = new_household(household, held, tmp_path)
        expected[signature] = (what_it_shows(new, household), played_on(new, household))
    shows, after_its_round = expected[signature]
    assert differences(what_it_shows(old, household), shows) == ""
    assert differences(played_on(old, household), after_its_round) == ""


def new_household(household: Household, held: dict[str, set], tmp_path: Path) -> Flask:
    """The household as far as a revision held it, in a database of the newest schema."""
    new = conftest.make_app(tmp_path / "new.sqlite")
    with new.app_context():
        write_rows(household.rows, db.metadata.sorted_tables, held=held)
        as_after_a_start()
    return new


def what_it_shows(app: Flask, household: Household) -> dict[str, str]:
    """What the household sees (``seen``), and what ``flask rebuild --check`` says: that
    nothing differs."""
    shown_pages = seen(app, household.pages)
    checked = app.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert checked.exit_code == 0, checked.output
    shown_pages["flask rebuild --check"] = checked.output
    return shown_pages


def played_on(app: Flask, household: Household) -> dict[str, str]:
    """The pages of the household's unfinished match once the cards of its next round are
    all in (none at a revision with no matches)."""
    after = {}
    with app.app_context():
        held = set(db.session.scalars(select(Match.id)))
    for match_id, cards in household.next_cards.items():
        if match_id in held:  # a revision with matches: the round is placed
            assert play_on(app, match_id, cards) == ROUNDS_PLAYED + 1
            after |= seen(app, ["/backup/export.json", *match_pages(match_id)])
    return after


def reflected() -> list[Table]:
    """The tables of the database as its revision made them, each after those it refers to."""
    metadata = MetaData()
    metadata.reflect(db.engine)
    return [table for table in metadata.sorted_tables if table.name != "alembic_version"]


def write_rows(rows: dict[str, list[dict]], tables: list[Table], held=None) -> dict[str, set]:
    """Write the household's rows into ``tables``, each with the columns it has: its inputs
    (only the columns ``held`` names, {table: columns}, when given) and its derived rows
    (none when nothing is held). The input columns written, by table."""
    written = {}
    for table in tables:
        derived = table.name in DERIVED_TABLES
        columns = set(table.columns.keys()) & set(next(iter(rows.get(table.name, [])), ()))
        if held is not None:
            columns &= (
                set(table.columns.keys()) if derived and held else held.get(table.name, set())
            )
        if not derived:
            written[table.name] = columns
        if columns:
            kept = [{key: row[key] for key in columns} for row in rows[table.name]]
            db.session.execute(insert(table), kept)
    db.session.commit()
    follow_ids(tables)
    return written


def follow_ids(tables: list[Table]) -> None:
    """On PostgreSQL, each table's id sequence moved past the ids written (SQLite's follow
    by themselves): the household's next row gets a new id, as it would have."""
    if db.engine.dialect.name != "postgresql":
        return
    for table in tables:
        if "id" in table.columns and db.session.scalar(select(func.max(table.c.id))):
            sequence = func.pg_get_serial_sequence(f'"{table.name}"', "id")
            db.session.execute(select(func.setval(sequence, func.max(table.c.id))))
    db.session.commit()


def as_after_a_start() -> None:
    """What the server's start does after an upgrade, then its background process: the
    statistics, each match's luck, then the reviews of the history."""
    store.fill_statistics()
    for match_id in db.session.scalars(select(Match.id).order_by(Match.id)).all():
        store.statistics_after(match_id)
        store.luck_after(match_id)
    while (match_id := store.history_to_review()) is not None:
        assert store.review_after(match_id) > 0
    db.session.remove()


def play_on(app: Flask, match_id: int, cards: dict[int, int]) -> int:
    """Each player whose card for the next round is not in yet sends it (the round placed a
    minute after the one before in every database: its time is on its pages); the rounds
    of the game under way after."""
    with app.app_context():
        waiting = set(db.session.scalars(select(PendingCard.player_id)))
    for player, card in cards.items():
        if player not in waiting:
            assert send_card(app, match_id, player, card).status_code == 303
    with app.app_context():
        game = db.session.get(Match, match_id).games[-1]
        game.rounds[-1].created_at = game.rounds[-2].created_at + timedelta(minutes=1)
        db.session.commit()
        return len(game.rounds)


def seen(app: Flask, pages: list[str]) -> dict[str, str]:
    """What the household sees on these pages: as a visitor, or ("phone 2") match 2's page
    on a phone of its table; each match's links and each phone's CSRF token left out."""
    with app.app_context():
        links = db.session.execute(select(Match.id, Match.player_token, Match.watch_token)).all()
        secrets = {
            token: f"<{kind} link of match {match_id}>"
            for match_id, *tokens in links
            for kind, token in zip(("player", "watch"), tokens, strict=True)
        }
        tokens = {match_id: token for match_id, token, _ in links}
    visitor = app.test_client()
    shown_pages = {}
    for page in pages:
        if page.startswith("phone "):
            match_id = int(page.split()[1])
            response = phone(app, match_id, tokens.get(match_id)).get(f"/matches/{match_id}")
        else:
            response = visitor.get(page)
        shown_pages[page] = hidden(shown(response), secrets)
    return shown_pages


def differences(upgraded: dict[str, str], wanted: dict[str, str]) -> str:
    """The lines that differ, page by page: the upgraded database's, then the wanted."""
    return "\n".join(
        f"{page}:\n"
        + "\n".join(
            difflib.unified_diff(
                wanted.get(page, "").splitlines(),
                upgraded.get(page, "").splitlines(),
                "wanted",
                "upgraded",
                n=1,
                lineterm="",
            )
        )
        for page in sorted(upgraded.keys() | wanted.keys())
        if upgraded.get(page) != wanted.get(page)
    )


CSRF = re.compile(r'(csrf_token" value="|"X-CSRFToken": ")[^"]+')
EXPORTED_AT = re.compile(r'"exported_at": "[^"]+"')
# The versions a phone polls with: derived rows figured after an upgrade raise them.
VERSIONS = re.compile(r"\b(since|table)=\d+")


def shown(response) -> str:
    """A page as its reader gets it: status, where it leads, its text."""
    return f"{response.status_code} {response.headers.get('Location', '')}\n{response.text}"


def hidden(page: str, secrets: dict[str, str]) -> str:
    """The page with what differs by nature left out: the match's secrets (a revision
    before links made them anew), the phone's CSRF token, the versions its page polls
    with, when the file was written."""
    for secret, name in secrets.items():
        page = page.replace(secret, name)
    page = VERSIONS.sub(r"\1=", CSRF.sub(r"\1", page))
    return EXPORTED_AT.sub('"exported_at"', page)
