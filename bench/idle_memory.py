"""Idle memory: what a household server takes while nobody plays (issue 42: ≤ 200 MB).

Run: .venv/bin/python -m bench.idle_memory [--workers 2]   (prints figures; not a test)
It starts the real server as `make run` does (``python -m companion.serve``: gunicorn's
master, its workers and the background process) on loopback with a fresh database, opens
its first two pages as a phone does, waits a little, and prints each process's
proportional set size (PSS: a page shared by several processes split among them) and
resident size, and the PSS of the whole tree, with the CPU other programs took meanwhile.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import urllib.request

from bench.serving import Usage, cpu_summary, smaps_rollup, start_server
from tests.servers import children, free_port

PAGES = ("/", "/players/")


def main() -> None:
    """Start the server, open its first pages, print its memory."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        server = start_server(f"sqlite:///{folder}/idle.sqlite", port, args.workers)
        try:
            usage = Usage([server.pid], [], with_children=False)
            usage.start()
            begun = time.monotonic()
            for path in PAGES:
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).read()
            time.sleep(3)  # the background process's first look, the workers' first pages
            total = 0.0
            for pid in (server.pid, *children(server.pid)):
                figures = smaps_rollup(pid)
                total += figures.get("Pss", 0) / 1024
                pss, rss = figures.get("Pss", 0) / 1024, figures.get("Rss", 0) / 1024
                print(f"  {role(server.pid, pid)}: PSS {pss:5.0f} MB, resident {rss:5.0f} MB")
            print(f"whole server, idle after {len(PAGES)} pages: {total:.0f} MB PSS (goal ≤ 200)")
            print(f"  {cpu_summary(usage.shares(time.monotonic() - begun), 'page requests')}")
        finally:
            server.terminate()
            server.wait()


def role(master: int, pid: int) -> str:
    """Which of the server's processes ``pid`` is: the launcher is gunicorn's master, or
    with one worker that worker itself (``companion.serve.Gunicorn.serve_alone``)."""
    return "the launcher      " if pid == master else f"forked, pid {pid:7d}"


if __name__ == "__main__":
    main()
