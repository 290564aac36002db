"""The work a write leaves for later, in a process of its own at the lowest CPU priority,
so the table never waits for it: a round is stored and pushed to every phone, and its
luck follows in a second push; a game's end is stored with its results, and the
household's statistics of it (its games' and the match's rows, the ratings) follow in a
short write of their own (``store.statistics_after``).

``python -m companion.serve`` (and so ``make run``) starts it beside the server's workers
(``start``), and tells them so (``LUCK_APART``): their writes then place no card for luck
and leave a game's statistics to it.
It follows the database as the phones' live streams do (SQLite's ``data_version``,
PostgreSQL's ``NOTIFY``: ``store.follow_changes``), and for every match whose version
moved since it looked, figures the luck that is not in line with no write open, then
stores it a game at a time, each in a short write through the writer queue
(``store.luck_after``). Its first look takes every match: what a server stopped before it
was figured, an import, an upgrade. Once luck is in line and no table has entered anything
for a few seconds (``QUIET``), it reviews the games that ended (seconds of CPU each), a
round at a time, giving way to a table's entry. It ends when the server that started it
is gone.

The server keeps it as gunicorn keeps its workers (``Keeper``): a background process that
dies (killed, out of memory) is started again within seconds, after a wait that doubles
while it keeps dying, each end and start logged; its first look then takes every match
again. After each look that leaves the derived data in line it marks the moment
(``InLine``), which ``/healthz`` reads to say when the data is behind the table.

A process, not a thread: Python runs one thread of a process at a time, and 0.1 s of
placing cards in a server's worker holds up every stream and request of that worker.
"""

from __future__ import annotations

import logging
import mmap
import multiprocessing
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import Iterable
from contextlib import suppress

from flask import Flask
from sqlalchemy import select

from companion import store
from companion.db import db
from companion.models import Match

RETRY_AFTER = 1.0  # seconds before following the database again after it failed
NICEST = 19  # the lowest CPU priority: on a Raspberry Pi's share of a core, the table first
# Seconds a change is left to settle before its luck is figured: the round's push to every
# phone, and the page of the phone that sent it, go first. A nice of 19 does not do it
# alone: a server held to a share of a core (a cgroup's quota) shares it with this
# process, and CPU spent here while the table waits for its push throttles them all.
SETTLE = 0.4
# Seconds between its looks at SQLite's data_version, for a change whose luck waits
# SETTLE anyway: 50 looks a second were a tenth of a Pi Zero's share of a core spent
# idle (bench.push --cpu-share 0.1, issue 59), and 10 a second 2 ms of CPU a second.
LOOK_EVERY = 0.2
LUCK_GAMES = 2  # a match's stale games figured per look: the newest, then the oldest
# Seconds without a table's entry before a game's review (seconds of CPU) goes on. In a
# cgroup's quota (a Pi's share of a core) the review spends the share a round's write then
# waits for, whatever its nice: a table entering its next game at once (a round a second)
# has its rounds first; one that collects, shuffles and deals (a minute) gets its review
# meanwhile, and between rounds (half a minute each).
QUIET = 3.0
# A background process that died is started again after FIRST_WAIT seconds, then twice as
# long at each death that follows within STEADY seconds of its start, at most LONGEST_WAIT.
FIRST_WAIT = 1.0
LONGEST_WAIT = 60.0
STEADY = 60.0
FORKS = sys.platform != "win32"  # Windows spawns it (``start``)
IN_LINE = store.IN_LINE  # the config's key of the server's InLine (None: not kept)
# What a look's review did (``Matches.review_rounds``).
STORED, GAVE_WAY, NONE_LEFT = "stored", "gave way", "none left"

logger = logging.getLogger(__name__)


def start(config: dict, method: str | None = None, watched: bool = False) -> int | None:
    """Start the background process for a server with this config: its process id; None
    (logged) when it cannot start, and the workers then figure luck after each answer.

    Forked where the system can (``method`` None): the server calls it before it has any
    thread or connection (``serve.main``), and a forked process shares the server's pages
    of Python, Flask and numpy instead of loading its own (75 MB of memory spawned, 41 MB
    forked). A plain ``os.fork``, not multiprocessing's: the server's workers, forked
    after it, would take it for a child of theirs and end it as they exit. A test, whose
    process has threads, asks for "spawn" (as Windows does). ``watched``: forked as
    gunicorn's master forks its workers (``fork``).
    """
    parent = os.getpid()
    if (method or ("fork" if FORKS else "spawn")) == "spawn":
        return spawned({**config, IN_LINE: None}, parent)  # shared memory is not sent
    try:
        pid = fork(watched)
    except OSError:
        logger.exception("the background process could not start: the workers figure luck")
        return None
    if pid == 0:  # the background process: it never returns into the server's code
        code = 1
        try:
            default_signals()
            run(config, parent)
            code = 0
        except BaseException:
            logger.exception("the background process failed")
        finally:
            os._exit(code)
    return pid


