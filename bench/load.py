"""Load benchmark: many tables of phones, each holding its match's event stream, playing
against the real server.

Run: .venv/bin/python -m bench.load [--tables 100] [--phones 6] [--seconds 60]
     [--round-seconds 30] [--database sqlite|postgresql] [--servers 1] [--workers N]
     [--poll] [--idle-streams N] [--flood N] [--spawn-rate 10] [--server-times]
     [--generator-nice N]
(prints figures; not a test). Locust (the `bench` extra) plays the phones, headless,
run as a library in this script, which sets up the database and the servers itself.

It starts ``--servers`` app servers (`python -m companion.serve`, each on its own
loopback port) on one fresh database: an SQLite file, or with ``--database
postgresql`` a throwaway PostgreSQL cluster of Debian's package, removed after. One
match per table is written directly into the database; each table's phones talk to
one server (tables are spread over the servers, as behind a proxy), and every phone
joins over HTTP by the player link and says who it is. Then every phone holds the
match's event stream open (``sse.py``: a greenlet on a raw socket each), or with
``--poll`` polls /live every 2 s, while the tables play: tables sit down at random
moments of the first round; in each round every player's phone sends its own card at
a random moment of the round's first half, too-low cards are answered by their
player's phone, and games follow one another. A round every 30 s is a brisk table (a
10-round game entered in 5 minutes); --round-seconds 20 is a stress test. Traffic goes
to loopback only and stops after --seconds; the figures count the requests answered
until then.

With streams, a writing phone then opens the match page, as htmx follows the 303 (its
HX-Request kept: the #match block); the page's version tells which change event
carries the write. For every write
(a game start, a card, a row choice) it prints the time from the write's request start
to each OTHER phone of the table receiving that event. ``--idle-streams 2000`` also
holds that many streams of phones that joined matches of their own and only watch.

Targets (issue 18): 100 tables of 6 phones at a round every 20 s: write -> other phones
p95 under 250 ms (300 ms on PostgreSQL with 2 app servers), writes p95 under 50 ms, no
failures, servers under 300 MB. With 2,000 idle streams and a few tables playing:
writes p95 under 100 ms, servers under 600 MB. (Issue 11, polling: p95 under 100 ms.)
``--flood 3000`` opens that many streams of the first table's match from another client
address (127.0.0.2), as a broken or hostile client would; each opens again a second after
the server closes it (issue 30: the other phones' pushes stay at p95 250 ms or less).
With --server-times it also prints the servers' own time per request beside Locust's,
which includes the wait for a core on this shared machine (``ServerTimes``).
``--generator-nice 10`` lowers Locust's CPU priority below the servers': real phones
bring their own processors, so the servers should not wait for the generator's turn.
"""

from __future__ import annotations

import os

# A phone's new connection resolves "127.0.0.1" in gevent's resolver threads by default:
# under load they can queue, and the wait would count in the request's time. A numeric address
# needs no lookup; resolving in the loop is immediate (read when gevent's hub starts).
os.environ.setdefault("GEVENT_RESOLVER", "block")

import argparse
import contextlib
import importlib.util
import random
import re
import resource
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import NamedTuple

import gevent
from gevent.lock import Semaphore
from gevent.queue import Queue
from locust import FastHttpUser, constant, task
from locust.env import Environment
from locust.stats import StatsEntry
from sqlalchemy import create_engine, text

from bench.serving import (
    CSRF,
    MemoryWatch,
    Usage,
    cpu_summary,
    create_matches,
    free_port,
    migrate,
    postgresql_cluster,
    start_server,
)
from bench.sse import EventStream, flood, hold_idle_streams
from companion import rules

FLOOD_FROM = "127.0.0.2"  # the flooding client's address: the phones come from 127.0.0.1
POLL = re.compile(r'since=(\d+)&amp;table=(\d+)&amp;form=([^&"]*)')
WRITES = ("start", "card", "choice")
HX_REQUEST = {"HX-Request": "true"}
CUTS = (0.5, 0.95, 0.99)  # the percentiles printed
UNSEEN_GRACE = 5.0  # seconds: a write older than this at the end must have reached every phone


