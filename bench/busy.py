"""Busy database: how long a phone waits while another program holds a write transaction.

Run: .venv/bin/python bench/busy.py [--hold 10] [--workers 2]
(prints figures; not a test). Starts `python -m companion.serve` on loopback with a
fresh database and the default settings (COMPANION_WRITE_WAIT applies), then holds a
write transaction on its database from this process (as the sqlite3 shell or another
program would) and times: adding a new player (503 with Retry-After), a name that is
already taken (422, needs no write lock), importing a backup (503) and reading the
players page (200). Then, the lock released, the same new player again (303).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report a 303 as it is."""

    def redirect_request(self, *args, **kwargs):
        return None


class Phone:
    """A browser: cookies, the CSRF token of the last page, no redirects followed."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect()
        )
        self.csrf = ""

    def send(self, path: str, data: bytes | None = None, headers: dict | None = None):
        """Status, headers and seconds taken for one request."""
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        started = time.perf_counter()
        try:
            with self.opener.open(request, timeout=120) as response:
                body, status, got = response.read().decode(), response.status, response.headers
        except urllib.error.HTTPError as error:
            body, status, got = error.read().decode(), error.code, error.headers
        found = CSRF.search(body)
        if found:
            self.csrf = found.group(1)
        return status, got, time.perf_counter() - started

    def form(self, path: str, fields: dict):
        """POST a form with this phone's CSRF token."""
        data = urllib.parse.urlencode({**fields, "csrf_token": self.csrf}).encode()
        return self.send(path, data)

    def upload(self, path: str, name: str, content: bytes):
        """POST one file (multipart), as the backup page does."""
        boundary = "----companion-bench"
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


def start_server(database: Path, port: int, workers: int) -> subprocess.Popen:
    """The real server on loopback with its own database; its log goes to a file."""
    env = {**os.environ, "COMPANION_DATABASE_URL": f"sqlite:///{database}"}
    env.setdefault("COMPANION_SECRET_KEY", "bench")
    log = open(database.with_suffix(".log"), "w")  # noqa: SIM115 (the server keeps it)
    command = [sys.executable, "-m", "companion.serve", "--host", "127.0.0.1"]
    server = subprocess.Popen(
        [*command, "--port", str(port), "--workers", str(workers)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    """Start the server, hold the database, time what phones get, print it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hold", type=float, default=10, help="seconds the lock is held")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "busy.sqlite"
        port = free_port()
        server = start_server(database, port, args.workers)
        try:
            phone = Phone(f"http://127.0.0.1:{port}")
            phone.send("/players/")
            assert phone.form("/players/", {"name": "Anna"})[0] == 303
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
    for label, (status, headers, seconds) in rows:
        retry = f", Retry-After {headers['Retry-After']}" if headers.get("Retry-After") else ""
        print(f"  {label:26} {status}{retry} after {seconds * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
