"""Benchmark luck (issue 34) in a round's write and push, luck.json, and an import.

Luck's part of a placed round's write and push, ``luck.json`` from nothing, and the
import of 5,000 matches with the luck filled in after it.

Run: .venv/bin/python -m bench.luck [--part a b c d] [--games 20] [--matches 5000]
[--fill-seconds 240]   (prints figures; not a test). Targets (issue 34):

1. a placed round of 10 players adds at most 50 ms (p95) to its write and its push (if
   not reachable, its chances may follow in a second push right after; the round itself
   is never delayed);
2. a whole 10-player game's ``luck.json`` from nothing takes at most 500 ms;
3. the import of 5,000 matches stays under 10 s (luck may fill in afterwards in a
   background job; pages must not wait for it).

Parts, each on a fresh SQLite file, in this process through the Flask test client (a to
c without the automatic copy after a finished match):

a. ``--games`` random 10-player games (matches of ``PER_MATCH`` games) played through
   the store as a phone enters them: the time of luck's part of each write that places
   a round (``drop_stale_luck``: since issue 42 it only drops rows, it places no card),
   the whole write (the POST), and the work after the answer (``luck_after``: every
   round's luck, figured and stored in its own writes, the "second push").
b. The same number of games again with luck turned off (``companion.store``'s
   ``drop_stale_luck`` answers False, ``luck_after`` does nothing), a match on, a match off,
   so that the machine's noise hits both: what luck adds to the round's write (the
   phone that sent it waits for its answer) and to its push (the write until it commits,
   then the live regions the push carries, rendered once per table version).
c. ``luck.json`` of a finished game of 10, 4 and 6 players with its ``PlayLuck`` rows
   deleted before each request (since issue 42 it figures nothing: it lists the rounds
   as pending), and with them kept.
d. ``bench.import_wait``'s history of 5,000 matches imported through the backup page as
   the server does it (a helper process for a big file, then ``fill_luck_apart``): the
   page's answer, and how long the background helper takes to figure all the luck,
   with a page asked for meanwhile. It is waited for ``--fill-seconds`` at most, then
   stopped, and the time it would take for all is reckoned from its pace (all of 5,000
   matches take it about 16 minutes). ``bench.export``'s import alone (in a process of
   its own, no page, no luck) is printed beside it, as the README's figures were taken.

Each figure has the CPU time other programs on the machine took meanwhile beside it
(``bench.serving.others_meanwhile``): the machine is shared.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from bench.apps import app_on
from bench.export import timed_import
from bench.import_wait import export_history
from bench.serving import bench_database, others_meanwhile
from companion import store
from companion.db import db
from companion.derived.play_luck import missing_matches
from companion.derived.tables import PlayLuck
from companion.models import MAX_MATCHES_HELD, Game
from tests.driver import add_players, deal, pending_of, start_game, start_match

PLAYERS = 10
PER_MATCH = 5  # games per match: the second write at a game's end figures the match's games
PHONE = {"Accept-Encoding": "gzip, deflate, br, zstd"}  # what Chromium sends
HTMX = {**PHONE, "HX-Request": "true"}
LUCK_JSON_RUNS = 20
POLL = 1.0  # seconds between looks at the background helper's progress
FILL_SECONDS = 240.0  # the background helper waited for at most (then stopped): 5,000
# matches take it longer, and the run stays within 10 minutes


class Write(NamedTuple):
    """One write that placed a round: what the phone waited for and what luck took in it."""

    luck: bool  # luck on (the app as it is) or off
    round_number: int
    post: float  # the POST, as the phone that sent it waits for its answer
    committed: float  # from the POST's start to the round's write committed (the push may go)
    regions: float  # the live regions a push carries, rendered for the new table version
    refresh: float  # drop_stale_luck, luck's part inside the round's write
    after: float  # luck_after, the figuring and its writes after the answer


class Watch:
    """Times luck's part of each request: while in a ``with`` block, ``companion.store``'s
    ``drop_stale_luck``, ``luck_after`` and ``writing`` (the names ``store()`` calls) are
    wrapped, and ``luck`` False turns luck off."""

    def __init__(self) -> None:
        self.luck = True
        self.refresh = self.after = 0.0
        self.committed: float | None = None
        self.saved = (store.drop_stale_luck, store.luck_after, store.writing)

    def __enter__(self) -> Watch:
        real_refresh, real_after, real_writing = self.saved

        def drop_stale_luck(*args, **kwargs) -> bool:
            if not self.luck:
                return False
            begin = time.perf_counter()
            try:
                return real_refresh(*args, **kwargs)
            finally:
                self.refresh += time.perf_counter() - begin

        def luck_after(match_id: int) -> int | None:
            if not self.luck:
                return None
            begin = time.perf_counter()
            try:
                return real_after(match_id)
            finally:
                self.after += time.perf_counter() - begin

        @contextlib.contextmanager
        def writing(*args, **kwargs) -> Iterator[None]:
            with real_writing(*args, **kwargs):
                yield
            if self.committed is None:  # the request's first write: the round's
                self.committed = time.perf_counter()

        store.drop_stale_luck, store.luck_after, store.writing = (
            drop_stale_luck,
            luck_after,
            writing,
        )
        return self

    def __exit__(self, *exception) -> None:
        store.drop_stale_luck, store.luck_after, store.writing = self.saved

    def post(self, client, url: str, data: dict) -> tuple[float, float]:
        """POST a form; its seconds until the answer, and until its first write committed.
        Then the answer is closed, as a server does once it has sent it: what a game's end
        leaves for after the answer (``luck_after``) runs then, timed in ``after``."""
        self.refresh = self.after = 0.0
        self.committed = None
        begin = time.perf_counter()
        response = client.post(url, data=data, headers=HTMX)
        end = time.perf_counter()
        assert response.status_code == 303, (url, response.status_code)
        response.close()
        return end - begin, (self.committed or end) - begin


def play(client, watch: Watch, match_id: int, ids: list[int], rng: random.Random, game: int):
    """One random game through the app; a ``Write`` for each write that placed a round."""
    hands, starting = deal(rng, len(ids))
    assert start_game(client, match_id, starting, game).status_code == 303
    url = f"/matches/{match_id}"
    writes = []
    for turn in range(10):
        form = {f"card-{pid}": str(hands[seat][turn]) for seat, pid in enumerate(ids)}
        form.update(game=str(game), round=str(turn + 1))
        post, committed = watch.post(client, f"{url}/rounds", form)
        while (pending := pending_of(client, match_id)) is not None:  # untimed: the driver's
            row = pending.suggested if rng.random() < 0.75 else rng.randint(1, 4)
            form = {"player": pending.player, "row": row, "game": game, "round": turn + 1}
            form = {name: str(value) for name, value in form.items()}
            post, committed = watch.post(client, f"{url}/choice", form)
        refresh, after = watch.refresh, watch.after  # of the write that placed the round
        begin = time.perf_counter()
        assert client.get(f"{url}/live?since=0", headers=HTMX).status_code == 200
        regions = time.perf_counter() - begin
        writes.append(Write(watch.luck, turn + 1, post, committed, regions, refresh, after))
    return writes


def play_matches(app, games: int, both: bool) -> list[Write]:
    """``games`` 10-player games with luck on (and as many with it off, if ``both``), in
    matches of ``PER_MATCH`` games, a match on and a match off; after one untimed game."""
    client = app.test_client()
    ids = add_players(client, *[f"Player {n}" for n in range(1, PLAYERS + 1)])
    rng = random.Random(34)
    modes = [True, False] if both else [True]
    matches = -(-games // PER_MATCH) * len(modes)
    writes: list[Write] = []
    with Watch() as watch:
        warm = start_match(client, ids, end_kind="games", end_value=1)
        play(client, watch, warm, ids, rng, 1)  # the app's and numpy's first-call costs
        for number in range(matches):
            watch.luck = modes[number % len(modes)]
            match_id = start_match(client, ids, end_kind="games", end_value=PER_MATCH)
            for game in range(1, PER_MATCH + 1):
                writes += play(client, watch, match_id, ids, rng, game)
    return writes


def spread(samples: list[float]) -> tuple[float, float, float]:
    """Median, p95 (inclusive: never past the max) and max, in milliseconds."""
    p95 = max(samples)
    if len(samples) > 1:
        p95 = statistics.quantiles(samples, n=20, method="inclusive")[-1]
    return statistics.median(samples) * 1000, p95 * 1000, max(samples) * 1000


def line(label: str, samples: list[float]) -> str:
    """A figure's line: median, p95, max and how many."""
    p50, p95, most = spread(samples)
    return f"  {label:58s} p50 {p50:7.1f}  p95 {p95:7.1f}  max {most:7.1f} ms ({len(samples)})"


