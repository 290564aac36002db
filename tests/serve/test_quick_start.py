"""The README's first command as a newcomer meets it: `make run` in a fresh clone.

The clone is this checkout as `git clone` would hand it over (the tracked files and the
new ones, nothing ignored: no .venv, no instance/, no vendor/), run with a PATH that
leaves out the tests' own .venv. So the `.venv` there is made by `make run`'s own
install alone, from requirements/run.txt, as on a household's machine; the tests'
packages (which pull in more) cannot hide a missing one. The server must then answer on
a free loopback port, open a match's event stream on gunicorn's gevent worker, and stop
cleanly. `make service`'s build step gets the same check, served by the unit's own
ExecStart. Each check fails, never skips, when that breaks.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode

import pytest
from packaging.requirements import Requirement
from phones import gone, wait_for
from servers import CSRF, ROOT, answers, free_port

pytestmark = pytest.mark.slow

# A fresh machine downloads every package first; a warm pip cache takes about 20 s.
FIRST_START = 300  # seconds
LOCKS = ROOT / "requirements"


def fresh_clone(into: Path) -> Path:
    """This checkout's files as a clone holds them, copied into ``into``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # not a file deleted but not yet committed
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def newcomer_env(port: int) -> dict[str, str]:
    """A newcomer's shell: no test .venv on PATH, no COMPANION_* settings of the tests',
    the server on loopback at ``port`` with two gevent workers."""
    own_bin = str(Path(sys.prefix) / "bin")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("COMPANION_", "GUNICORN_")) and key not in {"VIRTUAL_ENV"}
    }
    env["PATH"] = os.pathsep.join(
        part for part in env.get("PATH", "").split(os.pathsep) if part != own_bin
    )
    env.update(COMPANION_HOST="127.0.0.1", COMPANION_PORT=str(port), COMPANION_WORKERS="2")
    return env


class Browser:
    """A phone's cookies over urllib, following redirects as a browser does."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))

    def get(self, path: str) -> tuple[int, str]:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.status, response.read().decode()

    def post(self, path: str, form: dict, token_from: str) -> tuple[int, str, str]:
        """Post ``form`` with the CSRF token of the page at ``token_from``; (status, final
        URL, page)."""
        _, page = self.get(token_from)
        data = urlencode({**form, "csrf_token": CSRF.search(page).group(1)}).encode()
        with self.opener.open(self.base + path, data=data, timeout=30) as response:
            return response.status, response.url, response.read().decode()


def a_match_through_the_forms(browser: Browser) -> int:
    """Two players added on the players' page, seated on the new match's page; the id."""
    for name in ("Anna", "Ben"):
        assert browser.post("/players/", {"name": name}, "/players/")[0] == 200
    _, page = browser.get("/matches/new")
    ids = re.findall(r'name="tap" value="(\d+)"', page)
    assert len(ids) == 2, page
    form = {"seat_1": ids[0], "seat_2": ids[1], "end_kind": "more_than", "end_value": "66"}
    status, url, _ = browser.post("/matches/", {**form, "deck": "standard"}, "/matches/new")
    assert status == 200
    return int(re.search(r"/matches/(\d+)", url).group(1))


def check_it_serves(base: str, log: Path) -> None:
    """What a newcomer's first minutes need: the pages answer, a match made through the
    forms opens its event stream (only gunicorn's gevent worker holds one open)."""
    browser = Browser(base)
    status, body = browser.get("/healthz")
    assert status == 200, body
    status, home = browser.get("/")
    assert status == 200 and "6 nimmt!" in home
    match_id = a_match_through_the_forms(browser)
    with browser.opener.open(f"{base}/matches/{match_id}/events", timeout=30) as stream:
        assert stream.status == 200, log.read_text()
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert stream.readline()  # the stream's first line arrives at once
    assert "Traceback" not in log.read_text(), log.read_text()


def stops_cleanly(process: subprocess.Popen, port: int, log: Path) -> None:
    """Ctrl-C, as a newcomer stops it: every process of the group ends, the port is free,
    and nothing in the log says it ended badly."""
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=30)
    wait_for(lambda: not answers(port), log=log, seconds=15)
    leftovers = [pid for pid in group_members(process.pid) if not gone(pid)]
    assert not leftovers, log.read_text()
    assert "Traceback" not in log.read_text(), log.read_text()


