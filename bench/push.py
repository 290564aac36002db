"""Push benchmark: how soon a round reaches the other phones, and its luck after it.

Run: .venv/bin/python -m bench.push [--players 4 10] [--games 3] [--cpu-share 0.25]
[--cpu-period 100] [--between-games 20] [--between-rounds 1] [--workers 1]
[--postgresql]
(prints figures; not a test). It starts the real server (`python -m companion.serve`, as
`make run` does: gevent workers and the background process) on loopback with a fresh
database; with ``--cpu-share`` the server and every process it starts run in a cgroup
held to that share of one core (0.25: a Raspberry Pi's share; cgroup v1 or v2, whichever
the machine has, as root; it says so when it cannot). Per player count, one phone enters
``--games`` whole games through the phone-for-everybody form while a second phone holds the match's
event stream, and it prints (median / p95 / max, ms):

- the round's write, from the form's post to its answer, which the sending phone
  follows at once as htmx does (its page after, untimed, beside the push);
- the round's push: from the post to the second phone's stream carrying the round's
  version, rounds 1-9, and round 10's apart (the game's end);
- the luck's push: from the post to the stream carrying the version of the luck's own
  write (issue 42: within 2 s at a Pi's share);

with the CPU the server and other programs took meanwhile. Targets (issue 42, at 25 % of
a core): the push ≤ 50 / 150 / 300 ms, the write ≤ 50 / 150 ms, round 10's push ≤ 100 ms.

``--between-rounds SECONDS`` waits from a round's luck to the next round, as a table
chooses and reveals its cards (half a minute); back to back (the default), each round's
post comes in the quota period its luck's figuring and push have spent, so at a share of
a core the write waits for the next period (100 ms) before it runs.

``--between-games SECONDS`` waits before each game, as a table collects, shuffles and deals
(a minute or more): the game just ended is reviewed in the background meanwhile
(``companion.background``, nice 19). Back to back (the default), that review runs during
the next game's rounds, and inside the cgroup's quota a process at nice 19 still spends
the share the table's requests then wait for (nice orders processes that want the CPU at
the same moment; the quota is spent by whoever ran first in the period).

The cards rise from round to round (the starting cards 1-4, then the lowest unplayed), so
no card is too low and no row choice stops a round: every round is a post and a push.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from bench.serving import (
    HTMX,
    Browser,
    bench_database,
    children,
    cpu_seconds,
    create_matches,
    machine_cpu_seconds,
    start_server,
)
from companion.background import NICEST
from tests.servers import free_port

EVENTS = re.compile(r"events\?since=(\d+)&amp;table=(\d+)")
WAIT = 30.0  # seconds a push may take before the benchmark gives up on it


class Stream:
    """The second phone's event stream: when each version arrived (perf_counter)."""

    def __init__(self, port: int, path: str, cookie: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.connection.request("GET", path, headers={"Cookie": cookie})
        self.response = self.connection.getresponse()
        self.arrived: dict[int, float] = {}
        self.changed = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        """Note each event's version as it comes, until the stream is closed."""
        with suppress(OSError, ValueError, AttributeError):  # closed under the read
            for raw in self.response:
                self.note(raw.decode().strip())

    def note(self, line: str) -> None:
        """An event's version, from its ``id:`` line."""
        if line.startswith("id:"):
            version = int(line[3:].split()[0])
            with self.changed:
                self.arrived.setdefault(version, time.perf_counter())
                self.changed.notify_all()

    def at(self, version: int) -> float | None:
        """When the stream first carried ``version`` or a later one (None: not in WAIT s)."""
        deadline = time.perf_counter() + WAIT
        with self.changed:
            while True:
                done = [moment for seen, moment in self.arrived.items() if seen >= version]
                if done:
                    return min(done)
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.changed.wait(left)

    def close(self) -> None:
        """Close the stream at once: its reader thread holds the response's lock until
        the next event comes (a heartbeat, seconds later), so the socket goes first."""
        with suppress(OSError, AttributeError):
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        self.connection.close()


def cookie_of(phone: Browser) -> str:
    """The phone's session cookie, for a stream opened apart."""
    handler = next(h for h in phone.opener.handlers if hasattr(h, "cookiejar"))
    return "; ".join(f"{cookie.name}={cookie.value}" for cookie in handler.cookiejar)


def play(
    port: int, database_url: str, players: int, games: int, between: float = 0.0, pace: float = 0.0
) -> dict[str, list[float]]:
    """``games`` games of ``players`` entered by one phone, watched by another, ``between``
    seconds before each game (the table collects, shuffles and deals) and ``pace`` before
    each round (its cards are played and revealed): the figures."""
    ((match_id, token, ids),) = create_matches(database_url, 1, players, prefix=f"P{players}x")
    entering, watching = Browser(f"http://127.0.0.1:{port}"), Browser(f"http://127.0.0.1:{port}")
    for phone in (entering, watching):
        assert phone.send(f"/matches/{match_id}/join/{token}").status == 303
    entering.send(f"/matches/{match_id}")  # its form's CSRF token
    page = watching.send(f"/matches/{match_id}").text
    since, table = EVENTS.search(page).groups()
    stream = Stream(
        port, f"/matches/{match_id}/events?since={since}&table={table}", cookie_of(watching)
    )
    figures: dict[str, list[float]] = {"write": [], "push": [], "push 10": [], "luck": []}
    version = int(since)
    try:
        for game in range(1, games + 1):
            time.sleep(between)
            answer = entering.form(f"/matches/{match_id}/games", {"game": game, **starting()})
            assert answer.status == 303, (answer.status, answer.text[:300])
            follow(entering, answer)
            stream.at(version + 1)  # the game's start, untimed
            version = max(stream.arrived)
            for number in range(1, 11):
                time.sleep(pace)
                version = play_round(entering, stream, match_id, ids, (game, number), figures)
    finally:
        stream.close()
    return figures


def play_round(entering, stream, match_id, ids, at: tuple[int, int], figures) -> int:
    """One round entered and timed until both its pushes reached the watching phone: the
    version the stream is at then."""
    game, number = at
    players = len(ids)
    cards = {f"card-{pid}": 5 + (number - 1) * players + seat for seat, pid in enumerate(ids)}
    version = max(stream.arrived)
    sent = time.perf_counter()
    answer = entering.form(f"/matches/{match_id}/rounds", {"game": game, "round": number, **cards})
    assert answer.status == 303, (answer.status, answer.text[:300])
    figures["write"].append(answer.seconds * 1000)
    follow(entering, answer)
    pushed = stream.at(version + 1)  # the round's own write
    key = "push 10" if number == 10 else "push"
    figures[key].append(((pushed or sent + WAIT) - sent) * 1000)
    lucky = stream.at(version + 2)  # its luck's write, a game at a time
    figures["luck"].append(((lucky or sent + WAIT) - sent) * 1000)
    return max(stream.arrived)


def follow(phone: Browser, answer) -> None:
    """The page after a form's 303, as htmx asks for it at once (its match region): the
    sending phone's request that comes beside the push to the others (untimed)."""
    page = phone.send(answer.headers["Location"], headers=HTMX)
    assert page.status == 200, (page.status, page.text[:300])


def starting() -> dict[str, int]:
    return {f"row{row}": row for row in range(1, 5)}


@contextmanager
def cpu_share(share: float | None, pid: int, period_ms: float = 100) -> Iterator[str]:
    """Hold the process ``pid`` and every process below it to ``share`` of one core, in a
    cgroup of its own (v2, else v1's cpu controller), counted over periods of
    ``period_ms`` (systemd's CPUQuota= counts over 100 ms); say which, or why not."""
    if share is None:
        yield "full speed"
        return
    group = make_group(share, round(period_ms * 1000))
    if isinstance(group, str):
        yield f"full speed ({group})"
        return
    procs = group / "cgroup.procs"
    for each in (pid, *descendants(pid)):
        procs.write_text(str(each))
    try:
        yield f"{share:.0%} of one core, over {period_ms:g} ms periods ({group})"
    finally:
        parent = group.parent / "cgroup.procs"
        for each in procs.read_text().split():
            with suppress(OSError):  # a process that ended meanwhile
                parent.write_text(each)
        group.rmdir()


def make_group(share: float, period: int = 100_000) -> Path | str:
    """A new cgroup holding its processes to ``share`` of one core over periods of
    ``period`` microseconds, or why there is none."""
    quota = int(share * period)
    v2 = Path("/sys/fs/cgroup")
    v1 = v2 / "cpu"
    try:
        if (v2 / "cgroup.controllers").exists():
            group = v2 / f"companion-bench-{os.getpid()}"
            group.mkdir()
            (group / "cpu.max").write_text(f"{quota} {period}")
            return group
        if (v1 / "cpu.cfs_quota_us").exists():
            group = v1 / f"companion-bench-{os.getpid()}"
            group.mkdir()
            (group / "cpu.cfs_period_us").write_text(str(period))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
            return group
    except OSError as error:
        return f"no cgroup: {error} (run as root)"
    return "no cgroup: neither v2 nor v1's cpu controller is mounted"


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``."""
    found = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


def background_pid(server: int) -> int | None:
    """The server's background process (``companion.background``): its child at nice 19."""
    for pid in descendants(server):
        with suppress(OSError):
            nice = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])
            if nice == NICEST:
                return pid
    return None


