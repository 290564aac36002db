"""A PostgreSQL server for one test session, and fresh databases for each test's apps.

``pytest --database=postgresql`` (the second run of ``make test``) runs the tests that
touch the database again on a real PostgreSQL server: Debian's ``postgresql`` package,
started in a temporary folder by pytest-postgresql's executor (``pg_ctl``) and stopped
when the session ends. PostgreSQL refuses to run as root, and CI runs as root:
``tests/pg_ctl`` then runs the server as the ``postgres`` user, in a folder of its own
(pytest's temporary folders are root's alone, so the plugin's ``postgresql_proc``
fixture, which puts the server there, cannot be used as it is).

Each app of a test gets a database of its own, as it gets an SQLite file of its own
otherwise: ``conftest.testing_config(path)`` names the database that stands for
``path`` until the test ends. The databases are copies of a template that has every
table (``create_all``, as ``conftest.make_app`` makes them on SQLite). After the test
they are emptied with TRUNCATE ... RESTART IDENTITY, ids counting from 1 again, and
the next test takes them: milliseconds, where a new database takes a tenth of a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import psycopg
from alembic.config import Config
from alembic.script import ScriptDirectory
from port_for import get_port
from psycopg import sql
from pytest_postgresql.executors import PostgreSQLExecutor
from sqlalchemy import create_engine, event, text
from sqlalchemy.pool import Pool

from companion.db import db
from companion.storage.feed import WATCHER_NAME
from companion.storage.postgresql import LISTEN_WAIT

PG_CTL = Path(__file__).resolve().parent / "pg_ctl"
MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
USER = "postgres"  # the superuser initdb makes (trusted on 127.0.0.1: a test server)
TEMPLATE = "companion_template"
# Durability is not what the tests check: no fsync (-F, the executor's) or full pages.
STARTUP = 60  # seconds the server may take to take logins (a slow, shared machine)
SERVER_OPTIONS = "-c full_page_writes=off -c max_connections=200"


ALEMBIC_VERSION = "CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)"


def head() -> str:
    """The newest migration: the template's tables are the models', which are that."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


