"""Serve the companion on the local network: `python -m companion.serve`.

It binds the port first (a busy port is one line, before anything else but a certificate
it cannot use), checks and migrates the database, prints the address phones should open
with a QR code, and serves: with gunicorn's gevent workers on POSIX (one worker in this
process itself, on a machine of 1 GB or less), or with waitress in this one process
(Windows). With a certificate (COMPANION_CERT, COMPANION_KEY) gunicorn serves HTTPS, and
the address and the links say https://.
"""

import sys

# gevent patches the standard library (sockets, threads, sleep) before anything else is
# imported, in the launcher only: gunicorn's gevent workers are forked from it.
if __name__ == "__main__" and sys.platform != "win32":
    from gevent import monkey

    monkey.patch_all()

import argparse
import errno
import functools
import gc
import os
import signal
import socket
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import waitress

from companion import background, storage
from companion.app import create_app
from companion.backup.copies import copy_daily_in_background
from companion.config import PROJECT_ROOT
from companion.db import attach_migrations, db
from companion.startup import StorageError
from companion.store import database_file, fill_statistics
from companion.web.network import is_loopback, phone_url, print_qr
from companion.web.tls import certificate_problem, scheme

try:
    import resource
except ImportError:  # Windows
    resource = None

try:
    import gevent
    from gevent.server import StreamServer
    from gunicorn import arbiter as gunicorn_arbiter
    from gunicorn import sock as gunicorn_sock
    from gunicorn.app.base import BaseApplication
    from gunicorn.http import wsgi as gunicorn_wsgi
    from gunicorn.workers import ggevent
except ImportError:  # Windows: gunicorn needs fork; waitress serves in one process
    BaseApplication = StreamServer = object
    gevent = gunicorn_arbiter = gunicorn_sock = gunicorn_wsgi = ggevent = None

BACKLOG = 1024  # connections waiting to be accepted
# Connections a worker accepts each time its loop finds some waiting (gunicorn takes one).
ACCEPT = 100
MAX_WORKERS = 4
# A machine with this much memory or less (MB) serves with one worker, in the launcher's
# own process: the whole idle server then takes about 110 MB, where two workers took 155
# (bench/idle_memory.py), a third of a Pi Zero 2 W's 512 MB (427 once its kernel is in).
SMALL_MACHINE_MB = 1024
MEMINFO = "/proc/meminfo"
# Open connections a worker holds at once: every phone keeps an event stream open, and
# a stream or a slow client costs a greenlet (bench/load.py holds 2,000 on two workers).
CONNECTIONS = 4000
# What the Server header says, with either server: no software or version to look up.
SERVER_NAME = "companion"
THREADS = 4  # waitress's threads (Windows): there phones poll instead

# gunicorn's settings for `make run`; GUNICORN_CMD_ARGS may override any of them.
GUNICORN = {
    "worker_connections": CONNECTIONS,
    "backlog": BACKLOG,
    # A phone without its stream polls every 2 s: a connection kept 10 s serves its next.
    "keepalive": 10,
    "timeout": 30,  # a worker silent this long is stuck: killed and replaced
    "graceful_timeout": 10,  # on stop or SIGHUP, requests in flight get this long
    "loglevel": "warning",  # the terminal shows the address and QR code, then problems
    "control_socket_disable": True,  # no gunicornc socket in the home folder
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read --host and --port, defaulting to COMPANION_HOST / COMPANION_PORT."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("COMPANION_HOST", "0.0.0.0"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("COMPANION_PORT", "8000")))
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="server processes (default: one per CPU core, at most 4; one with 1 GB of "
        "memory or less)",
    )
    parser.add_argument(
        "--cert",
        default=os.environ.get("COMPANION_CERT") or None,
        help="serve HTTPS with this certificate (PEM; default: COMPANION_CERT)",
    )
    parser.add_argument(
        "--key",
        default=os.environ.get("COMPANION_KEY") or None,
        help="the certificate's private key (PEM; default: COMPANION_KEY, else in --cert)",
    )
    args = parser.parse_args(argv)
    if args.workers is not None:
        args.workers_why = "as --workers asks"
    elif "COMPANION_WORKERS" in os.environ:
        args.workers = int(os.environ["COMPANION_WORKERS"])
        args.workers_why = "as COMPANION_WORKERS asks"
    else:
        args.workers, args.workers_why = default_workers()
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    return args


