"""`python -m companion.serve` with two worker processes: one socket, one database.

Phones writing at the same moment to different workers: the database's writer lock
(a file lock across processes) and the version check keep exactly one copy.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import conftest
import pytest
from test_concurrency import PHONES, Phone, at_once, joined, say_who

from companion import create_app
from companion.db import db
from companion.models import PendingCard, Play, Round

ROOT = Path(__file__).resolve().parent.parent
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


class FormPhone(Phone):
    """A phone that also reads pages, for the CSRF token the real server asks for."""

    def page(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()


@pytest.fixture
def workers(tmp_path):
    """The real server with 2 workers on a fresh database; yields its pid, base URL, app."""
    database = tmp_path / "workers.sqlite"
    port = free_port()
    env = {
        **os.environ,
        "COMPANION_DATABASE_URL": f"sqlite:///{database}",
        "COMPANION_SECRET_KEY": "test-secret-key",
    }
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "companion.serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "2",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while len(children(server.pid)) < 2 or not answers(port):
        assert server.poll() is None and time.monotonic() < deadline, (
            tmp_path / "server.log"
        ).read_text()
        time.sleep(0.1)
    # The server migrated the database; this app writes the match into the same file.
    app = create_app(conftest.testing_config(database, SECRET_KEY="test-secret-key"))
    yield server, f"http://127.0.0.1:{port}", app
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)
    log.close()


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def joined_phones(app, base: str, count: int):
    """The started game's phones, each with the CSRF token the real server asks for."""
    _, ids, match_id, phones = joined(app, base, count, FormPhone)
    for phone in phones:
        phone.csrf = CSRF.search(phone.page(f"/matches/{match_id}")).group(1)
    return ids, match_id, phones


def count(app, model) -> int:
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(model))


def test_two_workers_serve_one_socket_and_store_each_entry_once(workers):
    _, base, app = workers
    (anna, ben, cleo), match_id, phones = joined_phones(app, base, PHONES)
    same = {
        f"card-{anna}": "41",
        f"card-{ben}": "42",
        f"card-{cleo}": "43",
        "game": "1",
        "round": "1",
    }
    codes = at_once(
        phones, f"/matches/{match_id}/rounds", lambda i: {**same, "csrf_token": phones[i].csrf}
    )
    assert codes.count(303) == 1 and codes.count(422) == PHONES - 1
    assert count(app, Round) == 1 and count(app, Play) == 3
    # Then each player sends their own card at the same moment: all three get in.
    say_who(phones, match_id, [anna, ben, cleo], lambda i: {"csrf_token": phones[i].csrf})
    own = [
        {f"card-{pid}": str(card), "game": "1", "round": "2"}
        for pid, card in [(anna, 60), (ben, 61), (cleo, 62)]
    ]
    codes = at_once(
        phones[:3],
        f"/matches/{match_id}/rounds",
        lambda i: {**own[i], "csrf_token": phones[i].csrf},
    )
    assert codes == [303, 303, 303]
    assert count(app, Round) == 2 and count(app, Play) == 6 and count(app, PendingCard) == 0


def test_the_server_stops_its_workers_on_sigterm(workers):
    server, _, _ = workers
    pids = children(server.pid)
    assert len(pids) == 2
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=10) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
