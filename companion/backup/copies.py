"""Automatic copies of the database: one a day, after every finished match and import.

SQLite's online backup API (``sqlite3.Connection.backup``) copies the database while
phones go on reading and writing. Copies live in ``backups/`` beside the database
(``instance/backups/``): ``daily-2026-11-30.sqlite`` holds the newest state of that day,
``weekly-2026-W48.sqlite`` the first copy of that ISO week; the last ``DAILY`` daily and
``WEEKLY`` weekly copies are kept. Each is written under a temporary name, checked
with ``PRAGMA integrity_check``, flushed to disk (fsync) and only then renamed into
place, so a power cut or a failed check leaves the previous copies as they were. The
server's worker processes take turns on a file lock in the folder (``filelock``): one of
them makes the day's copy, and two copies are never written at once.

Nothing is automatic for a database that is not an SQLite file (``copy_target``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from flask import Flask
from flask_babel import format_decimal

from companion.private import file_turn, private_file, private_folder
from companion.store import database_file

logger = logging.getLogger(__name__)

DAILY, WEEKLY = 7, 4  # copies kept of each kind
CHECK_EVERY = 600  # seconds between a server process's looks at the calendar
FOLDER = "backups"
FAILED = "FAILED.txt"  # the last copy's problem, until a copy succeeds
NAMES = re.compile(r"(?P<kind>daily|weekly)-(?P<stamp>\d{4}-\d\d-\d\d|\d{4}-W\d\d)\.sqlite")


@dataclass(frozen=True)
class Copy:
    """One automatic copy in the folder."""

    path: Path
    kind: str  # "daily" or "weekly"
    made: datetime  # when it was written (the file's time)
    size: int  # bytes

    @property
    def size_text(self) -> str:
        """The size in MB as the page's language writes numbers."""
        return format_decimal(self.size / 1e6, format="#,##0.0") + " MB"


def copy_target(app: Flask) -> Path | None:
    """The database file the app copies automatically, or None.

    None for a database that is not an SQLite file, and when ``AUTO_BACKUP`` is off
    (by default in tests, which set it where they test the copies).
    """
    if not app.config.get("AUTO_BACKUP", not app.testing):
        return None
    return database_file(app)


def folder_of(database: Path) -> Path:
    """Where the copies of ``database`` live."""
    return database.parent / FOLDER


def list_copies(folder: Path) -> list[Copy]:
    """The automatic copies, newest first."""
    found = []
    for path in folder.glob("*.sqlite") if folder.is_dir() else ():
        if (name := NAMES.fullmatch(path.name)) is None:
            continue
        stat = path.stat()
        made = datetime.fromtimestamp(stat.st_mtime)
        found.append(Copy(path, name.group("kind"), made, stat.st_size))
    return sorted(found, key=lambda copy: (copy.made, copy.path.name), reverse=True)


def last_failure(folder: Path) -> str | None:
    """Why the last copy failed, if it did and none succeeded since."""
    try:
        return (folder / FAILED).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def make_copy(database: Path, today: date, wait: bool = True) -> Path | None:
    """Copy the database as today's daily copy (and the week's, if it has none); rotate.

    ``wait``: for the writers' turn on the folder's lock; without it, return None when
    another process is making a copy right now. Returns the daily copy, or None.
    """
    folder = folder_of(database)
    private_folder(folder)
    with folder_lock(folder, wait) as turn:
        if not turn:
            return None
        return copy_and_rotate(database, folder, today)


def copy_and_rotate(database: Path, folder: Path, today: date) -> Path | None:
    """Write the daily (and weekly) copy and drop the oldest; the folder lock is held."""
    for stale in folder.glob(".*.tmp"):  # left by a copy that a power cut interrupted
        stale.unlink()
    daily = folder / f"daily-{today.isoformat()}.sqlite"
    year, week, _ = today.isocalendar()
    weekly = folder / f"weekly-{year}-W{week:02d}.sqlite"
    try:
        write_checked(daily, lambda target: backup_into(database, target))
        if not weekly.exists():
            write_checked(weekly, lambda target: backup_into(daily, target))
    except (sqlite3.Error, OSError, DamagedCopy) as error:
        logger.error("automatic copy of %s failed: %s", database, error)
        (folder / FAILED).write_text(f"{today.isoformat()}: {error}\n", encoding="utf-8")
        return None
    (folder / FAILED).unlink(missing_ok=True)
    rotate(folder)
    return daily


class DamagedCopy(Exception):
    """A copy that ``PRAGMA integrity_check`` does not pass."""