def group_members(group: int) -> list[int]:
    """The processes still in process group ``group``."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group:
            members.append(int(stat.parent.name))
    return members


def serving(command: list[str], clone: Path, port: int, log: Path) -> subprocess.Popen:
    """``command`` started in ``clone`` as a newcomer's shell would; once /healthz answers."""
    with log.open("w") as out:
        process = subprocess.Popen(
            command,
            cwd=clone,
            env=newcomer_env(port),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group, as a terminal's job is
        )
    try:
        wait_for(lambda: answers(port), lambda: process.poll() is None, log, FIRST_START)
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    return process


def installed(venv_python: Path) -> dict[str, str]:
    """Every distribution in a venv and its version, by normalised name."""
    script = (
        "import importlib.metadata as m, json, re;"
        "print(json.dumps({re.sub(r'[-_.]+', '-', d.metadata['Name']).lower(): d.version"
        " for d in m.distributions()}))"
    )
    done = subprocess.run([venv_python, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def locked(lock: Path, python: Path) -> dict[str, str]:
    """The versions ``lock`` pins for the venv of ``python`` (its markers evaluated there)."""
    script = "import platform; print(platform.python_version())"
    version = subprocess.check_output([python, "-c", script], text=True).strip()
    environment = {"python_version": version.rsplit(".", 1)[0], "python_full_version": version}
    pins = {}
    for line in lock.read_text().splitlines():
        if line and not line.startswith((" ", "#", "-")):
            requirement = Requirement(line.rstrip(" \\"))
            if requirement.marker is None or requirement.marker.evaluate(environment):
                pins[requirement.name.lower()] = str(requirement.specifier).removeprefix("==")
    return pins


def test_make_run_serves_from_a_fresh_clone_and_stops_cleanly(tmp_path):
    clone = fresh_clone(tmp_path / "clone")
    port = free_port()
    log = tmp_path / "make-run.log"
    make_run = serving(["make", "run"], clone, port, log)
    try:
        text = log.read_text()
        # The address it listens on, and that other phones cannot reach it there.
        assert f"Open http://127.0.0.1:{port}/ on this computer" in text, text
        assert "other phones cannot reach it" in text
        check_it_serves(f"http://127.0.0.1:{port}", log)
    finally:
        stops_cleanly(make_run, port, log)
    venv_python = clone / ".venv" / "bin" / "python"
    fresh, tests = installed(venv_python), installed(Path(sys.executable))
    # What make run installed is the lock, no more and no less (and the companion).
    assert {name: v for name, v in fresh.items() if name not in {"companion", "pip"}} == locked(
        LOCKS / "run.txt", venv_python
    )
    # The tests ran with the same versions of every package the two share.
    shared = {name for name in fresh.keys() & tests.keys() if name != "pip"}
    assert {n: fresh[n] for n in shared} == {n: tests[n] for n in shared}
    assert shared >= {"flask", "gunicorn", "gevent", "sqlalchemy", "packaging"}


def test_make_service_builds_what_its_unit_serves_with(tmp_path):
    """`make service` without installing the unit: its build step, then the unit's
    ExecStart, in its WorkingDirectory."""
    clone = fresh_clone(tmp_path / "clone")
    build = subprocess.run(
        ["make", "service-build"],
        cwd=clone,
        env=newcomer_env(0),
        capture_output=True,
        text=True,
        timeout=FIRST_START,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    python = clone / ".venv" / "bin" / "python"
    unit = subprocess.run(
        [python, "deploy/service.py", "unit", "--user", "nobody", "--python", python],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    start = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
    assert start == [str(python), "-m", "companion.serve"]
    assert f"WorkingDirectory={clone}" in unit
    port = free_port()
    log = tmp_path / "service.log"
    server = serving(start, clone, port, log)
    try:
        check_it_serves(f"http://127.0.0.1:{port}", log)
    finally:
        stops_cleanly(server, port, log)
