"""Benchmark the year at our table (/review/<year>) for a year of 5,000 matches.

Run: .venv/bin/python -m bench.review   (prints figures; not a test)
Target (issue 22): under 200 ms server time for the household's review and a player's,
on this 2-core machine shared with other programs (their CPU time is printed too).

The history is ``bench.history``'s (10 players, simulated legal games, inserted in
bulk), its 5,000 matches put into 2025, about 105 minutes apart. The first request reads
the year's rows and replays its card games (for the card that cost the most); later
requests take the rows from memory until a match changes (companion.household.review),
and compute the figures from them. Printed: the median of 15 requests after that first
one, the first one, and the first request after a new match (which reads it all again).
"""

from __future__ import annotations

import os
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench.apps import sqlite_app
from bench.history import build
from bench.leaderboard import timed
from bench.serving import machine_cpu_seconds, own_cpu_seconds
from tests.driver import score_game, start_match

YEAR = 2025
MATCHES = 5_000


def main() -> None:
    """Build the year and print the server times."""
    with tempfile.TemporaryDirectory() as folder:
        app = sqlite_app(Path(folder) / "bench.sqlite", WTF_CSRF_ENABLED=False)
        begin = time.perf_counter()
        ids = build(app, MATCHES, first=datetime(YEAR, 1, 1, 19), days_apart=364 / MATCHES)
        print(f"{MATCHES:,} matches of {YEAR} built in {time.perf_counter() - begin:.1f} s")
        client = app.test_client()
        client.get("/players/")  # the app's own first-request costs, not the review's
        machine, own, wall = (
            machine_cpu_seconds(),
            own_cpu_seconds(os.getpid()),
            time.perf_counter(),
        )
        pages = [
            (f"/review/{YEAR}", f"/review/{YEAR}"),
            (f"/review/{YEAR}?player=1", f"/review/{YEAR}?player={ids[0]}"),
        ]
        for label, url in pages:
            cold, warm = timed(client, url)
            print(f"{label:32s} {warm:7.1f} ms median   (first request {cold:7.1f} ms)")
        match_id = start_match(client, ids[:3], end_kind="games", end_value=1)
        scores = dict(zip(ids[:3], (5, 9, 12), strict=True))
        assert score_game(client, match_id, scores).status_code == 303
        cold, warm = timed(client, f"/review/{YEAR}")
        print(f"{'after a new match':32s} {warm:7.1f} ms median   (first request {cold:7.1f} ms)")
        elapsed = time.perf_counter() - wall
        others = machine_cpu_seconds() - machine - (own_cpu_seconds(os.getpid()) - own)
        print(
            f"meanwhile other programs took {max(others, 0):.1f} s of CPU "
            f"in {elapsed:.1f} s on {os.cpu_count()} cores"
        )


if __name__ == "__main__":
    main()
