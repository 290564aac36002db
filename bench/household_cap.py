"""Benchmark the pages of a household at its caps: 200 players, 20,000 matches.

Run: .venv/bin/python -m bench.household_cap [--matches 20000] [--postgresql]
(prints figures; not a test). Targets (issue 30): every page that lists players or
matches under 200 ms and 500 KB at the caps (``companion.models``), and no request near
the worker's timeout (30 s): the year's review is timed with every match in this year.

The history is ``bench.history``'s (simulated legal games inserted in bulk, every match
rated), with 200 players seated at random, its matches spread over the year we are in.
Printed for each page: the first request after the build (nothing in memory), the
median of 5 more, and its size (as sent, and gzipped as a phone asks for it); and the
CPU that other programs took meanwhile.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
from datetime import datetime

from bench.apps import app_on
from bench.history import build
from bench.serving import bench_database, others_meanwhile
from companion.models import MAX_MATCHES_HELD, MAX_PLAYERS_HELD, utcnow


def pages(year: int, player: int, match: int) -> list[tuple[str, str]]:
    """The pages that list players or matches, and the review."""
    return [
        ("home /", "/"),
        ("players /players/", "/players/"),
        ("new match /matches/new", "/matches/new"),
        ("leaderboard", "/leaderboard"),
        ("leaderboard, this year", "/leaderboard?period=year"),
        ("match history /history", "/history"),
        ("match history, page 100", "/history?page=100"),
        ("a player's page", f"/players/{player}"),
        ("a player's statistics", f"/players/{player}/stats"),
        ("a match page", f"/matches/{match}"),
        ("the year's review", f"/review/{year}"),
        ("a player's review", f"/review/{year}?player={player}"),
    ]


def timed(client, url: str, repeat: int = 5) -> tuple[float, float, int, int]:
    """ms of the first request and the median of ``repeat`` more; bytes, gzipped bytes."""
    begin = time.perf_counter()
    response = client.get(url)
    cold = (time.perf_counter() - begin) * 1000
    assert response.status_code == 200, (url, response.status_code)
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        client.get(url)
        samples.append((time.perf_counter() - begin) * 1000)
    body = response.get_data()
    return cold, statistics.median(samples), len(body), len(gzip.compress(body))


def main() -> None:
    """Build the household and print the pages' times and sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=MAX_MATCHES_HELD)
    parser.add_argument("--players", type=int, default=MAX_PLAYERS_HELD)
    parser.add_argument("--postgresql", action="store_true", help="on PostgreSQL")
    args = parser.parse_args()
    with bench_database(args.postgresql) as (url, database):
        run(app_on(url, WTF_CSRF_ENABLED=False), database, args)


def run(app, database: int | None, args) -> None:
    """Build the household in ``app``'s database and print the figures."""
    now = utcnow()
    first = datetime(now.year, 1, 1, 19)
    days = max((now - first).days - 1, 1)
    begin = time.perf_counter()
    ids = build(
        app, args.matches, first=first, days_apart=days / args.matches, players=args.players
    )
    print(
        f"{args.players:,} players, {args.matches:,} matches of {now.year} built in "
        f"{time.perf_counter() - begin:.0f} s"
    )
    client = app.test_client()
    client.get("/review/2000")  # the app's own first-request costs (an empty year's review)

    with others_meanwhile(database):
        print(f"  {'page':28s} {'first ms':>9} {'median ms':>10} {'KB':>8} {'gzip KB':>8}")
        for label, url in pages(now.year, ids[0], args.matches):
            cold, warm, size, zipped = timed(client, url)
            print(f"  {label:28s} {cold:9.1f} {warm:10.1f} {size / 1024:8.1f} {zipped / 1024:8.1f}")


if __name__ == "__main__":
    main()
