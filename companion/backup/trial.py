"""A copy tried out before ``restore`` puts it in place of the database.

A file that SQLite reads and whose tables have the right names may still be no database
the app can run on. So the copy is copied once more, to a temporary place, and an app
of its own is pointed at it there:

- its Alembic revision must be one of ``migrations/versions``. An older one is upgraded
  there, as the server's next start would do anyway: copies are kept for weeks, and one
  made before an update of the companion is still a good copy. It is the upgraded file
  that is restored, the one that passed the checks below. A revision this companion does
  not know (a copy from a newer version, or no revision at all) is refused: there is no
  telling what its tables mean.
- its tables and columns must be the models' (``db.metadata``), compared as Alembic's
  autogenerate compares them: nothing to add, drop or change.
- its schema must be the app's own: every table, index, trigger and view that the
  migrations make on a fresh database, and nothing more (Alembic compares no triggers
  or views: a trigger in a copy would go on rewriting what the players enter).
- ``rebuild --check`` must pass on it: no row that breaks a constraint or the rules
  (``companion.derived.audit``), no derived result that differs from the replay.

The live database is not touched by any of it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from flask import Flask
from flask_migrate import upgrade
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from companion.backup.copies import read_only
from companion.db import attach_migrations, db
from companion.derived import rebuild
from companion.store import fill_statistics, hook_storage


class Refused(Exception):
    """Why a copy cannot replace the database, in one line."""


@contextlib.contextmanager
def tried(file: Path, migrations: str) -> Iterator[Path]:
    """Yield a copy of ``file`` that passed every check, up to date; else raise Refused."""
    with tempfile.TemporaryDirectory(prefix="companion-restore-") as folder:
        trial = Path(folder) / "trial.sqlite"
        with (
            contextlib.closing(read_only(file)) as source,
            contextlib.closing(sqlite3.connect(trial)) as target,
        ):
            source.backup(target)
        script = ScriptDirectory(migrations)
        revision = revision_of(trial)
        if revision is None:
            raise Refused("it has no Alembic revision (no alembic_version table).")
        if revision not in {known.revision for known in script.walk_revisions()}:
            raise Refused(
                f"its Alembic revision {revision} is not one of this companion's "
                "(a copy from a newer version?)."
            )
        with trial_context(Path(folder) / "fresh.sqlite", migrations):
            upgrade()  # the app's own schema, as a first start makes it
            made = schema_of()
        with trial_context(trial, migrations):
            check(revision != script.get_current_head(), made)
        yield trial


@contextlib.contextmanager
def trial_context(database: Path, migrations: str) -> Iterator[None]:
    """Inside the app context of a trial app on ``database``, closed after."""
    app = trial_app(database, migrations)
    with app.app_context():
        try:
            yield
        finally:
            db.session.remove()
            db.engine.dispose()


def revision_of(path: Path) -> str | None:
    """The Alembic revision a database file says it is at, or None."""
    with contextlib.closing(read_only(path)) as connection:
        try:
            rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.OperationalError:  # no such table
            return None
    return rows[0][0] if len(rows) == 1 else None


def schema_of() -> set[tuple[str, str]]:
    """In a trial app: every table, index, trigger and view of its database, as (type,
    name); but the indexes SQLite makes for a table's own constraints (numbered as the
    table's history made them; ``compare_metadata`` compares the constraints)."""
    rows = db.session.execute(
        text(
            "SELECT type, name FROM sqlite_master WHERE NOT (type = 'index' "
            "AND name LIKE 'sqlite\\_autoindex\\_%' ESCAPE '\\')"
        )
    )
    return {(kind, name) for kind, name in rows}


def schema_difference(found: set[tuple[str, str]], made: set[tuple[str, str]]) -> str | None:
    """The first difference of a copy's schema from the app's, in words, or None."""
    for kind, name in sorted(found - made):
        return f"there is a {kind} {name} the app does not make"
    for kind, name in sorted(made - found):
        return f"there is no {kind} {name}"
    return None


def trial_app(database: Path, migrations: str) -> Flask:
    """An app with only what the checks use: the models on ``database``, the migrations."""
    app = Flask(__name__)
    app.config["SQLALCHEMY_DATABASE_URI"] = f"sqlite:///{database}"
    db.init_app(app)
    hook_storage(app)  # SQLite's pragmas and writer lock, as the app has them
    attach_migrations(app, migrations)
    return app


def check(older: bool, made: set[tuple[str, str]]) -> None:
    """In the trial app: upgrade an ``older`` copy, then compare it (its tables with the
    models, its schema with ``made``, the app's own) and rebuild --check."""
    problems: list[str] = []
    try:
        if older:
            upgrade()
            fill_statistics()
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            differences = compare_metadata(context, db.metadata)
        if differences:
            raise Refused(f"its tables are not the app's: {difference(differences[0])}.")
        if problem := schema_difference(schema_of(), made):
            raise Refused(f"its schema is not the app's: {problem}.")
        rebuild(check=True, echo=problems.append)
    except (SQLAlchemyError, CommandError) as error:
        raise Refused(f"the app cannot use it ({first_line(error)}).") from None
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise Refused(f"rebuild --check fails on it: {problems[0]}{more}.")


def difference(found) -> str:
    """One difference from Alembic's ``compare_metadata``, in words about the copy."""
    if isinstance(found, list):  # a column's type, nullability or default
        _kind, _schema, table, column, *_ = found[0]
        return f"column {table}.{column} is declared differently"
    kind = found[0]
    if kind == "add_table":
        return f"there is no table {found[1].name}"
    if kind == "remove_table":
        return f"there is a table {found[1].name} the app does not know"
    if kind == "add_column":
        return f"table {found[2]} has no column {found[3].name}"
    if kind == "remove_column":
        return f"table {found[2]} has a column {found[3].name} the app does not know"
    return f"{kind.replace('_', ' ')} {getattr(found[1], 'name', '')}".strip()


def first_line(error: Exception) -> str:
    """The first line of a database error: its message, not the statement behind it."""
    return str(error).strip().splitlines()[0]
