"""An import beside the server's requests: one at a time, and a big one apart, in a
process of its own.

Two imports at once could both find the same match new, and would exhaust the machine's
memory. So whoever imports takes the turn (``import_turn``: a thread lock, then
``store.only_import``, the lock of every process of the database, both released when the
process dies) before it looks at the file; a second import is refused at once (409 on the
page, exit code 1 on the command line). The page takes it once the upload has all
arrived, so a slow upload holds no other import up; the command line, before it reads
its file.

Python's JSON reader holds the interpreter for the whole file (a second for 5,000 matches,
several on a busy Raspberry Pi): every phone that server process answers would wait, and the
process would keep hundreds of MB after. So a file of more than ``APART_FROM`` bytes is
checked and imported by a fresh ("spawn": a fork copies locks its other threads may hold)
helper process, from a temporary file, while the request's thread waits holding the turn.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from flask import current_app

from companion import store
from companion.background import app_apart
from companion.backup.fields import BackupError
from companion.backup.load import Report, check_and_import
from companion.db import db
from companion.rules import N_

APART_FROM = 512 * 1024  # bytes: a smaller file is imported before a helper could start

_imports = threading.Lock()
logger = logging.getLogger(__name__)


class ImportRunning(BackupError):
    """The refusal of an import while another runs."""

    def __init__(self) -> None:
        super().__init__(N_("Another import is running. Try again when it is done."))


@contextmanager
def import_turn() -> Iterator[None]:
    """Hold the turn to import, or raise ImportRunning at once (nothing waits)."""
    if not _imports.acquire(blocking=False):
        raise ImportRunning
    try:
        with ExitStack() as held:
            connection = held.enter_context(db.engine.connect())
            if not held.enter_context(store.only_import(connection)):
                raise ImportRunning
            yield
    finally:
        _imports.release()


def import_upload(upload: BinaryIO) -> Report:
    """Check and import an uploaded file: in a helper process when it is big."""
    size = upload.seek(0, os.SEEK_END)
    upload.seek(0)
    if size < current_app.config.get("IMPORT_APART_FROM", APART_FROM):
        return check_and_import(upload.read())
    with tempfile.TemporaryDirectory(prefix="companion-import-") as folder:
        path = Path(folder) / "backup.json"
        with path.open("wb") as file:
            shutil.copyfileobj(upload, file)
        return import_apart(path)


def import_apart(path: Path) -> Report:
    """Check and import the file at ``path`` in a fresh helper process."""
    config = dict(current_app.config)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as helper:
        try:
            return helper.submit(import_in_helper, config, str(path)).result()
        except BrokenProcessPool:
            raise BackupError(
                N_("The import stopped before it was done, so nothing was imported. Try again.")
            ) from None


def import_in_helper(config: dict, path: str) -> Report:
    """In the helper process: the same settings and database, the same import."""
    with app_apart(config).app_context():
        return check_and_import(Path(path).read_bytes())


def fill_luck_apart() -> None:
    """After an import (or a start on a database from before luck was kept): the luck of
    the matches that have none figured by a helper process of its own, a match per write
    (``store.fill_all_missing_luck``), so no page waits for it: pages show each match's
    luck once it is there, and ``luck.json`` figures what is not there yet itself. Two
    helpers at once would only figure some matches twice (the second write of a match is
    refused by the unique key, and given up). A helper that cannot start is logged. A
    server's background process (``companion.background``) sees the new matches itself."""
    if current_app.config.get("LUCK_APART") or not current_app.config.get("FILL_LUCK_APART", True):
        return
    spawn = multiprocessing.get_context("spawn")
    helper = spawn.Process(target=fill_luck_in_helper, args=(dict(current_app.config),))
    # A server run from a script without a main guard cannot spawn (RuntimeError), nor a
    # machine out of processes or files (OSError). What called this is stored and done:
    # only the kept luck is missing, and luck.json figures it meanwhile.
    try:
        helper.start()
    except (OSError, RuntimeError):
        logger.exception(
            "the helper process that figures the missing luck of matches could not start; "
            "`flask --app companion rebuild` fills it in"
        )


def fill_luck_in_helper(config: dict) -> None:
    """In the helper process: every match's missing luck, figured."""
    with app_apart(config).app_context():
        store.fill_all_missing_luck()