def fork(watched: bool = False) -> int:
    """``os.fork``; under gevent's patching (the server's launcher), gevent's fork that
    makes the child's hub anew but sets no child watcher: a libev child watcher reaps
    every child of the server, and gunicorn's master then lost its workers' ends and
    left them as zombies. (gevent is there on POSIX only, with the launcher.)

    ``watched``: gevent's ``os.fork`` that watches the child, as gunicorn's master forks
    its workers: there gevent's loop reaps every child, and keeps the exit status of a
    watched one alone for ``os.waitpid`` (``exit_status``)."""
    if watched:
        return os.fork()
    if "gevent.monkey" in sys.modules:
        from gevent.os import fork_gevent

        return fork_gevent()
    return os.fork()


def default_signals() -> None:
    """Every signal the server's Python code handles back to the system's default, in
    the forked process: one forked from gunicorn's master would queue a SIGTERM for that
    master's loop (which is not there) instead of ending."""
    for number in signal.valid_signals():
        with suppress(OSError, ValueError):
            if callable(signal.getsignal(number)):
                signal.signal(number, signal.SIG_DFL)


def stop(pid: int) -> None:
    """End the background process and wait for it (a server reaps its children itself:
    it may be gone already)."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    with suppress(ChildProcessError):
        os.waitpid(pid, 0)


def exit_status(pid: int) -> int | None:
    """The wait status of the background process once it ended, None while it runs; -1
    when another wait took it (gunicorn's master reaps every child of its own). Always
    None on Windows, where it is spawned: there it is not kept."""
    if not FORKS:
        return None
    try:
        ended, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return -1
    return status if ended else None


def how_it_ended(status: int) -> str:
    """A wait status in words, for the log."""
    if status == -1:
        return "ended (its exit status was taken by another wait)"
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with status {code}"


class Keeper:
    """The background process kept alive as gunicorn keeps its workers: started again
    after it dies, FIRST_WAIT seconds after, twice as long at each death that follows
    soon (within STEADY seconds of its start), at most LONGEST_WAIT. Each end (with its
    exit status) and each start is logged. The server calls ``reap`` when a child of its
    ended and ``tend`` at each turn of its loop (``serve.Arbiter``, or ``keep_in_thread``
    beside waitress). ``start``, ``exited`` and ``clock`` are there for the tests."""

    def __init__(self, config: dict, start=start, exited=exit_status, clock=time.monotonic):
        self.in_line = InLine() if FORKS else None  # shared with the forked processes
        self.config = {**config, IN_LINE: self.in_line}
        self.start, self.exited, self.clock = start, exited, clock
        self.pid: int | None = None
        self.started_at = 0.0
        self.wait = 0.0  # before the next start; 0 until a death
        self.again_at: float | None = None  # when to start it again
        self.stopped = False
        self.lock = threading.Lock()  # waitress's thread and the server's end

    def begin(self) -> bool:
        """Start the background process; False (logged) when it could not start."""
        self.pid = self.start(self.config)
        self.started_at = self.clock()
        self.owner = os.getpid()  # the process that may end it
        return self.pid is not None

    def reap(self) -> None:
        """Notice that the background process ended, log how, and say when it starts again."""
        with self.lock:
            if self.pid is None or self.stopped or (status := self.exited(self.pid)) is None:
                return
            logger.error(
                "the background process (pid %d) %s: it starts again in %g s",
                self.pid,
                how_it_ended(status),
                self.after_a_death(),
            )
            self.pid = None

    def after_a_death(self) -> float:
        """The wait before the next start: doubled while it keeps dying, else the first."""
        now = self.clock()
        steady = now - self.started_at >= STEADY
        self.wait = FIRST_WAIT if steady or not self.wait else min(self.wait * 2, LONGEST_WAIT)
        self.again_at = now + self.wait
        return self.wait

    def tend(self) -> None:
        """Start the background process again once its wait is over."""
        self.reap()
        with self.lock:
            if self.stopped or self.again_at is None or self.clock() < self.again_at:
                return
            self.again_at = None
            if self.begin():
                logger.warning("the background process started again (pid %d)", self.pid)
            else:
                self.after_a_death()

    def keep_in_thread(self, every: float = 1.0) -> threading.Thread:
        """Tend it every ``every`` seconds from a thread of its own (beside waitress)."""

        def keep() -> None:
            while not self.stopped:
                self.tend()
                time.sleep(every)

        thread = threading.Thread(target=keep, name="companion-background-keeper", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """End the background process for good (the server stops). Only in the server's
        process: a gunicorn worker leaves through the same code as it exits, and ended
        the background process with it."""
        with self.lock:
            self.stopped = True
            if self.pid is not None and os.getpid() == self.owner:
                stop(self.pid)


class InLine:
    """When the background process last left the derived data in line with the table:
    a wall-clock time in 8 bytes of memory made before the server forks, so its
    processes (this one, its workers, every background process it starts) share them."""

    def __init__(self) -> None:
        self.memory = mmap.mmap(-1, 8)  # anonymous and shared: the forks see one value
        self.mark()

    def mark(self, at: float | None = None) -> None:
        """Now (or the wall-clock time ``at``) is when the derived data was in line."""
        struct.pack_into("d", self.memory, 0, time.time() if at is None else at)

    def seconds_ago(self) -> float:
        """How long ago the derived data was last in line."""
        return time.time() - struct.unpack_from("d", self.memory, 0)[0]


def spawned(config: dict, parent: int) -> int | None:
    """The background process as a fresh interpreter (multiprocessing's "spawn")."""
    process = multiprocessing.get_context("spawn").Process(
        target=run, args=(config, parent), name="companion-background", daemon=True
    )
    try:
        process.start()
    except (OSError, RuntimeError):
        logger.exception("the background process could not start: the workers figure luck")
        return None
    return process.pid


def app_apart(config: dict) -> Flask:
    """An app with only what work apart uses: the server's settings, its database, and
    the database's own hooks (SQLite's writer queue, which the server's writes share)."""
    app = Flask(__name__)
    app.config.update(config)
    db.init_app(app)
    store.hook_storage(app)
    return app


def run(config: dict, parent: int) -> None:
    """The process: at the lowest priority, follow the database until ``parent`` is gone.

    Ctrl-C reaches every process of the terminal's group: the server's end ends this
    one (``Matches.watches``), so it does not end twice with a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lowest_priority()
    app = app_apart(config)
    with app.app_context():
        follow(Matches(db.engine, parent, in_line=config.get(IN_LINE)))


def lowest_priority() -> None:
    """This process's CPU priority at its lowest (nice 19), where the system has one."""
    if hasattr(os, "nice"):
        os.nice(NICEST - os.nice(0))


def follow(matches: Matches) -> None:
    """Follow the database's changes until the server is gone; after a failure, again."""
    follower = store.follow_changes(db.engine, every=LOOK_EVERY)
    while matches.watches:
        try:
            follower(matches)
        except Exception as error:  # the database went away: try again shortly
            logger.warning("following the database failed: %s", error)
            time.sleep(RETRY_AFTER)


class Matches:
    """Every match's version as this process last left it, driven by the database's
    follower as a live stream's feed is (``watches``, ``refresh``)."""

    def __init__(
        self, engine, parent: int, quiet: float = QUIET, in_line: InLine | None = None
    ) -> None:
        self.engine, self.parent, self.quiet = engine, parent, quiet
        self.in_line = in_line  # marked after each look that leaves the data in line
        self.again_at: float | None = None  # a look wanted with nothing changed (``due``)
        self.seen: dict[int, int] = {}
        # Games are reviewed once luck is in line: the first look, at every match there
        # is, puts luck in line only. The games that ended while the server runs come
        # first; a history's (an import's, or games from before reviews) only when
        # nothing else waits, the newest first, one per look (hours of a Pi's CPU for a
        # year of games, at the lowest priority).
        self.reviewing = False
        self.to_review: set[int] = set()  # matches that moved since, to review
        self.unreviewable: set[int] = set()  # their review failed: not from the history
        self.work: store.ReviewWork | None = None  # a game's review under way
        self.busy = False  # the last look left work: the next goes on at once

    @property
    def watches(self) -> bool:
        """True while the server that started this process runs."""
        return os.getppid() == self.parent

    @property
    def due(self) -> bool:
        """True once a review that waited for the table's quiet may go on: the follower
        looks then, though nothing changed."""
        return self.again_at is not None and time.monotonic() >= self.again_at

    def table_quiet(self) -> bool:
        """Whether no table has entered anything for ``quiet`` seconds; when one has,
        the look that will find it quiet is asked for (``due``)."""
        idle = store.seconds_since_newest_entry()
        quiet = idle >= self.quiet
        self.again_at = None if quiet else time.monotonic() + self.quiet - idle
        return quiet

    def refresh(self, ids: Iterable[int] | None = None) -> None:
        """Figure the luck of every match (or of ``ids``) whose version moved, once the
        change has settled (``SETTLE``), a few games per match at a time (``LUCK_GAMES``),
        so a big import's backlog never holds up a table's luck; when luck is all in line
        and no table has entered anything for a while (``table_quiet``), review one
        finished game (of the matches that moved, else of the history). Each stored game
        is a change: the next look follows. The first look asks for the one that starts
        the reviews (``due``): after a start, an upgrade or an import nothing else may
        change.

        The derived data is in line (``in_line``) after a look that leaves luck and
        statistics in line, and no game of a match that moved waiting for its review
        but for the table's quiet (a history's reviews take hours: they do not count)."""
        if not self.busy:
            time.sleep(SETTLE)
        self.busy, self.again_at = False, None  # this look is the one asked for
        for match_id in self.moved(ids):
            if not self.watches:
                return
            self.figure(match_id)
        if self.reviewing and not self.busy and self.table_quiet():
            self.review_next()
        elif not self.reviewing:
            self.again_at = time.monotonic()
        waiting_for_quiet = self.again_at is not None
        if self.in_line and not self.busy and (not self.to_review or waiting_for_quiet):
            self.in_line.mark()
        self.reviewing = True

    def review_next(self) -> None:
        """Review a finished game: of the matches that moved, the lowest id first, else
        of the history. A match with nothing left to review (its last review stored at
        the look before, or none finished) is passed and the next tried in the same look:
        a look that stores nothing is followed by no other, and a finished game would
        wait for a table's entry."""
        passed: set[int] = set()
        while (match_id := self.next_to_review(passed)) is not None:
            if self.review(match_id):
                return
            passed.add(match_id)

    def next_to_review(self, passed: set[int]) -> int | None:
        """The next match to review a game of, not one of ``passed``: the lowest that
        moved, else the history's newest unreviewed game's (``review_history``)."""
        moved = self.to_review - passed
        if moved:
            return min(moved)
        try:
            return store.history_to_review(self.unreviewable | passed)
        finally:
            db.session.remove()

    def moved(self, ids: Iterable[int] | None) -> list[int]:
        """The matches (of ``ids``, or all) whose version is not the one last seen."""
        query = select(Match.id, Match.version).order_by(Match.id)
        if ids is not None:
            query = query.where(Match.id.in_(list(ids)))
        rows = db.session.execute(query).all()
        db.session.rollback()
        return [match_id for match_id, version in rows if self.seen.get(match_id) != version]

    def figure(self, match_id: int) -> None:
        """A match's statistics put in line (a game that ended, reopened or was
        corrected), then its luck, its newest stale game first; a failure is logged and
        the match left until it moves again (so one match the rules refuse cannot hold
        up the others)."""
        try:
            store.statistics_after(match_id)
            version = store.luck_after(match_id, limit=LUCK_GAMES)
        except Exception:
            logger.exception("figuring the statistics or luck of match %d failed", match_id)
            db.session.rollback()
            version = db.session.scalar(select(Match.version).where(Match.id == match_id))
        finally:
            db.session.remove()  # nothing of one match stays in memory for the next
        if version is None:
            self.busy = True
            return
        self.seen[match_id] = version
        if self.reviewing:
            self.to_review.add(match_id)

    def review(self, match_id: int) -> bool:
        """Review a finished game of a match (seconds of CPU) a round at a time, and
        between two rounds give way to luck: when a match moved (a table's round came),
        stop there, keep what is figured, and go on at a later look. The match stays on
        the list while it has more games to review. Whether a game was figured (its
        write, or the match that moved, brings the next look); False when the match had
        none to review, or its review failed (logged, and the match left until it moves
        again: not from the history)."""
        self.to_review.add(match_id)
        try:
            done = self.review_rounds(match_id)
            more = done == GAVE_WAY or store.reviews_left(match_id) > 0
        except Exception:
            logger.exception("reviewing a game of match %d failed", match_id)
            db.session.rollback()
            self.unreviewable.add(match_id)
            self.work, done, more = None, NONE_LEFT, False
        finally:
            db.session.remove()
        if more:
            self.busy = True
        else:
            self.to_review.discard(match_id)
        return done != NONE_LEFT

    def review_rounds(self, match_id: int) -> str:
        """Figure the match's game under review round by round (its newest unreviewed
        one, taken up when none is): ``STORED`` once figured and stored (or refused: the
        write that changed its game brings a look), ``GAVE_WAY`` to a match that moved,
        ``NONE_LEFT`` when no game of the match was left to review."""
        if self.work is None or self.work.match_id != match_id:
            self.work = next(
                (
                    work
                    for game_id in store.unreviewed_games(match_id)[:1]
                    if (work := store.review_work(match_id, game_id)) is not None
                ),
                None,
            )
        if self.work is None:
            return NONE_LEFT
        while (plays := next(self.work.rounds, None)) is not None:
            self.work.done.append(plays)
            if self.moved(None):
                return GAVE_WAY
        work, self.work = self.work, None
        store.finish_review(work)
        return STORED
