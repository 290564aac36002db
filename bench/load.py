"""Load benchmark: many tables of phones polling and playing against the real server.

Run: .venv/bin/python bench/load.py [--tables 100] [--phones 6] [--seconds 60]
     [--round-seconds 30] [--workers N]
(prints figures; not a test). It starts `python -m companion.serve` on 127.0.0.1 with
a fresh database, sets up one match per table (written directly; every phone joins
over HTTP by the player link and says who it is), then lets every phone poll /live
every 2 s while the tables play: tables sit down at random moments of the first
round; in each round every player sends their own card at a random moment of its
first half, too-low cards are answered by their player's phone, and games follow one
another. A round every 30 s is a brisk table (a 10-round game entered in 5 minutes);
--round-seconds 20 is a stress test. Traffic goes to loopback only and stops after
--seconds; figures count the requests sent until then.

Target (issue 4): 100 tables of 6 phones, p95 under 100 ms, zero errors, server under
300 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serving import CSRF, MemoryWatch, free_port, start_server  # noqa: E402

from companion import rules  # noqa: E402

POLL = re.compile(r'since=(\d+)&amp;form=([^&"]*)')
TOKEN = re.compile(r"/join/([\w-]+)")


class Connection:
    """One keep-alive HTTP/1.1 connection with its own cookies: a phone's browser."""

    def __init__(self, port: int, cookies: dict[str, str] | None = None):
        self.port = port
        self.cookies: dict[str, str] = {} if cookies is None else cookies
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, form: dict | None = None, headers: dict | None = None
    ) -> tuple[int, dict, str]:
        """Send a request; return status, headers and body text."""
        for attempt in (1, 2):  # the server may close an idle connection: reconnect once
            try:
                return await asyncio.wait_for(
                    self._exchange(method, path, form, headers or {}), timeout=30
                )
            except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
                self.close()
                if attempt == 2:
                    raise
            except asyncio.CancelledError:  # the time is up mid-request: a fresh start
                self.close()
                raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Drop the connection; the next request opens a new one."""
        if self.writer is not None:
            self.writer.close()
        self.writer = None

    async def _exchange(self, method, path, form, headers):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        body = urllib.parse.urlencode(form).encode() if form is not None else b""
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            f"Content-Length: {len(body)}",
        ]
        if form is not None:
            lines.append("Content-Type: application/x-www-form-urlencoded")
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        lines += [f"{k}: {v}" for k, v in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readuntil(b"\r\n")
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        response_headers: dict[str, str] = {}
        while (line := await self.reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.decode().partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
            response_headers[name] = value
        length = int(response_headers.get("content-length", "0"))
        text = (await self.reader.readexactly(length)).decode() if length else ""
        if response_headers.get("connection", "").lower() == "close":
            self.writer.close()
            self.writer = None
        return status, response_headers, text


class Stats:
    """Latencies and errors of every request in the load phase."""

    def __init__(self):
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.by_kind: dict[str, list[float]] = {}

    async def timed(self, kind: str, call, expected=(200, 204, 303)):
        """Run one request, record its latency and whether it answered as expected."""
        begin = time.perf_counter()
        try:
            status, headers, text = await call
        except Exception as error:
            self.errors.append(f"{kind}: {error!r}")
            return None
        self.latencies.append(time.perf_counter() - begin)
        self.by_kind.setdefault(kind, []).append(self.latencies[-1])
        if status not in expected:
            self.errors.append(f"{kind}: HTTP {status}")
        return status, headers, text


class Phone:
    """A phone at a table: polls the match and sends its player's card and choices."""

    def __init__(self, port: int, match_id: int, player_id: int):
        # One keep-alive connection a phone, polls and posts taking turns on it: 600
        # phones stay under the server's connection limit.
        self.http = Connection(port)
        self.turn = asyncio.Lock()
        self.match_id = match_id
        self.player_id = player_id
        self.csrf = ""
        self.since = "0"
        self.form_key = ""

    async def poll_forever(self, stats: Stats, stop: float) -> None:
        """Ask /live every 2 s (first at a random moment), as the page's htmx does."""
        await asyncio.sleep(random.uniform(0, 2))
        while time.monotonic() < stop:
            path = (
                f"/matches/{self.match_id}/live?since={self.since}"
                f"&form={urllib.parse.quote(self.form_key)}&view=match"
            )
            async with self.turn:
                result = await stats.timed(
                    "poll", self.http.request("GET", path, headers={"HX-Request": "true"})
                )
            if result and result[0] == 200 and (found := POLL.search(result[2])):
                self.since, self.form_key = found.group(1), urllib.parse.unquote(found.group(2))
            await asyncio.sleep(2)

    async def post(self, stats: Stats, kind: str, path: str, form: dict) -> None:
        """Send a form with this phone's CSRF token."""
        async with self.turn:
            await stats.timed(
                kind,
                self.http.request(
                    "POST", f"/matches/{self.match_id}{path}", {**form, "csrf_token": self.csrf}
                ),
            )


