"""Flask extensions, created unbound and attached to the app in create_app(), the model
base class, and what every database shares: the write option and its two faults.

Nothing here is one database's: SQLite's pragmas, writer lock and checkpoints, and
PostgreSQL's locks, are ``companion.storage``; a write transaction is asked for by
``companion.store.writing``.
"""

from flask import Flask
from flask_babel import Babel
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

# Named constraints let Alembic's SQLite batch mode drop and alter them later.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base class of every model; declare columns as Mapped[...] attributes."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


db = SQLAlchemy(model_class=Base)
csrf = CSRFProtect()
babel = Babel()


def attach_migrations(app: Flask, directory: str) -> None:
    """Alembic's migrations in ``directory`` on ``app``: for `flask db`, the launcher's
    upgrade, a restore's trial.

    Flask-Migrate is imported here, not at the top: with Alembic and Mako it takes 11 MB
    of memory, which the server's serving processes never need (the launcher migrates in
    a process of its own, ``companion.serve.migrated``), a tenth of a small machine's
    idle server (``bench.idle_memory``).
    """
    from flask_migrate import Migrate

    # Batch mode: SQLite cannot ALTER most things, Alembic copies the table instead.
    Migrate(app, db, directory=directory, render_as_batch=True)


WRITE = "companion_write"  # execution option: this transaction writes (companion.store)
WRITE_WAIT = 3.0  # seconds a phone's write waits for the database before a 503 (WRITE_WAIT)


class DatabaseBusy(Exception):
    """A write could not have the database within WRITE_WAIT seconds (answered 503)."""


class DatabaseUnavailable(Exception):
    """The writer lock file beside the database cannot be opened (answered 503)."""
