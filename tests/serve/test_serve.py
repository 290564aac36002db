"""`python -m companion.serve`: gunicorn's workers on one socket and one database.

Phones writing at the same moment to different workers: the database's writer lock
(a file lock across processes) and the version check keep exactly one copy. The
workers end with their parent however it dies, are replaced when stuck and reloaded
on SIGHUP; a busy port or a read-only database stops the start in one line.
"""

import gc
import os
import random
import re
import signal
import socket
import subprocess
import threading
import urllib.request

import conftest
import pytest
from driver import add_players, count, play_game, start_match
from phones import (
    PHONES,
    at_once,
    gone,
    joined_phones,
    say_who,
    server_env,
    start_server,
    stop,
    the_background,
    wait_for,
)
from servers import ROOT, SERVE, answers, background, children, free_port
from servers import workers as workers_of
from sqlalchemy import func, select

from companion import create_app, serve
from companion.db import db
from companion.derived.tables import PlayerGameStat, PlayLuck, ReviewCard
from companion.models import PendingCard, Play, Round


@pytest.mark.database  # gunicorn's workers on PostgreSQL too
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
    the_background(server)
    pids = children(server.pid)  # its background process too
    assert len(workers_of(server.pid)) == 2
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=30) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_stop_while_a_worker_still_loads_the_app_is_a_stop():
    """SIGTERM can reach a worker before its app is loaded (a server stopped as it starts):
    the worker stops, with no streams to end; reading the app it has not yet failed its
    boot and the whole server with it (exit 1)."""
    worker = serve.Worker.__new__(serve.Worker)  # as gunicorn has it before load_wsgi
    worker.alive = True
    worker.handle_exit(signal.SIGTERM, None)
    assert worker.alive is False


def test_a_stop_shuts_idle_connections_but_answers_a_request_already_sent():
    """On a stop (or SIGHUP's reload) the connections waiting for a request are shut at
    once; one whose request came just before the stop is answered first (shut, its
    phone's request fails although the server is there: seen in CI during a reload)."""
    worker = serve.Worker.__new__(serve.Worker)
    asked, asking = socket.socketpair()
    idle, idling = socket.socketpair()
    with asked, asking, idle, idling:
        asking.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
        worker.idle = {asked, idle}
        worker.close_idle()
        assert idling.recv(1) == b""  # shut: the phone sees the connection end
        assert asked.recv(64).startswith(b"GET /healthz")  # still there to be answered
        asked.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
        assert asking.recv(64).startswith(b"HTTP/1.1 200")


def test_workers_end_when_their_parent_is_killed_and_the_port_serves_again(tmp_path):
    """kill -9 of the parent leaves no orphan answering; the next start gets the port."""
    server, port = start_server(tmp_path)
    pids = children(server.pid)
    server.kill()
    server.wait()
    wait_for(lambda: all(gone(pid) for pid in pids), seconds=15)
    wait_for(lambda: not answers(port), seconds=5)
    again, _ = start_server(tmp_path, port=port)
    try:
        assert status(port, "/healthz") == 200
    finally:
        stop(again)


