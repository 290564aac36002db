"""`make service`: the systemd unit that starts the server at boot and brings it back.

The unit is made from deploy/companion.service.in for this checkout (deploy/service.py).
systemd does not run in the tests: the slow test runs the unit's own ExecStart, in its
WorkingDirectory with its settings, under a supervisor of the test's that applies the
unit's Restart= and RestartSec=, kills gunicorn's master with SIGKILL and times the way
back to /healthz. Its workers live on for a moment, holding the port, until they see
their master gone: systemd would kill them at once (KillMode=mixed), the test's
supervisor leaves them be, the harder case. Phones' kept-alive connections keep them
longest (gunicorn lets those linger 2 s).
"""

import getpass
import http.client
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from functools import partial

import pytest
from phones import gone, server_env, stop, wait_for
from servers import ROOT, free_port
from servers import workers as server_workers

from companion.store import no_server_on

SERVICE = [sys.executable, str(ROOT / "deploy" / "service.py")]
TEMPLATE = ROOT / "deploy" / "companion.service.in"
BACK_WITHIN = 10  # seconds from the kill to serving again
KILLS = 3


def generated(*args: str, **environ: str) -> str:
    """What deploy/service.py prints for ``args`` (unit or settings), with ``environ``."""
    done = subprocess.run(
        [*SERVICE, *args],
        env={**os.environ, **environ},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def sections(unit: str) -> dict[str, dict[str, list[str]]]:
    """The unit's settings: section, key, every value given (systemd's ini dialect)."""
    parsed: dict[str, dict[str, list[str]]] = {}
    section: dict[str, list[str]] = {}
    for line in unit.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = parsed.setdefault(line.strip("[]"), {})
        else:
            key, value = line.split("=", 1)
            section.setdefault(key.strip(), []).append(value.strip())
    return parsed


def the_unit(python: str = sys.executable) -> dict[str, dict[str, list[str]]]:
    return sections(generated("unit", "--user", getpass.getuser(), "--python", python))


def seconds(value: str) -> float:
    """A systemd time span such as 2, 2s or 500ms, in seconds."""
    if value.endswith("ms"):
        return float(value[:-2]) / 1000
    return float(value.removesuffix("s"))


def read_by_shell(settings: str, tmp_path) -> dict[str, str]:
    """The settings file as a shell reads it (systemd reads double quotes the same way)."""
    path = tmp_path / "settings"
    path.write_text(settings)
    printed = subprocess.run(
        ["sh", "-c", 'set -a; . "$1"; env -0', "sh", str(path)],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pairs = (entry.split("=", 1) for entry in printed.split("\0") if "=" in entry)
    return {key: value for key, value in pairs if key.startswith(("COMPANION_", "GUNICORN_"))}


def test_the_template_names_no_machine():
    template = TEMPLATE.read_text()
    for machine_specific in (str(ROOT), "/home/", "/root", "/work/", ".venv"):
        assert machine_specific not in template
    unit = generated("unit", "--user", getpass.getuser())
    assert "@" not in unit.replace(str(ROOT), "").replace(sys.executable, "")


def test_the_unit_starts_at_boot_as_the_user_in_the_checkout():
    unit = the_unit()
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]
    service = unit["Service"]
    assert service["User"] == [getpass.getuser()]
    assert service["WorkingDirectory"] == [str(ROOT)]
    assert shlex.split(service["ExecStart"][0]) == [sys.executable, "-m", "companion.serve"]
    assert service["EnvironmentFile"] == ["-/etc/default/companion"]


def test_the_unit_comes_back_within_seconds_and_never_gives_up():
    unit = the_unit()
    assert unit["Service"]["Restart"] in (["always"], ["on-failure"])
    assert seconds(unit["Service"]["RestartSec"][0]) <= 5
    assert unit["Unit"]["StartLimitIntervalSec"] == ["0"]


def test_the_server_runs_as_root_only_when_told():
    done = subprocess.run(
        [*SERVICE, "unit"],
        env={**os.environ, "SUDO_USER": "root"},
        capture_output=True,
        text=True,
    )
    if os.geteuid() == 0:
        assert done.returncode != 0 and "should not run as root" in done.stderr
    else:  # SUDO_USER only counts under sudo: the unit is the invoking user's
        assert sections(done.stdout)["Service"]["User"] == [getpass.getuser()]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_reads_the_unit_without_a_warning(tmp_path):
    # A venv's path may hold spaces and a % (a specifier to systemd): quoted and escaped.
    odd = tmp_path / "my 100% checkout"
    odd.mkdir()
    (odd / "python").symlink_to(sys.executable)
    for python in (sys.executable, str(odd / "python")):
        unit_file = tmp_path / "companion.service"
        unit_file.write_text(generated("unit", "--user", getpass.getuser(), "--python", python))
        verified = subprocess.run(
            ["systemd-analyze", "verify", "--man=no", str(unit_file)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert verified.returncode == 0, verified.stderr
        assert verified.stderr == ""


def test_the_settings_of_make_run_go_with_it(tmp_path):
    environ = {
        "COMPANION_PORT": "8123",
        "COMPANION_DATABASE_URL": 'postgresql+psycopg://club:pa$$ "w`d\\@db/club',
        "GUNICORN_CMD_ARGS": "--timeout 60",
    }
    kept = {key: value for key, value in os.environ.items() if key.startswith("COMPANION_")}
    settings = generated("settings", **environ, NOT_OURS="x")
    assert "NOT_OURS" not in settings
    assert read_by_shell(settings, tmp_path) == {**kept, **environ}


class Supervisor:
    """systemd's part, in the test only: the unit's ExecStart in its WorkingDirectory with
    its settings, started again RestartSec after it ends, as its Restart= says."""

    def __init__(self, unit: dict, environ: dict[str, str], log):
        service = unit["Service"]
        self.command = shlex.split(service["ExecStart"][0])
        self.folder = service["WorkingDirectory"][0]
        self.restart = service["Restart"][0]
        self.pause = seconds(service["RestartSec"][0])
        extra = dict(pair.split("=", 1) for pair in service.get("Environment", []))
        self.environ = {**environ, **extra}
        self.log = log
        self.process: subprocess.Popen | None = None
        self.started: list[float] = []  # time.monotonic() of each start
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.supervise, daemon=True)
        self.thread.start()

    def supervise(self) -> None:
        """Start the server, and start it again whenever it ends, until stopped."""
        while True:
            with self.lock, self.log.open("a") as log:
                if self.stopping.is_set():
                    return
                self.process = subprocess.Popen(
                    self.command,
                    cwd=self.folder,
                    env=self.environ,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
                self.started.append(time.monotonic())
            code = self.process.wait()
            if self.restart == "on-failure" and code == 0:
                return
            self.stopping.wait(self.pause)

    def stop(self) -> None:
        """systemctl stop: no more restarts, SIGTERM to the server."""
        with self.lock:
            self.stopping.set()
        if self.process is not None:
            stop(self.process)
        self.thread.join(timeout=30)


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def polling_phones(port: int, count: int = 4) -> list[http.client.HTTPConnection]:
    """Connections that asked once and are kept alive for the next poll, as phones' are."""
    phones = []
    for _ in range(count):
        phone = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        phone.request("GET", "/healthz")
        assert phone.getresponse().read()
        phones.append(phone)
    return phones


def all_gone(pids: list[int]) -> bool:
    return all(gone(pid) for pid in pids)


def back(supervisor: Supervisor, master: int, workers: list[int], port: int) -> bool:
    """A new master serves with its own workers, and none of the killed one's are left
    (orphaned, they may answer for a moment)."""
    new = supervisor.process.pid
    try:
        if new == master or not all_gone(workers) or len(server_workers(new)) != 2:
            return False
    except FileNotFoundError:  # the new one ended already (a busy port): the next comes
        return False
    return healthy(port)


def serving(supervisor: Supervisor, port: int) -> bool:
    """The server answers, with both its workers."""
    process = supervisor.process
    return process is not None and len(server_workers(process.pid)) == 2 and healthy(port)


@pytest.mark.slow
def test_a_killed_server_is_back_and_serving_within_ten_seconds(tmp_path):
    port = free_port()
    environ = {key: value for key, value in os.environ.items() if not key.startswith("COMPANION_")}
    settings = generated(
        "settings",
        **{key: value for key, value in server_env(tmp_path).items() if "COMPANION_" in key},
        COMPANION_HOST="127.0.0.1",
        COMPANION_PORT=str(port),
        COMPANION_WORKERS="2",
    )
    environ.update(read_by_shell(settings, tmp_path))
    log = tmp_path / "server.log"
    supervisor = Supervisor(the_unit(), environ, log)
    database = tmp_path / "workers.sqlite"
    phones = []
    try:
        # Both workers: the first may answer before gunicorn forked the second.
        wait_for(partial(serving, supervisor, port), log=log, seconds=60)
        times = []
        for _ in range(KILLS):
            master = supervisor.process.pid
            workers = server_workers(master)
            assert len(workers) == 2
            phones = polling_phones(port)  # their kept-alive connections hold the workers
            os.kill(master, signal.SIGKILL)
            killed = time.monotonic()
            wait_for(partial(all_gone, workers), log=log, seconds=BACK_WITHIN)
            orphaned = time.monotonic() - killed
            wait_for(partial(back, supervisor, master, workers, port), log=log, seconds=BACK_WITHIN)
            for phone in phones:
                phone.close()
            times.append((time.monotonic() - killed, supervisor.started[-1] - killed, orphaned))
            with no_server_on(database) as stopped:
                assert not stopped  # the new server holds it: `flask restore` would wait
        busy = log.read_text().count("already in use")
        print("\nkill -9 of the master to serving again (to the new start; its workers gone):")
        print(
            ", ".join(f"{back:.1f} s ({start:.1f} s; {left:.1f} s)" for back, start, left in times)
        )
        print(f"starts: {len(supervisor.started)}, of which refused a busy port: {busy}")
        assert len(supervisor.started) == KILLS + 1 + busy
    finally:
        for phone in phones:  # closed here too when the test failed (else collected later,
            phone.close()  # in another test, which then fails on the unclosed socket)
        supervisor.stop()


def test_make_service_says_how_many_workers_the_server_chose_and_why():
    """As `make run` says it (issue 59), with the settings the service gets."""
    assert generated("workers", COMPANION_WORKERS="3") == "3 workers: as COMPANION_WORKERS asks\n"
    chosen = generated("workers").strip()
    assert chosen.endswith(("one per core", "one core", "at most 4", "MB of memory")), chosen
