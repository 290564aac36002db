"""Benchmark the statistics pages on a household history of 10 players and 5,000 matches.

Run: .venv/bin/python bench/leaderboard.py   (prints figures; not a test)
Target (issue 5): under 150 ms server time each for /leaderboard, a player page and
/players/<id>/stats, on this 2-core machine.

The history is the one ``bench/history.py`` generates for every benchmark (about 50
years of game nights, simulated legal games, inserted in bulk). Server times are the
median of several requests through the Flask test client, after one cold request
(printed too: it reads the tables and rates every match, which later requests take
from the in-memory cache).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from driver import score_game, start_match  # noqa: E402
from history import build, empty_app  # noqa: E402


def timed(client, url: str, repeat: int = 15) -> tuple[float, float]:
    """Milliseconds for one cold request, then the median of ``repeat`` more."""
    begin = time.perf_counter()
    response = client.get(url)
    cold = time.perf_counter() - begin
    assert response.status_code == 200, (url, response.status_code)
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        client.get(url)
        samples.append(time.perf_counter() - begin)
    return cold * 1000, statistics.median(samples) * 1000


def main() -> None:
    """Build the history and print the server times."""
    with tempfile.TemporaryDirectory() as folder:
        app = empty_app(folder)
        begin = time.perf_counter()
        ids = build(app)
        print(f"history built and inserted in {time.perf_counter() - begin:.1f} s")
        client = app.test_client()
        client.get("/players/")  # the app's own first-request costs, not the statistics'
        pages = [
            ("/leaderboard", "/leaderboard"),
            ("/leaderboard?period=year", "/leaderboard?period=year"),
            ("/leaderboard?players=4", "/leaderboard?players=4"),
            ("player page /players/1", f"/players/{ids[0]}"),
            ("/players/1/stats", f"/players/{ids[0]}/stats"),
            ("/players/1/stats?page=50", f"/players/{ids[0]}/stats?page=50"),
            (
                "/leaderboard/head-to-head",
                f"/leaderboard/head-to-head?first={ids[0]}&second={ids[1]}",
            ),
            ("match history /history", "/history"),
            ("match history /history?page=100", "/history?page=100"),
        ]
        for label, url in pages:
            cold, warm = timed(client, url)
            print(f"{label:32s} {warm:7.1f} ms median   (first request {cold:7.1f} ms)")
        # A match finishes at the table: the next leaderboard rates only that match.
        match_id = start_match(client, ids[:3], end_kind="games", end_value=1)
        assert (
            score_game(client, match_id, dict(zip(ids[:3], (5, 9, 12), strict=True))).status_code
            == 303
        )
        cold, warm = timed(client, "/leaderboard")
        print(
            f"{'/leaderboard after a new match':32s} {warm:7.1f} ms median   "
            f"(first request {cold:7.1f} ms)"
        )


if __name__ == "__main__":
    main()