def compared(label: str, on: list[float], off: list[float]) -> str:
    """A figure with luck on and off, and the difference of their medians and p95s."""
    on_50, on_95, _ = spread(on)
    off_50, off_95, _ = spread(off)
    return (
        f"  {label:40s} on p50 {on_50:6.1f} p95 {on_95:6.1f} | off p50 {off_50:6.1f}"
        f" p95 {off_95:6.1f} | luck adds p50 {on_50 - off_50:+6.1f} p95 {on_95 - off_95:+6.1f} ms"
    )


def part_a(writes: list[Write]) -> None:
    """Luck's part of each write that placed a round, the whole write, the second write."""
    on = [write for write in writes if write.luck]
    ends = [write for write in on if write.round_number == 10]
    print(f"a. {len(on) // 10} games of {PLAYERS} players, luck on (milliseconds):")
    print(line("luck's part of the write placing a round (all)", [w.refresh for w in on]))
    print(line("  rounds 1-9", [w.refresh for w in on if w.round_number < 10]))
    print(line("  round 10 (the game's end: its newest round)", [w.refresh for w in ends]))
    print(line("the whole write placing a round (POST; target 1)", [w.post for w in on]))
    print(line("  rounds 1-9", [w.post for w in on if w.round_number < 10]))
    print(line("  round 10", [w.post for w in ends]))
    print(
        line(
            "luck_after, rounds 1-9 (after the answer)",
            [w.after for w in on if w.round_number < 10],
        )
    )
    print(line("luck_after at a game's end (all 10 rounds again)", [w.after for w in ends]))


