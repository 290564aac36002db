"""Busy database: how long a phone waits while another program holds a write transaction.

Run: .venv/bin/python -m bench.busy [--hold 10] [--workers 2]
(prints figures; not a test). Starts `python -m companion.serve` on loopback with a
fresh database and the default settings (COMPANION_WRITE_WAIT applies), then holds a
write transaction on its database from this process (as the sqlite3 shell or another
program would) and times: adding a new player (503 with Retry-After), a name that is
already taken (422, needs no write lock), importing a backup (503) and reading the
players page (200). Then, the lock released, the same new player again (303).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from bench.serving import Browser, free_port, start_server


def main() -> None:
    """Start the server, hold the database, time what phones get, print it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hold", type=float, default=10, help="seconds the lock is held")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "busy.sqlite"
        port = free_port()
        server = start_server(f"sqlite:///{database}", port, args.workers)
        try:
            phone = Browser(f"http://127.0.0.1:{port}")
            phone.send("/players/")
            assert phone.form("/players/", {"name": "Anna"}).status == 303
            backup = phone.opener.open(phone.base + "/backup/export.json").read()
            phone.send("/players/")
            other = sqlite3.connect(database, isolation_level=None)
            other.execute("BEGIN IMMEDIATE")
            held = time.perf_counter()
            rows = [
                ("new player", phone.form("/players/", {"name": "Zoe"})),
                ("name already taken", phone.form("/players/", {"name": "anna"})),
                ("players page", phone.send("/players/")),
            ]
            phone.send("/backup")
            rows.append(("import a backup", phone.upload("/backup/import", "b.json", backup)))
            time.sleep(max(0.0, args.hold - (time.perf_counter() - held)))
            other.execute("ROLLBACK")
            other.close()
            phone.send("/players/")
            rows.append(("new player, lock released", phone.form("/players/", {"name": "Zoe"})))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"another program holds a write transaction for {args.hold:g} s; the phone gets:")
    for label, (status, headers, seconds, _) in rows:
        retry = f", Retry-After {headers['Retry-After']}" if headers.get("Retry-After") else ""
        print(f"  {label:26} {status}{retry} after {seconds * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
