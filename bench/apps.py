"""An app in the benchmark's own process, on a SQLite file of its own (or a PostgreSQL
database): for the benchmarks that time the app through the Flask test client or call
into it directly."""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from companion import create_app
from companion.db import db


def sqlite_app(path: Path, **config) -> Flask:
    """An app on the SQLite file ``path`` with every table in place (nobody serves it,
    so the models' schema stands in for the migrations), with ``config`` on top."""
    return app_on(f"sqlite:///{path}", **config)


def app_on(url: str, **config) -> Flask:
    """An app on the database at ``url`` (SQLite or PostgreSQL), its tables made from
    the models, with ``config`` on top."""
    app = create_app({"SECRET_KEY": "bench", "SQLALCHEMY_DATABASE_URI": url, **config})
    with app.app_context():
        db.create_all()
    return app
