"""Serve the companion on the local network: `python -m companion.serve`."""

import argparse
import os
import signal
import socket
import sys
import time
from typing import TextIO

import qrcode
import waitress
from flask_migrate import upgrade
from sqlalchemy import select

from companion import create_app
from companion.db import checkpoint_in_background, db

# Any private address works: connect() on a UDP socket sends nothing, it only makes
# the kernel choose the interface (and so the address) that routes towards the LAN.
ROUTE_PROBE = ("10.255.255.255", 1)
ALL_INTERFACES = {"0.0.0.0", "::", ""}
# Waitress threads per worker. Threads of one process take turns on one core; past
# four, they mostly wait for each other (bench/load.py, 100 tables: p95 38-47 ms with 4,
# 41-113 ms with 8). Writes no longer wait long for the write lock, so few suffice.
THREADS = 4
BACKLOG = 1024  # connections waiting to be accepted
MAX_WORKERS = 4


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read --host and --port, defaulting to COMPANION_HOST / COMPANION_PORT."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("COMPANION_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("COMPANION_PORT", "8000")))
    parser.add_argument(
        "--workers",
        type=int,
        default=int(os.environ.get("COMPANION_WORKERS", default_workers())),
        help="server processes (default: one per CPU core, at most 4)",
    )
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return args


def default_workers() -> int:
    """One worker per core, at most MAX_WORKERS (each takes about 90 MB)."""
    return max(1, min(os.cpu_count() or 1, MAX_WORKERS))


def lan_address() -> str:
    """The IPv4 address other devices on this network can reach us at."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(ROUTE_PROBE)
            return probe.getsockname()[0]
        except OSError:
            pass  # no route at all (offline): fall back to the host name
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def phone_url(host: str, port: int) -> str:
    """The URL a phone should open for a server bound to host:port."""
    address = lan_address() if host in ALL_INTERFACES else host
    return f"http://{address}:{port}/"


def print_qr(url: str, out: TextIO | None = None) -> None:
    """Print url as a QR code in the terminal (stdout by default), for phones to scan."""
    code = qrcode.QRCode(border=2)
    code.add_data(url)
    # invert: terminals are usually dark, and scanners want dark modules on light.
    code.print_ascii(out=out or sys.stdout, tty=False, invert=True)


def fill_statistics() -> None:
    """Derive the statistics once for games played before the statistics tables existed."""
    from companion.derived import PlayerMatchStat, rebuild_statistics
    from companion.models import Seat

    has_matches = db.session.scalar(select(Seat.id).limit(1)) is not None
    has_statistics = db.session.scalar(select(PlayerMatchStat.id).limit(1)) is not None
    if has_matches and not has_statistics:
        rebuild_statistics(check=False, echo=lambda line: None)


def main(argv: list[str] | None = None) -> None:
    """Migrate the database, show where to connect, and serve with waitress."""
    args = parse_args(argv)
    app = create_app()
    with app.app_context():
        upgrade()
        fill_statistics()
        db.engine.dispose()  # no connection may cross into a forked worker
    url = phone_url(args.host, args.port)
    print(f"Open {url} on a phone on the same network", flush=True)
    print_qr(url)
    sys.stdout.flush()
    listener = listen(args.host, args.port)
    if args.workers == 1 or not hasattr(os, "fork"):
        serve(app, listener)
    else:
        Workers(listener, args.workers).run()


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound once and shared by every worker."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(BACKLOG)
    return listener


def serve(app, listener: socket.socket) -> None:
    """Answer requests on the shared socket with waitress, in this process."""
    # Late: the backup package imports the blueprints, and links imports this module.
    from companion.backup.copies import copy_daily_in_background, database_file
    from companion.backup.restore import hold_serving_lock

    checkpoint_in_background(app)
    hold_serving_lock(database_file(app))  # `flask restore` waits for the server to stop
    copy_daily_in_background(app)  # instance/backups/ (companion.backup.copies)
    # Every phone at every table keeps a connection open while it polls; waitress
    # allows only 100 by default, which a few busy tables would use up. It waits on
    # select(), which cannot watch more than 1024 descriptors: stay well below.
    waitress.serve(app, sockets=[listener], threads=THREADS, connection_limit=900)


class Workers:
    """Worker processes serving one socket; a worker that dies is replaced.

    One Python process runs one thread at a time, so a busy evening (or a Raspberry
    Pi's four cores) is served by one worker per core. Each worker is forked after the
    migration and makes its own app, so no database connection is shared; writes
    queue across workers on the database's writer lock (``companion.db``). The
    kernel hands each new connection to whichever worker accepts it first.
    """

    def __init__(self, listener: socket.socket, count: int):
        self.listener = listener
        self.count = count
        self.pids: set[int] = set()
        self.stopping = False

    def run(self) -> None:
        """Start the workers and keep them running until SIGTERM or Ctrl+C."""
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        while len(self.pids) < self.count:
            self.start_one()
        while self.pids:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            self.pids.discard(pid)
            if not self.stopping:
                print(f"worker {pid} ended ({status}); starting another", file=sys.stderr)
                time.sleep(1)  # a worker that cannot start must not spin
                self.start_one()

    def start_one(self) -> None:
        """Fork one worker; in the child, serve until killed."""
        pid = os.fork()
        if pid:
            self.pids.add(pid)
            return
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            serve(create_app(), self.listener)
        finally:
            os._exit(1)

    def stop(self, _signum=None, _frame=None) -> None:
        """Stop every worker, then return from run()."""
        self.stopping = True
        for pid in list(self.pids):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                self.pids.discard(pid)


if __name__ == "__main__":
    main()
