"""Benchmark the household's luck (issue 44): what the leaderboard's first request after a
start reads of every match's luck, on a household whose every finished card game has its
luck kept.

Run: .venv/bin/python -m bench.household_luck [--matches 5000] [--cpu-share 0.25]
(prints figures; not a test). The history is ``bench.history``'s (10 players, simulated
legal games inserted in bulk), spread over the year we are in; every play of a finished
card game gets its ``PlayLuck`` row (figures drawn at random: what the pages read costs
the same whatever the figures) and each player's game its sums (``LuckPlayer``), as the
background keeps them.

Printed, each read in a process of its own (held to ``--cpu-share`` of a core in a
cgroup, as ``bench.push`` holds the server), wall and CPU time, median of three:

- every match's luck as the pages read it (``match_luck.read_matches``: the players'
  sums of each game);
- the same summed from every play's row, as the pages did before the sums were kept;

then the leaderboard's first request and median at full speed, with the CPU other
programs took.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from sqlalchemy import case, func, insert, select

from bench.apps import sqlite_app
from bench.game_review import in_a_child
from bench.history import build
from bench.household_choices import finished_card_plays, first_ms, median_ms
from bench.serving import machine_cpu_seconds
from companion import rules
from companion.db import db
from companion.derived import play_luck
from companion.derived.tables import PlayLuck
from companion.household import match_luck
from companion.models import Match, utcnow

CHUNK = 100_000  # rows per insert


def add_luck(app, seed: int = 34) -> int:
    """Every finished card game's luck rows and their sums; the rows."""
    rng = random.Random(seed)
    with app.app_context():
        query = finished_card_plays()
        rows = [
            {
                "game_id": game_id,
                "match_id": match_id,
                "round_number": number,
                "player_id": player,
                "card": card,
                "chance": rng.random(),
                "expected": rng.uniform(0, 3),
                "bulls": rng.choice((0, 0, 0, 3, 5)),
                "samples": 0,
                "whole": True,
            }
            for game_id, match_id, number, player, card in db.session.execute(query)
        ]
        for start in range(0, len(rows), CHUNK):
            db.session.execute(insert(PlayLuck), rows[start : start + CHUNK])
        games = sorted({row["game_id"] for row in rows})
        for start in range(0, len(games), 500):
            play_luck.sum_players(games[start : start + 500])
        db.session.commit()
    return len(rows)


def summed_from_the_rows(where: list):
    """(match, player, games, expected, bulls, lowest) summed from every play's row: the
    pages' read before each player's sums of a game were kept."""
    whole = func.sum(case((PlayLuck.whole, 1), else_=0))
    games = (
        select(
            PlayLuck.match_id,
            PlayLuck.player_id,
            func.sum(PlayLuck.expected).label("expected"),
            func.sum(PlayLuck.bulls).label("bulls"),
            func.min(case((PlayLuck.bulls > 0, PlayLuck.chance))).label("lowest"),
        )
        .where(*where)
        .group_by(PlayLuck.match_id, PlayLuck.player_id, PlayLuck.game_id)
        .having(func.count() == rules.HAND_SIZE, whole == rules.HAND_SIZE)
        .subquery()
    )
    return (
        select(
            games.c.match_id,
            games.c.player_id,
            func.count(),
            func.sum(games.c.expected),
            func.sum(games.c.bulls),
            func.min(games.c.lowest),
        )
        .group_by(games.c.match_id, games.c.player_id)
        .order_by(games.c.match_id, games.c.player_id)
    )


def reads(path: str, results) -> None:
    """In the child process: every match's luck read three times each way."""
    app = sqlite_app(Path(path))
    with app.app_context():
        versions = {
            match_id: (version, created)
            for match_id, version, created in db.session.execute(
                select(Match.id, Match.version, Match.created_at)
            )
        }
        ways = {"kept sums": match_luck.player_sums, "every play's row": summed_from_the_rows}
        found = {}
        for label, way in ways.items():
            original = match_luck.player_sums
            match_luck.player_sums = way
            try:
                for _ in range(3):
                    db.session.remove()
                    cpu, wall = time.process_time(), time.perf_counter()
                    luck = match_luck.read_matches(None, versions)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    results.put((label, wall, cpu))
            finally:
                match_luck.player_sums = original
            found[label] = luck
        assert found["kept sums"] == found["every play's row"], "the two reads differ"
    results.put(None)


def main() -> None:
    """Build the household, keep its luck, and print the reads' and the pages' times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5_000)
    parser.add_argument("--cpu-share", type=float, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.sqlite"
        app = sqlite_app(path, WTF_CSRF_ENABLED=False)
        now = utcnow()
        first = datetime(now.year, 1, 1, 19)
        days = max((now - first).days - 1, 1)
        begin = time.perf_counter()
        ids = build(app, args.matches, first=first, days_apart=days / args.matches)
        rows = add_luck(app)
        print(
            f"{args.matches:,} matches of {now.year}, {rows:,} luck rows, built in "
            f"{time.perf_counter() - begin:.0f} s"
        )
        found, held, machine = in_a_child(reads, (str(path),), args.cpu_share)
        print(f"every match's luck read once (the first request after a start), {held}:")
        for label in dict.fromkeys(label for label, *_ in found):
            walls = [wall for name, wall, _ in found if name == label]
            cpus = [cpu for name, _, cpu in found if name == label]
            print(
                f"  {label:18s} {statistics.median(walls) * 1000:7.0f} ms, "
                f"{statistics.median(cpus) * 1000:5.0f} ms of CPU"
            )
        others = max(machine - sum(cpu for *_, cpu in found), 0.0)
        print(f"  other programs took {others:.1f} s of CPU meanwhile ({os.cpu_count()} cores)")
        client = app.test_client()
        client.get("/review/2000")  # the app's own first-request costs
        machine = machine_cpu_seconds()
        for label, url in [("/leaderboard", "/leaderboard"), ("a player", f"/players/{ids[0]}")]:
            cold, warm = first_ms(client, url), median_ms(client, url, 9)
            print(f"  {label:18s} first request {cold:6.0f} ms, then {warm:5.1f} ms (median)")
        print(f"  other programs took about {machine_cpu_seconds() - machine:.1f} s with these")


if __name__ == "__main__":
    main()
