"""Benchmark the year at our table (/review/<year>) for a year of 5,000 matches.

Run: .venv/bin/python -m bench.review [--postgresql]   (prints figures; not a test)
Target (issue 22): under 200 ms server time for the household's review and a player's,
on this 2-core machine shared with other programs (their CPU time is printed too).

The history is ``bench.history``'s (10 players, simulated legal games, inserted in
bulk, every match rated), its 5,000 matches put into the year we are in, from 1 January
to yesterday, in a SQLite file (``--postgresql``: on a throwaway cluster of Debian's
PostgreSQL, as ``bench.serving`` runs it). The review asks the database for the year's
sums and firsts over the derived tables (``companion.household.review``) and keeps the
result until a match changes. Printed for the household's review and a player's: the
first request after a start (nothing in memory), the median of 15 requests after it,
and the same after a new match of the year (its first request asks the database again).
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

from bench.apps import app_on
from bench.history import build
from bench.leaderboard import timed
from bench.serving import bench_database, others_meanwhile
from companion.models import utcnow
from tests.driver import score_game, start_match

MATCHES = 5_000


def main() -> None:
    """Build the year and print the server times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgresql", action="store_true", help="on PostgreSQL")
    args = parser.parse_args()
    with bench_database(args.postgresql) as (url, database):
        run(app_on(url, WTF_CSRF_ENABLED=False), database)


def run(app, database: int | None) -> None:
    """Build the year in ``app``'s database (served by process ``database``, if any) and
    print the server times."""
    now = utcnow()
    year, first = now.year, datetime(now.year, 1, 1, 19)
    days = max((now - first).days - 1, 1)
    begin = time.perf_counter()
    ids = build(app, MATCHES, first=first, days_apart=days / MATCHES)
    print(f"{MATCHES:,} matches of {year} built in {time.perf_counter() - begin:.1f} s")
    client = app.test_client()
    # The app's own first-request costs, not the year's: its pages, the review's
    # template and statements (an empty year's review).
    client.get("/players/")
    client.get("/review/2000")

    household, player = f"/review/{year}", f"/review/{year}?player={ids[0]}"
    with others_meanwhile(database):
        for label, url in [("household, after a start", household), ("a player", player)]:
            cold, warm = timed(client, url)
            print(f"{label:34s} first request {cold:7.1f} ms   then {warm:7.1f} ms median")
        match_id = start_match(client, ids[:3], end_kind="games", end_value=1)
        scores = dict(zip(ids[:3], (5, 9, 12), strict=True))
        assert score_game(client, match_id, scores).status_code == 303
        for label, url in [("household, after a new match", household), ("a player", player)]:
            cold, warm = timed(client, url)
            print(f"{label:34s} first request {cold:7.1f} ms   then {warm:7.1f} ms median")


if __name__ == "__main__":
    main()
