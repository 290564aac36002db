"""Phones and real servers for the tests that need more than the test client.

A ``Phone`` is a browser's cookies and nothing else (urllib); ``start_server`` runs
``python -m companion.serve`` on loopback (or another address of this machine) and a fresh
database, as ``make run`` does.
"""

import signal
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import conftest
from driver import add_players, start_game, start_match
from servers import CSRF, LOOPBACK, answers, background, environment, free_port, launch
from servers import workers as server_workers

from companion.db import db
from companion.models import Match

PHONES = 20


class Phone:
    """A phone: its own cookies (session with the player link), no redirects followed."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()), NoRedirect()
        )

    def request(self, path: str, data: dict | None = None) -> int:
        """GET or POST (form) ``path``; return the status code."""
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        try:
            with self.opener.open(self.base + path, data=body, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report 303 as it is, so each phone sees whether its own write was stored."""

    def redirect_request(self, *args, **kwargs):
        return None


def at_once(phones, path, data_for) -> list[int]:
    """Let every phone post at the same moment; return their status codes."""
    barrier = threading.Barrier(len(phones))
    codes = [0] * len(phones)

    def post(index):
        barrier.wait()
        codes[index] = phones[index].request(path, data_for(index))

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(phones))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


def joined(app, base: str, count: int, make_phone=Phone, ids=None):
    """Anna, Ben and Cleo's started game, and ``count`` phones that joined it by the player
    link (the server at ``base`` serves ``app``'s database). Pass ``ids`` for another
    match of players already added."""
    client = app.test_client()
    ids = ids or add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    with app.app_context():
        token = db.session.get(Match, match_id).player_token
    phones = [make_phone(base) for _ in range(count)]
    for phone in phones:
        assert phone.request(f"/matches/{match_id}/join/{token}") == 303
    return client, ids, match_id, phones


def say_who(phones, match_id: int, ids, extra=lambda index: {}) -> None:
    """Phone i says it is player ids[i] ("I am Anna"): it then enters only its own card."""
    for index, player_id in enumerate(ids):
        form = {"player": str(player_id), **extra(index)}
        assert phones[index].request(f"/matches/{match_id}/me", form) == 303


class FormPhone(Phone):
    """A phone that also reads pages, for the CSRF token the real server asks for."""

    def page(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()


def start_server(
    tmp_path, workers: int = 2, port: int | None = None, host: str = LOOPBACK, **env
) -> tuple[subprocess.Popen, int]:
    """`python -m companion.serve` on ``host`` (loopback) and a fresh database; (process,
    port)."""
    port = port or free_port(host)
    with (tmp_path / "server.log").open("a") as log:  # the server writes its own copy
        server = launch(port, workers, server_env(tmp_path, **env), log, host)
    least = workers if workers > 1 else 0  # one worker serves in the server's own process
    # Its background process too, once it has lowered its priority: until then it is
    # counted among the workers (a test stopped it in place of a worker).
    wait_for(
        lambda: (
            len(background(server.pid)) == 1
            and len(server_workers(server.pid)) >= least
            and answers(port, host)
        ),
        lambda: server.poll() is None,
        tmp_path / "server.log",
    )
    return server, port


def the_background(server: subprocess.Popen, log: Path | None = None) -> int:
    """The server's background process, once it is there: it is started a moment after
    the server answers, and sets its own lowest priority (by which it is told from the
    workers) a moment after that."""
    wait_for(lambda: len(background(server.pid)) == 1, lambda: server.poll() is None, log)
    [pid] = background(server.pid)
    return pid


def server_env(tmp_path, **env) -> dict:
    """The environment of a server on ``tmp_path``'s database."""
    database_url = conftest.database_url(tmp_path / "workers.sqlite")
    return environment(database_url, "test-secret-key", env)


def wait_for(condition, alive=lambda: True, log: Path | None = None, seconds: float = 30) -> None:
    """Wait until ``condition()`` holds, failing (with the log) if ``alive()`` stops."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert alive() and time.monotonic() < deadline, log.read_text() if log else ""
        time.sleep(0.1)


def stop(server: subprocess.Popen) -> None:
    """Stop a server that is still running, and wait for it."""
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def gone(pid: int) -> bool:
    """True once no process has this pid (a zombie child of ours counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or the read
        return True


def joined_phones(app, base: str, count: int, ids=None):
    """The started game's phones, each with the CSRF token the real server asks for."""
    _, ids, match_id, phones = joined(app, base, count, FormPhone, ids)
    for phone in phones:
        phone.csrf = CSRF.search(phone.page(f"/matches/{match_id}")).group(1)
    return ids, match_id, phones