def tls_problem(args: argparse.Namespace) -> str | None:
    """One line that says why the HTTPS asked for cannot be served, or None.

    Waitress (Windows) has no TLS. Serving plain HTTP instead would print http:// links
    and QR codes the household did not ask for, and the phones that saved the https://
    address (or installed the app from it) would fail: better not to start.
    """
    if args.key and not args.cert:
        return "COMPANION_KEY is set but COMPANION_CERT is not: set both for HTTPS."
    if not args.cert:
        return None
    if BaseApplication is object:
        return (
            "This computer's server (waitress, on Windows) cannot serve HTTPS: unset "
            "COMPANION_CERT and put Caddy in front (README: HTTPS at home)."
        )
    return certificate_problem(args.cert, args.key)


def default_workers() -> tuple[int, str]:
    """How many workers serve, and why: one per core, at most MAX_WORKERS; one on a
    machine of SMALL_MACHINE_MB or less (a second worker takes about 35 MB more)."""
    memory = memory_mb()
    if memory is not None and memory <= SMALL_MACHINE_MB:
        return 1, f"this machine has {memory} MB of memory"
    cores = os.cpu_count() or 1
    if cores == 1:
        return 1, "one core"
    if cores > MAX_WORKERS:
        return MAX_WORKERS, f"one per core, at most {MAX_WORKERS}"
    return cores, "one per core"


def memory_mb(meminfo: str | os.PathLike = MEMINFO) -> int | None:
    """This machine's memory in MB (MemTotal: what its kernel leaves to programs), or
    None where the system does not say so in /proc/meminfo (Windows, macOS)."""
    try:
        with open(meminfo) as lines:
            for line in lines:
                name, _, value = line.partition(":")
                if name == "MemTotal":
                    return int(value.split()[0]) // 1024  # in kB
    except OSError:
        return None
    return None


def workers_line(args: argparse.Namespace) -> str:
    """The launcher's line that says how many workers serve, and why."""
    return f"{args.workers} worker{'s' if args.workers > 1 else ''}: {args.workers_why}"


@contextmanager
def one_server_at_a_time() -> Iterator[None]:
    """Servers starting together on one PostgreSQL migrate one after the other: the
    next finds the tables there (``storage.migrating_alone``)."""
    with storage.migrating_alone(db.engine):
        yield


def main(argv: list[str] | None = None) -> None:
    """Bind, migrate, start the background process, and serve until stopped."""
    args = parse_args(argv)
    problem = tls_problem(args)
    if problem:
        raise SystemExit(problem)
    # WORKERS: a lone worker's streams look less often at the database (storage.feed).
    settings = {"HOST": args.host, "CERT": args.cert, "KEY": args.key, "WORKERS": args.workers}
    try:
        listener = bind(args.host, args.port)
    except OSError as error:
        raise SystemExit(cannot_listen(args.host, args.port, error)) from None
    try:
        app = create_app(settings, migrations=False)
    except StorageError as error:
        raise SystemExit(error.format_message()) from None
    migrated(app)
    with app.app_context():
        with one_server_at_a_time():
            fill_statistics()  # here: what it loads and configures, the forks share
        db.engine.dispose()  # no connection may cross into a forked worker
    # Shared by the forks; a lone worker compiles the table's before its first round.
    compile_templates(app, None if args.workers > 1 else table_templates(app))
    freeze_startup_objects()  # before the forks: their pages stay shared (see there)
    # Luck in a process of its own (its first look fills what was played before it ran,
    # or restored), kept running as the workers are (``keep_apart``); the workers figure
    # it only when that process cannot start.
    keeper = background.Keeper(dict(app.config))
    try:
        listen_and_serve(app, listener, args, settings, keeper)
    finally:
        keeper.stop()  # the server's own end is the process's


def compile_templates(app, names: list[str] | None = None) -> None:
    """Compile every template (or those ``names``) once, before the workers' forks: they
    share the launcher's app (``Gunicorn.load``), so none compiles its own. Compiled at
    first use, they took a worker a tenth of its CPU in a 3-game ``bench.push``. A
    server of one worker (a machine of 1 GB or less) compiles the table's alone: all of
    them at once took 10 MB more of its idle memory (bench.idle_memory: 116 MB against
    106); the household's pages, the history and the backups compile as they are used."""
    for name in names if names is not None else app.jinja_env.list_templates():
        app.jinja_env.get_template(name)


