"""Stream flood: 8,300 event streams from one address, a bystander's pages, the workers' memory.

Run: .venv/bin/python -m bench.stream_flood [--streams 8300] [--matches 200] [--held 1000]
[--cpu-share 0.25] [--at-once 50] [--as-page] [--reconnect SECONDS] [--seconds 300]
[--postgresql] [--workers N]
(prints figures; not a test). It starts the real server (`python -m companion.serve`,
gevent workers and the background process) on loopback with an empty database (SQLite,
or a throwaway PostgreSQL cluster) and ``--matches`` matches of two players, each joined
by its watch link; with ``--cpu-share`` the server (not the database) runs in a cgroup
held to that share of one core (``bench.push.cpu_share``: 0.25 is a Raspberry Pi's). The
streams are opened by a child process (raw gevent sockets, ``bench/sse.py``),
``--at-once`` at a time; a bystander phone on another client address (127.0.0.1: the
server counts streams per ``REMOTE_ADDR``) times ``GET /`` and ``GET /players/`` one
after the other (median / p95 / max, 40 of each or more):

1. before: the server idle;
2. ``--held`` streams of phones that only watch, from addresses of their own
   (127.0.1.x, 50 each: within every bound, so all stay open): the workers' memory per
   open stream, and once they closed;
3. the flood: ``--streams`` streams spread over the matches from one address
   (127.0.0.2), each opened as by a phone that never saw the match (its first event
   renders the regions; ``--as-page``: as the match page asks, with the version it
   shows, so nothing is sent at first). The server keeps about 60 of them per worker
   (``PER_ADDRESS``) and closes the oldest; a closed one comes back as EventSource
   does, after the ``retry`` the server sent (5 min), or with ``--reconnect 1`` a
   second after, as a script that ignores it would. The bystander times its pages
   while they open (``--seconds`` at most), then while the survivors stay open, then
   after they all closed;

with the request workers' memory (PSS summed over them, RSS where PSS cannot be read):
idle, at the peak of the flood, with its survivors open and after they closed, and the
CPU the server, the streams' opener and other programs on the machine took meanwhile.

Targets (issue 42): the bystander's `GET /` under 200 ms while 8,300 streams from one
address open; the workers not left grown after they closed (without the bound they grew
to 330 MB each, and stayed there).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.push import cpu_share
from bench.serving import (
    ROOT,
    Browser,
    MemoryWatch,
    bench_database,
    cpu_seconds,
    create_matches,
    machine_cpu_seconds,
    smaps_rollup,
    start_server,
    tree_cpu_seconds,
)
from tests.servers import free_port, workers

FLOOD_FROM = "127.0.0.2"  # loopback answers from all of 127/8
HELD_FROM = "127.0.1.{}"  # a phone's address each, 50 streams apiece
HELD_PER_ADDRESS = 50
PAGES = ("/", "/players/")
REQUESTS = 40  # of each page, per phase
NOTICED = 17  # seconds: a stream whose phone left ends at its next "alive" (every 15 s)
LOG = "companion-bench-stream-flood.log"
FAILED = "failed"  # the bystander's requests that got no answer
STREAM = re.compile(r'sse-connect="([^"]+)"')  # the match page's stream


class Meter:
    """CPU seconds of the server, of the stream opener, of this script, of the database
    and of the machine, from ``start`` on: the machine is shared."""

    def __init__(self, server: int, database: int | None):
        self.server, self.database = server, database
        self.opener: subprocess.Popen | None = None
        self.begin = self.now()
        self.wall = time.perf_counter()

    def now(self) -> dict[str, float]:
        opener = tree_cpu_seconds(self.opener.pid, set()) if self.opener else 0.0
        return {
            "server": tree_cpu_seconds(self.server, set()),
            "opener": opener,
            "ours": tree_cpu_seconds(os.getpid(), set()),  # all three, and a memory sampler
            "database": cpu_seconds(self.database) if self.database else 0.0,
            "machine": machine_cpu_seconds(),
        }

    def start(self, opener: subprocess.Popen | None = None) -> None:
        self.opener = opener
        self.begin, self.wall = self.now(), time.perf_counter()

    def summary(self) -> str:
        """What each took since ``start``, in words."""
        spent = {key: value - self.begin[key] for key, value in self.now().items()}
        others = spent["machine"] - spent["ours"] - spent["database"]
        return (
            f"CPU in {time.perf_counter() - self.wall:.0f} s: server {spent['server']:.1f} s"
            + (f", streams' opener {spent['opener']:.1f} s" if self.opener else "")
            + (f", PostgreSQL {spent['database']:.1f} s" if self.database else "")
            + f"; other programs {max(others, 0):.1f} s ({os.cpu_count()} cores)"
        )


def bystander(base: str, opener=None, limit: float = 0) -> tuple[dict, dict | None]:
    """``REQUESTS`` of each page, one after the other, or more until ``opener`` says its
    streams are open or ``limit`` seconds passed: the seconds of each (a request that
    failed counts as long as it took, and ``FAILED``), and what the opener said."""
    phone = Browser(base)
    times: dict[str, list[float]] = {page: [] for page in PAGES} | {FAILED: []}
    told, deadline = None, time.monotonic() + limit
    while len(times[PAGES[-1]]) < REQUESTS or (
        opener and told is None and time.monotonic() < deadline
    ):
        for page in PAGES:
            started = time.perf_counter()
            try:
                answer = phone.send(page)
                assert answer.status == 200, (page, answer.status, answer.text[:300])
            except OSError:  # no answer: refused, reset, timed out
                times[FAILED].append(time.perf_counter() - started)
            times[page].append(time.perf_counter() - started)
            time.sleep(0.1)
        if opener and told is None and select.select([opener.stdout], [], [], 0)[0]:
            told = json.loads(opener.stdout.readline())
    return times, told


def latencies(times: dict[str, list[float]]) -> str:
    """Median / p95 / max of each page, in words."""
    parts = []
    for page in PAGES:
        ordered = sorted(times[page])
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        figures = (statistics.median(ordered), p95, ordered[-1])
        parts.append(f"GET {page} " + " / ".join(f"{s * 1000:.0f}" for s in figures))
    failed = f", {len(times[FAILED])} unanswered" if times[FAILED] else ""
    return "; ".join(parts) + f" ms (median / p95 / max, {len(ordered)} each{failed})"


def memory(server: int) -> tuple[float, str]:
    """The request workers' memory now: the sum in MB, and each worker's in words."""
    each, kinds = [], set()
    for pid in workers(server):
        pss = smaps_rollup(pid).get("Pss")
        kinds.add("PSS" if pss is not None else "RSS")
        each.append((pss if pss is not None else resident_kb(pid)) / 1024)
    total = sum(each)
    shares = " + ".join(f"{mb:.0f}" for mb in each)
    return total, f"{total:.0f} MB {'/'.join(sorted(kinds))} ({shares} MB, {len(each)} workers)"


def resident_kb(pid: int) -> int:
    """A process's resident size in kB, where its PSS cannot be read."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def watch_links(database_url: str, ids: list[int]) -> dict[int, str]:
    """Each match's watch link token, read from the database."""
    from companion.app import create_app  # as create_matches: not in the opener's process
    from companion.db import db
    from companion.models import Match

    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "SECRET_KEY": "bench"})
    with app.app_context():
        rows = db.session.execute(db.select(Match.id, Match.watch_token).where(Match.id.in_(ids)))
        tokens = dict(rows.all())
        db.engine.dispose()
    return tokens


