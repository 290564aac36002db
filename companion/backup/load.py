"""Writing a checked backup into the database: what is already there is kept, all at once.

Players are the same player when their names are equal ignoring case (the key the app
already keeps unique); matches are the same match when they started at the same moment
with the same seats (``document.match_identity``).

A history of thousands of matches is about a million rows. Three steps keep the phones
at the table going while it comes in, on a connection of the import's own:

1. *plan*: which of the file's matches are new (a read; no lock);
2. *stage*: every new row goes into a temporary table (SQLite's temporary database, a
   file that disappears with the connection), ids counted from 1 and players by their
   number in the file. Phones go on writing meanwhile;
3. *merge*: one write transaction adds the new players and copies the staged rows with
   ``INSERT ... SELECT``, ids moved past the largest ones there and players mapped to
   theirs. No row passes through Python, so the write lock that a phone's round waits
   for is held about a second for 5,000 matches (``bench/import_wait.py``).

A refused or crashed import has written nothing: the staged rows live only in the
temporary database, and the merge is one transaction. A merge that would hold the
phones up for longer than ``LOCK_BUDGET`` waits for a quiet moment (no write for
``QUIET`` seconds) on the command line, and is refused with a message on the web page.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from flask import current_app
from sqlalchemy import select

try:
    import fcntl
except ImportError:  # Windows: one server process, the thread lock is enough
    fcntl = None

from companion import derived, rules
from companion.backup.check import Backup, GameIn, MatchIn, PlayerIn
from companion.backup.document import match_identity
from companion.backup.fields import BackupError
from companion.db import WRITE_WAIT, DatabaseBusy, db
from companion.derived import figures
from companion.derived.figures import GameRow, MatchRow, NemesisRow
from companion.models import (
    Game,
    GameResult,
    Match,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
    Seat,
    new_token,
)
from companion.rules import N_
from companion.rules.names import name_key
from companion.sqlite import writer_lock

LOCK_BUDGET = 1.5  # seconds a phone's write may wait for an import's merge
QUIET = 60  # seconds without a write: nobody is entering a round
CHUNK = 500  # matches staged per batch of inserts: bounded memory, few calls

# The staged columns of each table, parents first. Ids of matches, games and rounds are
# counted from 1 and moved in the merge; other tables' ids are left to the database.
STAGED = {
    Match: (
        "id",
        "created_at",
        "end_kind",
        "end_value",
        "pro",
        "version",
        "table_version",
        "player_token",
        "watch_token",
    ),
    Seat: ("match_id", "player_id", "position"),
    Game: ("id", "match_id", "number", "mode", "row1", "row2", "row3", "row4", "created_at"),
    Round: ("id", "game_id", "number", "created_at"),
    Play: ("round_id", "game_id", "player_id", "card"),
    RowChoice: ("round_id", "player_id", "row"),
    Score: ("game_id", "player_id", "bulls", "cards"),
    GameResult: ("game_id", "player_id", "bulls"),
    derived.PlayerGameStat: GameRow._fields,
    derived.NemesisCount: NemesisRow._fields,
    derived.PlayerMatchStat: MatchRow._fields,
}
OWN_IDS = {Match: "match", Game: "game", Round: "round"}
MOVED = {"match_id": "match", "game_id": "game", "round_id": "round"}
PLAYER_COLUMNS = ("player_id", "rival_id")  # a player's number in the file, mapped
PLAYERS_STAGED = ("number", "name", "name_key", "archived", "created_at")


@dataclass
class Report:
    """What an import did."""

    players_added: int = 0
    players_kept: int = 0
    matches_added: int = 0
    matches_kept: int = 0
    in_progress: list[int] = field(default_factory=list)  # ids of added unfinished matches
    staging_seconds: float = 0.0  # for the benchmark: where the time went
    merge_seconds: float = 0.0  # how long the write lock was held

    def as_dict(self) -> dict[str, int]:
        """The counts by name (for the session and the command line)."""
        return {key: value for key, value in vars(self).items() if isinstance(value, int)}


Waiting = Callable[[float], None]


def import_backup(backup: Backup, waiting: Waiting | None = None) -> Report:
    """Add the backup's new players and matches in one transaction; report the counts.

    ``waiting(seconds)`` is told once when a big import waits for a quiet moment;
    without it, a big import while someone plays is refused (BackupError).
    """
    db.session.rollback()  # the session's next read sees what was imported
    path = db.engine.url.database
    with one_import_at_a_time(path):
        pooled = db.engine.raw_connection()
        try:
            return Import(pooled.driver_connection, backup).run(path, waiting)
        finally:
            pooled.close()


class Import:
    """One import on its own connection (autocommit: it says BEGIN itself)."""

    def __init__(self, connection: sqlite3.Connection, backup: Backup) -> None:
        self.connection, self.backup = connection, backup
        self.numbers = {player.name: number for number, player in enumerate(backup.players, 1)}
        self.report = Report()

    def run(self, path: str | None, waiting: Waiting | None) -> Report:
        """Plan, stage, wait if need be, merge; the temporary tables are dropped after."""
        new = self.plan()
        try:
            started = time.monotonic()
            in_progress = self.stage(new)
            self.report.staging_seconds = time.monotonic() - started
            wait_for_quiet(path, self.report.staging_seconds, waiting)
            offset = self.merge(path)
        finally:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            for name in (*map(staged_name, STAGED), "stage_player", "import_player"):
                self.connection.execute(f"DROP TABLE IF EXISTS temp.{name}")
        self.report.in_progress = [offset + number for number in in_progress]
        self.report.matches_added = len(new)
        self.report.matches_kept = len(self.backup.matches) - len(new)
        self.report.players_kept = len(self.backup.players) - self.report.players_added
        return self.report

    def plan(self) -> list[MatchIn]:
        """The file's matches that are not in the database yet."""
        seats: dict[int, list[str]] = {}
        for match_id, name in self.rows(
            select(Seat.match_id, Player.name)
            .join(Player, Player.id == Seat.player_id)
            .order_by(Seat.match_id, Seat.position)
        ):
            seats.setdefault(match_id, []).append(name)
        known = {
            match_identity(datetime.fromisoformat(created_at), seats.get(match_id, []))
            for match_id, created_at in self.rows(select(Match.id, Match.created_at))
        }
        return [match for match in self.backup.matches if match.identity not in known]

    def rows(self, query) -> list[tuple]:
        """The rows of a SQLAlchemy query, read on this connection."""
        compiled = query.compile(dialect=db.engine.dialect)
        return self.connection.execute(str(compiled)).fetchall()

    def stage(self, matches: list[MatchIn]) -> list[int]:
        """Every new row into the temporary tables; the staged ids of unfinished matches."""
        execute = self.connection.execute
        execute("PRAGMA temp_store=FILE")  # on disk, not in the process's memory
        execute("BEGIN")  # the temporary database only: the phones' tables stay unlocked
        execute(f"CREATE TEMP TABLE stage_player ({', '.join(PLAYERS_STAGED)})")
        execute("CREATE TEMP TABLE import_player (number INTEGER PRIMARY KEY, id INTEGER)")
        for model, columns in STAGED.items():
            execute(f"CREATE TEMP TABLE {staged_name(model)} ({', '.join(columns)})")
        self.insert(
            "stage_player", map(player_row, range(1, len(self.numbers) + 1), self.backup.players)
        )
        rows = Rows(self.numbers)
        for start in range(0, len(matches), CHUNK):
            for match in matches[start : start + CHUNK]:
                rows.add_match(match)
            for model, values in rows.take():
                self.insert(staged_name(model), values)
        execute("COMMIT")
        return rows.in_progress

    def insert(self, table: str, values) -> None:
        """Insert rows into a temporary table with the driver's executemany."""
        values = list(values)
        if values:
            marks = ", ".join("?" * len(values[0]))
            self.connection.executemany(f"INSERT INTO temp.{table} VALUES ({marks})", values)

    def merge(self, path: str | None) -> int:
        """Copy the staged rows in one write transaction; return the matches' id offset."""
        wait = float(current_app.config.get("WRITE_WAIT", WRITE_WAIT))
        writer = writer_lock(path)
        if not writer.acquire(timeout=wait):  # other phones' writes: send again later (503)
            raise DatabaseBusy(f"another write held the writer lock for {wait:g} s")
        started = time.monotonic()
        execute = self.connection.execute
        execute(f"PRAGMA busy_timeout = {wait * 1000:.0f}")  # another program: the same wait
        # Foreign keys are not checked during the copy: every id it writes is one it has
        # just written, or a player's read in the same transaction. Checking them would
        # double the time the phones wait. (The setting is per connection; back after.)
        execute("PRAGMA foreign_keys=OFF")
        try:
            execute("BEGIN IMMEDIATE")
            self.report.players_added = execute(ADD_PLAYERS).rowcount
            execute(MAP_PLAYERS)
            offsets = {
                name: execute(
                    f'SELECT coalesce(max(id), 0) FROM main."{model.__tablename__}"'
                ).fetchone()[0]
                for model, name in OWN_IDS.items()
            }
            for model in STAGED:
                execute(merge_statement(model), offsets)
            execute("COMMIT")
        except sqlite3.IntegrityError:
            raise busy() from None
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise DatabaseBusy(f"the database stayed locked for {wait:g} s") from error
            raise busy() from None
        finally:
            if self.connection.in_transaction:
                execute("ROLLBACK")
            execute("PRAGMA foreign_keys=ON")
            writer.release()
            self.report.merge_seconds = time.monotonic() - started
        return offsets["match"]


