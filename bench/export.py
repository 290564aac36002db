"""Benchmark backup: export and import a household history of 10 players, 5,000 matches.

Run: .venv/bin/python -m bench.export [MATCHES]   (prints figures; not a test)
Targets: the export of everything under 10 s (issue 5); the import of it into an empty
database under 5 s and 300 MB (issue 10). The history is ``bench/history.py``'s. The
import runs in a process of its own, so that its peak memory (the largest resident
size, ``VmHWM``) is the import's and not the generator's; that process prints its
figures as JSON. Then the imported database is exported again and compared.

The wait of a phone's round while an import runs is measured against the real server
by ``bench/import_wait.py``.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.apps import sqlite_app
from bench.history import build
from bench.serving import machine_cpu_seconds
from companion.backup.check import read_backup
from companion.backup.document import dump, export_document
from companion.backup.fields import paused_gc
from companion.backup.load import import_backup
from companion.db import db
from companion.models import Game, Play, Round
from tests.servers import ROOT


def make_app(path: Path):
    """An app on its own SQLite file with every table in place (nobody plays on it)."""
    return sqlite_app(path, TESTING=True, IMPORT_QUIET=0)


def megabytes_resident() -> float:
    """The largest resident size this process has had so far, in MB.

    Linux's VmHWM starts afresh in a new program; ``ru_maxrss`` would carry over the
    parent's peak from before the fork.
    """
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def import_only(file: Path, database: Path) -> None:
    """In a fresh process: import ``file`` into ``database``; print the figures as JSON."""
    app = make_app(database)
    with app.app_context():
        db.session.execute(db.select(Game.id).limit(1)).all()  # connect before measuring
        before = megabytes_resident()
        started, cpu = time.perf_counter(), time.process_time()
        with paused_gc():  # as check_and_import does: the same import, timed in two parts
            backup = read_backup(file.read_bytes())
            checked = time.perf_counter() - started
            report = import_backup(backup)
        total = time.perf_counter() - started
    figures = {
        "seconds": total,
        "cpu": time.process_time() - cpu,
        "checking": checked,
        "staging": report.staging_seconds,
        "merge": report.merge_seconds,
        "peak_mb": megabytes_resident(),
        "before_mb": before,
        "report": report.as_dict(),
    }
    print(json.dumps(figures))


def own_cpu() -> float:
    """CPU seconds this process has used."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return mine.ru_utime + mine.ru_stime


def timed_import(file: Path, database: Path) -> dict:
    """Run the import in a process of its own; return its figures, with the CPU time
    other programs on the machine took meanwhile (``others``)."""
    machine, mine = machine_cpu_seconds(), own_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "bench.export", "--import", str(file), str(database)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    figures = json.loads(done.stdout.splitlines()[-1])
    child = resource.getrusage(resource.RUSAGE_CHILDREN)  # this is the only child
    taken = machine_cpu_seconds() - machine - (own_cpu() - mine)
    figures["others"] = max(taken - (child.ru_utime + child.ru_stime), 0)
    return figures


def main() -> None:
    """Generate, export, import, export again; print the figures."""
    matches = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    folder = Path(tempfile.mkdtemp(prefix="bench-export-"))
    source = make_app(folder / "history.sqlite")
    started = time.perf_counter()
    build(source, matches)
    print(f"generated {matches} matches in {time.perf_counter() - started:.1f} s")
    with source.app_context():
        counts = {model.__name__: db.session.query(model).count() for model in (Game, Round, Play)}
        print("  " + ", ".join(f"{count:,} {name.lower()}s" for name, count in counts.items()))
        started, machine, mine = time.perf_counter(), machine_cpu_seconds(), own_cpu()
        text = dump(export_document())
        exported = time.perf_counter() - started
        others = max(machine_cpu_seconds() - machine - (own_cpu() - mine), 0)
    file = folder / "backup.json"
    file.write_text(text, encoding="utf-8")
    size = file.stat().st_size / 1e6
    print(
        f"export of everything: {exported:.2f} s (target < 10 s), {size:.1f} MB; other "
        f"programs on the machine meanwhile: {others:.1f} s of CPU time"
    )
    figures = timed_import(file, folder / "imported.sqlite")
    print(
        f"import into an empty database: {figures['seconds']:.2f} s (target < 5 s; "
        f"{figures['cpu']:.2f} s of CPU time)"
    )
    print(
        f"  checking every round {figures['checking']:.2f} s, staging the rows "
        f"{figures['staging']:.2f} s, merging them (the write lock) {figures['merge']:.2f} s"
    )
    print(
        f"  peak memory of the importing process: {figures['peak_mb']:.0f} MB resident "
        f"(target < 300 MB; {figures['before_mb']:.0f} MB before it read the file)"
    )
    print(f"  {figures['report']}")
    print(f"  other programs on the machine meanwhile: {figures['others']:.1f} s of CPU time")
    target = make_app(folder / "imported.sqlite")
    with target.app_context():
        again = json.loads(dump(export_document()))
    first = json.loads(text)
    first.pop("exported_at"), again.pop("exported_at")
    print(f"round trip identical: {first == again}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--import"]:
        import_only(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