def watchers(base: str, database_url: str, count: int) -> list[tuple[str, str, str]]:
    """``count`` matches of two players, each joined by its watch link: the event
    stream's path of each, as a phone that never saw the match asks for it and as the
    match page does (the version it shows), and the session cookie that holds the link."""
    ids = [made[0] for made in create_matches(database_url, count, 2, prefix="F")]
    tokens = watch_links(database_url, ids)
    joined = []
    for match_id in ids:
        phone = Browser(base)
        answer = phone.send(f"/matches/{match_id}/join/{tokens[match_id]}")
        assert answer.status == 303, answer
        cookie = answer.headers["Set-Cookie"].split(";", 1)[0]
        page = html.unescape(STREAM.search(phone.send(f"/matches/{match_id}").text).group(1))
        joined.append((f"/matches/{match_id}/events?view=match", page, cookie))
    return joined


def open_streams(base, matches, count, sources, args, folder) -> subprocess.Popen:
    """The child process that opens ``count`` streams over ``matches`` from ``sources``
    (round robin), ``--at-once`` at a time; it says when they are open, and stops when
    its stdin closes."""
    order = Path(folder) / f"streams-{time.monotonic_ns()}.json"
    order.write_text(
        json.dumps([base, matches, count, sources, args.reconnect, args.at_once, args.as_page])
    )
    command = [sys.executable, "-m", "bench.stream_flood", "--opener", str(order)]
    return subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def stop(opener: subprocess.Popen) -> dict:
    """Close the opener's streams: what it counted."""
    output, _ = opener.communicate("", timeout=600)
    return json.loads(output.splitlines()[-1])


