"""A household's history through the test client, and its backup file: exported,
uploaded, compared without the export's own time; and simulated legal games written
straight into a backup file."""

import io
import json
import random
from datetime import UTC, datetime, timedelta

from alembic.script import ScriptDirectory
from driver import add_players, enter_round, play_game, score_game, start_game, start_match
from kept import kept

from companion import rules
from companion.db import db

FORMAT = "6nimmt-companion"


def household(client) -> dict[str, int]:
    """A small household history: a finished match, a pro match still being played."""
    ids = dict(
        zip(
            ["Anna", "Ben", "Cleo", "Jürgen", "Dan"],
            add_players(client, "Anna", "Ben", "Cleo", "Jürgen", "Dan"),
            strict=True,
        )
    )
    client.post(f"/players/{ids['Dan']}/archive", data={"archived": "1"})
    trio = [ids["Anna"], ids["Ben"], ids["Cleo"]]
    first = start_match(client, trio, end_kind="games", end_value=2)
    play_game(client, first, trio, random.Random(7))
    score = score_game(client, first, {ids["Anna"]: 5, ids["Ben"]: [55, 11], ids["Cleo"]: 0})
    assert score.status_code == 303
    pair = [ids["Anna"], ids["Jürgen"]]
    second = start_match(client, pair, deck="pro")
    play_game(client, second, pair, random.Random(8), deck=24)
    assert start_game(client, second, [10, 12, 14, 16]).status_code == 303
    # Anna's 3 is lower than every row: the round waits for her row choice.
    assert enter_round(client, second, {ids["Anna"]: 3, ids["Jürgen"]: 20}).status_code == 303
    return ids


def kept_household(client, app, shared) -> dict[str, int]:
    """``household``, built by the session's first test that asks and copied after
    (tests/kept.py; ``shared``: conftest.shared_folder)."""
    return kept(app, client, shared, "backups", lambda: household(client))


def export(client) -> dict:
    """The backup as the download link gives it."""
    response = client.get("/backup/export.json")
    assert response.status_code == 200
    return json.loads(response.data)


def upload(client, data, name: str = "backup.json"):
    """Post a file to the import form: bytes as they are, anything else as JSON."""
    if not isinstance(data, bytes):
        data = json.dumps(data).encode()
    return client.post(
        "/backup/import",
        data={"file": (io.BytesIO(data), name)},
        content_type="multipart/form-data",
    )


def snapshot(app) -> list:
    """Every row of every table, to prove that a refused import changed nothing."""
    with app.app_context():
        return [db.session.execute(db.select(table)).all() for table in db.metadata.sorted_tables]


def without_time(document: dict) -> dict:
    """The document without the moment it was exported."""
    return {key: value for key, value in document.items() if key != "exported_at"}


def shifted(document: dict) -> dict:
    """The document with every match a year earlier: all new to the database it came from."""
    for match in document["matches"]:
        year = int(match["created_at"][:4])
        match["created_at"] = f"{year - 1}{match['created_at'][4:]}"
    return document


# Ten seats, long names (30 characters at most): the widest replay a household can make.
NAMES = [
    "Hilde",
    "Ole",
    "Pia",
    "Rolf",
    "Smilla",
    "Theo",
    "Ulla",
    "Vito",
    "Wiebke",
    "Xaver-Maximilian Großkopf",
    "Maximiliane-Alexandra Großkopf",
]


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def simulated_game(rng: random.Random, seats: list[str], when: datetime) -> dict:
    """A legal game as a backup holds it; too-low cards take the suggested row."""
    cards = rng.sample(range(1, rules.STANDARD_DECK + 1), 10 * len(seats) + 4)
    starting, hands = cards[:4], [cards[4 + 10 * i : 14 + 10 * i] for i in range(len(seats))]
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        plays = [(name, hands[seat][turn]) for seat, name in enumerate(seats)]
        table.start_round(plays)
        choices: dict[str, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
        rounds.append(
            {"cards": [card for _, card in plays], **({"choices": choices} if choices else {})}
        )
    return {"mode": "cards", "created_at": stamp(when), "starting": starting, "rounds": rounds}


def backup_file() -> bytes:
    """Two finished one-game matches from a minute ago: four players, and ten."""
    now = datetime.now(UTC).replace(tzinfo=None) - timedelta(minutes=1)
    rng = random.Random(390)
    four = [NAMES[0], NAMES[1], NAMES[2], NAMES[9]]
    matches = [
        {
            "created_at": stamp(now + timedelta(seconds=index)),
            "end": {"kind": "games", "value": 1},
            "pro": False,
            "seats": seats,
            "games": [simulated_game(rng, seats, now + timedelta(seconds=index))],
        }
        for index, seats in enumerate([four, NAMES[1:]])
    ]
    players = [{"name": name, "archived": False, "created_at": stamp(now)} for name in NAMES]
    return json.dumps(
        {
            "format": "6nimmt-companion",
            "version": 1,
            "exported_at": stamp(now),
            "players": players,
            "matches": matches,
        }
    ).encode()


def at_head(app) -> None:
    """Stamp a database the tests made with create_all at the newest migration, as
    ``flask db upgrade`` would leave it (a real database always has its revision)."""
    with app.app_context():
        head = ScriptDirectory(app.extensions["migrate"].directory).get_current_head()
        db.session.execute(db.text("CREATE TABLE alembic_version (version_num VARCHAR(32))"))
        db.session.execute(db.text("INSERT INTO alembic_version VALUES (:head)"), {"head": head})
        db.session.commit()
