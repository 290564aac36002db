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

A process, not a thread: Python runs one thread of a process at a time, and 0.1 s of
placing cards in a server's worker holds up every stream and request of that worker.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress

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
LUCK_GAMES = 2  # a match's stale games figured per look: the newest, then the oldest
# Seconds without a table's entry before a game's review (seconds of CPU) goes on. In a
# cgroup's quota (a Pi's share of a core) the review spends the share a round's write then
# waits for, whatever its nice: a table entering its next game at once (a round a second)
# has its rounds first; one that collects, shuffles and deals (a minute) gets its review
# meanwhile, and between rounds (half a minute each).
QUIET = 3.0
# What a look's review did (``Matches.review_rounds``).
STORED, GAVE_WAY, NONE_LEFT = "stored", "gave way", "none left"

logger = logging.getLogger(__name__)


def start(config: dict, method: str | None = None) -> int | None:
    """Start the background process for a server with this config: its process id; None
    (logged) when it cannot start, and the workers then figure luck after each answer.

    Forked where the system can (``method`` None): the server calls it before it has any
    thread or connection (``serve.main``), and a forked process shares the server's pages
    of Python, Flask and numpy instead of loading its own (75 MB of memory spawned, 41 MB
    forked). A plain ``os.fork``, not multiprocessing's: the server's workers, forked
    after it, would take it for a child of theirs and end it as they exit. A test, whose
    process has threads, asks for "spawn" (as Windows does).
    """
    parent = os.getpid()
    if (method or ("spawn" if sys.platform == "win32" else "fork")) == "spawn":
        return spawned(config, parent)
    try:
        pid = fork()
    except OSError:
        logger.exception("the background process could not start: the workers figure luck")
        return None
    if pid == 0:  # the background process: it never returns into the server's code
        code = 1
        try:
            run(config, parent)
            code = 0
        except BaseException:
            logger.exception("the background process failed")
        finally:
            os._exit(code)
    return pid


def fork() -> int:
    """``os.fork``; under gevent's patching (the server's launcher), gevent's fork that
    makes the child's hub anew but sets no child watcher: a libev child watcher reaps
    every child of the server, and gunicorn's master then lost its workers' ends and
    left them as zombies. (gevent is there on POSIX only, with the launcher.)"""
    if "gevent.monkey" in sys.modules:
        from gevent.os import fork_gevent

        return fork_gevent()
    return os.fork()


@contextmanager
def running(config: dict) -> Iterator[bool]:
    """The background process while the block runs (True; False when it cannot start),
    stopped once the block ends: the server's own end is the process's."""
    pid = start(config)
    try:
        yield pid is not None
    finally:
        if pid is not None:
            stop(pid)


def stop(pid: int) -> None:
    """End the background process and wait for it (a server reaps its children itself:
    it may be gone already)."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    with suppress(ChildProcessError):
        os.waitpid(pid, 0)


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
        follow(Matches(db.engine, parent))


def lowest_priority() -> None:
    """This process's CPU priority at its lowest (nice 19), where the system has one."""
    if hasattr(os, "nice"):
        os.nice(NICEST - os.nice(0))


def follow(matches: Matches) -> None:
    """Follow the database's changes until the server is gone; after a failure, again."""
    follower = store.follow_changes(db.engine)
    while matches.watches:
        try:
            follower(matches)
        except Exception as error:  # the database went away: try again shortly
            logger.warning("following the database failed: %s", error)
            time.sleep(RETRY_AFTER)


class Matches:
    """Every match's version as this process last left it, driven by the database's
    follower as a live stream's feed is (``watches``, ``refresh``)."""

    def __init__(self, engine, parent: int, quiet: float = QUIET) -> None:
        self.engine, self.parent, self.quiet = engine, parent, quiet
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
        change."""
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