def part_b(writes: list[Write]) -> None:
    """What luck adds to the phone's wait for its write, and to the push."""
    on = [write for write in writes if write.luck]
    off = [write for write in writes if not write.luck]
    print(f"b. luck on ({len(on) // 10} games) and off ({len(off) // 10}), milliseconds:")

    def both(label: str, pick: Callable[[Write], float], rounds=range(1, 11)) -> None:
        print(
            compared(
                label,
                [pick(w) for w in on if w.round_number in rounds],
                [pick(w) for w in off if w.round_number in rounds],
            )
        )

    both("the write placing a round (POST)", lambda w: w.post)
    both("  rounds 1-9", lambda w: w.post, range(1, 10))
    both("  round 10 (luck_after after the answer)", lambda w: w.post, [10])
    both("until committed (the push may go)", lambda w: w.committed)
    both("the push's live regions (render)", lambda w: w.regions)
    both("push: committed + regions", lambda w: w.committed + w.regions)
    both("  rounds 1-9", lambda w: w.committed + w.regions, range(1, 10))
    both("  round 10", lambda w: w.committed + w.regions, [10])


def part_ab(parts: set[str], games: int) -> None:
    """Parts a and b: one run of games, luck on (and off, for b)."""
    with bench_database(False) as (url, database), others_meanwhile(database):
        app = app_on(url, WTF_CSRF_ENABLED=False, AUTO_BACKUP=False, FILL_LUCK_APART=False)
        writes = play_matches(app, games, both="b" in parts)
        if "a" in parts:
            part_a(writes)
        if "b" in parts:
            part_b(writes)


