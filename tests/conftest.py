"""Fixtures: the app and its clients, a live server, and a phone-sized Chromium.

``--database=postgresql`` (or COMPANION_TEST_DATABASE=postgresql) runs the tests that
touch the database on a PostgreSQL server started for the session (tests/postgresql.py):
those that use the ``app`` fixture or are marked ``database``, except the browser
tests and those marked ``sqlite_only`` or ``dialect_free``; those marked ``postgresql``
run only then.
"""

import os
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS, HTMX_FILE, LAN_HOST, PHONE, SSE_FILE, route_cdn
from driver import add_players, start_game, start_match
from jinja2 import FileSystemBytecodeCache
from phones import start_server, stop
from postgresql import Databases, Server
from waitress import create_server, wasyncore

from companion.app import create_app  # every model in db.metadata (tests/postgresql.py)
from companion.db import db

TESTS = Path(__file__).resolve().parent
ARTIFACTS = TESTS / ".artifacts"


ENGINES = ("sqlite", "postgresql")
POSTGRESQL: dict = {}  # "databases": the session's tests/postgresql.Databases, on PostgreSQL
SESSION = {"started": time.monotonic()}


def pytest_addoption(parser):
    parser.addoption(
        "--database",
        choices=ENGINES,
        default=os.environ.get("COMPANION_TEST_DATABASE", "sqlite"),
        help="run the tests that touch the database on SQLite files (default) or on a "
        "PostgreSQL server started for the session (tests/postgresql.py)",
    )


def pytest_sessionstart(session):
    SESSION["started"] = time.monotonic()


def on_postgresql(config) -> bool:
    """True when this session runs on PostgreSQL."""
    return config.getoption("--database") == "postgresql"


def touches_database(item) -> bool:
    """The test builds an app on a database: the ``app`` fixture, or marked ``database``
    (or ``postgresql``)."""
    return "app" in item.fixturenames or any(
        item.get_closest_marker(name) for name in ("database", "postgresql")
    )


def pytest_collection_modifyitems(config, items):
    """On PostgreSQL keep the tests that touch the database (not the browser's, not those
    about SQLite or that no dialect could change); on SQLite leave out those about
    PostgreSQL."""
    if on_postgresql(config):
        keep = [
            item
            for item in items
            if touches_database(item)
            and not any(
                item.get_closest_marker(name) for name in ("browser", "sqlite_only", "dialect_free")
            )
        ]
    else:
        keep = [item for item in items if not item.get_closest_marker("postgresql")]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep


@pytest.fixture(scope="session", autouse=True)
def postgresql_server(request):
    """On PostgreSQL: the session's server and its databases (else nothing)."""
    if not on_postgresql(request.config):
        yield None
        return
    require(Server.installed(), "PostgreSQL's pg_ctl not found (Debian: apt install postgresql)")
    started = time.monotonic()
    server = Server().start()
    try:
        POSTGRESQL["databases"] = databases = Databases(server)
        SESSION["server"] = time.monotonic() - started
        yield server
        databases.close()
    finally:
        POSTGRESQL.clear()
        server.stop()


@pytest.fixture(autouse=True)
def fresh_databases(postgresql_server):
    """On PostgreSQL: the databases this test's apps took are emptied after it."""
    databases = POSTGRESQL.get("databases")
    if databases is None:
        yield
        return
    databases.begin_test()
    yield
    databases.end_test()


def pytest_terminal_summary(terminalreporter, config):
    """On PostgreSQL, say so at the end, with how long the server took to start."""
    if on_postgresql(config):
        passed = len(terminalreporter.stats.get("passed", []))
        took = time.monotonic() - SESSION["started"]
        terminalreporter.write_line(
            f"PostgreSQL run: {passed} tests passed in {took:.0f} s "
            f"(the server started in {SESSION.get('server', 0):.1f} s)"
        )


def database_url(database: Path, empty: bool = False) -> str:
    """The URL of the test database standing for the SQLite file ``database``: on
    PostgreSQL with every table, or none (``empty``, as a new SQLite file has)."""
    databases = POSTGRESQL.get("databases")
    return databases.url_for(database, empty) if databases else f"sqlite:///{database}"