def busy() -> BackupError:
    """The refusal when the database changed or stayed busy: nothing was imported."""
    return BackupError(
        N_(
            "The database changed or was busy during the import, so "
            "nothing was imported. Try again."
        )
    )


def staged_name(model) -> str:
    """The temporary table that holds a table's staged rows."""
    return f"stage_{model.__tablename__}"


def player_row(number: int, player: PlayerIn) -> tuple:
    """A player of the file, staged with their number."""
    return (number, player.name, name_key(player.name), player.archived, stamp(player.created_at))


ADD_PLAYERS = """
    INSERT INTO main.player (name, name_key, archived, created_at)
    SELECT name, name_key, archived, created_at FROM temp.stage_player AS s
    WHERE NOT EXISTS (SELECT 1 FROM main.player AS p WHERE p.name_key = s.name_key)
    ORDER BY s.number
"""
MAP_PLAYERS = """
    INSERT INTO temp.import_player (number, id)
    SELECT s.number, p.id FROM temp.stage_player AS s
    JOIN main.player AS p ON p.name_key = s.name_key
"""


def merge_statement(model) -> str:
    """INSERT ... SELECT of a table's staged rows: ids moved, players mapped, in order."""
    columns = STAGED[model]
    values, joins = [], []
    for column in columns:
        if column == "id":
            values.append(f"s.id + :{OWN_IDS[model]}")
        elif column in MOVED:
            values.append(f"s.{column} + :{MOVED[column]}")
        elif column in PLAYER_COLUMNS:
            joins.append(f"JOIN temp.import_player AS {column}s ON {column}s.number = s.{column}")
            values.append(f"{column}s.id")
        else:
            values.append(f's."{column}"')
    names = ", ".join(f'"{column}"' for column in columns)
    return (
        f'INSERT INTO main."{model.__tablename__}" ({names}) '
        f"SELECT {', '.join(values)} FROM temp.{staged_name(model)} AS s {' '.join(joins)} "
        "ORDER BY s.rowid"  # the file's order: row choices keep the order they were made
    )


