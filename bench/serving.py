"""What the benchmarks that drive the real server share: starting it, its memory, PostgreSQL.

Not a benchmark itself: ``load``, ``table``, ``import_wait``, ``busy`` and the others
that start the server import it. Starting the server is the tests' own
(``tests/servers.py``): here it waits and gives up as a benchmark does.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import os
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import NamedTuple

from tests.servers import CSRF, ROOT, answers, children, environment, free_port, launch

POSTGRESQL = Path("/usr/lib/postgresql/15/bin")  # Debian's `postgresql` package
# The page a form's htmx request asks for after its 303: the match region.
HTMX = {"HX-Request": "true", "HX-Target": "match"}


def server_env(database_url: str, settings: dict | None = None) -> dict[str, str]:
    """The environment a bench server (or migration) runs in: its database, a fixed key."""
    return environment(database_url, "bench", settings)


def start_server(
    database_url: str,
    port: int,
    workers: int | None,
    settings: dict | None = None,
    log_name: str = "companion-bench-server.log",
) -> subprocess.Popen:
    """The real server, as `make run` starts it, on loopback with its own database.

    Its output goes to ``log_name`` in the temporary folder, kept after the run.
    """
    log = open(Path(tempfile.gettempdir()) / log_name, "w")  # noqa: SIM115
    server = launch(port, workers, server_env(database_url, settings), log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if answers(port):
            return server
        time.sleep(0.2)
    server.kill()
    raise SystemExit(f"the server did not start (see {log.name})")


def migrate(database_url: str) -> None:
    """Bring the database to the newest schema once, before several servers share it."""
    subprocess.run(
        [sys.executable, "-m", "flask", "--app", "companion", "db", "upgrade"],
        cwd=ROOT,
        env=server_env(database_url),
        check=True,
        capture_output=True,
    )


def create_matches(
    database_url: str, count: int, seats: int, prefix: str = "T"
) -> list[tuple[int, str, list[int]]]:
    """Players and ``count`` matches of ``seats``, written straight into the database:
    each match's id, player link token and player ids.

    Setting up is not what is measured, so it skips HTTP; phones still join over HTTP
    with the player link, as real phones do.
    """
    from companion.app import create_app  # not in the memory sampler's process
    from companion.db import db
    from companion.models import Match, Player, Seat

    app = create_app({"SQLALCHEMY_DATABASE_URI": database_url, "SECRET_KEY": "bench"})
    created = []
    with app.app_context():
        for number in range(count):
            players = [
                Player(name=f"{prefix}{number}P{seat}", name_key=f"{prefix.lower()}{number}p{seat}")
                for seat in range(seats)
            ]
            match = Match(
                end_kind="games",
                end_value=1000,
                seats=[Seat(player=player, position=n) for n, player in enumerate(players, 1)],
            )
            db.session.add(match)
            db.session.flush()
            created.append((match.id, match.player_token, [player.id for player in players]))
        db.session.commit()
        db.engine.dispose()
    return created


class Answer(NamedTuple):
    """What the server answered one request, and how long it took."""

    status: int
    headers: Message
    seconds: float
    text: str


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report a 303 as it is."""

    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """One phone's steps in a script: cookies, the CSRF token of the last page, no redirects.

    For the few requests a benchmark times one by one; ``load.py`` has Locust for crowds.
    """

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect()
        )
        self.csrf = ""

    def send(self, path: str, data: bytes | None = None, headers: dict | None = None) -> Answer:
        """One request; a page's CSRF token is kept for the next form."""
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        started = time.perf_counter()
        try:
            with self.opener.open(request, timeout=600) as response:
                body, status, got = response.read().decode(), response.status, response.headers
        except urllib.error.HTTPError as error:
            body, status, got = error.read().decode(), error.code, error.headers
        found = CSRF.search(body)
        if found:
            self.csrf = found.group(1)
        return Answer(status, got, time.perf_counter() - started, body)

    def form(self, path: str, fields: dict) -> Answer:
        """POST a form with this phone's CSRF token."""
        data = urllib.parse.urlencode({**fields, "csrf_token": self.csrf}).encode()
        return self.send(path, data)

    def upload(self, path: str, name: str, content: bytes) -> Answer:
        """POST one file (multipart), as the backup page does."""
        boundary = uuid.uuid4().hex
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n'
            f"{self.csrf}\r\n".encode(),
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/json\r\n\r\n".encode()
            + content
            + b"\r\n",
            f"--{boundary}--\r\n".encode(),
        ]
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        return self.send(path, b"".join(parts), headers)