def finished_game(client, players: int, rng: random.Random) -> int:
    """A match of one finished game of ``players``, played through the app; its id."""
    ids = add_players(client, *[f"P{players} {n}" for n in range(1, players + 1)])
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    with Watch() as watch:  # luck on: the game's rows are kept (deleted before each request)
        play(client, watch, match_id, ids, rng, 1)
    return match_id


def luck_json_times(app, client, match_id: int, runs: int) -> tuple[list[float], list[float]]:
    """Seconds of ``luck.json`` of the match's first game from nothing (its PlayLuck rows
    deleted before each request, untimed), and with its rows kept (figured again by
    ``luck_after``, untimed). Both writes raise the match's versions, so neither request
    finds the match's state in memory."""
    url = f"/matches/{match_id}/games/1/luck.json"
    with app.app_context():
        game_id = db.session.scalar(db.select(Game.id).where(Game.match_id == match_id))
    kept, nothing = [], []
    for _ in range(runs):
        begin = time.perf_counter()
        assert client.get(url, headers=PHONE).status_code == 200
        kept.append(time.perf_counter() - begin)
        with app.app_context(), store.writing():
            store.raise_versions([match_id])
            db.session.execute(db.delete(PlayLuck).where(PlayLuck.game_id == game_id))
        begin = time.perf_counter()
        response = client.get(url)
        nothing.append(time.perf_counter() - begin)
        # Since issue 42 it figures nothing in the request: every round is pending.
        assert response.status_code == 200 and response.json["pending"] == list(range(1, 11))
        with app.app_context():  # untimed: the game's rows again, as the write kept them
            store.luck_after(match_id)
    return nothing, kept


def part_c(runs: int) -> None:
    """luck.json of a finished game from nothing, for 10, 4 and 6 players."""
    with bench_database(False) as (url, database):
        app = app_on(url, WTF_CSRF_ENABLED=False, AUTO_BACKUP=False, FILL_LUCK_APART=False)
        client, rng = app.test_client(), random.Random(35)
        matches = {players: finished_game(client, players, rng) for players in (10, 4, 6)}
        luck_json_times(app, client, matches[PLAYERS], 2)  # first-call costs
        print(f"c. luck.json of a finished game, {runs} requests each (milliseconds):")
        with others_meanwhile(database):
            for players, match_id in matches.items():
                nothing, kept = luck_json_times(app, client, match_id, runs)
                print(line(f"{players} players, nothing kept (all pending)", nothing))
                print(line(f"{players} players, rows kept", kept))


def upload(client, path: Path):
    """POST the backup file through the backup page, as a phone does."""
    data = {"file": (io.BytesIO(path.read_bytes()), "backup.json", "application/json")}
    return client.post("/backup/import", data=data, content_type="multipart/form-data")


class Fill(NamedTuple):
    """How far the background helper got: seconds waited, matches with luck and without,
    and the times of a page asked for meanwhile."""

    seconds: float
    figured: int
    left: int
    pages: list[float]


def fill_progress(app) -> tuple[int, int]:
    """Matches with luck kept, and card matches still without any."""
    with app.app_context():
        figured = db.session.scalar(db.select(db.func.count(PlayLuck.match_id.distinct())))
        return figured, len(missing_matches(limit=MAX_MATCHES_HELD))