def stamp(moment: datetime) -> str:
    """A time as the database stores it (SQLAlchemy's format for SQLite; read back with
    ``datetime.fromisoformat``)."""
    return moment.isoformat(sep=" ", timespec="microseconds")


class Rows:
    """The staged rows of every table, as tuples in ``STAGED`` order."""

    def __init__(self, numbers: dict[str, int]) -> None:
        self.numbers = numbers
        self.rows: dict = {model: [] for model in STAGED}
        self.last = {"match": 0, "game": 0, "round": 0}
        self.in_progress: list[int] = []

    def new(self, kind: str) -> int:
        """The next staged id of a match, game or round."""
        self.last[kind] += 1
        return self.last[kind]

    def take(self) -> Iterator[tuple[type, list[tuple]]]:
        """The rows collected so far, table by table, parents first; then none."""
        taken, self.rows = self.rows, {model: [] for model in STAGED}
        return iter(taken.items())

    def add_match(self, match: MatchIn) -> None:
        """A match, its seats and games, and its statistics."""
        match_id = self.new("match")
        end = match.end
        self.rows[Match].append(
            (
                match_id,
                stamp(match.created_at),
                end.kind,
                end.value,
                match.pro,
                0,
                0,
                new_token(),
                new_token(),
            )
        )
        seats = [self.numbers[name] for name in match.seats]
        self.rows[Seat].extend((match_id, seat, position) for position, seat in enumerate(seats, 1))
        finished = []
        for number, game in enumerate(match.games, 1):
            self.add_game(match_id, number, game, seats)
            if game.results is not None:
                finished.append({self.numbers[name]: bulls for name, bulls in game.results.items()})
        played_at = stamp(match.created_at)
        self.rows[derived.PlayerMatchStat].extend(
            (*row[:2], played_at, *row[3:])
            for row in figures.match_rows(match_id, match.created_at, seats, end, finished)
        )
        if len(finished) < len(match.games) or not rules.standing(seats, finished, end).over:
            self.in_progress.append(match_id)

    def add_game(self, match_id: int, number: int, game: GameIn, seats: list[int]) -> None:
        """A game with its rounds or scores, and its results and statistics once finished."""
        game_id = self.new("game")
        started = stamp(game.created_at)
        starting = game.starting or [None] * 4
        self.rows[Game].append((game_id, match_id, number, game.mode, *starting, started))
        plays, choices, rounds = self.rows[Play], self.rows[RowChoice], self.rows[Round]
        numbers = self.numbers
        for turn, (cards, chosen) in enumerate(game.rounds, 1):
            round_id = self.new("round")
            rounds.append((round_id, game_id, turn, started))
            plays.extend(
                zip([round_id] * len(seats), [game_id] * len(seats), seats, cards, strict=True)
            )
            choices.extend((round_id, numbers[name], row) for name, row in chosen.items())
        self.rows[Score].extend(
            (game_id, seat, None, ",".join(map(str, score)))
            if isinstance(score, list)
            else (game_id, seat, score, None)
            for seat, score in zip(seats, game.scores, strict=False)  # none in a cards game
        )
        if game.results is None:
            return
        self.rows[GameResult].extend(
            (game_id, numbers[name], bulls) for name, bulls in game.results.items()
        )
        rows, rivals = game.figures  # players by name, ids 0: filled in here
        self.rows[derived.PlayerGameStat].extend(
            (game_id, match_id, numbers[row.player_id], *row[3:]) for row in rows
        )
        self.rows[derived.NemesisCount].extend(
            (game_id, match_id, numbers[row.player_id], numbers[row.rival_id], row.takes)
            for row in rivals
        )


