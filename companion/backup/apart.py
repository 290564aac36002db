"""A big import runs in a process of its own, so the server's threads never wait for it.

Python runs one thread of a process at a time, and its JSON reader keeps the turn for
the whole file: about a second for 5,000 matches, several on a busy Raspberry Pi. Every
phone whose requests that server process answers would wait as long, and the process
would keep the import's memory (hundreds of MB) after it. So a file of more than
``APART_FROM`` bytes is checked and imported by a fresh helper process while the
request's thread just waits; the helper's memory goes back when it ends. It is started
fresh ("spawn"), not forked: a fork of a server process copies locks that its other
threads may hold at that moment. The file goes to it as a temporary file, not through
a pipe: the server process never holds a big file whole.

The request's thread holds the turn to import (``turn``) while its helper imports.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import BinaryIO

from flask import Flask, current_app

from companion.backup.fields import BackupError
from companion.backup.load import Report, check_and_import
from companion.db import db
from companion.rules import N_

APART_FROM = 512 * 1024  # bytes: a smaller file is imported before a helper could start


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
    with helper_app(config).app_context():
        return check_and_import(Path(path).read_bytes())


def helper_app(config: dict) -> Flask:
    """An app with only what an import uses: the server's settings and its database."""
    app = Flask(__name__)
    app.config.update(config)
    db.init_app(app)
    return app