def testing_config(database: Path, **overrides) -> dict:
    """A config for tests: its own database, a fixed secret, UTC, CSRF off unless asked.

    The database is the SQLite file ``database``, or on PostgreSQL a database of the
    test's own that stands for it (tests/postgresql.py).
    """
    return {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": database_url(database),
        "SECRET_KEY": "test-secret-key",
        "WTF_CSRF_ENABLED": False,
        "TIMEZONE": "UTC",  # the times the tests expect, whatever the machine's zone
        # An import's luck is figured in a helper process (companion.backup.apart); the
        # tests of that turn it on, the others figure on the spot (luck.json) or not at all.
        "FILL_LUCK_APART": False,
        # The luck a game's end leaves stale is figured once the answer has gone out
        # (store.after_the_answer); the test client closes no answer, so it is figured
        # before the answer here. The real servers of the browser tests do it after.
        "AFTER_THE_ANSWER": False,
        **overrides,
    }


# The caps of a server that every browser test of the session shares (live_server).
SHARED_BY_THE_SESSION = {
    "PLAYERS_HELD": 100_000,
    "MATCHES_HELD": 100_000,
    "AFTER_THE_ANSWER": True,  # as every real server does
    # Waitress holds no event stream open, so these pages poll: every 0.5 s, not the 2 s
    # of a household's server (tests/play/test_live.py), a push then takes a quarter of
    # the wait; what a poll brings is the same.
    "LIVE_POLL": "0.5s",
}


# Each test's app has a Jinja environment of its own, which would parse and compile every
# template it renders anew: a third of a web test's time. Compiled once per test process
# (Jinja's own bytecode cache, keyed by each template's source) they are loaded instead.
COMPILED_TEMPLATES: dict = {}  # "cache": the session's FileSystemBytecodeCache


@pytest.fixture(scope="session", autouse=True)
def compiled_templates(tmp_path_factory):
    """The templates this test process compiled, kept in a folder of its own."""
    COMPILED_TEMPLATES["cache"] = FileSystemBytecodeCache(str(tmp_path_factory.mktemp("jinja")))
    yield
    COMPILED_TEMPLATES.clear()


# A new SQLite database with every table, made once per test process and copied into
# each new database after (a millisecond; create_all takes 13). On PostgreSQL each
# test's database is a copy of a template that has them (tests/postgresql.py).
SCHEMA: dict[str, Path] = {}


def make_app(database: Path, **overrides):
    """Create an app on a fresh database with every table in place."""
    app = create_app(testing_config(database, **overrides))
    app.jinja_env.bytecode_cache = COMPILED_TEMPLATES.get("cache")
    with app.app_context():
        if app.config["SQLALCHEMY_DATABASE_URI"] == f"sqlite:///{database}":
            add_every_table(database)
        elif app.config["SQLALCHEMY_DATABASE_URI"] != database_url(database):
            db.create_all()  # another database than the test's (on PostgreSQL: a copy of
            # the template, with every table)
    return app


def add_every_table(database: Path) -> None:
    """Every table in the SQLite ``database`` (in this app's context): a copy of the
    schema's database when it has none yet, else create_all (what is missing)."""
    with closing(sqlite3.connect(database)) as connection:
        empty = not connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    schema = SCHEMA.get("sqlite")
    if not (empty and schema):
        db.create_all()
        if empty:
            SCHEMA["sqlite"] = schema = Path(tempfile.mkdtemp()) / "schema.sqlite"
            copy_sqlite(database, schema)
        return
    db.engine.dispose()  # no connection of the app sees the file change under it
    copy_sqlite(schema, database)


def copy_sqlite(source: Path, target: Path) -> None:
    """The SQLite database ``source`` copied over ``target`` (SQLite's backup)."""
    with closing(sqlite3.connect(source)) as original, closing(sqlite3.connect(target)) as copy:
        original.backup(copy)


def forget_cached(app) -> None:
    """Empty the app's in-memory caches (companion.memo): its database was put back or
    replaced, and what they hold for a version or a token may no longer be true."""
    for key in [key for key in app.extensions if key.startswith("memo.")]:
        del app.extensions[key]


@pytest.fixture
def app(request, tmp_path):
    """The app on a fresh database; @pytest.mark.app_config(KEY=value) adds config."""
    marker = request.node.get_closest_marker("app_config")
    overrides = marker.kwargs if marker else {}
    return make_app(tmp_path / "companion.sqlite", **overrides)


@pytest.fixture
def client(app):
    """A test client for the app."""
    return app.test_client()


@pytest.fixture
def table(client, app):
    """Anna, Ben and Cleo in a started game; `client` is the phone that created it."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    return ids, match_id


@pytest.fixture
def runner(app):
    """A runner for the app's CLI commands."""
    return app.test_cli_runner()


