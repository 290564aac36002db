"""The real server on loopback, as `make run` starts it: for the tests that need one
(``phones.start_server``) and for the benchmarks (``bench/serving.py``).

Only the standard library, and no other module of tests/: the benchmarks import it as
``tests.servers``, outside pytest.
"""

import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SERVE = [sys.executable, "-m", "companion.serve"]
LOOPBACK = "127.0.0.1"


def free_port(host: str = LOOPBACK) -> int:
    """A free TCP port on ``host`` (loopback)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def environment(database_url: str, secret_key: str, settings: dict | None = None) -> dict:
    """The environment a server (or a migration) runs in: its database, a fixed secret
    key, and any other ``settings`` (COMPANION_... variables)."""
    return {
        **os.environ,
        "COMPANION_DATABASE_URL": database_url,
        "COMPANION_SECRET_KEY": secret_key,
        **(settings or {}),
    }


def launch(
    port: int, workers: int | None, env: dict, log: IO, host: str = LOOPBACK
) -> subprocess.Popen:
    """Start `python -m companion.serve` on ``host``:``port`` with ``workers`` (None: its
    own default), in ``env``; its output goes to the open file ``log`` (a pipe nobody
    reads fills up and stalls the server)."""
    command = [*SERVE, "--host", host, "--port", str(port)]
    if workers is not None:
        command += ["--workers", str(workers)]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def answers(port: int, host: str = LOOPBACK) -> bool:
    """True once something accepts connections on ``host``:``port``."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def workers(pid: int) -> list[int]:
    """A server's request workers: its children but its background process, the one at
    the lowest CPU priority (``companion.background``)."""
    return [child for child in children(pid) if niceness(child) != 19]


def background(pid: int) -> list[int]:
    """A server's background process (one at most): its child at the lowest priority."""
    return [child for child in children(pid) if niceness(child) == 19]


def niceness(pid: int) -> int | None:
    """A process's nice value (None once it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (none once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]
