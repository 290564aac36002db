"""What the start checks before a server or a ``flask`` command uses the database.

``check_storage`` makes sure an SQLite database can be written (a write, rolled back),
or that a database server answers; the configuration makes the instance folder and the
secret key file with ``ensure_folder`` and ``secret_key_problem``. ``StorageError``
stops the start with one line that says which database or file and what to do (click
prints it for the ``flask`` commands, ``companion.serve`` for the server). While the
server runs, the same causes answer 503 instead (``companion.web.faults``).

Only the start-up (this module, ``companion.config``, ``companion.app`` and
``companion.serve``) and the store import ``companion.storage``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import click
from flask import Flask
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError

from companion.private import FOLDER_MODE, private_database
from companion.storage import server_connection, sqlite_connect_args, sqlite_uri
from companion.storage.sqlite import sqlite_write_undone, writable
from companion.web.faults import BUSY, FULL, READ_ONLY, fault_of

OTHER_DATABASE = "or set COMPANION_DATABASE_URL to another place"
OTHER_KEY = "or set COMPANION_SECRET_KEY"


class StorageError(click.ClickException):
    """The database or the secret key cannot be used: the start stops with this line."""


def check_storage(app: Flask) -> None:
    """Raise StorageError unless the app's SQLite database can be written (a rolled-back write),
    or its database server answers.

    Asks SQLite itself, so a read-only file, folder or file system, or a full disk, is
    found as SQLite will meet it, whoever the user is (root included).
    """
    url = make_url(app.config["SQLALCHEMY_DATABASE_URI"])
    if not sqlite_uri(url):
        check_server(url)
        return
    if url.database in (None, "", ":memory:"):
        return
    args, options = sqlite_connect_args(url)
    path = args[0].removeprefix("file:").split("?", 1)[0]  # a file: URI names it too
    folder = Path(path).parent
    ensure_folder(folder, "the database", OTHER_DATABASE)
    private_database(path)  # before SQLite makes it with the umask's mode (0644)
    try:
        sqlite_write_undone(args, options)
    except sqlite3.Error as error:
        fault = fault_of(error)
        if fault not in (BUSY, FULL) and os.path.exists(path) and not writable(path):
            # A database in WAL mode that SQLite cannot open at all: its folder takes no
            # -shm file (a read-only folder, the server stopped cleanly before).
            fault = READ_ONLY
        if fault != BUSY:  # someone is writing: then it can be written
            raise StorageError(storage_problem(fault, path, folder, error)) from None


SERVER_WAIT = 10  # seconds the start waits for a database server to answer


def check_server(url: URL) -> None:
    """Raise StorageError unless the database server at ``url`` takes a connection."""
    shown = url.render_as_string(hide_password=True)
    try:
        connect = server_connection(url, SERVER_WAIT)
    except ImportError as error:  # psycopg is an optional dependency
        raise StorageError(
            f"Cannot use the database {shown}: its driver is missing ({error}). Install "
            "it (for PostgreSQL: pip install 'companion[postgresql]'), or set "
            "COMPANION_DATABASE_URL to another database."
        ) from None
    try:
        connect()
    except DBAPIError as error:
        reason = (str(error.orig).strip() or "no answer").splitlines()[0]  # hints follow
        raise StorageError(
            f"Cannot reach the database {shown} ({reason}): start its server, create the "
            "database and its user, or set COMPANION_DATABASE_URL to another database."
        ) from None


def storage_problem(fault: str | None, path: str, folder: Path, error: sqlite3.Error) -> str:
    """One line: what is wrong with the database at ``path`` and what to do."""
    other = OTHER_DATABASE
    if fault == READ_ONLY:
        return (
            f"The database {path} is read-only: make it and its folder {folder} writable "
            f"for this user (SQLite writes files beside it), {other}."
        )
    if fault == FULL:
        return f"The disk holding the database {path} is full: free some space, {other}."
    return (
        f"Cannot open the database {path} ({error}): check that {folder} exists and this "
        f"user may write there, {other}."
    )


def ensure_folder(folder: Path, holds: str, instead: str) -> None:
    """Create ``folder`` if missing; StorageError (saying ``instead``) when it cannot be."""
    try:
        os.makedirs(folder, FOLDER_MODE, exist_ok=True)  # a new folder: for our files alone
    except OSError as error:
        raise StorageError(
            f"Cannot create the folder {folder} for {holds} ({error.strerror}): create it "
            f"and make it writable for this user, {instead}."
        ) from None


def secret_key_problem(path: Path, error: OSError) -> StorageError:
    """StorageError for a secret key file that cannot be read or written."""
    return StorageError(
        f"Cannot use the secret key file {path} ({error.strerror}): make its folder "
        f"{path.parent} writable for this user, {OTHER_KEY}."
    )