def test_a_busy_port_is_one_line_before_anything_else(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*SERVE, "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=server_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert result.stdout == ""  # no address, no QR code
    assert result.stderr.splitlines() == [
        f"Port {port} is already in use (127.0.0.1:{port}): is the companion already "
        "running? Stop it, or choose another port with --port or COMPANION_PORT."
    ]


def test_a_read_only_database_stops_the_start_in_one_line(tmp_path):
    """Simulated at the SQLite layer (mode=ro), which root cannot override."""
    database = tmp_path / "workers.sqlite"
    conftest.make_app(database)
    result = subprocess.run(
        [*SERVE, "--host", "127.0.0.1", "--port", str(free_port())],
        cwd=ROOT,
        env=server_env(
            tmp_path, COMPANION_DATABASE_URL=f"sqlite:///file:{database}?mode=ro&uri=true"
        ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"The database {database} is read-only: make it")


def test_sighup_replaces_the_workers_while_phones_keep_getting_answers(tmp_path):
    server, port = start_server(tmp_path)
    try:
        old = set(workers_of(server.pid))
        codes: list = []
        polling = threading.Event()
        poller = threading.Thread(target=keep_asking, args=(port, codes, polling))
        poller.start()
        server.send_signal(signal.SIGHUP)
        log = tmp_path / "server.log"

        def reloaded() -> bool:
            return all(gone(pid) for pid in old) and len(workers_of(server.pid)) == 2

        wait_for(reloaded, log=log, seconds=60)  # old ones end within graceful_timeout
        polling.set()
        poller.join()
        assert not old & set(workers_of(server.pid))
        assert codes and set(codes) == {200}, (codes, log.read_text())
    finally:
        stop(server)


def keep_asking(port: int, codes: list, done: threading.Event) -> None:
    """Ask /healthz again and again until ``done``; collect the status codes (or what
    failed instead of an answer)."""
    while not done.is_set():
        try:
            codes.append(status(port, "/healthz"))
        except OSError as error:  # urllib's errors, a reset, a timeout
            codes.append(repr(error))


def test_a_stuck_worker_is_replaced(tmp_path):
    server, port = start_server(tmp_path, GUNICORN_CMD_ARGS="--timeout 2")
    try:
        stuck, other = workers_of(server.pid)
        os.kill(stuck, signal.SIGSTOP)  # it no longer tells the master it is alive
        log = tmp_path / "server.log"
        wait_for(lambda: gone(stuck) and len(workers_of(server.pid)) == 2, log=log)
        assert other in workers_of(server.pid)
        assert status(port, "/healthz") == 200
    finally:
        stop(server)


def test_one_worker_serves_in_the_launchers_process_and_pushes_live(tmp_path):
    """A small machine's one worker (gunicorn's gevent worker, without a master process
    of its own): its phones keep their event streams, they do not poll."""
    server, port = start_server(tmp_path, workers=1)
    try:
        assert status(port, "/healthz") == 200
        the_background(server)
        assert workers_of(server.pid) == []  # its background process alone
        with pytest.raises(urllib.error.HTTPError) as no_match:  # 204 where pages poll
            status(port, "/matches/999/events")
        no_match.value.close()
        assert no_match.value.code == 404
        log = (tmp_path / "server.log").read_text()
        assert "1 worker: as --workers asks" in log
    finally:
        stop(server)
    assert server.returncode == 0  # stopped as gunicorn's master stops
    assert "Traceback" not in (tmp_path / "server.log").read_text()


SERVING_IMPORTS = """
import sys
from companion import serve
app = serve.create_app({}, migrations=False)
print(sorted({name.split(".")[0] for name in sys.modules} & {"alembic", "flask_migrate", "mako"}))
"""


def test_the_serving_processes_never_load_alembic(tmp_path):
    """Alembic, Flask-Migrate and Mako take 11 MB of a small machine's server: the
    launcher migrates in a process of its own, and the app it serves has no migrations."""
    env = server_env(tmp_path)
    loaded = subprocess.run(
        [SERVE[0], "-c", SERVING_IMPORTS], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert (loaded.returncode, loaded.stdout.strip()) == (0, "[]"), loaded.stderr
    assert "migrate" in create_app(conftest.testing_config(tmp_path / "cli.sqlite")).extensions


def status(port: int, path: str) -> int:
    """The status code of a GET (any failure to get an answer fails the test)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
        return response.status


def test_a_serving_process_leaves_its_startup_objects_out_of_full_collections():
    """gc.freeze: the objects a worker starts with are not walked by every full
    collection (each paused the worker's requests for about 150 ms)."""
    before = gc.get_freeze_count()
    try:
        serve.freeze_startup_objects()
        frozen = gc.get_freeze_count()
        assert frozen > before and frozen > 10_000  # modules, models, the app
        assert len(gc.get_objects(generation=2)) < 1_000  # the oldest: nearly nothing to walk
    finally:
        gc.unfreeze()


def test_a_worker_takes_every_waiting_connection_not_one_a_round(tmp_path):
    """gunicorn sets ``max_accept`` to 1 with several workers: a flood of connections
    from one address then kept a bystander's in the kernel's queue behind its own
    (issue 42). The server's workers take up to ACCEPT at once, whatever gunicorn sets."""
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        gunicorn = serve.Gunicorn(listener, 2, {"CERT": None, "KEY": None})
        assert gunicorn.cfg.worker_class is serve.Worker
        server = serve.AcceptingServer(listener, handle=lambda *args: None)
        server.max_accept = 1  # what gunicorn's gevent worker sets before it serves
        assert server.max_accept == serve.ACCEPT > 1
    finally:
        listener.close()


@pytest.mark.database  # PostgreSQL's change notifications too
@pytest.mark.parametrize("workers", [2, 1])
def test_a_killed_background_process_comes_back_and_fills_in_a_game_played_after(tmp_path, workers):
    """kill -9 of the background process (issue 55): the server starts it again within
    seconds and says so in its log; a game finished after the kill gets its statistics,
    its luck and its review, and /healthz stays ok. With gunicorn's master (2 workers) and
    with one worker in the launcher's process (a small machine: a thread keeps it)."""
    server, port = start_server(tmp_path, workers=workers)
    log = tmp_path / "server.log"
    try:
        old = the_background(server, log)
        os.kill(old, signal.SIGKILL)
        app = create_app(conftest.testing_config(tmp_path / "workers.sqlite", LUCK_APART=True))
        client = app.test_client()  # its writes leave the derived data to the background
        ids = add_players(client, "Anna", "Ben", "Cleo")
        match_id = start_match(client, ids)
        play_game(client, match_id, ids, random.Random(55))
        wait_for(lambda: background(server.pid) not in ([], [old]), log=log)
        assert f"the background process (pid {old}) was killed by SIGKILL" in log.read_text()
        with app.app_context():
            wait_for(lambda: derived_rows(match_id) == (10 * 3, 3, 1), log=log, seconds=90)
        assert status(port, "/healthz") == 200
    finally:
        stop(server)


def derived_rows(match_id: int) -> tuple[int, int, int]:
    """The match's rows of luck, of its games' statistics, and its reviewed games."""
    db.session.rollback()  # a new snapshot at each ask
    return tuple(
        db.session.scalar(select(func.count(column.distinct())).where(table.match_id == match_id))
        for table, column in (
            (PlayLuck, PlayLuck.id),
            (PlayerGameStat, PlayerGameStat.id),
            (ReviewCard, ReviewCard.game_id),
        )
    )


def test_a_lone_worker_compiles_the_tables_templates_before_its_first_round(app):
    """A server of one worker compiles what a table is served while it plays (its first
    round's push and its first game's end waited for the compiler, issue 59), not the
    household's pages, the history or the backups (10 MB of an idle 512 MB machine)."""
    serve.compile_templates(app, serve.table_templates(app))
    compiled = {name for _loader, name in app.jinja_env.cache}
    table = {"matches/show.html", "matches/live.html", "matches/table.html", "base.html"}
    assert table | {"matches/_game_end.html", "_time.html", "_chart.html"} <= compiled
    assert not {name for name in compiled if name.split("/")[0] in ("household", "backup")}
    used = {"matches/show.html", "matches/live.html", "matches/table.html"}
    for name in used:  # and everything they import or include
        source = app.jinja_env.loader.get_source(app.jinja_env, name)[0]
        for found in re.findall(r'(?:from|include|import|extends) "([^"]+)"', source):
            assert found in compiled, (name, found)


def test_the_workers_serve_the_launchers_app_with_its_templates_compiled(app):
    """Compiled at first use, the templates cost a worker a tenth of a game's CPU, and a
    table's first rounds and a game's end waited for it at a Pi Zero's share (issue 59)."""
    serve.compile_templates(app)
    compiled = {name for _loader, name in app.jinja_env.cache}
    assert compiled == set(app.jinja_env.list_templates()) and len(compiled) > 50
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        settings = {"CERT": None, "KEY": None, "LUCK_APART": True}
        gunicorn = serve.Gunicorn(listener, 2, settings, app=app)
        assert gunicorn.load() is app and app.config["LUCK_APART"] is True
    finally:
        listener.close()