@contextlib.contextmanager
def postgresql_cluster() -> Iterator[tuple[str, int]]:
    """A throwaway PostgreSQL cluster on loopback: its database URL and postmaster's pid.

    PostgreSQL refuses to run as root, so the cluster belongs to the ``postgres``
    system user (Debian's package creates it). It is stopped and removed after.
    """
    folder = Path(tempfile.mkdtemp(prefix="companion-pg-"))
    shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()

    def as_postgres(program: str, *args: str) -> None:
        command = ["runuser", "-u", "postgres", "--", str(POSTGRESQL / program), *args]
        subprocess.run(command, check=True, capture_output=True, cwd=folder)

    try:
        as_postgres("initdb", "-D", str(data), "--auth=trust", "--encoding=UTF8", "--no-sync")
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {folder}"
        log = str(folder / "log")
        as_postgres("pg_ctl", "-D", str(data), "-l", log, "-o", options, "-w", "start")
        try:
            as_postgres("createdb", "-h", "127.0.0.1", "-p", str(port), "companion")
            pid = int((data / "postmaster.pid").read_text().split()[0])
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/companion", pid
        finally:
            as_postgres("pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class MemoryWatch:
    """Samples the memory of some processes and their children twice a second.

    A server's workers are forked from it, so they share pages; the sum of their
    resident sizes counts those pages once per process. The figure reported is the
    peak of the sum of proportional set sizes (PSS: a shared page split among its
    sharers), with the plain resident sum beside it.

    The sampling runs in a process of its own (this module, ``--memory-watch``): reading
    ``smaps_rollup`` walks a process's page tables, a few milliseconds each time, and
    in the load generator's process that would stop every simulated phone meanwhile
    (gevent runs them all in one thread) and add to the latencies it measures.
    """

    def __init__(self, *pids: int):
        self.pids = pids
        self.peak_pss = self.peak_rss = 0.0
        self.processes = 0
        self.sampler: subprocess.Popen | None = None

    def start(self) -> None:
        """Start sampling."""
        command = [sys.executable, "-m", "bench.serving", "--memory-watch", *map(str, self.pids)]
        self.sampler = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> None:
        """Stop sampling and keep the peaks."""
        output, _ = self.sampler.communicate("", timeout=30)  # closing stdin stops it
        pss, rss, processes = output.split()
        self.peak_pss, self.peak_rss, self.processes = float(pss), float(rss), int(processes)

    def summary(self) -> str:
        """The peak, in words."""
        return (
            f"{self.peak_pss:.0f} MB (PSS of {self.processes} processes;"
            f" resident sum {self.peak_rss:.0f} MB)"
        )


def watch_memory(pids: list[int]) -> None:
    """The sampler's loop: every 0.5 s until stdin closes; then print the peaks."""
    peak_pss = peak_rss = 0.0
    processes = 0
    while not select.select([sys.stdin], [], [], 0.5)[0]:
        pss = rss = 0.0
        every = [pid for root in pids for pid in (root, *children(root))]
        for pid in every:
            figures = smaps_rollup(pid)
            pss += figures.get("Pss", 0) / 1024
            rss += figures.get("Rss", 0) / 1024
        peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
        processes = max(processes, len(every))
    print(peak_pss, peak_rss, processes)


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) a process and its children have used so far.

    Children that ended count too, through their parent (PostgreSQL starts a process
    for each connection, a server may replace a worker).
    """
    return sum(own_cpu_seconds(each) for each in (pid, *children(pid)))


def tree_cpu_seconds(pid: int, leave_out: set[int]) -> float:
    """``cpu_seconds`` of a process and all its descendants, but for ``leave_out`` and
    theirs: the browser's below a benchmark (Chromium's renderers are grandchildren),
    not the server's."""
    if pid in leave_out:
        return 0.0
    return own_cpu_seconds(pid) + sum(tree_cpu_seconds(c, leave_out) for c in children(pid))


