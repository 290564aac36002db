"""Benchmark the round page: server time and bytes, for 10 players in game 5.

Run: .venv/bin/python bench/pages.py   (prints figures; not a test)
Targets (issue 3): under 10 ms server time for the round page and for a round
submission; under 30 KB of HTML + CSS for the round page (htmx excluded).
"""

from __future__ import annotations

import gzip
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from driver import (  # noqa: E402
    add_players,
    choose,
    deal,
    enter_round,
    pending_of,
    play_game,
    start_game,
    start_match,
)
from history import empty_app  # noqa: E402

from companion.db import db  # noqa: E402
from companion.models import Game, Round  # noqa: E402

PLAYERS = 10


def build(client) -> tuple[int, list[int], dict[int, int]]:
    """A match of 10 players with 4 finished games and 4 rounds into game 5."""
    ids = add_players(client, *[f"Player {i}" for i in range(1, PLAYERS + 1)])
    match_id = start_match(client, ids, end_kind="games", end_value=9)
    rng = random.Random(5)
    for _ in range(4):
        play_game(client, match_id, ids, rng, chooser=lambda pending: pending.suggested)
    # Game 5: a random deal, four rounds in, too-low cards taking the suggested row.
    hands, starting = deal(rng, PLAYERS)
    assert start_game(client, match_id, starting).status_code == 303
    for turn in range(4):
        plays = {pid: hands[seat][turn] for seat, pid in enumerate(ids)}
        assert enter_round(client, match_id, plays).status_code == 303
        while (pending := pending_of(client, match_id)) is not None:
            assert choose(client, match_id, pending.player, pending.suggested).status_code == 303
    next_plays = {pid: hands[seat][4] for seat, pid in enumerate(ids)}
    return match_id, ids, next_plays


def timed(action, repeat: int) -> list[float]:
    """Seconds per call of ``action`` over ``repeat`` calls."""
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        action()
        samples.append(time.perf_counter() - begin)
    return samples


def report(label: str, samples: list[float]) -> None:
    """Print median and p95 in milliseconds."""
    p95 = statistics.quantiles(samples, n=20)[-1]
    print(
        f"{label:34s} {statistics.median(samples) * 1000:6.2f} ms median, "
        f"{p95 * 1000:6.2f} ms p95 ({len(samples)} runs)"
    )


def main() -> None:
    """Print server times and page weights."""
    with tempfile.TemporaryDirectory() as folder:
        app = empty_app(folder)
        client = app.test_client()
        match_id, _ids, plays = build(client)
        url = f"/matches/{match_id}"

        page = client.get(url)
        assert page.status_code == 200
        report("GET round page (10 players, game 5)", timed(lambda: client.get(url), 200))

        data = {f"card-{pid}": str(card) for pid, card in plays.items()}
        data.update(game="5", round="5")

        with app.app_context():
            game_id = db.session.scalar(db.select(Game.id).where(Game.number == 5))
        samples = []
        for _ in range(100):
            begin = time.perf_counter()
            response = client.post(f"{url}/rounds", data=data)
            samples.append(time.perf_counter() - begin)
            assert response.status_code == 303, response.status_code
            with app.app_context():  # untimed: take the round back for the next run
                db.session.execute(
                    db.delete(Round).where(Round.game_id == game_id, Round.number == 5)
                )
                db.session.commit()
        report("POST round submission", samples)

        html = page.get_data()
        css = client.get("/static/css/app.css").get_data()
        js = client.get("/static/js/table.js").get_data()
        print(
            f"round page HTML {len(html):,} B + CSS {len(css):,} B = "
            f"{len(html) + len(css):,} B ({len(gzip.compress(html + css)):,} B gzipped); "
            f"table.js {len(js):,} B; htmx excluded"
        )


if __name__ == "__main__":
    main()
