"""Benchmark backup: export and import a household history of 10 players, 5,000 matches.

Run: .venv/bin/python bench/export.py [MATCHES]   (prints figures; not a test)
Target (issue 5): the export of everything under 10 s. The history is generated here,
self-contained: legal games simulated with companion.rules (too-low cards take a random
row), about one game in eight kept as typed scores, bulk-inserted straight into SQLite
with their game_result rows. Then: export it, import it into an empty database, export
that again and compare.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import insert

from companion import create_app, rules
from companion.backup.check import read_backup
from companion.backup.document import dump, export_document
from companion.backup.load import import_backup
from companion.db import db
from companion.models import (
    Game,
    GameResult,
    Match,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
    Seat,
)
from companion.players import name_key

PLAYERS = ["Anna", "Ben", "Cleo", "Dan", "Eva", "Finn", "Greta", "Hans", "Ida", "Jürgen"]
FIRST_NIGHT = datetime(1976, 1, 3, 19, 30)


def make_app(path: Path):
    """An app on its own SQLite file with every table in place."""
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "bench", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}"}
    )
    with app.app_context():
        db.create_all()
    return app


def simulate_game(rng: random.Random, seats: list[int], deck: int):
    """A legal cards game: starting cards, rounds (cards in seat order, choices), bulls."""
    cards = rng.sample(range(1, deck + 1), 10 * len(seats) + 4)
    starting, hands = cards[:4], [cards[4 + 10 * i : 14 + 10 * i] for i in range(len(seats))]
    table = rules.Table([(card,) for card in starting])
    rounds, bulls = [], dict.fromkeys(seats, 0)
    for turn in range(rules.HAND_SIZE):
        plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(seats)]
        table.start_round(plays)
        choices: dict[int, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = rng.randint(1, rules.ROWS)
        for step in table.steps:
            bulls[step.player] += step.bulls
        rounds.append(([card for _, card in plays], choices))
    return starting, rounds, bulls


def typed_scores(rng: random.Random, seats: list[int], deck: int):
    """A score-only game: mostly typed bulls, now and then a pile of cards."""
    entries, bulls = {}, {}
    free = rng.sample(range(1, deck + 1), 5 * len(seats))
    for index, pid in enumerate(seats):
        if rng.random() < 0.2:
            pile = free[5 * index : 5 * index + rng.randint(1, 5)]
            entries[pid], bulls[pid] = (None, ",".join(map(str, pile))), rules.pile_bulls(pile)
        else:
            count = rng.randint(0, 25)
            entries[pid], bulls[pid] = (count, None), count
    return entries, bulls


def generate(matches: int, seed: int = 50) -> None:
    """Bulk-insert 10 players and ``matches`` matches, weekly from 1976 on."""
    rng = random.Random(seed)
    db.session.execute(
        insert(Player.__table__),
        [
            {
                "id": pid,
                "name": name,
                "name_key": name_key(name),
                "archived": pid == 10,
                "created_at": FIRST_NIGHT - timedelta(days=1, seconds=pid),
            }
            for pid, name in enumerate(PLAYERS, 1)
        ],
    )
    rows: dict = {
        model: [] for model in (Match, Seat, Game, Round, Play, RowChoice, Score, GameResult)
    }
    game_id = round_id = 0
    for match_id in range(1, matches + 1):
        seats = rng.sample(range(1, 11), rng.choice([3, 4, 4, 5, 5, 6, 7]))
        pro = len(seats) <= 5 and rng.random() < 0.1
        end = rules.EndCondition(*rng.choice([("more_than", 66)] * 6 + [("games", 3)]))
        deck = rules.deck_size(len(seats), pro)
        night = FIRST_NIGHT + timedelta(
            weeks=match_id // 2, minutes=match_id % 2 * 90, microseconds=rng.randint(0, 999_999)
        )
        rows[Match].append(
            {
                "id": match_id,
                "created_at": night,
                "end_kind": end.kind,
                "end_value": end.value,
                "pro": pro,
            }
        )
        rows[Seat] += [
            {"match_id": match_id, "player_id": pid, "position": position}
            for position, pid in enumerate(seats, 1)
        ]
        finished: list[dict[int, int]] = []
        while not rules.standing(seats, finished, end).over:
            game_id += 1
            number = len(finished) + 1
            game = {
                "id": game_id,
                "match_id": match_id,
                "number": number,
                "created_at": night + timedelta(minutes=20 * number),
            }
            if rng.random() < 0.125:
                entries, bulls = typed_scores(rng, seats, deck)
                rows[Game].append(
                    {
                        **game,
                        "mode": "scores",
                        "row1": None,
                        "row2": None,
                        "row3": None,
                        "row4": None,
                    }
                )
                rows[Score] += [
                    {"game_id": game_id, "player_id": pid, "bulls": value, "cards": pile}
                    for pid, (value, pile) in entries.items()
                ]
            else:
                starting, rounds, bulls = simulate_game(rng, seats, deck)
                rows[Game].append(
                    {
                        **game,
                        "mode": "cards",
                        **{f"row{row}": card for row, card in enumerate(starting, 1)},
                    }
                )
                for number_, (cards, choices) in enumerate(rounds, 1):
                    round_id += 1
                    rows[Round].append(
                        {
                            "id": round_id,
                            "game_id": game_id,
                            "number": number_,
                            "created_at": game["created_at"],
                        }
                    )
                    rows[Play] += [
                        {"round_id": round_id, "game_id": game_id, "player_id": pid, "card": card}
                        for pid, card in zip(seats, cards, strict=True)
                    ]
                    rows[RowChoice] += [
                        {"round_id": round_id, "player_id": pid, "row": row}
                        for pid, row in choices.items()
                    ]
            rows[GameResult] += [
                {"game_id": game_id, "player_id": pid, "bulls": count}
                for pid, count in bulls.items()
            ]
            finished.append(bulls)
    for model, values in rows.items():
        db.session.execute(insert(model.__table__), values)
    db.session.commit()


def main() -> None:
    """Generate, export, import, export again; print the figures."""
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    folder = Path(tempfile.mkdtemp(prefix="bench-export-"))
    source = make_app(folder / "history.sqlite")
    with source.app_context():
        started = time.perf_counter()
        generate(matches)
        print(f"generated {matches} matches in {time.perf_counter() - started:.1f} s")
        counts = {model.__name__: db.session.query(model).count() for model in (Game, Round, Play)}
        print("  " + ", ".join(f"{count:,} {name.lower()}s" for name, count in counts.items()))
        started = time.perf_counter()
        text = dump(export_document())
        exported = time.perf_counter() - started
    data = text.encode("utf-8")
    print(f"export of everything: {exported:.2f} s (target < 10 s), {len(data) / 1e6:.1f} MB")
    target = make_app(folder / "imported.sqlite")
    with target.app_context():
        started = time.perf_counter()
        backup = read_backup(data)
        checked = time.perf_counter() - started
        report = import_backup(backup)
        imported = time.perf_counter() - started
        again = json.loads(dump(export_document()))
    print(
        f"import into an empty database: {imported:.2f} s "
        f"(checking every round {checked:.2f} s, writing {imported - checked:.2f} s)"
    )
    print(f"  {report.as_dict()}")
    first = json.loads(text)
    first.pop("exported_at"), again.pop("exported_at")
    print(f"round trip identical: {first == again}")


if __name__ == "__main__":
    main()
