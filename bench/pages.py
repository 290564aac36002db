"""Benchmark the round page: server time and bytes, for 10 players in game 5; and a
finished game's review page (issue 56), a round of it whole and as htmx's fragment.

Run: .venv/bin/python -m bench.pages   (prints figures; not a test)
Targets (issue 3): under 10 ms server time for the round page and for a round
submission; under 30 KB of HTML + CSS for the round page (htmx excluded).
"""

from __future__ import annotations

import gzip
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.apps import sqlite_app
from companion import store
from companion.db import db
from companion.models import Game, Round
from tests.driver import (
    add_players,
    choose,
    deal,
    enter_round,
    pending_of,
    play_game,
    start_game,
    start_match,
)

PLAYERS = 10
PHONE = {"Accept-Encoding": "gzip, deflate, br, zstd"}  # what Chromium sends


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
        app = sqlite_app(Path(folder) / "bench.sqlite", WTF_CSRF_ENABLED=False)
        client = app.test_client()
        match_id, _ids, plays = build(client)
        url = f"/matches/{match_id}"

        page = client.get(url)
        assert page.status_code == 200
        sent = client.get(url, headers=PHONE)  # as Chromium asks: compressed
        report(
            "GET round page (10 players, game 5)",
            timed(lambda: client.get(url, headers=PHONE), 200),
        )

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

        with app.app_context():  # what the background does after each game's end (seconds)
            store.review_after(match_id)
        review = f"{url}/games/1/review?round=5"
        assert b"review-play" in client.get(review).data
        report("GET game review page (10 players)", timed(lambda: client.get(review), 100))
        fragment = {**PHONE, "HX-Request": "true"}
        report(
            "GET game review round (fragment)",
            timed(lambda: client.get(review, headers=fragment), 100),
        )

        html = page.get_data()
        css = client.get("/static/css/app.css").get_data()
        js = client.get("/static/js/table.js").get_data()
        with client.get("/static/css/app.css", headers=PHONE) as packed_css:
            css_sent = packed_css.get_data()
        print(
            f"round page HTML {len(html):,} B + CSS {len(css):,} B = "
            f"{len(html) + len(css):,} B ({len(gzip.compress(html + css)):,} B gzipped); "
            f"table.js {len(js):,} B; htmx excluded"
        )
        print(
            f"as sent to a phone ({sent.headers.get('Content-Encoding', 'not compressed')}): "
            f"HTML {len(sent.data):,} B + CSS {len(css_sent):,} B = "
            f"{len(sent.data) + len(css_sent):,} B"
        )


if __name__ == "__main__":
    main()