class Write(NamedTuple):
    """A write of a phone, timed from its request's start, and the version it made."""

    started: float  # time.perf_counter()
    phone: Phone
    version: int


class Table:
    """One match: its phones, and the dealer that plays games with them."""

    def __init__(self, match_id: int, token: str, player_ids: list[int]):
        self.match_id = match_id
        self.token = token
        self.player_ids = player_ids
        self.phones: list[Phone | None] = [None] * len(player_ids)
        self.games = 0
        self.writes: list[Write] = []

    def seated(self) -> int:
        """How many of its phones have joined."""
        return sum(phone is not None for phone in self.phones)

    def play(self, round_seconds: float) -> None:
        """Deal and play games until stopped; choices go to the right phone."""
        rng = random.Random(self.match_id)
        gevent.sleep(rng.uniform(0, round_seconds))  # tables sit down one by one
        while True:
            self.games += 1
            cards = rng.sample(range(1, 105), 10 * len(self.phones) + 4)
            starting = cards[-4:]
            hands = [cards[i * 10 : (i + 1) * 10] for i in range(len(self.phones))]
            form = {f"row{n}": card for n, card in enumerate(starting, 1)}
            self.phones[0].post("start", "/games", {**form, "game": self.games})
            rows = tuple((card,) for card in starting)
            for turn in range(rules.HAND_SIZE):
                rows = self.play_round(rng, rows, hands, turn, round_seconds)

    def play_round(self, rng, rows, hands, turn, round_seconds):
        """Every phone sends its card at a random moment; then any too-low choices."""
        plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(self.player_ids)]
        base = {"game": self.games, "round": turn + 1}
        senders = [
            gevent.spawn_later(
                rng.uniform(0, round_seconds / 2),
                phone.post,
                "card",
                "/rounds",
                {**base, f"card-{pid}": card},
            )
            for phone, (pid, card) in zip(self.phones, plays, strict=True)
        ]
        try:
            gevent.joinall(senders)
        finally:  # stopped mid-round: the phones stop too
            gevent.killall(senders)
        table = rules.Table(rows)
        table.start_round(plays)
        choices: dict[int, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
            phone = self.phones[self.player_ids.index(pending.player)]
            gevent.sleep(rng.uniform(0.5, 2))
            form = {**base, "player": pending.player, "row": pending.suggested}
            phone.post("choice", "/choice", form)
        gevent.sleep(round_seconds / 2)
        return table.rows


class Phone(FastHttpUser):
    """A phone at a table: joins by the player link, holds the match's event stream (or
    polls, with ``--poll``), sends its player's card."""

    abstract = True  # one subclass per server: its host, the seats of its tables, the mode
    seats: Queue  # (table, seat) for each phone of this server's tables
    push: bool  # holds an event stream; else polls
    wait_time = constant(2)  # the match page polls every 2 s after an answer
    # One keep-alive connection a phone, polls and posts taking turns on it (``turn``):
    # 600 phones stay within the servers' connection limits, the connection never
    # idles long enough for the server to close it, and a request's time is its own,
    # not that of the one before it.
    concurrency = 1
    max_redirects = 0  # a write's answer is its 303; the polls show what it changed
    network_timeout = connection_timeout = 30

    def on_start(self) -> None:
        """Take a seat, open the player link and say who this phone is."""
        self.stream = None
        self.table, seat = self.seats.get_nowait()
        self.player_id = self.table.player_ids[seat]
        self.match = f"/matches/{self.table.match_id}"
        self.since, self.table_version, self.form_key = "0", "0", ""
        self.csrf = ""
        self.turn = Semaphore()
        self.expect("join", "GET", f"{self.match}/join/{self.table.token}", 303)
        page = self.expect("join", "GET", self.match, 200)
        self.csrf = CSRF.search(page).group(1)
        self.post("join", "/me", {"player": self.player_id})
        if self.push:  # no since: the first event brings the whole state at once
            self.stream = EventStream(self.host, f"{self.match}/events?view=match", self.cookie())
            self.stream.start()
        self.table.phones[seat] = self

    def on_stop(self) -> None:
        """Close the stream."""
        if self.stream is not None:
            self.stream.stop()

    def cookie(self) -> str:
        """The phone's cookies, as a Cookie header: its session says who it is."""
        return "; ".join(f"{c.name}={c.value}" for c in self.client.cookiejar)

    @task
    def live(self) -> None:
        """Poll, unless the stream brings the changes."""
        if not self.push:
            self.poll()

    def poll(self) -> None:
        """Ask /live what changed since the version this phone shows, as htmx does."""
        shows = {"since": self.since, "table": self.table_version, "form": self.form_key}
        query = urllib.parse.urlencode({**shows, "view": "match"})
        page = self.expect("poll", "GET", f"{self.match}/live?{query}", (200, 204), HX_REQUEST)
        if page and (found := POLL.search(page)):
            self.since, self.table_version = found.group(1), found.group(2)
            self.form_key = urllib.parse.unquote(found.group(3))

    def post(self, kind: str, path: str, form: dict) -> None:
        """Send a form of this match with the phone's CSRF token; 303 is success.

        With push, the phone then opens the match page, as a browser follows the 303:
        its version is the write's, or a later one when another write came between
        (then the write is timed to a later event than its own: never too short).
        """
        started = time.perf_counter()
        data = {**form, "csrf_token": self.csrf}
        if not self.expect(kind, "POST", self.match + path, 303, data=data) or not self.push:
            return
        # As htmx follows it: the form's hx-post keeps HX-Request on the redirect, so the
        # server renders the #match block alone (it holds the poller and its version).
        page = self.expect("page after write", "GET", self.match, 200, HX_REQUEST)
        if kind in WRITES and (found := POLL.search(page)):
            self.table.writes.append(Write(started, self, int(found.group(1))))

    def expect(self, kind, method, path, statuses, headers=None, data=None) -> str:
        """One request, named by its kind; any other status than ``statuses`` fails it.

        Its text (a space when empty), or "" when it failed."""
        statuses = statuses if isinstance(statuses, tuple) else (statuses,)
        with (
            self.turn,
            self.client.request(
                method,
                path,
                name=kind,
                data=data,
                headers=headers,
                catch_response=True,
            ) as response,
        ):
            if response.status_code in statuses:
                response.success()
                return response.text or " "
            response.failure(getattr(response, "error", None) or f"HTTP {response.status_code}")
            return ""


@contextlib.contextmanager
def fresh_database(engine: str, folder: str):
    """A new, migrated database: its URL and the pids of its own processes (none for SQLite)."""
    if engine == "sqlite":
        url = f"sqlite:///{folder}/load.sqlite"
        migrate(url)
        yield url, []
        return
    with postgresql_cluster() as (url, pid):
        migrate(url)
        yield url, [pid]


@contextlib.contextmanager
def app_servers(database_url: str, count: int, workers: int | None, times: ServerTimes):
    """``count`` app servers on one database, each on a port of its own: (URL, process)."""
    started = []
    try:
        for number in range(1, count + 1):
            port, log = free_port(), f"companion-load-server-{number}.log"
            settings = times.settings(number)
            server = start_server(database_url, port, workers, settings, log_name=log)
            started.append((f"http://127.0.0.1:{port}", server))
        yield started
    finally:
        for _, server in started:
            server.terminate()
        for _, server in started:
            server.wait(timeout=30)


def phone_classes(tables: list[Table], hosts: list[str], push: bool) -> list[type[Phone]]:
    """One Phone class per server, holding the seats of the tables spread to it."""
    classes = []
    for number, host in enumerate(hosts, 1):
        seats = Queue()
        for table in tables[number - 1 :: len(hosts)]:
            for seat in range(len(table.player_ids)):
                seats.put((table, seat))
        attributes = {"host": host, "seats": seats, "fixed_count": seats.qsize(), "push": push}
        classes.append(type(f"PhoneOfServer{number}", (Phone,), attributes))
    return classes


class ServerTimes:
    """How long the servers took over each request, from gunicorn's access log.

    Locust's figures are a phone's view: they include the wait for a free core (the
    load generator shares the machine with the servers) and for Locust's own loop,
    which runs every phone in one thread. gunicorn logs the time from the parsed
    request to the answer written (``%(M)s``, milliseconds); set beside Locust's, it
    tells the server's share of a latency from the rest. Off unless asked for: the
    log costs the servers a little.
    """

    FORMAT = "%(M)s %(m)s %(U)s"

    def __init__(self, folder: str | None):
        self.folder = folder
        self.marks: dict[Path, int] = {}

    def settings(self, number: int) -> dict[str, str]:
        """The environment that makes server ``number`` log each request's time."""
        if self.folder is None:
            return {}
        log = Path(self.folder) / f"access-{number}.log"
        self.marks[log] = 0
        ours = f"--access-logfile {log} --access-logformat '{self.FORMAT}'"
        return {"GUNICORN_CMD_ARGS": f"{os.environ.get('GUNICORN_CMD_ARGS', '')} {ours}"}

    def start(self) -> None:
        """Count the requests logged from now on."""
        for log in self.marks:
            self.marks[log] = log.stat().st_size if log.exists() else 0

    def rows(self) -> list[tuple[str, list[int]]]:
        """Every logged request's milliseconds since ``start``: all, polls, writes."""
        every, polls, writes = [], [], []
        for log, mark in self.marks.items():
            with log.open() as lines:
                lines.seek(mark)
                for line in lines:
                    milliseconds, method, path = line.split()
                    every.append(int(milliseconds))
                    if path.endswith("/live"):
                        polls.append(int(milliseconds))
                    elif method == "POST":
                        writes.append(int(milliseconds))
        return [("all", every), ("polls", polls), ("writes", writes)]


class Run(NamedTuple):
    """What a load run measured."""

    stats: object  # Locust's
    elapsed: float
    shares: list[float]  # of CPU (``Usage``)
    delivered: list[float]  # ms from a write to another phone's event (``deliveries``)
    missed: int
    idle: list[EventStream]


def load(tables: list[Table], classes, args, usage: Usage, times: ServerTimes, idle, host) -> Run:
    """Join every phone (and open the idle and flood streams), then play for ``--seconds``.
    ``host`` serves the first table, whose match ``--flood`` floods."""
    os.nice(args.generator_nice)  # the servers, started before, keep their priority
    environment = Environment(user_classes=classes)
    runner = environment.create_local_runner()
    phones = sum(len(table.player_ids) for table in tables)
    runner.start(phones, spawn_rate=args.spawn_rate)
    while sum(table.seated() for table in tables) < phones:
        if environment.stats.total.num_failures or runner.exceptions:
            runner.quit()
            raise SystemExit(f"phones could not join: {failures(environment.stats)}")
        gevent.sleep(0.2)
    idle_streams = hold_idle_streams(idle, args.idle_streams) if idle else []
    if args.flood:
        idle_streams += flood(host, tables[0].match_id, args.flood, FLOOD_FROM)
    environment.stats.reset_all()
    usage.start()
    times.start()
    begin = time.monotonic()
    dealers = [runner.greenlet.spawn(table.play, args.round_seconds) for table in tables]
    gevent.sleep(args.seconds)
    elapsed = time.monotonic() - begin
    shares = usage.shares(elapsed)
    runner.quit()
    delivered, missed = deliveries(tables) if not args.poll else ([], 0)
    for stream in [phone.stream for table in tables for phone in table.phones] + idle_streams:
        if stream is not None:
            stream.stop()
    broken = [dealer.exception for dealer in dealers if dealer.exception is not None]
    if broken:
        raise SystemExit(f"a table stopped playing: {broken[0]!r}")
    return Run(environment.stats, elapsed, shares, delivered, missed, idle_streams)


def failures(stats) -> str:
    """The first few failures, by kind of request."""
    errors = sorted(stats.errors.values(), key=lambda error: -error.occurrences)
    return "; ".join(f"{e.name}: {e.error} (x{e.occurrences})" for e in errors[:3])


def rounds_placed(database_url: str) -> int:
    """Rounds whose cards were all in, so the server placed them."""
    engine = create_engine(database_url)
    with engine.connect() as connection:
        placed = connection.execute(text("SELECT count(*) FROM round")).scalar_one()
    engine.dispose()
    return placed


def deliveries(tables: list[Table]) -> tuple[list[float], int]:
    """Milliseconds from each write's start to each other phone of its table getting its
    change event, and how many never got one (writes in the last seconds aside)."""
    seconds, missed = [], 0
    end = time.perf_counter() - UNSEEN_GRACE
    for table in tables:
        for write in table.writes:
            for phone in table.phones:
                if phone is write.phone:
                    continue
                arrived = phone.stream.first_arrival(write.version)
                if arrived is not None:
                    seconds.append((arrived - write.started) * 1000)
                elif write.started < end:
                    missed += 1
    return seconds, missed


def percentiles(values) -> list[float]:
    """``CUTS`` of these values, and their max (zeros when there are none)."""
    ordered = sorted(values) or [0]
    cuts = [ordered[min(len(ordered) - 1, int(len(ordered) * cut))] for cut in CUTS]
    return [*cuts, ordered[-1]]


def latency_rows(stats) -> list[tuple[str, StatsEntry]]:
    """All requests, the polls, and the writes together and by kind."""
    writes = StatsEntry(stats, "writes", "POST")
    for kind in WRITES:
        writes.extend(stats.get(kind, "POST"))
    rows = [("all", stats.total), ("polls", stats.get("poll", "GET")), ("writes", writes)]
    rows.append(("pages after", stats.get("page after write", "GET")))
    return rows + [(f"  {kind}s", stats.get(kind, "POST")) for kind in WRITES]


def report(args, tables: list[Table], run: Run, placed: int, memory, database_memory) -> None:
    """Print the figures."""
    stats, elapsed = run.stats, run.elapsed
    total = stats.total
    live = "polling every 2 s" if args.poll else "holding an event stream each"
    print(
        f"{args.tables} tables x {args.phones} phones {live}, a round every "
        f"~{args.round_seconds:g} s, {elapsed:.0f} s; {args.database}, {args.servers} "
        f"app server{'s' if args.servers > 1 else ''}"
        + (f"; {len(run.idle):,} idle streams beside" if run.idle else "")
    )
    print(
        f"requests: {total.num_requests:,} ({total.num_requests / elapsed:,.0f}/s), "
        f"failures: {total.num_failures}" + (f" ({failures(stats)})" if total.num_failures else "")
    )
    print_latencies(
        (
            name,
            entry.num_requests,
            *map(entry.get_response_time_percentile, CUTS),
            entry.max_response_time or 0,
        )
        for name, entry in latency_rows(stats)
        if entry.num_requests
    )
    if not args.poll:
        report_streams(tables, run)
    print(f"rounds placed: {placed:,} ({placed / elapsed * 60:,.0f} a minute)")
    print(f"app servers' peak memory: {memory.summary()}")
    if database_memory is not None:
        print(f"PostgreSQL's peak memory: {database_memory.summary()}")
    print(cpu_summary(run.shares, "Locust"))


def report_streams(tables: list[Table], run: Run) -> None:
    """Print how fast writes reached the other phones, and how the streams held."""
    writes = sum(len(table.writes) for table in tables)
    print(
        f"write -> each other phone of its table ({writes:,} writes), ms:"
        f" p50 {{:.0f}}, p95 {{:.0f}}, p99 {{:.0f}}, max {{:.0f}};".format(
            *percentiles(run.delivered)
        )
        + f" never arrived: {run.missed}"
    )
    phones = [phone.stream for table in tables for phone in table.phones]
    for name, streams in (("phones' streams", phones), ("idle/flood streams", run.idle)):
        if not streams:
            continue
        drops = [failure for stream in streams for failure in stream.failures]
        opening = percentiles(s for stream in streams for s in stream.open_seconds)
        print(
            f"{name}: {sum(stream.held for stream in streams):,} of {len(streams):,} open"
            f" at the end, {len(drops)} dropped"
            + (f" ({drops[0]})" if drops else "")
            + f"; opening p95 {opening[1] * 1000:.0f} ms"
        )


def report_server_times(times: ServerTimes) -> None:
    """Print the servers' own time per request, as the Locust table above."""
    print("the servers' own time (gunicorn's access log), same requests:")
    rows = []
    for name, milliseconds in times.rows():
        rows.append((name, len(milliseconds), *percentiles(milliseconds)))
    print_latencies(rows)


def print_latencies(rows) -> None:
    """A table of latencies in ms: name, requests, p50, p95, p99, max."""
    print(f"  {'ms':12} {'requests':>9} {'p50':>6} {'p95':>6} {'p99':>6} {'max':>6}")
    for name, count, *figures in rows:
        print(f"  {name:12} {count:9,}" + "".join(f" {figure:6.0f}" for figure in figures))


def idle_matches(args) -> int:
    """How many matches the idle streams watch: ``--phones`` streams each."""
    return -(-args.idle_streams // args.phones)


def raise_open_files() -> None:
    """Let this process hold as many sockets as the system allows (each stream is one)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main() -> None:
    """Start the database and the servers, load them, print the figures, stop them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--phones", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--round-seconds",
        type=float,
        default=30,
        help="seconds a table takes for a round (default 30: brisk)",
    )
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--servers", type=int, default=1, help="app servers, one port each")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes of each server (default: the server's own default)",
    )
    parser.add_argument(
        "--server-times",
        action="store_true",
        help="also print the servers' own time per request (gunicorn's access log)",
    )
    parser.add_argument(
        "--generator-nice",
        type=int,
        default=0,
        metavar="N",
        help="lower the load generator's CPU priority by N (0-19) once the servers run",
    )
    parser.add_argument(
        "--spawn-rate",
        type=float,
        default=10,
        help="phones that join a second, before the play starts (default 10: faster makes"
        " a burst past what the servers serve, and joins time out)",
    )
    parser.add_argument(
        "--poll", action="store_true", help="phones poll every 2 s instead of holding a stream"
    )
    parser.add_argument(
        "--idle-streams",
        type=int,
        default=0,
        metavar="N",
        help="also hold N open streams of phones that only watch (matches of their own)",
    )
    parser.add_argument(
        "--flood",
        type=int,
        default=0,
        metavar="N",
        help=f"also open N streams of the first table's match from {FLOOD_FROM}",
    )
    args = parser.parse_args()
    if not 1 <= args.servers <= args.tables:
        parser.error("--servers must be between 1 and --tables")
    if not 0 <= args.generator_nice <= 19:
        parser.error("--generator-nice must be between 0 and 19")
    if args.server_times and args.workers == 1:  # one process: waitress, which logs none
        parser.error("--server-times reads gunicorn's access log: use --workers 2 or more")
    if args.poll and (args.idle_streams or args.flood):
        parser.error("--idle-streams and --flood hold streams: not with --poll")
    if args.database == "postgresql" and importlib.util.find_spec("psycopg") is None:
        parser.error("--database postgresql needs the psycopg driver in .venv")
    raise_open_files()
    with (
        tempfile.TemporaryDirectory() as folder,
        fresh_database(args.database, folder) as (database_url, database_pids),
    ):
        tables = [Table(*made) for made in create_matches(database_url, args.tables, args.phones)]
        idle_made = create_matches(database_url, idle_matches(args), args.phones, prefix="I")
        times = ServerTimes(folder if args.server_times else None)
        with app_servers(database_url, args.servers, args.workers, times) as servers:
            server_pids = [server.pid for _, server in servers]
            hosts = [host for host, _ in servers]
            memory = MemoryWatch(*server_pids)
            database_memory = MemoryWatch(*database_pids) if database_pids else None
            watches = [watch for watch in (memory, database_memory) if watch is not None]
            for watch in watches:
                watch.start()
            classes = phone_classes(tables, hosts, not args.poll)
            usage = Usage(server_pids, database_pids)
            idle = [(hosts[n % len(hosts)], *made[:2]) for n, made in enumerate(idle_made)]
            run = load(tables, classes, args, usage, times, idle, hosts[0])
            for watch in watches:
                watch.stop()
        placed = rounds_placed(database_url)
        report(args, tables, run, placed, memory, database_memory)
        if args.server_times:
            report_server_times(times)


if __name__ == "__main__":
    main()