class Table:
    """One match: its phones, and the dealer that plays games with them."""

    def __init__(self, match_id: int, phones: list[Phone], player_ids: list[int]):
        self.match_id = match_id
        self.phones = phones
        self.player_ids = player_ids
        self.games = 0

    async def play(self, stats: Stats, stop: float, round_seconds: float) -> None:
        """Deal and play games until the time is up; choices go to the right phone."""
        rng = random.Random(self.match_id)
        await asyncio.sleep(rng.uniform(0, round_seconds))  # tables sit down one by one
        while time.monotonic() < stop:
            self.games += 1
            cards = rng.sample(range(1, 105), 10 * len(self.phones) + 4)
            starting = cards[-4:]
            hands = [cards[i * 10 : (i + 1) * 10] for i in range(len(self.phones))]
            form = {f"row{n}": str(card) for n, card in enumerate(starting, 1)}
            await self.phones[0].post(stats, "start", "/games", {**form, "game": self.games})
            rows = tuple((card,) for card in starting)
            for turn in range(10):
                if time.monotonic() >= stop:
                    return
                rows = await self.play_round(stats, rng, rows, hands, turn, round_seconds)

    async def play_round(self, stats, rng, rows, hands, turn, round_seconds):
        """Every phone sends its card at a random moment; then any too-low choices."""
        plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(self.player_ids)]
        base = {"game": self.games, "round": turn + 1}

        async def send(seat, pid, card):
            await asyncio.sleep(rng.uniform(0, round_seconds / 2))
            await self.phones[seat].post(stats, "card", "/rounds", {**base, f"card-{pid}": card})

        await asyncio.gather(*(send(seat, pid, card) for seat, (pid, card) in enumerate(plays)))
        table = rules.Table(rows)
        table.start_round(plays)
        choices: dict[int, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
            phone = self.phones[self.player_ids.index(pending.player)]
            await asyncio.sleep(rng.uniform(0.5, 2))
            await phone.post(
                stats,
                "choice",
                "/choice",
                {**base, "player": pending.player, "row": pending.suggested},
            )
        await asyncio.sleep(round_seconds / 2)
        return table.rows


def create_matches(database_url: str, tables: int, seats: int) -> list[tuple[int, str, list]]:
    """Players and one match per table, written straight into the server's database.

    Setting up is not what is measured, so it skips HTTP; the phones still join over
    HTTP with the player link, as real phones do.
    """
    from companion import create_app
    from companion.db import db
    from companion.models import Match, Player, Seat

    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "SECRET_KEY": "load-bench"})
    created = []
    with app.app_context():
        for number in range(tables):
            players = [
                Player(name=f"T{number}P{seat}", name_key=f"t{number}p{seat}")
                for seat in range(seats)
            ]
            match = Match(
                end_kind="games",
                end_value=1000,
                seats=[
                    Seat(player=player, position=seat) for seat, player in enumerate(players, 1)
                ],
            )
            db.session.add(match)
            db.session.flush()
            created.append((match.id, match.player_token, [player.id for player in players]))
        db.session.commit()
    return created


async def set_up(port: int, created: list[tuple[int, str, list]]) -> list[Table]:
    """Every phone opens its table's player link and says who it is."""
    return list(await asyncio.gather(*(join_table(port, *table) for table in created)))


async def join_table(port: int, match_id: int, token: str, ids: list[int]) -> Table:
    """The phones of one table join, one after another."""
    phones = []
    for pid in ids:
        phone = Phone(port, match_id, pid)
        status, _, _ = await phone.http.request("GET", f"/matches/{match_id}/join/{token}")
        assert status == 303, status
        _, _, page = await phone.http.request("GET", f"/matches/{match_id}")
        phone.csrf = CSRF.search(page).group(1)
        status, _, _ = await phone.http.request(
            "POST", f"/matches/{match_id}/me", {"player": pid, "csrf_token": phone.csrf}
        )
        assert status == 303, status
        phones.append(phone)
    return Table(match_id, phones, ids)


async def run(port: int, created, args) -> tuple[Stats, float, list[Table]]:
    """Join the phones, then poll and play for the given time."""
    tables = await set_up(port, created)
    stats = Stats()
    begin = time.monotonic()
    stop = begin + args.seconds
    tasks = [phone.poll_forever(stats, stop) for table in tables for phone in table.phones]
    tasks += [until(stop, table.play(stats, stop, args.round_seconds)) for table in tables]
    await asyncio.gather(*tasks)
    return stats, time.monotonic() - begin, tables


async def until(stop: float, play) -> None:
    """Play until ``stop``, leaving a round unfinished rather than running over."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(play, timeout=max(0.0, stop - time.monotonic()))


def report(stats: Stats, elapsed: float, memory: MemoryWatch, args) -> None:
    """Print the figures."""
    latencies = sorted(stats.latencies)
    cuts = statistics.quantiles(latencies, n=100)
    print(
        f"{args.tables} tables x {args.phones} phones polling every 2 s, "
        f"a round every ~{args.round_seconds:g} s, {elapsed:.0f} s"
    )
    print(f"requests: {len(latencies):,} ({len(latencies) / elapsed:,.0f}/s)")
    for kind, times in sorted(stats.by_kind.items()):
        print(
            f"  {kind:6s} {len(times):7,}  p50 {statistics.median(times) * 1000:6.1f} ms"
            f"  max {max(times) * 1000:6.1f} ms"
        )
    print(
        f"latency: p50 {statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {cuts[94] * 1000:.1f} ms, p99 {cuts[98] * 1000:.1f} ms, "
        f"max {latencies[-1] * 1000:.1f} ms"
    )
    print(
        f"errors: {len(stats.errors)}" + (f" (first: {stats.errors[:3]})" if stats.errors else "")
    )
    print(f"server peak memory: {memory.summary()}")


def main() -> None:
    """Start the server, load it, print the figures, stop it."""
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
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="server processes (default: the server's own default)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        database_url = f"sqlite:///{folder}/load.sqlite"
        server = start_server(database_url, port, args.workers)
        memory = MemoryWatch(server.pid)
        memory.start()
        try:
            created = create_matches(database_url, args.tables, args.phones)
            stats, elapsed, _ = asyncio.run(run(port, created, args))
            memory.done.set()
        finally:
            server.terminate()
            server.wait(timeout=10)
    report(stats, elapsed, memory, args)


if __name__ == "__main__":
    main()
