"""One import at a time, decided before the file is read.

Only an import brings matches of the past: two at once could both find the same match
new. And an import of a big file takes seconds of a core and hundreds of MB: several at
once would exhaust the machine. So whoever imports (the backup page, the command line)
first takes the turn, and only then reads the file; a second import is refused at once,
before its file is read, with a message (409 on the page, exit code 1 on the command line).

The turn is a thread lock for this process's threads, then the lock of every process
and server of the database (``store.only_import``: a file lock beside an SQLite file,
an advisory lock on PostgreSQL), held on a connection of its own until the import ends.
Either is released when the process dies. An import in a helper process
(``apart``) runs under its server process's turn.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from companion import store
from companion.backup.fields import BackupError
from companion.db import db
from companion.rules import N_

_imports = threading.Lock()


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
            try:
                held.enter_context(store.only_import(connection))
            except store.AnotherImport:
                raise ImportRunning from None
            yield
    finally:
        _imports.release()
