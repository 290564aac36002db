"""Data a test writes through the app, built once a session and copied after.

A household of games entered through the app takes a test seconds to build (a year of
them half a minute), on PostgreSQL three times as long as on SQLite: many tests start
from the same one. ``kept`` builds it in the first test that asks and gives every later
one a copy of the database as the build left it, with the build's answer (the players'
ids) and its client's session (the player links it was given):

- on SQLite, a copy of the file (SQLite's backup), shared by the session's worker
  processes through ``conftest.shared_folder`` (one builds, the others wait for it);
- on PostgreSQL, where each worker has a server of its own, a database of the worker's
  made from the built one and copied with ``CREATE DATABASE ... TEMPLATE``.

The app's connections are closed first and its caches emptied after: the copy has the
build's ids and tokens, and nothing the app kept before may stand for it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import conftest
from sqlalchemy.engine import make_url

from companion.db import db

SESSION_COOKIE = "session"
# Settings that change what a build writes (derived data now or later): a build is kept
# for each of their combinations a test's app has.
WRITES = ("LUCK_APART", "FILL_LUCK_APART", "AFTER_THE_ANSWER", "PLAYERS_HELD", "MATCHES_HELD")
BUILT: dict[str, dict] = {}  # on PostgreSQL: what each kept build answered, in this worker


def kept(app, client, shared: Path, name: str, build: Callable[[], object]):
    """What ``build()`` answers (JSON: ids), with ``app``'s database as the build leaves
    it; built by the session's first test that asks for ``name``, copied after."""
    name = f"{name}_{settings_of(app)}"
    databases = conftest.POSTGRESQL.get("databases")
    if databases is not None:
        return kept_on_postgresql(databases, app, client, name, build)
    database = Path(app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///"))
    copy, answer = shared / f"{name}.sqlite", shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker builds, the others wait for it
        if not copy.exists():
            built = built_by(build, client)
            copy_sqlite(app, database, shared / f"{name}.building")
            answer.write_text(json.dumps(built))
            (shared / f"{name}.building").rename(copy)
        else:
            copy_sqlite(app, copy, database)
            built = json.loads(answer.read_text())
    return copied_into(app, client, built)


def kept_on_postgresql(databases, app, client, name: str, build):
    """``kept`` on this worker's PostgreSQL server."""
    database = make_url(app.config["SQLALCHEMY_DATABASE_URI"]).database
    template = f"kept_{name}"
    if name not in BUILT:
        BUILT[name] = built_by(build, client)
        databases.copy(database, template)  # the app's connections closed first
    else:
        databases.replace(database, template)
    return copied_into(app, client, BUILT[name])


def settings_of(app) -> str:
    """The app's settings that change what a build writes, as a short name."""
    settings = repr([app.config.get(key) for key in WRITES]).encode()
    return hashlib.sha256(settings).hexdigest()[:8]


def built_by(build, client) -> dict:
    """``build()``'s answer and the session cookie it left ``client`` with."""
    answer = build()
    cookie = client.get_cookie(SESSION_COOKIE)
    return {"answer": answer, "session": cookie.value if cookie else None}


def copied_into(app, client, built: dict):
    """The build's answer, ``client`` given its session, ``app``'s caches emptied."""
    if built["session"] is not None:
        client.set_cookie(SESSION_COOKIE, built["session"])
    conftest.forget_cached(app)
    return built["answer"]


def close_connections(app) -> None:
    """Close the app's connections to its database (a copy needs it alone)."""
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def copy_sqlite(app, source: Path, target: Path) -> None:
    """Copy the SQLite database ``source`` over ``target``, the app's connections closed
    first."""
    close_connections(app)
    conftest.copy_sqlite(source, target)
