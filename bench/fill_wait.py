"""Fill-wait benchmark: how another table fares while an import's luck is filled in.

Run: .venv/bin/python -m bench.fill_wait [--games 250] [--cpu-share 0.25] [--postgresql]
[--seconds 900] [--every 0.3] [--workers N]
(prints figures; not a test). Issue 42: the luck of an imported match of 10 players and
250 card games (300 KB) was figured in one write transaction, and another table sending
a round every 0.3 s got 16 answers of 503 in a row. Target: during the fill, the other
table's writes get no 5xx and a p95 under 300 ms, at full speed and at a Raspberry Pi's
share of a core (``--cpu-share 0.25``: the server and every process it starts in a
cgroup, as ``bench/push.py`` holds it; it says so when it cannot).

It builds one match of 10 players and ``--games`` whole card games (simulated by the
rules engine, row choices and all: ``bench/history.py``'s pieces) and exports it to a
backup file. It starts the real server (`python -m companion.serve`: gevent workers and
the background process that figures luck) on an empty database, seats a second match of
4 players (the other table) and joins it with a phone, imports the file through the
backup page, and at once has the other table send a write every ``--every`` seconds
(a game's starting cards, then its rounds, the cards rising so no row choice stops a
round) until the imported match's luck is all stored and 5 s more, or ``--seconds``.
The fill's progress is its count of ``play_luck`` rows, read from the database apart
(and the other table's oldest round still without its luck, for how long its luck waits).
The file goes through the backup page as its form sends it (``bench.import_wait``'s
``import_file``).

It prints the import's answer, the fill's time (when its first and its last row were
there), the other table's writes (answers that were not 303, 5xx, median / p95 / max,
during the fill and after) and how long its rounds' luck waited, and the CPU the server,
this script and the machine's other programs took meanwhile (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, text

from bench.apps import sqlite_app
from bench.history import NAMES, History, add_rounds, simulate_cards
from bench.import_wait import import_file
from bench.push import cpu_share, starting
from bench.serving import (
    Browser,
    bench_database,
    cpu_seconds,
    create_matches,
    machine_cpu_seconds,
    start_server,
)
from companion import rules
from companion.backup.document import dump, export_document
from companion.db import db
from companion.models import Game, Match, Player, Seat, utcnow
from companion.rules.names import name_key
from tests.servers import free_port

LOG = "companion-bench-fill-wait.log"
AFTER_FILL = 5.0  # seconds the other table goes on once the fill is done
LOOK_EVERY = 0.25  # seconds between looks at the fill's progress
SLOW_MS = 300  # the target's p95


def build_file(folder: Path, games: int, seed: int = 42) -> Path:
    """One match of the 10 players and ``games`` whole card games, exported to a file."""
    app = sqlite_app(folder / "history.sqlite")
    rng = random.Random(seed)
    with app.app_context():
        began = utcnow() - timedelta(minutes=20 * games + 60)
        for number, name in enumerate(NAMES, 1):
            player = Player(id=number, name=name, name_key=name_key(name))
            player.created_at = began - timedelta(days=1, seconds=number)
            db.session.add(player)
        db.session.commit()
        ids = list(range(1, len(NAMES) + 1))
        history = History()
        match_id = history.new_id("match")
        end = rules.EndCondition(rules.GAMES, games)
        history.add(
            Match, id=match_id, created_at=began, end_kind=end.kind, end_value=end.value, pro=False
        )
        for position, player in enumerate(ids, 1):
            history.add(Seat, match_id=match_id, player_id=player, position=position)
        deck = rules.deck_size(len(ids))
        for number in range(1, games + 1):
            game_id = history.new_id("game")
            cards, rounds, _, _ = simulate_cards(rng, ids, deck)
            started = began + timedelta(minutes=20 * number)
            history.add(
                Game,
                id=game_id,
                match_id=match_id,
                number=number,
                mode="cards",
                created_at=started,
                **{f"row{n}": card for n, card in enumerate(cards, 1)},
            )
            add_rounds(history, game_id, rounds, started)
        history.flush()
        document = dump(export_document())
        db.engine.dispose()
    path = folder / "import.json"
    path.write_text(document, encoding="utf-8")
    return path


WAITING = text(
    "SELECT min(r.created_at) FROM round r JOIN game g ON g.id = r.game_id"
    " WHERE g.match_id = :other AND NOT EXISTS (SELECT 1 FROM play_luck l"
    " WHERE l.game_id = r.game_id AND l.round_number = r.number)"
)


class Fill:
    """The imported match's luck rows, counted from the database apart every LOOK_EVERY s
    (in WAL mode on SQLite, a read holds up no write)."""

    def __init__(self, url: str, other: int, expected: int) -> None:
        self.engine = create_engine(url)
        self.other, self.expected = other, expected
        self.match_id: int | None = None
        self.rows = 0
        self.first: float | None = None  # when the first row was there (perf_counter)
        self.done: float | None = None  # when the last one was
        # The longest the other table's rounds waited for their luck, as sampled.
        self.luck_waits = {"during": 0.0, "after": 0.0}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def watch(self) -> None:
        while not self.stop.is_set():
            self.look()
            self.stop.wait(LOOK_EVERY)

    def look(self) -> None:
        with self.engine.connect() as connection:
            if self.match_id is None:
                found = connection.execute(
                    text('SELECT max(id) FROM "match" WHERE id != :other'), {"other": self.other}
                ).scalar()
                if found is None:
                    return
                self.match_id = found
            rows = connection.execute(
                text("SELECT count(*) FROM play_luck WHERE match_id = :id"),
                {"id": self.match_id},
            ).scalar()
            oldest = connection.execute(WAITING, {"other": self.other}).scalar()
        if oldest is not None:  # the other table's oldest round without its luck
            if isinstance(oldest, str):  # SQLite's text
                oldest = datetime.fromisoformat(oldest)
            waited = (utcnow() - oldest).total_seconds()
            key = "during" if self.done is None else "after"
            self.luck_waits[key] = max(self.luck_waits[key], waited)
        now = time.perf_counter()
        if rows and self.first is None:
            self.first = now
        if rows >= self.expected and self.done is None:
            self.done = now
        self.rows = rows

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.engine.dispose()


class Table:
    """The other table: one phone, a write every ``every`` seconds, each answer noted."""

    def __init__(self, port: int, url: str, every: float) -> None:
        ((self.match_id, token, self.ids),) = create_matches(url, 1, 4, prefix="Other")
        self.phone = Browser(f"http://127.0.0.1:{port}")
        assert self.phone.send(f"/matches/{self.match_id}/join/{token}").status == 303
        self.phone.send(f"/matches/{self.match_id}")  # its form's CSRF token
        self.every = every
        self.game, self.round = 0, 10  # the next write starts game 1
        # Each write: kind, when it was sent (perf_counter), ms, status.
        self.writes: list[tuple[str, float, float, int]] = []

    def write(self) -> None:
        """The table's next write (again, if the last one was not stored)."""
        base = f"/matches/{self.match_id}"
        if self.round == 10:
            kind, path = "start", f"{base}/games"
            form = {"game": self.game + 1, **starting()}
        else:
            number = self.round + 1
            players = len(self.ids)
            cards = {
                f"card-{pid}": 5 + (number - 1) * players + seat
                for seat, pid in enumerate(self.ids)
            }
            kind, path = "round", f"{base}/rounds"
            form = {"game": self.game, "round": number, **cards}
        sent = time.perf_counter()
        answer = self.phone.form(path, form)
        self.writes.append((kind, sent, answer.seconds * 1000, answer.status))
        if answer.status == 303:
            if kind == "start":
                self.game, self.round = self.game + 1, 0
            else:
                self.round += 1
        elif answer.status < 500:  # refused: the phone loads the page again
            self.phone.send(base)

    def play(self, until: float, fill: Fill) -> None:
        """Write every ``every`` s (at once after a slow answer) until ``until``, or the
        fill is done and AFTER_FILL s have passed."""
        due = time.perf_counter()
        while True:
            now = time.perf_counter()
            if now >= until or (fill.done is not None and now >= fill.done + AFTER_FILL):
                return
            if due > now:
                time.sleep(due - now)
            self.write()
            due = max(due + self.every, time.perf_counter())


