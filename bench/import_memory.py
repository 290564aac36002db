"""Benchmark: the peak memory of importing a backup as large as the upload limit (64 MB).

Run: .venv/bin/python -m bench.import_memory [--mib 64] [--refused] [--postgresql]
(prints figures; not a test). Target (issue 20): the import of a 64 MB file peaks under
400 MB resident.

The file is written here, match by match, so this process stays small: a child process
counts the peak of the process it was forked from as its own (Linux keeps it across
``exec``). It holds score-only matches, the most matches (and objects) a megabyte can
hold; ``--refused`` adds the first match again at the end, so the import checks the
whole file and then refuses it. The import is the command line's, ``flask --app
companion import FILE``, into a fresh database (SQLite, or ``--postgresql``), in a child
process; its peak resident size comes from the kernel when it ends (``wait4``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from bench.serving import ROOT, machine_cpu_seconds, migrate, postgresql_cluster, server_env

NAMES = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ida", "Jo"]
START = datetime(2001, 1, 1, 18, 0)


def stamp(moment: datetime) -> str:
    """A time as the export writes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def score_only_match(rng: random.Random, number: int) -> dict:
    """A finished one-game match of typed scores, started ``number`` minutes after START."""
    when = START + timedelta(minutes=number)
    seats = rng.sample(NAMES, rng.randint(3, 5))
    game = {
        "mode": "scores",
        "created_at": stamp(when),
        "scores": [rng.randint(0, 30) for _ in seats],
    }
    end = {"kind": "games", "value": 1}
    return {"created_at": stamp(when), "end": end, "pro": False, "seats": seats, "games": [game]}


def write_file(path: Path, mib: float, refused: bool) -> int:
    """A backup of just under ``mib`` MiB, written match by match; its number of matches."""
    rng, limit, count = random.Random(20), mib * 1024 * 1024 - 1024, 0
    players = [{"name": name, "archived": False, "created_at": stamp(START)} for name in NAMES]
    head = {"format": "6nimmt-companion", "version": 2, "exported_at": stamp(START)}
    with path.open("w", encoding="utf-8") as file:
        file.write(json.dumps(head)[:-1] + ', "players": ' + json.dumps(players))
        file.write(', "matches": [\n')
        first = json.dumps(score_only_match(rng, 0))
        file.write(first)
        while file.tell() < limit - len(first) - 10:
            count += 1
            file.write(",\n" + json.dumps(score_only_match(rng, count)))
        if refused:  # the same match again: refused once every match is checked
            file.write(",\n" + first)
        file.write("\n]}\n")
    return count + 1


def child_cpu_and_peak(command: list[str], env: dict) -> tuple[int, float, float, str]:
    """Run ``command``; its exit code, CPU seconds, peak resident MB and output."""
    with tempfile.TemporaryFile("w+") as output:
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().strip()
    return child.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def own_cpu() -> float:
    """CPU seconds this process has used."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return mine.ru_utime + mine.ru_stime


def measure(database_url: str, file: Path) -> None:
    """Import ``file`` with the command line in a child process; print what it took."""
    migrate(database_url)
    command = [sys.executable, "-m", "flask", "--app", "companion", "import", str(file)]
    # Nobody plays on it: no wait for a quiet moment.
    quiet = {"COMPANION_AUTO_BACKUP": "false", "COMPANION_IMPORT_QUIET": "0"}
    env = server_env(database_url, quiet)
    floor = [sys.executable, "-m", "flask", "--app", "companion", "export", os.devnull]
    _, _, empty, _ = child_cpu_and_peak(floor, env)  # the same program, no import
    machine, mine, started = machine_cpu_seconds(), own_cpu(), time.monotonic()
    code, cpu, peak, text = child_cpu_and_peak(command, env)
    elapsed = time.monotonic() - started
    others = machine_cpu_seconds() - machine - cpu - (own_cpu() - mine)
    print(f"import: exit {code} after {elapsed:.1f} s, {cpu:.1f} s of CPU time")
    print(f"  {text.splitlines()[-1] if text else ''}")
    print(
        f"  peak memory of the importing process: {peak:.0f} MB resident "
        f"(target < 400 MB; {empty:.0f} MB for an export of the empty database)"
    )
    print(f"  other programs on the machine meanwhile: {max(others, 0):.1f} s of CPU time")


def main() -> None:
    """Write the file, then import it into a fresh database."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=64, help="the file's size (the upload limit)")
    parser.add_argument("--refused", action="store_true", help="a file refused at its end")
    parser.add_argument("--postgresql", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-import-memory-") as name:
        folder = Path(name)
        file = folder / "backup.json"
        matches = write_file(file, args.mib, args.refused)
        size = file.stat().st_size / 1024 / 1024
        print(f"backup of {matches:,} score-only matches: {size:.1f} MiB")
        with contextlib.ExitStack() as stack:
            if args.postgresql:
                url, _ = stack.enter_context(postgresql_cluster())
            else:
                url = f"sqlite:///{folder}/companion.sqlite"
            measure(url, file)


if __name__ == "__main__":
    main()