def require(condition: bool, message: str) -> None:
    """Skip when a browser prerequisite is missing locally; fail in CI, where it must exist."""
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory) -> Iterator[str]:
    """Serve a test app with waitress on a free port; yield its base URL. Every browser
    test of the session adds its players and matches to this one database: far more than
    a household's caps (companion.models), which tests/household/test_caps.py tests."""
    app = make_app(tmp_path_factory.mktemp("live") / "companion.sqlite", **SHARED_BY_THE_SESSION)
    with serving(app) as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def serving(app) -> Iterator[int]:
    """Serve ``app`` with waitress on a free loopback port, in a thread; the port."""
    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    thread = threading.Thread(target=server.run, name="live-server", daemon=True)
    thread.start()
    try:
        yield server.effective_port
    finally:
        stop_server(server, thread)


def stop_server(server, thread: threading.Thread) -> None:
    """Stop waitress from inside its own loop, so no thread sees a socket vanish."""
    server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
    thread.join(timeout=5)
    server.task_dispatcher.shutdown()


@pytest.fixture(scope="session")
def lan_server(tmp_path_factory) -> Iterator[str]:
    """Serve a test app as a home network reaches it: at http://companion.lan:PORT, a name
    Chromium maps to loopback (CHROMIUM_ARGS), so pages are not in a secure context."""
    folder = tmp_path_factory.mktemp("lan")
    app = make_app(folder / "companion.sqlite", TRUSTED_HOSTS=LAN_HOST, **SHARED_BY_THE_SESSION)
    with serving(app) as port:
        yield f"http://{LAN_HOST}:{port}"


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright."""
    require(Path(CHROMIUM).exists(), f"Chromium not found at {CHROMIUM} (set COMPANION_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


def new_phone_context(browser, **options):
    """A browser context the size of a phone, with htmx served offline."""
    context = browser.new_context(**PHONE, **options)
    route_cdn(context)
    return context


@pytest.fixture
def page(browser):
    """A phone-sized page (390x844, touch) with JavaScript and htmx."""
    require(HTMX_FILE.exists(), f"{HTMX_FILE} missing: run `make test` (npm install htmx.org)")
    require(SSE_FILE.exists(), f"{SSE_FILE} missing: run `make test` (npm install htmx-ext-sse)")
    context = new_phone_context(browser)
    yield context.new_page()
    context.close()


@pytest.fixture
def page_nojs(browser):
    """A phone-sized page with JavaScript off: everything must still work."""
    context = new_phone_context(browser, java_script_enabled=False)
    yield context.new_page()
    context.close()


@pytest.fixture
def console_errors(page) -> list[str]:
    """Console errors and uncaught exceptions of `page`, as "url: text" (CSP reports too)."""
    errors: list[str] = []

    def on_console(message) -> None:
        if message.type == "error":
            errors.append(f"{message.location.get('url', '')}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    return errors


@pytest.fixture(scope="session")
def shared_folder(tmp_path_factory) -> Path:
    """A folder every worker process of the session shares (pytest-xdist's workers each
    have a folder of their own in it), for data built once: tests/kept.py."""
    folder = tmp_path_factory.getbasetemp()
    return folder.parent if os.environ.get("PYTEST_XDIST_WORKER") else folder


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The ignored folder for screenshots."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def workers(tmp_path):
    """The real server with 2 workers on a fresh database; yields its process, URL, app."""
    server, port = start_server(tmp_path)
    # The server migrated the database; this app writes the match into the same file.
    app = create_app(testing_config(tmp_path / "workers.sqlite"))
    yield server, f"http://127.0.0.1:{port}", app
    stop(server)


@pytest.fixture
def trio(client):
    """Anna, Ben and Cleo at the table in a default match."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    return ids, start_match(client, ids)


@pytest.fixture
def served(tmp_path):
    """A function that starts the real server (`python -m companion.serve`, gevent
    workers; env as keyword arguments, ``host`` another address than loopback) and
    stops it after the test; an app the test writes through shares its database
    (tests/phones.py)."""
    from phones import start_server, stop  # phones imports this module

    require(HTMX_FILE.exists(), f"{HTMX_FILE} missing: run `make test` (npm install)")
    servers = []

    def start(port=None, **env):
        server, port = start_server(tmp_path, port=port, **env)
        servers.append(server)
        return server, port

    yield start
    for server in servers:
        stop(server)