def run_opener(order: str) -> None:
    """The child: open the streams, say so, hold them until stdin closes; say how many
    were open then."""
    from gevent import select as cooperative
    from gevent.pool import Pool

    from bench.sse import EventStream

    base, matches, count, sources, reconnect, at_once, as_page = json.loads(Path(order).read_text())

    class Stream(EventStream):
        """EventSource's stream, or a script's that comes back after ``reconnect`` s
        whatever retry the server asked for."""

        def read(self) -> None:
            super().read()
            if reconnect is not None:
                self.retry = reconnect

    streams = []
    for number in range(count):
        bare, page, cookie = matches[number % len(matches)]
        path = page if as_page else bare
        source = sources[number * len(sources) // count]
        streams.append(Stream(base, path, cookie, source=source))
    began = time.perf_counter()
    Pool(at_once).map(Stream.begin, streams)
    print(json.dumps({"seconds": time.perf_counter() - began, **counts(streams)}), flush=True)
    while not cooperative.select([sys.stdin], [], [], 0.5)[0]:
        pass
    print(json.dumps(counts(streams)), flush=True)
    # Every socket closed at once by the exit: thousands of streams stopped one by one
    # took minutes in a loop busy reconnecting them (``--reconnect``).
    os._exit(0)


def counts(streams) -> dict:
    """How many are open, opened in all, ended by the server, failed otherwise; the
    seconds a stream took to open (median, p95, max)."""
    opening = sorted(seconds for stream in streams for seconds in stream.open_seconds)
    failures = [failure for stream in streams for failure in stream.failures]
    return {
        "open": sum(stream.is_open for stream in streams),
        "opened": len(opening),
        "ended": failures.count("stream ended"),
        "failed": len(failures) - failures.count("stream ended"),
        "failures": sorted({failure.split(":")[0] for failure in failures} - {"stream ended"}),
        "opening": [
            statistics.median(opening) if opening else 0,
            opening[round(0.95 * (len(opening) - 1))] if opening else 0,
            opening[-1] if opening else 0,
        ],
    }


def said(counted: dict) -> str:
    """What the opener counted, in words."""
    opening = " / ".join(f"{s * 1000:.0f}" for s in counted["opening"])
    return (
        f"{counted['open']} open, {counted['opened']} opened in all,"
        f" {counted['ended']} ended by the server, {counted['failed']} failed"
        + (f" ({', '.join(counted['failures'])})" if counted["failures"] else "")
        + f"; opening took {opening} ms (median / p95 / max)"
    )


def held_phase(args, base, matches, server, meter, folder) -> None:
    """``--held`` streams within the bounds: the workers' memory per open stream."""
    idle, _ = memory(server)
    addresses = -(-args.held // HELD_PER_ADDRESS)
    sources = [HELD_FROM.format(n) for n in range(1, addresses + 1)]
    meter.start(opener := open_streams(base, matches, args.held, sources, args, folder))
    opened = json.loads(opener.stdout.readline())
    time.sleep(3)
    total, words = memory(server)
    print(f"{args.held} streams from {addresses} addresses, opened in {opened['seconds']:.1f} s")
    print(f"  memory with them open: {words}")
    per = (total - idle) * 1024 / max(opened["open"], 1)
    print(f"  per open stream: {per:.1f} kB ({opened['open']} open; {meter.summary()})")
    counted = stop(opener)
    print(f"  {said(counted)}")
    time.sleep(NOTICED)
    print(f"  memory {NOTICED} s after they closed: {memory(server)[1]}")


def flood_phase(args, base, matches, server, meter, folder) -> None:
    """``--streams`` streams from one address, the bystander meanwhile, the memory."""
    watch = MemoryWatch(*workers(server))
    watch.start()
    opener = open_streams(base, matches, args.streams, [FLOOD_FROM], args, folder)
    meter.start(opener)
    times, opened = bystander(base, opener, args.seconds)
    print(
        f"{args.streams} streams from {FLOOD_FROM} over {len(matches)} matches, "
        + (
            f"opened in {opened['seconds']:.1f} s: {said(opened)}"
            if opened
            else f"not all opened after {args.seconds:g} s"
        )
    )
    print(f"  bystander while they open: {latencies(times)}; {meter.summary()}")
    meter.start(opener)
    times, _ = bystander(base)
    print(f"  bystander with them held: {latencies(times)}; {meter.summary()}")
    print(f"  memory with them held: {memory(server)[1]}")
    counted = stop(opener)
    watch.stop()
    print(f"  when they were closed: {said(counted)}")
    print(f"  memory at the peak: {watch.summary()}")
    time.sleep(NOTICED)
    print(f"  memory {NOTICED} s after they closed: {memory(server)[1]}")
    meter.start()
    times, _ = bystander(base)
    print(f"  bystander after: {latencies(times)}; {meter.summary()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--streams", type=int, default=8300)
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--held", type=int, default=1000, help="0: no per-stream figure")
    parser.add_argument("--cpu-share", type=float, default=None)
    parser.add_argument(
        "--reconnect",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a closed stream opens again after this, not after the server's retry",
    )
    parser.add_argument(
        "--at-once", type=int, default=50, help="streams opening at the same time (default 50)"
    )
    parser.add_argument(
        "--as-page",
        action="store_true",
        help="the flood's streams ask as the match page does: nothing to send at first",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=300,
        help="the bystander's longest wait for the flood's streams to open (default 300)",
    )
    parser.add_argument("--postgresql", action="store_true")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the opener's, inherited
    with (
        bench_database(args.postgresql) as (url, database_pid),
        tempfile.TemporaryDirectory() as folder,
    ):
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = start_server(url, port, args.workers, log_name=LOG)
        try:
            time.sleep(2)  # the background process's first look at the empty database
            matches = watchers(base, url, args.matches)
            with cpu_share(args.cpu_share, server.pid) as held:
                print(f"server: {held}; database: {'PostgreSQL' if args.postgresql else 'SQLite'}")
                for _ in range(10):
                    bystander_warm(base)
                meter = Meter(server.pid, database_pid)
                print(f"idle: memory {memory(server.pid)[1]}")
                times, _ = bystander(base)
                print(f"bystander before: {latencies(times)}; {meter.summary()}")
                if args.held:
                    held_phase(args, base, matches, server.pid, meter, folder)
                flood_phase(args, base, matches, server.pid, meter, folder)
        finally:
            server.terminate()
            server.wait(timeout=30)
    log = Path(tempfile.gettempdir()) / LOG
    troubles = [
        line for line in log.read_text().splitlines() if "ERROR" in line or "CRITICAL" in line
    ]
    print(f"server log {log}: {len(troubles)} lines of ERROR or CRITICAL")
    for line in troubles[:5]:
        print(f"  {line}")


def bystander_warm(base: str) -> None:
    """One of each page, untimed: each worker's first requests load what they need."""
    phone = Browser(base)
    for page in PAGES:
        phone.send(page)


if __name__ == "__main__" and sys.argv[1:2] == ["--opener"]:
    run_opener(sys.argv[2])
elif __name__ == "__main__":
    main()