def line(name: str, values: list[float]) -> str:
    """A figure's count, median, p95 and max in milliseconds."""
    if not values:
        return f"  {name:26s} -"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    slow = sum(value > SLOW_MS for value in ordered)
    return (
        f"  {name:26s} {len(ordered):4d} writes: median {statistics.median(ordered):5.0f}  "
        f"p95 {p95:6.0f}  max {ordered[-1]:6.0f} ms  ({slow} over {SLOW_MS} ms)"
    )


def longest_run(statuses: list[int]) -> int:
    """The most answers in a row that were not 303."""
    longest = run = 0
    for status in statuses:
        run = run + 1 if status != 303 else 0
        longest = max(longest, run)
    return longest


def report(table: Table, fill: Fill, begun: float) -> None:
    """Print the fill's progress and the other table's writes."""
    if fill.done is not None:
        print(
            f"fill: first luck row after {fill.first - begun:.1f} s, all {fill.expected:,} "
            f"after {fill.done - begun:.1f} s (from the import's post)"
        )
    else:
        first = f"first row after {fill.first - begun:.1f} s; " if fill.first else ""
        print(f"fill NOT done: {first}{fill.rows:,} of {fill.expected:,} rows")
    writes = table.writes
    statuses = [status for _, _, _, status in writes]
    bad = [status for status in statuses if status != 303]
    errors = [status for status in statuses if status >= 500]
    print(
        f"other table: {len(writes)} writes ({table.game} games begun), "
        f"{len(bad)} not 303 ({len(errors)} 5xx"
        + (f": {sorted(set(bad))}, at most {longest_run(statuses)} in a row" if bad else "")
        + ")"
    )
    done = fill.done or float("inf")
    print(line("all", [ms for *_, ms, _ in writes]))
    print(line("during the fill", [ms for _, sent, ms, _ in writes if sent < done]))
    print(line("after it", [ms for _, sent, ms, _ in writes if sent >= done]))
    print(line("rounds alone", [ms for kind, _, ms, _ in writes if kind == "round"]))
    waits = fill.luck_waits
    print(
        f"  its rounds' luck waited at most {waits['during']:.1f} s during the fill, "
        f"{waits['after']:.1f} s in the {AFTER_FILL:.0f} s after it "
        f"(sampled every {LOOK_EVERY} s)"
    )