def wait_for_luck(app, client, limit: float) -> Fill:
    """Poll until no match lacks luck (``missing_matches``) or ``limit`` seconds pass,
    asking for a page at each look; then stop the helper if it is not done."""
    begin, pages = time.perf_counter(), []
    while time.perf_counter() - begin < limit:
        with app.app_context():
            if not missing_matches(limit=1):
                break
        asked = time.perf_counter()
        assert client.get("/history", headers=PHONE).status_code == 200
        pages.append(time.perf_counter() - asked)
        time.sleep(POLL)
    waited = time.perf_counter() - begin
    figured, left = fill_progress(app)
    for helper in multiprocessing.active_children():  # fill_luck_apart's: ours
        if left:
            helper.terminate()
        helper.join()  # its CPU time then counts as this process's
    return Fill(waited, figured, left, pages)


def report_fill(fill: Fill) -> None:
    """The helper's figures: done, or how far it got and when it would be done."""
    if not fill.left:
        print(
            f"  the background helper figured the luck of all {fill.figured:,} card matches"
            f" {fill.seconds:.0f} s after the import's answer"
        )
    else:
        total = fill.figured + fill.left
        rate = fill.figured / fill.seconds
        print(
            f"  the background helper figured {fill.figured:,} of {total:,} card matches in"
            f" {fill.seconds:.0f} s ({rate:.1f} a second; stopped there): all would take"
            f" about {total / rate / 60:.0f} min"
        )
    if fill.pages:
        print(line("/history meanwhile (pages do not wait for it)", fill.pages))


def part_d(matches: int, fill_seconds: float) -> None:
    """The import through the backup page, then the background helper's luck."""
    print(f"d. the import of {matches:,} matches:")
    with tempfile.TemporaryDirectory(prefix="bench-luck-") as folder:
        import_and_fill(Path(folder), matches, fill_seconds)


def import_and_fill(folder: Path, matches: int, fill_seconds: float) -> None:
    """Part d in ``folder``: the file, the import alone, through the page, the helper."""
    begin = time.perf_counter()
    path = export_history(folder, matches)
    size = path.stat().st_size / 1e6
    print(f"  generated and exported in {time.perf_counter() - begin:.0f} s ({size:.1f} MB)")
    alone = timed_import(path, folder / "alone.sqlite")
    print(
        f"  import alone (bench.export: import_backup in a process of its own, no luck):"
        f" {alone['seconds']:.2f} s (checking {alone['checking']:.2f} s, staging"
        f" {alone['staging']:.2f} s, merging {alone['merge']:.2f} s); other programs took"
        f" {alone['others']:.1f} s of CPU"
    )
    with bench_database(False) as (url, database):
        app = app_on(url, WTF_CSRF_ENABLED=False, FILL_LUCK_APART=True)
        client = app.test_client()
        assert client.get("/backup").status_code == 200
        with others_meanwhile(database):
            begin = time.perf_counter()
            answer = upload(client, path)
            seconds = time.perf_counter() - begin
            assert answer.status_code == 303, answer.status_code
            print(
                f"  import through the backup page (helper process, FILL_LUCK_APART on;"
                f" target 3: < 10 s): {seconds:.2f} s"
            )
        with others_meanwhile(database):
            report_fill(wait_for_luck(app, client, fill_seconds))


def load_average() -> str:
    """The machine's load average (1, 5, 15 minutes) and its cores."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    """Run the parts asked for and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", nargs="+", choices="abcd", default=list("abcd"))
    parser.add_argument("--games", type=int, default=20, help="10-player games (a, b)")
    parser.add_argument("--runs", type=int, default=LUCK_JSON_RUNS, help="luck.json (c)")
    parser.add_argument("--matches", type=int, default=5000, help="imported (d)")
    parser.add_argument(
        "--fill-seconds", type=float, default=FILL_SECONDS, help="the helper waited for (d)"
    )
    args = parser.parse_args()
    parts = set(args.part)
    if parts & {"a", "b"}:
        print(f"({load_average()})")
        part_ab(parts, args.games)
    if "c" in parts:
        print(f"({load_average()})")
        part_c(args.runs)
    if "d" in parts:
        print(f"({load_average()})")
        part_d(args.matches, args.fill_seconds)


if __name__ == "__main__":
    main()