def own_cpu_seconds(pid: int) -> float:
    """CPU time of one process and of its children that ended (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """CPU time every core of the machine has been busy so far, all processes together."""
    fields = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and waiting for I/O
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class Usage:
    """CPU time used by the load generator (this process), the servers, the database, and
    by the machine as a whole: it is shared, and what other programs take is not ours."""

    def __init__(self, servers: list[int], database: list[int], with_children: bool = False):
        self.servers, self.database = servers, database
        self.with_children = with_children  # the generator's children too (a browser)
        self.begin = (0.0, 0.0, 0.0, 0.0)

    def start(self) -> None:
        """Count from now on."""
        self.begin = self.now()

    def now(self) -> tuple[float, float, float, float]:
        """CPU seconds used so far by each."""
        if self.with_children:
            mine = tree_cpu_seconds(os.getpid(), {*self.servers, *self.database})
        else:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            mine = usage.ru_utime + usage.ru_stime
        return (
            mine,
            sum(cpu_seconds(pid) for pid in self.servers),
            sum(cpu_seconds(pid) for pid in self.database),
            machine_cpu_seconds(),
        )

    def shares(self, elapsed: float) -> list[float]:
        """Percent of one core each used since the start."""
        spent = zip(self.begin, self.now(), strict=True)
        return [(end - begin) / elapsed * 100 for begin, end in spent]


def cpu_summary(shares: list[float], generator: str) -> str:
    """The CPU shares (``Usage.shares``) in words, with what other programs took."""
    mine, servers, database, machine = shares
    return (
        f"CPU, % of one core ({os.cpu_count()} cores): load generator ({generator}) {mine:.0f} %,"
        f" app servers {servers:.0f} %"
        + (f", PostgreSQL {database:.0f} %" if database else "")
        + f"; other programs on the machine {machine - mine - servers - database:.0f} %"
    )


def smaps_rollup(pid: int) -> dict[str, int]:
    """A process's memory figures in kB (Rss, Pss, ...), empty once it is gone."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return {}
    figures = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        figures[name] = int(value.split()[0])
    return figures


if __name__ == "__main__" and sys.argv[1:2] == ["--memory-watch"]:
    watch_memory([int(pid) for pid in sys.argv[2:]])


@contextlib.contextmanager
def bench_database(postgresql: bool) -> Iterator[tuple[str, int | None]]:
    """A fresh database for a benchmark, removed after: an SQLite file in a temporary
    folder, or a throwaway PostgreSQL cluster. (Its URL, its server's pid or None.)"""
    if postgresql:
        with postgresql_cluster() as (url, pid):
            yield url, pid
        return
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite:///{Path(folder) / 'bench.sqlite'}", None


@contextlib.contextmanager
def others_meanwhile(database: int | None) -> Iterator[None]:
    """Print the CPU other programs took while the block ran: the machine's, less this
    process's and the database server's (``database``, a pid, if any)."""

    def ours() -> float:
        return own_cpu_seconds(os.getpid()) + (cpu_seconds(database) if database else 0.0)

    machine, own, wall = machine_cpu_seconds(), ours(), time.perf_counter()
    yield
    elapsed = time.perf_counter() - wall
    others = machine_cpu_seconds() - machine - (ours() - own)
    print(
        f"meanwhile other programs took {max(others, 0):.1f} s of CPU "
        f"in {elapsed:.1f} s on {os.cpu_count()} cores"
    )
