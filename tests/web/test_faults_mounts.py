"""A real read-only instance folder and a real full disk, against the real server.

Root ignores file permissions, so as root (CI) the folder is made read-only with a
read-only bind mount, and the full disk is a tiny tmpfs; both need CAP_SYS_ADMIN. A
user who is not root gets the read-only folder from permissions instead, and skips
the full disk. The SQLite-layer simulations of both run everywhere (test_faults.py).
"""

import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import conftest
import pytest
from driver import add_players
from phones import joined_phones, start_server, stop
from servers import ROOT, SERVE, free_port

from companion import create_app
from companion.db import db
from companion.models import PendingCard, Play, Player, Round

pytestmark = pytest.mark.slow


def mount(*args: str) -> None:
    """Run mount(8); skip the test where this user may not mount."""
    result = subprocess.run(["mount", *args], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount here ({result.stderr.strip()})")


def unmount(folder: Path) -> None:
    """Undo a mount, even while a process still has files open in it (lazy)."""
    subprocess.run(["umount", "-l", str(folder)], check=True)


@contextlib.contextmanager
def read_only(folder: Path):
    """Make ``folder`` read-only for the server, the way root cannot override."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in [folder, *folder.iterdir()]}
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    read_only_mount(folder)
    try:
        yield
    finally:
        unmount(folder)


def read_only_mount(folder: Path, tries: int = 20) -> None:
    """Mount ``folder`` over itself, read-only: a bind mount, then made read-only.

    The kernel refuses the second step (EBUSY) while a file is open for writing through
    the new mount: a server that opens the database in between (a new connection of its
    background process, say) holds it. A new bind mount is then tried, which no file
    is open through yet."""
    for _ in range(tries):
        mount("--bind", str(folder), str(folder))
        made = subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True, text=True
        )
        if made.returncode == 0:
            return
        unmount(folder)
        assert "busy" in made.stderr, made.stderr
    raise AssertionError(f"{folder} stayed busy through {tries} read-only mounts")


def instance_env(instance: Path) -> dict:
    """Environment of a server whose database and secret key live in ``instance``."""
    return {
        **os.environ,
        "COMPANION_DATABASE_URL": f"sqlite:///{instance / 'companion.sqlite'}",
        "COMPANION_SECRET_KEY_FILE": str(instance / "secret_key"),
        "COMPANION_SECRET_KEY": "",
    }


def run(command: list, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("stopped", ["cleanly", "with the database open"])
def test_a_read_only_instance_folder_stops_the_start_and_commands_in_one_line(tmp_path, stopped):
    """Whether SQLite's -wal and -shm files are still there (a program holds it open) or
    not (the last one closed it): SQLite opens the file read-only, or cannot open it."""
    instance = tmp_path / "instance"
    env = instance_env(instance)
    env.pop("COMPANION_SECRET_KEY")
    app = conftest.make_app(instance / "companion.sqlite")
    with app.app_context():
        if stopped == "cleanly":
            db.engine.dispose()
        else:
            db.session.execute(db.select(Player)).all()
    assert (instance / "companion.sqlite-shm").exists() == (stopped != "cleanly")
    (instance / "secret_key").write_text("a key\n")
    with read_only(instance):
        served = run([*SERVE, "--host", "127.0.0.1", "--port", str(free_port())], env)
        command = run([sys.executable, "-m", "flask", "--app", "companion", "rebuild"], env)
    assert served.returncode == 1 and served.stdout == ""
    [line] = served.stderr.splitlines()
    assert str(instance / "companion.sqlite") in line and "writable" in line
    assert command.returncode == 1
    [line] = command.stderr.splitlines()
    assert line.startswith("Error: ") and str(instance) in line


def test_an_empty_read_only_instance_folder_says_where_the_key_goes(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    env = instance_env(instance)
    env.pop("COMPANION_SECRET_KEY")
    with read_only(instance):
        served = run([*SERVE, "--host", "127.0.0.1", "--port", str(free_port())], env)
    assert served.returncode == 1 and served.stdout == ""
    [line] = served.stderr.splitlines()
    assert f"Cannot use the secret key file {instance / 'secret_key'}" in line
    assert "COMPANION_SECRET_KEY" in line


def serve_a_table(tmp_path, instance: Path):
    """The real server on ``instance``; a started game and one phone with its player link.

    Returns the server, an app on the same database, the phone, the match's path and
    the form of a whole first round.
    """
    database = instance / "companion.sqlite"
    server, port = start_server(
        tmp_path, COMPANION_DATABASE_URL=f"sqlite:///{database}", COMPANION_SECRET_KEY="k"
    )
    app = create_app(conftest.testing_config(database, SECRET_KEY="k"))
    ids, match_id, [phone] = joined_phones(app, f"http://127.0.0.1:{port}", 1)
    form = {
        **{f"card-{pid}": str(card) for pid, card in zip(ids, [50, 51, 52], strict=True)},
        "game": "1",
        "round": "1",
        "csrf_token": phone.csrf,
    }
    return server, app, phone, f"/matches/{match_id}", form


def stored(app) -> tuple[int, int, int]:
    """Rounds, plays and hidden cards in the database."""
    with app.app_context():
        return tuple(
            db.session.scalar(db.select(db.func.count()).select_from(model))
            for model in (Round, Play, PendingCard)
        )


def test_an_instance_folder_turning_read_only_while_serving_answers_503(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    server, app, phone, match, form = serve_a_table(tmp_path, instance)
    try:
        with read_only(instance):
            assert phone.request(match + "/rounds", form) == 503
            assert phone.request(match) in (200, 503)  # never a 500
        assert stored(app) == (0, 0, 0)
        assert phone.request(match + "/rounds", form) == 303  # sent again once writable
        assert stored(app) == (1, 3, 0)
    finally:
        stop(server)
    assert "answered 503 (read-only)" in (tmp_path / "server.log").read_text()


def fill(folder: Path) -> Path:
    """Fill the file system holding ``folder`` to the last byte; return the filler."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as file, contextlib.suppress(OSError):
        while file.write(b"\0" * 4096):  # unbuffered: nothing left to write on close
            pass
    return filler


def test_a_full_disk_during_a_write_answers_503_saves_nothing_and_serves_reads(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(instance))
    try:
        server, app, phone, match, form = serve_a_table(tmp_path, instance)
        try:
            with sqlite3.connect(instance / "companion.sqlite") as raw:
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the next write grows the log
            filler = fill(instance)
            assert phone.request(match + "/rounds", form) == 503
            assert phone.request(match) == 200
            assert phone.request("/players/") == 200
            filler.unlink()
            assert stored(app) == (0, 0, 0)
            assert phone.request(match + "/rounds", form) == 303  # sent again with room
            assert stored(app) == (1, 3, 0)
        finally:
            stop(server)
    finally:
        unmount(instance)
    assert "answered 503 (full)" in (tmp_path / "server.log").read_text()


@pytest.mark.sqlite_only("SQLite opens a read-only file for good")
def test_a_connection_opened_while_read_only_is_replaced_once_writable(tmp_path, client, app):
    """SQLite opens the file read-only for good: the pool must not keep that connection."""
    add_players(client, "Anna", "Ben", "Cleo")
    database = Path(app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///"))
    with app.app_context():
        db.engine.dispose()
    # Another process keeps the write-ahead log open, as a server's other workers do.
    with contextlib.closing(sqlite3.connect(database)) as other:
        other.execute("SELECT count(*) FROM player").fetchone()
        with read_only(database.parent):
            assert client.get("/players/").status_code == 200  # a connection, read-only
            assert client.post("/players/", data={"name": "Zoe"}).status_code == 503
    assert client.post("/players/", data={"name": "Zoe"}).status_code == 303
    assert stored_names(app) == ["Anna", "Ben", "Cleo", "Zoe"]


def stored_names(app) -> list[str]:
    with app.app_context():
        return sorted(db.session.scalars(db.select(Player.name)))