def line(name: str, values: list[float]) -> str:
    """A figure's median, p95 and max in milliseconds."""
    if not values:
        return f"  {name:28s} -"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"  {name:28s} median {statistics.median(ordered):6.0f}  p95 {p95:6.0f}  "
        f"max {ordered[-1]:6.0f} ms  ({len(ordered)} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--players", type=int, nargs="+", default=[4, 10])
    parser.add_argument("--cpu-share", type=float, default=None)
    parser.add_argument(
        "--cpu-period",
        type=float,
        default=100,
        help="ms over which the share is counted (100: systemd's CPUQuota=; a short "
        "period spreads the share as a slower core would, a long one runs at full speed "
        "then waits out the rest of the period)",
    )
    parser.add_argument("--postgresql", action="store_true")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--games", type=int, default=3, help="games per player count")
    parser.add_argument(
        "--between-rounds",
        type=float,
        default=0.0,
        help="seconds from a round's luck to the next round's cards, as players choose and "
        "reveal them (0: at once, every round in a quota its luck spent)",
    )
    parser.add_argument(
        "--between-games",
        type=float,
        default=0.0,
        help="seconds before each game, as a table collects, shuffles and deals (a minute "
        "or more; 0: the games back to back)",
    )
    args = parser.parse_args()
    with bench_database(args.postgresql) as (url, database_pid):
        port = free_port()
        server = start_server(url, port, args.workers, log_name="companion-bench-push.log")
        try:
            time.sleep(2)  # the background process's first look at the empty database
            with cpu_share(args.cpu_share, server.pid, args.cpu_period) as held:
                print(f"server: {held}; database: {'PostgreSQL' if args.postgresql else 'SQLite'}")
                for players in args.players:
                    machine, ours = machine_cpu_seconds(), cpu_seconds(server.pid)
                    background = background_pid(server.pid)
                    behind = cpu_seconds(background) if background else 0.0
                    mine, wall = os.times(), time.perf_counter()
                    figures = play(
                        port, url, players, args.games, args.between_games, args.between_rounds
                    )
                    elapsed = time.perf_counter() - wall
                    spent = cpu_seconds(server.pid) - ours
                    behind = (cpu_seconds(background) - behind) if background else 0.0
                    me = sum(os.times()[:2]) - sum(mine[:2])
                    database = cpu_seconds(database_pid) if database_pid else 0.0
                    others = max(machine_cpu_seconds() - machine - spent - me, 0.0)
                    pause = f", {args.between_games:g} s before each" if args.between_games else ""
                    if args.between_rounds:
                        pause += f", {args.between_rounds:g} s before each round"
                    rounds = len(figures["write"])
                    print(f"{players} players, {args.games} games{pause}:")
                    print(line("round's write (answer)", figures["write"]))
                    print(line("round's push, rounds 1-9", figures["push"]))
                    print(line("round 10's push", figures["push 10"]))
                    print(line("luck's push (second)", figures["luck"]))
                    print(
                        f"  CPU in {elapsed:.1f} s: server {spent:.2f} s (background process"
                        f" {behind:.2f} s, {1000 * (spent - behind) / rounds:.1f} ms a round the"
                        f" rest), this script {me:.2f} s"
                        + (f", PostgreSQL {database:.1f} s so far" if database_pid else "")
                        + f"; other programs on the machine {others:.2f} s ({os.cpu_count()} cores)"
                    )
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
