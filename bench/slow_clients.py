"""Slow clients: does a phone on poor Wi-Fi, or fifty of them, delay everyone else?

Run: .venv/bin/python -m bench.slow_clients [--slow 50] [--seconds 60] [--workers N]
(prints figures; not a test). Starts the real server (`python -m companion.serve`) on
loopback with a fresh database and one match of two players. Then ``--slow``
connections each send a card entry's headers (``Content-Length: 100000``, or
``--length``) and trickle one byte of its body every 2 s; one that the server answers
or closes is opened again, so that many press at every moment. A length past the
app's limit (64 KB) is answered 413 at once; a smaller one (``--length 60000``) is a
phone on poor Wi-Fi whose body the app must wait for. Meanwhile a phone, joined by
the player link, takes turns at `GET /` and sending a round (CSRF token and all, a new
game every 10 rounds), one request every half second, and times each.

Target (issue 18): `GET /` and the card submission under 200 ms meanwhile. For the old
setup, GUNICORN_CMD_ARGS="--worker-class gthread --threads 4" (issue 18 measured: with
40 slow clients, no answer to `GET /` within 30 s).
"""

from __future__ import annotations

import argparse
import collections
import select
import socket
import tempfile
import threading
import time

from bench.serving import (
    Browser,
    Usage,
    cpu_summary,
    create_matches,
    free_port,
    migrate,
    start_server,
)

TRICKLE = 2.0  # seconds between two bytes of a slow body
BODY = 100_000  # the length the slow clients announce: past the limit (64 KB), answered 413
ROWS = (1, 2, 3, 4)  # each game's rows; the cards played are all higher: no row choices


class SlowClients:
    """``count`` connections trickling a large body to ``path``, kept open by reopening."""

    def __init__(self, port: int, path: str, count: int, length: int = BODY):
        self.port, self.path, self.count, self.length = port, path, count, length
        self.stopped = threading.Event()
        self.opened = self.closed_by_server = 0
        self.lifetimes: list[float] = []  # seconds from opening to the server's answer or close
        self.answers: collections.Counter[str] = collections.Counter()  # status lines

    def connect(self) -> tuple[socket.socket, float]:
        """A new slow connection, its headers sent."""
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {self.length}\r\n\r\n"
        )
        connection.sendall(head.encode())
        self.opened += 1
        return connection, time.monotonic()

    def run(self) -> None:
        """Every 2 s, a byte on each connection; one the server answered or closed is
        opened again."""
        connections = [self.connect() for _ in range(self.count)]
        while not self.stopped.wait(TRICKLE):
            for index, (connection, since) in enumerate(connections):
                try:
                    if select.select([connection], [], [], 0)[0]:  # answered, or closed
                        raise ConnectionAbortedError(connection.recv(100))
                    connection.sendall(b"x")
                except OSError as error:
                    answer = error.args[0] if isinstance(error.args[0], bytes) else b""
                    status = answer.decode(errors="replace").split("\r\n", 1)[0]
                    self.answers[status or "closed, no answer"] += 1
                    self.closed_by_server += 1
                    self.lifetimes.append(time.monotonic() - since)
                    connection.close()
                    connections[index] = self.connect()
        for connection, _ in connections:
            connection.close()

    def summary(self) -> str:
        """What the server did with them, in words."""
        if not self.closed_by_server:
            return f"{self.count} slow connections of {self.length:,} bytes; the server ended none"
        lifetimes = sorted(self.lifetimes)
        answers = ", ".join(f"{status!r} x{count}" for status, count in self.answers.items())
        return (
            f"{self.count} slow connections of {self.length:,} bytes ({self.opened} opened in"
            f" all); the server ended"
            f" {self.closed_by_server}, seen after {lifetimes[len(lifetimes) // 2]:.0f} s"
            f" (median; a byte every {TRICKLE:g} s): {answers}"
        )


class Table:
    """The measuring phone's match: sends rounds of increasing cards, game after game."""

    def __init__(self, phone: Browser, match_id: int, player_ids: list[int]):
        self.phone, self.match = phone, f"/matches/{match_id}"
        self.player_ids = player_ids
        self.game = self.round = 0

    def start_game(self) -> None:
        """A new game on the same rows (not timed)."""
        self.game, self.round = self.game + 1, 0
        rows = {f"row{n}": card for n, card in enumerate(ROWS, 1)}
        self.phone.send(self.match)
        answer = self.phone.form(f"{self.match}/games", {**rows, "game": self.game})
        assert answer.status == 303, answer

    def send_round(self) -> float:
        """Send the next round's cards (every card higher than the rows); its seconds."""
        if self.round == 10:
            self.start_game()
        self.round += 1
        first = len(ROWS) + 1 + (self.round - 1) * len(self.player_ids)
        cards = {f"card-{pid}": first + n for n, pid in enumerate(self.player_ids)}
        answer = self.phone.form(
            f"{self.match}/rounds", {"game": self.game, "round": self.round, **cards}
        )
        assert answer.status == 303, answer
        self.phone.send(self.match)  # the page after the 303, for the next CSRF token
        return answer.seconds


def measure(base: str, table: Table, seconds: float) -> dict[str, list[float]]:
    """Take turns at `GET /` and a round, one every half second: their seconds."""
    times: dict[str, list[float]] = {"GET /": [], "card submission": []}
    home = Browser(base)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = home.send("/")
        assert answer.status == 200, answer
        times["GET /"].append(answer.seconds)
        time.sleep(0.5)
        times["card submission"].append(table.send_round())
        time.sleep(0.5)
    return times


def main() -> None:
    """Start the server, trickle, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=50, help="slow connections")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument(
        "--length",
        type=int,
        default=BODY,
        help="the Content-Length they announce (default 100000; under 65536 the app must"
        " wait for the whole body)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database_url = f"sqlite:///{folder}/slow.sqlite"
        migrate(database_url)
        ((match_id, token, player_ids),) = create_matches(database_url, 1, 2)
        port = free_port()
        server = start_server(database_url, port, args.workers, log_name="companion-slow.log")
        try:
            base = f"http://127.0.0.1:{port}"
            phone = Browser(base)
            assert phone.send(f"/matches/{match_id}/join/{token}").status == 303
            table = Table(phone, match_id, player_ids)
            table.start_game()
            slow = SlowClients(port, f"/matches/{match_id}/rounds", args.slow, args.length)
            trickling = threading.Thread(target=slow.run)
            trickling.start()
            usage = Usage([server.pid], [])
            usage.start()
            began = time.monotonic()
            try:
                times = measure(base, table, args.seconds)
            finally:
                slow.stopped.set()
                trickling.join()
            shares = usage.shares(time.monotonic() - began)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"{slow.summary()}; meanwhile, over {args.seconds:g} s:")
    print(f"  {'ms':16} {'requests':>8} {'p50':>6} {'p95':>6} {'max':>6}")
    for name, seconds in times.items():
        ordered = sorted(seconds)
        cuts = [ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)], ordered[-1]]
        print(f"  {name:16} {len(ordered):8}" + "".join(f" {c * 1000:6.0f}" for c in cuts))
    print(cpu_summary(shares, "this script"))


if __name__ == "__main__":
    main()