def table_templates(app) -> list[str]:
    """The templates a table's phones and TV are served while it plays: the match pages,
    their live regions, a game's end, and the pieces they import. Compiled at first use
    in a lone worker, they held up the first round's push and the first game's end
    (45 ms of this machine's CPU at the first game's end: half a second at a tenth of a
    core, issue 59)."""
    return [
        name
        for name in app.jinja_env.list_templates()
        if name.startswith("matches/") or "/" not in name
    ]


def migrated(app) -> None:
    """Bring the database to the newest schema: in a process of its own where the
    system forks, so that Alembic (11 MB, ``db.attach_migrations``) stays out of the
    server's processes."""
    if not background.FORKS:
        migrate(app)
        return
    pid = background.fork()
    if pid == 0:  # the migration's process: it never returns into the server's code
        code = 1
        try:
            migrate(app)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status:
        raise SystemExit("The database could not be brought up to date: see above.")


def migrate(app) -> None:
    """Migrate in this process, then close its connections: none may cross into a fork."""
    from flask_migrate import upgrade  # here alone: see ``migrated``

    attach_migrations(app, str(PROJECT_ROOT / "migrations"))
    with app.app_context():
        with one_server_at_a_time():
            upgrade()
        db.engine.dispose()


def keep_apart(keeper: background.Keeper, settings: dict) -> bool:
    """Start the background process and say in the workers' ``settings`` whether it runs
    (``LUCK_APART``) and where it marks the derived data in line (for /healthz)."""
    apart = keeper.begin()
    settings["LUCK_APART"] = apart
    settings[background.IN_LINE] = keeper.in_line if apart else None
    return apart


def listen_and_serve(
    app, listener: socket.socket, args: argparse.Namespace, settings, keeper
) -> None:
    """Listen, show where to connect, and serve until stopped."""
    try:  # only now: a phone (or a script waiting for the port) must find the tables there
        listener.listen(BACKLOG)
    except OSError as error:
        raise SystemExit(cannot_listen(args.host, args.port, error)) from None
    print(workers_line(args), flush=True)  # once it serves: a failed start is one line
    url = phone_url(args.host, args.port, scheme(settings))
    if is_loopback(args.host):
        print(
            f"Open {url} on this computer: it listens on {args.host} alone, so other phones "
            "cannot reach it (COMPANION_HOST=0.0.0.0 serves the network)",
            flush=True,
        )
    else:
        print(f"Open {url} on a phone on the same network", flush=True)
        print_qr(url)
        print(names_line(app.config["TRUSTED_HOSTS"]), flush=True)
    sys.stdout.flush()
    if args.workers == 1 or BaseApplication is object:
        if keep_apart(keeper, settings):
            keeper.keep_in_thread()
        app.config.update(settings)
        serve(app, listener, settings)
    else:
        allow_open_files()
        # gunicorn's master starts it, as it forks its workers (``Arbiter.start``).
        keeper.start = functools.partial(background.start, watched=True)
        Gunicorn(listener, args.workers, settings, keeper, app).run()


def names_line(names: list[str]) -> str:
    """The banner's line of the names the server answers to (companion.web.guard): a
    phone may open any of them that the network knows, such as http://pi.fritz.box:8000."""
    return f"It answers to {', '.join(names)} (more: COMPANION_TRUSTED_HOSTS)"