def wait_for_quiet(path: str | None, seconds: float, waiting: Waiting | None) -> None:
    """Return when the merge may start: it is short, or nobody is writing.

    The merge copies as many rows as the staging wrote, at about the same speed, so
    the staging's time is the estimate of how long the phones would wait.
    """
    budget = current_app.config.get("IMPORT_LOCK_BUDGET", LOCK_BUDGET)
    quiet = current_app.config.get("IMPORT_QUIET", QUIET)
    if seconds <= budget or path is None:
        return
    idle = time.time() - last_write(path)
    if idle >= quiet:
        return
    if waiting is None:
        raise BackupError(
            N_(
                "Someone is playing right now, and this backup is big: importing it would "
                "hold up their phones for about %(seconds)d seconds. Import it when the "
                "game is over."
            ),
            seconds=max(1, round(seconds)),
        )
    waiting(seconds)
    while (idle := time.time() - last_write(path)) < quiet:
        time.sleep(min(quiet - idle, 5))


def last_write(path: str) -> float:
    """When the database was last written (its write-ahead log, else the file)."""
    for name in (f"{path}-wal", path):
        try:
            return os.stat(name).st_mtime
        except FileNotFoundError:
            continue
    return 0.0


_imports = threading.Lock()


@contextmanager
def one_import_at_a_time(path: str | None) -> Iterator[None]:
    """Refuse a second import while one runs (in any server process).

    Only an import can bring matches of the past: two at once could both find the same
    match new. A file lock beside the database (``flock``, released by the kernel if
    the process dies) covers every worker; the thread lock, one worker's threads.
    """
    if not _imports.acquire(blocking=False):
        raise another_import()
    descriptor = None
    try:
        if fcntl and path and path != ":memory:":
            descriptor = os.open(f"{path}.import", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise another_import() from None
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)
        _imports.release()


def another_import() -> BackupError:
    """The refusal of an import while another runs."""
    return BackupError(N_("Another import is running. Try again when it is done."))
