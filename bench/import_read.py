"""Benchmark: the time and peak memory of reading and checking a backup, no database.

Run: .venv/bin/python -m bench.import_read [--mib 64] [--shape NAME ...|all] (prints
figures; not a test). The files are bench/import_memory.py's (``SHAPES``): real matches,
and the hostile files of issue 30, each refused. What is measured is the import's reading
alone (``check.open_backup`` and every match checked, as the import iterates them), in a
child process, its CPU time and peak resident size from the kernel when it ends; beside
it, the same child that only imports the modules (the floor), and the CPU time other
programs took meanwhile (the machine is shared).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench.import_memory import SHAPES, child_cpu_and_peak, own_cpu
from bench.serving import machine_cpu_seconds

READ = """
import sys
from companion.backup.check import open_backup
from companion.backup.fields import BackupError
if len(sys.argv) > 1:
    raw = open(sys.argv[1], "rb").read()
    try:
        backup = open_backup(raw)
        print(sum(1 for _ in backup.matches), "matches checked")
    except BackupError as error:
        print("refused:", error)
"""


def measure(file: Path) -> None:
    """Read and check ``file`` in a child process; print what it took."""
    _, _, floor, _ = child_cpu_and_peak([sys.executable, "-c", READ], {})
    machine, mine, started = machine_cpu_seconds(), own_cpu(), time.monotonic()
    _, cpu, peak, text = child_cpu_and_peak([sys.executable, "-c", READ, str(file)], {})
    elapsed = time.monotonic() - started
    others = machine_cpu_seconds() - machine - cpu - (own_cpu() - mine)
    print(f"  read: {elapsed:.1f} s, {cpu:.1f} s of CPU time; peak {peak:.0f} MB resident")
    print(f"  (the modules alone: {floor:.0f} MB); other programs: {max(others, 0):.1f} s of CPU")
    print(f"  {text.splitlines()[-1][:200] if text else ''}")


def main() -> None:
    """Write each file asked for, then read it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=64, help="the file's size (the upload limit)")
    parser.add_argument("--shape", nargs="+", choices=[*SHAPES, "all"], default=["matches"])
    args = parser.parse_args()
    for shape in list(SHAPES) if "all" in args.shape else args.shape:
        what, write = SHAPES[shape]
        with tempfile.TemporaryDirectory(prefix="bench-import-read-") as name:
            file = Path(name) / "backup.json"
            holds = write(file, int(args.mib * 1024 * 1024), False)
            print(f"{shape}: {what}: {file.stat().st_size / 1024 / 1024:.1f} MiB, {holds}")
            measure(file)


if __name__ == "__main__":
    main()