def write_checked(path: Path, write) -> None:
    """Write ``path`` with ``write(temporary)``; check it, sync it, rename it into place."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        write(temporary)
        problems = integrity_problems(temporary)
        if problems:
            raise DamagedCopy(f"{path.name}: {'; '.join(problems[:3])}")
        sync(temporary)
        temporary.replace(path)
        sync(path.parent)  # the rename itself survives a power cut
    finally:
        temporary.unlink(missing_ok=True)


def backup_into(source: Path, target: Path) -> None:
    """Copy the database ``source`` into a new file with SQLite's online backup API.

    One step: a consistent snapshot that phones' writes do not wait for (WAL). The copy
    is switched to a rollback journal, so it is one self-contained file.
    """
    private_file(target)  # the copy holds the link tokens too
    with (
        contextlib.closing(sqlite3.connect(source)) as origin,
        contextlib.closing(sqlite3.connect(target)) as copy,
    ):
        origin.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")


def integrity_problems(path: Path) -> list[str]:
    """What ``PRAGMA integrity_check`` finds wrong with a database file (none: [])."""
    with contextlib.closing(read_only(path)) as copy:
        rows = [row[0] for row in copy.execute("PRAGMA integrity_check")]
    return [] if rows == ["ok"] else rows


def read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change the file (nor create it)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def sync(path: Path) -> None:
    """Flush a file or a folder to the disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def rotate(folder: Path) -> None:
    """Keep the newest DAILY daily and WEEKLY weekly copies (by the date in the name)."""
    for kind, keep in (("daily", DAILY), ("weekly", WEEKLY)):
        named = sorted(folder.glob(f"{kind}-*.sqlite"), key=lambda path: path.name, reverse=True)
        for old in [path for path in named if NAMES.fullmatch(path.name)][keep:]:
            old.unlink()


_turns = threading.Lock()


@contextlib.contextmanager
def folder_lock(folder: Path, wait: bool) -> Iterator[bool]:
    """The turn to write copies: this process's threads, then every process (flock)."""
    if not _turns.acquire(blocking=wait):
        yield False
        return
    try:
        with file_turn(folder / ".lock", wait) as held:
            yield held
    finally:
        _turns.release()


# ---------------------------------------------------------------------------
# When: once a day, and after every finished match and every import


def copy_if_due(database: Path, today: date) -> Path | None:
    """Make today's daily copy unless there is one (another process may have made it)."""
    if (folder_of(database) / f"daily-{today.isoformat()}.sqlite").exists():
        return None
    folder = folder_of(database)
    private_folder(folder)
    with folder_lock(folder, wait=False) as turn:
        # Looked at again with the lock held: another process may just have made it.
        if not turn or (folder / f"daily-{today.isoformat()}.sqlite").exists():
            return None
        return copy_and_rotate(database, folder, today)


def copy_daily_in_background(app: Flask) -> threading.Thread | None:
    """In a server process: look every CHECK_EVERY seconds whether today's copy is due."""
    database = copy_target(app)
    if database is None:
        return None
    thread = threading.Thread(
        target=_copy_daily_forever, args=(database,), daemon=True, name="daily-copy"
    )
    thread.start()
    return thread


def _copy_daily_forever(database: Path) -> None:
    """The daily copy's loop; a failure is logged and tried again next time."""
    while True:
        try:
            copy_if_due(database, date.today())
        except Exception:
            logger.exception("automatic daily copy failed")
        time.sleep(CHECK_EVERY)


_after_changes: list[threading.Thread] = []


def copy_after_finished_match(app: Flask, match_id: int) -> threading.Thread | None:
    """A match just ended: copy the database now, in a thread (the phone is not kept).

    Connected to ``store.match_finished`` for each app by ``companion.backup.init_app``.
    """
    return copy_soon(app, "a match")


def copy_after_import(app: Flask) -> threading.Thread | None:
    """An import just added players or matches: copy the database now, in a thread.

    Like a finished match, and more so: an import can bring years of matches at once.
    """
    return copy_soon(app, "an import")


def copy_soon(app: Flask, after: str) -> threading.Thread | None:
    """Copy the database in a thread of its own, if the app copies it automatically;
    None when it does not, or when the thread cannot start (logged)."""
    database = copy_target(app)
    if database is None:
        return None
    thread = threading.Thread(
        target=_copy_now, args=(database, date.today(), after), daemon=True, name="copy-now"
    )
    _after_changes.append(thread)
    try:
        thread.start()
    except RuntimeError:  # out of threads: the change is stored, the next one copies
        _after_changes.remove(thread)
        logger.exception("automatic copy after %s could not start", after)
        return None
    return thread


def _copy_now(database: Path, today: date, after: str) -> None:
    """The copy after a change; a failure is logged (and shown on the backup page)."""
    try:
        make_copy(database, today)
    except Exception:
        logger.exception("automatic copy after %s failed", after)
    finally:
        _after_changes.remove(threading.current_thread())


def wait_for_copies(timeout: float = 30) -> None:
    """Wait for the copies started after matches and imports (tests; the command line)."""
    for thread in list(_after_changes):
        thread.join(timeout)