class Server:
    """PostgreSQL in a temporary folder, on a free port of 127.0.0.1, until ``stop``."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="companion-postgresql-"))
        if os.geteuid() == 0:  # the server runs as postgres (tests/pg_ctl)
            shutil.chown(self.folder, USER, USER)
        self.port = get_port(None)
        self.executor = PostgreSQLExecutor(
            executable=str(PG_CTL),
            host="127.0.0.1",
            port=self.port,
            datadir=str(self.folder / "data"),
            unixsocketdir=str(self.folder),
            logfile=str(self.folder / "server.log"),
            startparams="-w",
            dbname=TEMPLATE,
            user=USER,
            postgres_options=SERVER_OPTIONS,
        )

    @staticmethod
    def installed() -> bool:
        """True when tests/pg_ctl finds PostgreSQL's pg_ctl."""
        try:
            found = subprocess.run([PG_CTL, "--version"], capture_output=True, check=False)
        except OSError:
            return False
        return found.returncode == 0

    def start(self) -> Server:
        """initdb and start; the server's log is in the error if it does not come up."""
        try:
            self.executor.start()
            self.wait_for_logins()
        except Exception as error:
            log = self.folder / "server.log"
            text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            self.stop()
            raise RuntimeError(f"PostgreSQL did not start ({error}):\n{text}") from error
        return self

    def wait_for_logins(self) -> None:
        """The port opens before the server takes logins ("starting up"): wait for those."""
        deadline = time.monotonic() + STARTUP
        while True:
            try:
                self.connect().close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def url(self, name: str) -> str:
        """The SQLAlchemy URL of database ``name`` on this server."""
        return f"postgresql+psycopg://{USER}@127.0.0.1:{self.port}/{name}"

    def connect(self, name: str = "postgres") -> psycopg.Connection:
        """A plain autocommit connection to database ``name``."""
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user=USER, dbname=name, autocommit=True
        )

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        try:
            if self.executor.running():
                self.executor.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class Databases:
    """The databases tests use: each stands for one SQLite path of the running test.

    Each has every table and is marked as migrated to the newest revision, as a server
    started on it (``python -m companion.serve``) finds it after ``flask db upgrade``.
    """

    def __init__(self, server: Server) -> None:
        self.server = server
        self.admin = server.connect()
        self.admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
        engine = create_engine(server.url(TEMPLATE))
        db.metadata.create_all(engine)
        with engine.begin() as connection:  # as `flask db upgrade` would leave it
            connection.execute(text(ALEMBIC_VERSION))
            connection.execute(text("INSERT INTO alembic_version VALUES (:head)"), {"head": head()})
        engine.dispose()
        self.tables = sql.SQL(", ").join(
            sql.Identifier(table.name) for table in db.metadata.sorted_tables
        )
        self.made = 0
        self.free: list[str] = []
        self.named: dict[str, str] = {}  # a path's text: its database
        self.taken: list[str] | None = None  # in a test: what it took, to empty after
        self.empties: list[str] = []  # databases without tables, dropped after the test
        # Every connection an app's pool opens, held until the test that made it ends and
        # closed then: an app a test lets go of is collected whenever Python gets to it,
        # and psycopg warns (an error here) of a connection that is collected open.
        self.opened: list[psycopg.Connection] = []
        event.listen(Pool, "connect", self.remember)

    def remember(self, dbapi_connection, _record) -> None:
        """Pool event: a new connection, to be closed after its test."""
        if isinstance(dbapi_connection, psycopg.Connection):
            self.opened.append(dbapi_connection)

    def url_for(self, path: Path | str, empty: bool = False) -> str:
        """The URL of the database that stands for ``path`` (the same all through a test):
        a copy of the template, or (``empty``) one without tables, for the migrations."""
        key = str(path)
        if key not in self.named and empty:
            self.named[key] = self.new_empty()
        elif key not in self.named:
            self.named[key] = name = self.free.pop() if self.free else self.new()
            if self.taken is not None:  # taken outside a test: kept for the session
                self.taken.append(name)
        return self.server.url(self.named[key])

    def new(self) -> str:
        """Another copy of the template."""
        self.made += 1
        name = f"companion_{self.made}"
        self.admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(TEMPLATE)
            )
        )
        return name

    def new_empty(self) -> str:
        """A new database without tables, dropped after the test."""
        self.made += 1
        name = f"companion_empty_{self.made}"
        self.admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.empties.append(name)
        return name

    def begin_test(self) -> None:
        """A test starts: what it takes is emptied when it ends."""
        self.taken = []

    def end_test(self) -> None:
        """A test ended: close its apps' connections, empty its databases for the next."""
        taken, self.taken = self.taken or [], None
        done = set(taken) | set(self.empties)
        watchers_stopped()
        self.disconnect(done)
        for name in taken:
            with self.server.connect(name) as connection:
                connection.execute("SET lock_timeout = '10s'")
                connection.execute(
                    sql.SQL("TRUNCATE {} RESTART IDENTITY CASCADE").format(self.tables)
                )
            self.free.append(name)
        for name in self.empties:
            self.admin.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )
        self.empties = []
        self.named = {key: name for key, name in self.named.items() if name not in done}

    def disconnect(self, names: set[str]) -> None:
        """Close every connection to the databases ``names``: the apps', then the rest."""
        close_connections(names)
        self.close_opened(names)
        for name in names:
            self.admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )

    def copy(self, source: str, target: str) -> None:
        """A new database ``target``, a copy of ``source`` (kept for the session:
        tests/kept.py)."""
        self.disconnect({source})
        self.admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(target), sql.Identifier(source)
            )
        )

    def replace(self, database: str, source: str) -> None:
        """The test's database ``database`` replaced by a copy of ``source``."""
        self.disconnect({database})
        self.admin.execute(
            sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database))
        )
        self.copy(source, database)

    def close_opened(self, names: set[str] | None) -> None:
        """Close the apps' connections to the databases ``names`` (None: all)."""
        keep = []
        for connection in self.opened:
            if connection.closed:  # by its pool
                continue
            if names is None or connection.info.dbname in names:
                connection.close()
            else:
                keep.append(connection)
        self.opened = keep

    def close(self) -> None:
        """Close the connections (the server goes with its folder)."""
        close_connections(None)
        self.close_opened(None)
        event.remove(Pool, "connect", self.remember)
        self.admin.close()


def watchers_stopped() -> None:
    """Wait for the apps' stream watchers (``companion.storage.feed``) to stop, their last
    stream gone with the test: each within ``LISTEN_WAIT`` of it. One still reading stamps
    through a pooled connection that ``disconnect`` closes from this thread could read the
    reply to the next connection's query, which reuses the closed socket's number (the
    TRUNCATE's connection then waited for ever: "got no result from the query"). A
    watcher a test left streams to is left running after a bound, as before."""
    deadline = time.monotonic() + 3 * LISTEN_WAIT
    for thread in threading.enumerate():
        if thread.name == WATCHER_NAME:
            thread.join(max(0.0, deadline - time.monotonic()))


def close_connections(names: set[str] | None) -> None:
    """Dispose of the engines of every app on one of the databases ``names`` (None: all).

    An app keeps a pool of connections; a test's apps are left to the garbage collector,
    which would close them late (and a connection open at TRUNCATE makes it wait).
    """
    for engines in list(db._app_engines.values()):
        for engine in engines.values():
            if engine.dialect.name == "postgresql" and (
                names is None or engine.url.database in names
            ):
                engine.dispose()
