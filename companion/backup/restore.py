"""``flask --app companion restore FILE``: bring back a copy of the database.

The file must pass ``PRAGMA integrity_check``, then be tried out in a temporary place
(``trial``). Then the user confirms (``--yes`` for scripts), the database it replaces is
kept as ``backups/replaced-<time>.sqlite``, and the tried copy is written over it with
SQLite's backup API. The server must be stopped (its processes keep what they computed in
memory): each holds a shared lock on ``<database>.serving`` while it runs, which is how the
command knows (``storage.sqlite.hold_serving_lock``).
"""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import datetime
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

from companion.backup.copies import (
    backup_into,
    folder_lock,
    folder_of,
    integrity_problems,
    read_only,
)
from companion.private import private_database, private_folder
from companion.store import database_file, no_server_on, on_postgresql, writers_turn

# A file with none of these is some other program's; for the rest, ``trial`` decides.
COMPANION_TABLES = {"alembic_version", "player", "match", "game", "round", "play"}


@click.command("restore")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--yes", is_flag=True, help="Replace without asking (for scripts).")
@with_appcontext
def restore_command(file: Path, yes: bool) -> None:
    """Replace the database with FILE, a copy of it (see instance/backups/)."""
    database = database_file(current_app)
    if database is None and on_postgresql():
        raise click.ClickException(
            "The database is on a PostgreSQL server: restore a pg_dump of it with "
            "pg_restore or psql there, not with this command."
        )
    if database is None:
        raise click.ClickException("Only an SQLite database file can be restored.")
    problem = unusable(file)
    if problem:
        raise click.ClickException(f"{file} cannot be restored: {problem}")
    migrations = current_app.extensions["migrate"].directory
    # Here, not at the top: the trial needs Alembic, which the server's processes never
    # load (``companion.db.attach_migrations``), and they import this command's module.
    from companion.backup.trial import Refused, tried

    try:
        with tried(file, migrations) as ready:
            swap(database, file, ready, yes)
    except Refused as refused:
        raise click.ClickException(f"{file} cannot be restored: {refused}") from None


def swap(database: Path, file: Path, ready: Path, yes: bool) -> None:
    """Once the server is stopped and the user agrees, put ``ready`` (``file`` tried)
    in place of the database."""
    with no_server_on(database) as stopped:
        if not stopped:
            raise click.ClickException(
                "The server is running. Stop it first (Ctrl+C where it runs), then restore."
            )
        if not yes:
            click.confirm(
                f"Replace the database {database} ({describe(database)}) with {file} "
                f"({describe(file)})? The database now is kept in {folder_of(database)}.",
                abort=True,
            )
        kept = replace(database, ready)
    click.echo(f"Restored {file}; the database it replaced is kept as {kept}.")


def unusable(file: Path) -> str | None:
    """Why ``file`` cannot replace the database, or None."""
    if not file.is_file():
        return "there is no such file."
    try:
        problems = integrity_problems(file)
        with contextlib.closing(read_only(file)) as copy:
            names = {row[0] for row in copy.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as error:
        if "not a database" in str(error):
            return "it is not an SQLite database."
        return f"it is damaged ({error})."
    if problems:
        return f"it is damaged ({problems[0]})."
    if not names & COMPANION_TABLES:
        return "it is not a database of the companion."
    return None


def describe(database: Path) -> str:
    """A database in a few words: its matches and when it last changed."""
    if not database.exists():
        return "none yet"
    with contextlib.closing(read_only(database)) as connection:
        matches = connection.execute("SELECT count(*) FROM match").fetchone()[0]
    changed = datetime.fromtimestamp(database.stat().st_mtime)
    return f"{matches} matches, changed {changed:%Y-%m-%d %H:%M}"


def replace(database: Path, file: Path) -> Path:
    """Keep a copy of the database, then write ``file`` over it; return the kept copy."""
    folder = folder_of(database)
    private_folder(folder)
    with folder_lock(folder, wait=True):
        kept = folder / f"replaced-{datetime.now():%Y-%m-%d-%H%M%S}.sqlite"
        if database.exists():
            backup_into(database, kept)
        writer = writers_turn(str(database))
        if not writer.acquire(timeout=30):  # the server is stopped: only another command
            raise click.ClickException("The database is busy; try again in a moment.")
        try:
            private_database(database)
            with (
                contextlib.closing(read_only(file)) as source,
                contextlib.closing(sqlite3.connect(database)) as target,
            ):
                source.backup(target)
                target.execute("PRAGMA journal_mode=WAL")  # as the server keeps it
        finally:
            writer.release()
    return kept