def log_problems(path: Path) -> None:
    """The server log's errors and tracebacks, briefly."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return
    words = ("Traceback", "ERROR", "Error", "CRITICAL", "WORKER")
    bad = [entry for entry in lines if any(word in entry for word in words)]
    print(f"server log {path}: {len(lines)} lines, {len(bad)} with errors")
    for entry in bad[:8]:
        print(f"    {entry[:160]}")


def run(args: argparse.Namespace, file: Path) -> None:
    """The server, the other table, the import and its fill: the figures."""
    with bench_database(args.postgresql) as (url, database_pid):
        port = free_port()
        server = start_server(url, port, args.workers, log_name=LOG)
        try:
            time.sleep(2)  # the background process's first look at the empty database
            with cpu_share(args.cpu_share, server.pid) as held:
                database = "PostgreSQL" if args.postgresql else "SQLite"
                print(f"server: {held}; database: {database}")
                table = Table(port, url, args.every)
                fill = Fill(url, table.match_id, args.games * rules.HAND_SIZE * len(NAMES))
                machine, ours = machine_cpu_seconds(), cpu_seconds(server.pid)
                pg = cpu_seconds(database_pid) if database_pid else 0.0
                mine, begun = os.times(), time.perf_counter()
                _begin, seconds, status, message = import_file(port, file)
                print(
                    f"import answered {status} after {seconds:.2f} s"
                    + (f": {message}" if message else ""),
                    flush=True,
                )
                if status != 303:
                    return
                fill.start()
                table.play(begun + args.seconds, fill)
                elapsed = time.perf_counter() - begun
                spent = cpu_seconds(server.pid) - ours
                me = sum(os.times()[:2]) - sum(mine[:2])
                pg = (cpu_seconds(database_pid) - pg) if database_pid else 0.0
                others = max(machine_cpu_seconds() - machine - spent - me - pg, 0.0)
                fill.close()
                report(table, fill, begun)
                print(
                    f"CPU in {elapsed:.1f} s: server {spent:.1f} s, this script {me:.1f} s"
                    + (f", PostgreSQL {pg:.1f} s" if database_pid else "")
                    + f"; other programs on the machine {others:.1f} s ({os.cpu_count()} cores)"
                )
        finally:
            server.terminate()
            server.wait(timeout=30)
    log_problems(Path(tempfile.gettempdir()) / LOG)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=250, help="games of the imported match")
    parser.add_argument("--cpu-share", type=float, default=None)
    parser.add_argument("--postgresql", action="store_true")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=900, help="the longest the table plays")
    parser.add_argument("--every", type=float, default=0.3, help="seconds between its writes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        file = build_file(Path(name), args.games)
        print(
            f"import: 1 match of {len(NAMES)} players and {args.games} card games, "
            f"{file.stat().st_size / 1e3:.0f} KB"
        )
        run(args, file)


if __name__ == "__main__":
    main()