def allow_open_files() -> None:
    """Raise this process's limit of open files to what the system allows: every phone
    holds a connection open (the usual soft limit, 1,024, is a few busy tables)."""
    if resource is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = CONNECTIONS * MAX_WORKERS if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def bind(host: str, port: int) -> socket.socket:
    """The server's socket, bound once (a busy port shows here) and shared by every worker."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except OSError:
        listener.close()
        raise
    return listener


def cannot_listen(host: str, port: int, error: OSError) -> str:
    """One line that says why host:port cannot be served and what to do."""
    where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"Port {port} is already in use ({where}): is the companion already running? "
            "Stop it, or choose another port with --port or COMPANION_PORT."
        )
    if error.errno == errno.EACCES:
        return (
            f"Not allowed to listen on {where}: choose a port above 1023 with --port "
            "or COMPANION_PORT."
        )
    return f"Cannot listen on {where}: {error.strerror}. Check --host and --port."


def serve(app, listener: socket.socket, settings: dict) -> None:
    """Answer requests on the socket in this process: with one gunicorn gevent worker
    (``Gunicorn.serve_alone``), or with waitress where there is no gunicorn (Windows)."""
    if BaseApplication is not object:
        allow_open_files()
        Gunicorn(listener, 1, settings, app=app).serve_alone()
        return
    # Every phone at every table keeps a connection open while it polls; waitress
    # allows only 100 by default, which a few busy tables would use up. It waits on
    # select(), which cannot watch more than 1024 descriptors: stay well below.
    start_serving(app)
    waitress.serve(
        app, sockets=[listener], threads=THREADS, connection_limit=900, ident=SERVER_NAME
    )


class Gunicorn(BaseApplication):
    """gunicorn's master on our bound socket, with ``workers`` gevent worker processes.

    One Python process runs one thread at a time, so a busy evening (or a Raspberry
    Pi's four cores) is served by one worker per core. Each worker serves its copy of
    the launcher's app, whose connections were closed before the fork, so no database
    connection is shared; writes queue across workers
    on the database's writer lock (``companion.store.writing``). gunicorn replaces a worker that
    dies or is stuck, reloads them all gracefully on SIGHUP, and each worker stops when
    it sees its master gone, however the master died. The master keeps the background
    process (``keeper``; None when there is none) alive too (``Arbiter``).
    """

    def __init__(
        self, listener: socket.socket, workers: int, settings: dict, keeper=None, app=None
    ):
        self.listener = listener
        self.workers = workers
        self.settings = settings  # the app's: HOST, and CERT and KEY for HTTPS
        self.keeper = keeper
        self.made = app  # the launcher's: its templates compiled (``compile_templates``)
        # gunicorn has no setting for its Server header (benoitc/gunicorn#825): its
        # responses take these two names from its http.wsgi module, set before any fork.
        gunicorn_wsgi.SERVER = gunicorn_wsgi.SERVER_SOFTWARE = SERVER_NAME
        super().__init__()

    def load_config(self) -> None:
        """Our settings, then whatever GUNICORN_CMD_ARGS says (as gunicorn itself reads it)."""
        settings = {
            **GUNICORN,
            "bind": [f"fd://{self.listener.fileno()}"],
            "workers": self.workers,
            "worker_class": Worker,  # gunicorn's gevent worker, accepting what waits
            "post_fork": first_heartbeat,
            "post_worker_init": start_worker,
            "pre_request": close_after_large_body,
        }
        if self.settings["CERT"]:  # HTTPS: each worker wraps its connections in TLS
            settings |= {
                "certfile": self.settings["CERT"],
                "keyfile": self.settings["KEY"],
                "ssl_context": handshake_in_handler,
            }
        for key, value in settings.items():
            self.cfg.set(key, value)
        overrides = self.cfg.parser().parse_args(self.cfg.get_cmd_args_from_env())
        for key, value in vars(overrides).items():
            if value is not None and key != "args":
                self.cfg.set(key.lower(), value)

    def load(self):
        """The launcher's app, made before the fork (its connections closed, its
        templates compiled, its objects frozen: the workers share its pages), with the
        settings the master has added (the background process's); else a new one."""
        if self.made is None:
            return create_app(self.settings, migrations=False)
        self.made.config.update(self.settings)
        return self.made

    def serve_alone(self) -> None:
        """Serve with one gevent worker in this process, without gunicorn's master.

        A master of its own costs a small machine 25 MB more (bench/idle_memory.py),
        and waitress, which serves in one process too, holds no event stream: phones
        polled every 2 s, and a round reached them a second later on average. The
        worker is gunicorn's, as with several, so it serves HTTPS, the same headers
        and limits, and stops gracefully on SIGTERM; Ctrl-C ends it at once. Nothing
        restarts it when it dies: systemd does (`make service`).
        """
        log = self.cfg.logger_class(self.cfg)
        sockets = gunicorn_sock.create_sockets(self.cfg, log)
        worker = Worker(1, os.getppid(), sockets, self, self.cfg.timeout / 2, self.cfg, log)
        worker.pid, worker.alone = os.getpid(), True
        try:
            worker.init_process()
        finally:
            worker.tmp.close()

    def run(self) -> None:
        """Serve as gunicorn's ``BaseApplication.run`` does, with our Arbiter."""
        try:
            Arbiter(self).run()
        except RuntimeError as error:
            print(f"\nError: {error}\n", file=sys.stderr, flush=True)
            sys.exit(1)


class Arbiter(getattr(gunicorn_arbiter, "Arbiter", object)):
    """gunicorn's master, keeping the background process as it keeps its workers.

    Its loop already wakes at every child's end (SIGCHLD) and at least once a second to
    replace a worker that died: the background process's ``Keeper`` rides along, as
    gunicorn's own second kind of process (its "dirty arbiter") does. The dirty arbiter
    itself does not fit: it serves the workers' calls over a socket from a pool of its
    own, restarts without a back-off, and kills any process of the same user that its
    PID file in /tmp names (another household's server on the machine, a test's).
    """

    def start(self) -> None:
        """Start as gunicorn does, then the background process, before the workers (they
        read whether it runs)."""
        super().start()
        if not keep_apart(self.app.keeper, self.app.settings):
            self.app.keeper = None  # the workers figure luck: nothing to keep

    def handle_chld(self) -> None:
        """A child ended: the keeper reads the background process's exit status first,
        before gunicorn's ``waitpid(-1)`` takes it (gunicorn reads its dirty arbiter's
        so too)."""
        keeper = self.app.keeper
        if keeper is not None:
            keeper.reap()
        super().handle_chld()

    # SIGCLD is SIGCHLD's other name on Linux, and the one gunicorn's loop looks up.
    handle_cld = handle_chld

    def manage_workers(self) -> None:
        """Keep the number of workers, and the background process, running."""
        super().manage_workers()
        keeper = self.app.keeper
        if keeper is not None:
            keeper.tend()


class AcceptingServer(StreamServer):
    """gevent's server, accepting up to ACCEPT waiting connections at once, whatever
    gunicorn sets.

    With more than one worker gunicorn sets ``max_accept`` to 1, to spread connections
    over the workers: a worker then takes one connection each time round its loop, and a
    round is as long as the requests it runs. One address opening streams by the
    thousand (issue 42) then kept every other phone's connection in the kernel's queue
    behind its own, in the order they came: a bystander's page took as long as a flood's
    stream to open (0.6 s at a Raspberry Pi's share of a core, its own work 10 ms).
    Accepted at once, each waits in the app's line of its own address
    (``companion.web.by_address``), and the bystander's goes first.
    """

    max_accept = property(lambda self: ACCEPT, lambda self, value: None)


class Worker(getattr(ggevent, "GeventWorker", object)):
    """gunicorn's gevent worker, serving with AcceptingServer.

    gunicorn has no setting for ``max_accept`` and makes the server inside ``run``: the
    server class is swapped in its module, in this worker's process only.
    """

    alone = False  # in the launcher's process, without a master (``Gunicorn.serve_alone``)

    def run(self) -> None:
        """Serve as gunicorn's gevent worker does, with AcceptingServer."""
        ggevent.StreamServer = AcceptingServer
        self.idle: set[socket.socket] = set()  # connections between two requests
        super().run()

    def handle(self, listener, client, addr) -> None:
        """Serve a connection as gunicorn does; idle until its first request."""
        self.idle.add(client)
        try:
            super().handle(listener, client, addr)
        finally:
            self.idle.discard(client)

    def handle_request(self, listener_name, req, sock, addr) -> None:
        """Answer as gunicorn does; once the worker stops, close the connection after the
        answer. gunicorn keeps it alive when the answer began before the stop, and then
        waits for the phone's next request on it until the graceful timeout."""
        self.idle.discard(sock)
        try:
            super().handle_request(listener_name, req, sock, addr)
        finally:
            self.idle.add(sock)
        if not self.alive:
            raise StopIteration("the worker stops")

    def handle_exit(self, sig, frame) -> None:
        """SIGTERM (a stop, a restart, a reload): stop as gunicorn does, and end the live
        streams and the idle connections at once (in a greenlet, out of the signal
        handler). A stream never ends by itself, and a phone's connection kept alive
        between its requests (every 2 s while it polls) waits ``keepalive`` for the next
        one: each held its worker for ``graceful_timeout``. Its phone reconnects as after
        any drop, to the server that comes next."""
        super().handle_exit(sig, frame)
        gevent.spawn(self.close_idle)
        app = getattr(self, "wsgi", None)  # None while the worker still loads it: no stream
        feed = app.extensions.get("companion.feed") if app is not None else None
        if feed is not None:
            gevent.spawn(feed.end_all)

    def close_idle(self) -> None:
        """Shut the idle connections down: the read that waits for their next request
        ends as when a phone closes one (not cancelled by gevent, which gunicorn would log
        as a socket error). A twin of the socket shuts it, the handler closes its own.

        A connection whose request has already come (accepted just before the stop, its
        bytes not read yet) is not idle: it is answered, then closed. Shut, its phone's
        request would fail although the server still answers."""
        for client in list(getattr(self, "idle", ())):
            with (
                suppress(OSError),
                socket.fromfd(client.fileno(), client.family, client.type) as twin,
            ):
                if not request_waiting(twin):
                    twin.shutdown(socket.SHUT_RDWR)


def request_waiting(connection: socket.socket) -> bool:
    """True when bytes wait to be read on ``connection`` (a peek that never waits)."""
    connection.settimeout(0)  # gevent's socket too: no data is an error at once
    try:
        return bool(connection.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return False


def handshake_in_handler(_config, make_context):
    """gunicorn's ssl_context hook: each connection's TLS handshake is made by gunicorn's
    handler, which logs a failed one in a line (a phone that opened http://, a connection
    closed at once), and not before it by gevent's server, which printed a traceback."""
    context = make_context()
    context.wrap_socket = functools.partial(context.wrap_socket, do_handshake_on_connect=False)
    return context


def first_heartbeat(_server, worker) -> None:
    """gunicorn's post_fork hook: say "alive" at once, so a worker stuck starting times out.

    gunicorn compares the heartbeat with a monotonic clock, but a new worker's file
    carries the wall-clock time until its first heartbeat: it would never time out.
    """
    worker.notify()


def close_after_large_body(worker, req) -> None:
    """gunicorn's pre_request hook: a body larger than the app reads closes the connection.

    The app refuses a body past MAX_CONTENT_LENGTH (413, or the API's 400) without
    reading it. gunicorn then drains at most 64 KB of what is left before the next
    request; past that, it drops the connection its answer called keep-alive, and the
    phone's next request there fails. Closing says so (``Connection: close``): the
    phone opens a new one. An import's large file closes its connection too: once.
    """
    limit = worker.wsgi.config.get("MAX_CONTENT_LENGTH")
    for name, value in req.headers:
        # gunicorn has checked both headers: a length is digits, chunked the last coding.
        too_large = name == "CONTENT-LENGTH" and limit is not None and int(value) > limit
        if too_large or name == "TRANSFER-ENCODING":  # chunked: no length to judge by
            req.force_close()
            return


def start_worker(worker) -> None:
    """gunicorn's post_worker_init hook: the worker's app is made; start its helpers.

    A gevent worker holds the match pages' event streams (a greenlet each); another
    worker class (GUNICORN_CMD_ARGS="--worker-class gthread") leaves the pages polling.
    """
    worker.wsgi.config["LIVE_PUSH"] = isinstance(worker, ggevent.GeventWorker)
    # Ctrl-C reaches every process of the terminal's group, the master and each worker;
    # the master answers it by sending each worker SIGQUIT. A worker that also quits on
    # the SIGINT itself quits twice, and a gevent worker then prints the second exit as a
    # traceback (benoitc/gunicorn#3239): let the master's word alone end it.
    if not getattr(worker, "alone", False):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    start_serving(worker.wsgi)


def start_serving(app) -> None:
    """What each serving process runs beside its requests (gunicorn worker or waitress)."""
    storage.checkpoint_in_background(app)
    # `flask restore` waits for the server to stop
    storage.sqlite.hold_serving_lock(database_file(app))
    copy_daily_in_background(app)  # instance/backups/ (companion.backup.copies)
    freeze_startup_objects()


def freeze_startup_objects() -> None:
    """Leave the objects made so far (modules, models, the app) out of the garbage
    collector's full collections, as the gc module's documentation advises for a
    server's long-lived objects (``gc.freeze``).

    A full collection walks every object the process holds and stops every thread of
    it meanwhile: with about 150,000 objects, 140-170 ms each, a few times a minute
    under load, and every request in flight waited for it (bench/load.py, 100 tables:
    p95 170-180 ms; frozen, the pauses take 50-65 ms and p95 78-160 ms over five runs).

    The server freezes before it forks (the background process, gunicorn's workers), as
    the documentation advises too: a collection in a forked process writes to every
    object it walks, and each page the fork shared became a copy of the process's own.
    An idle household server (``bench.idle_memory``) went from 212-214 MB of PSS to 155-161.
    """
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    main()
