"""Writing a checked backup into the database: what is already there is kept, all at once.

Players are the same player when their names are equal ignoring case; matches are the same
match when they started at the same moment with the same seats (``document.match_identity``).

A history of thousands of matches is about a million rows. Three steps on a connection of
the import's own, in plain SQLAlchemy Core (``companion.store`` holds what differs between
databases), keep the phones at the table going while it comes in:

1. *plan*: which matches are here already (a read; no lock);
2. *stage*: the file's matches are checked one by one as they are read (``check``), and
   the rows of the new ones go into temporary tables of this connection, a batch at a
   time, ids counted from 1, players by their number in the file. Phones go on writing;
3. *copy*: one write transaction adds the new players and copies the staged rows with
   ``INSERT ... SELECT``, ids moved past the largest ones there, players mapped to theirs.
   No row passes through Python. On SQLite the phones' writes wait for it: 1.5 s for
   5,000 matches (``bench/import_wait.py``); on PostgreSQL they do not wait.

Why stage: writing the rows straight into the indexed tables takes longer than staging and
copying together (3.5 s against 2.9 s), and all of it would hold the phones up. A refused or
crashed import has written nothing: the staged rows go with the connection, and the copy is
one transaction. A copy that would hold the phones up too long waits (``wait_for_quiet``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter

from flask import current_app
from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    Table,
    exists,
    func,
    insert,
    select,
)
from sqlalchemy.exc import IntegrityError, OperationalError

from companion import derived, store
from companion.backup.check import Backup, open_backup
from companion.backup.document import identity_digest
from companion.backup.fields import BackupError, paused_gc
from companion.backup.rows import INPUTS, OWN_IDS, STAGED, Rows
from companion.db import WRITE_WAIT, DatabaseBusy, db
from companion.models import Match, Player, Seat
from companion.rules import N_
from companion.web.faults import BUSY, fault_of

LOCK_BUDGET = 1.5  # seconds a phone's write may wait for an import's copy
QUIET = 60  # seconds without a phone's entry: nobody is entering a round
CHUNK = 500  # matches staged per batch of inserts: bounded memory, few calls
PLAN_BATCH = 10_000  # seats read per batch when planning (PostgreSQL: a server-side cursor)

# A game result is a game statistic's bulls (both a finished game's bulls per player):
# not staged twice, but copied from that stage.
FROM_STAGE = {derived.GameResult: (derived.PlayerGameStat, ("game_id", "player_id", "bulls"))}
# The tables in the order they are copied: parents first, the inputs, then what is
# derived (a game's results first: the statistics refer to them).
COPIED = (*INPUTS, *FROM_STAGE, *(model for model in STAGED if model not in (Player, *INPUTS)))


@dataclass
class Report:
    """What an import did."""

    players_added: int = 0
    players_kept: int = 0
    matches_added: int = 0
    matches_kept: int = 0
    in_progress: list[int] = field(default_factory=list)  # ids of added unfinished matches
    staging_seconds: float = 0.0  # for the benchmark: where the time went
    merge_seconds: float = 0.0  # how long the phones' writes had to wait

    def as_dict(self) -> dict[str, int]:
        """The counts by name (for the session and the command line)."""
        return {key: value for key, value in vars(self).items() if isinstance(value, int)}


Waiting = Callable[[float], None]


def check_and_import(raw: bytes, waiting: Waiting | None = None) -> Report:
    """Check a backup file's bytes and import them (see ``import_backup``), under one pause
    of the garbage collector: between them it would walk every object of the checked file."""
    with paused_gc():
        return import_backup(open_backup(raw), waiting)


def import_backup(backup: Backup, waiting: Waiting | None = None) -> Report:
    """Add the backup's new players and matches in one transaction; report the counts.

    The caller holds the turn to import (``apart.import_turn``). ``waiting(seconds)`` is
    told once when a big import waits for a quiet moment; without it, a big import while
    someone plays is refused (BackupError).
    """
    db.session.rollback()  # the session's next read sees what was imported
    # Its own connection, whose transactions begin as plain reads: the copy takes its
    # turn to write itself.
    with paused_gc(), db.engine.connect() as connection:
        return Import(connection, backup).run(waiting)


class Import:
    """One import on its own connection."""

    def __init__(self, connection: Connection, backup: Backup) -> None:
        self.connection, self.backup = connection, backup
        self.numbers = {player.name: number for number, player in enumerate(backup.players, 1)}
        self.report = Report()
        self.stage_tables = staging_tables(connection)
        self.counts: dict[str, int] = {}  # staged matches, games, rounds, row choices

    def run(self, waiting: Waiting | None) -> Report:
        """Plan, check and stage, wait if need be, copy; the temporary tables are dropped
        after."""
        known = self.plan()
        try:
            started = time.monotonic()
            in_progress = self.stage(known)
            self.report.staging_seconds = time.monotonic() - started
            wait_for_quiet(self.connection, self.report.staging_seconds, waiting)
            offset = self.merge()
        finally:
            if self.connection.in_transaction():
                self.connection.rollback()
            with self.connection.begin():
                for table in self.stage_tables.values():
                    table.drop(self.connection, checkfirst=True)
        self.report.in_progress = [offset + number for number in in_progress]
        self.report.players_kept = len(self.backup.players) - self.report.players_added
        return self.report

    def plan(self) -> dict[bytes, int]:
        """The identities (digests) of the matches already in the database, with their ids.

        Read a match at a time, its seats in order: never every seat's name at once.
        """
        seated = (
            select(Seat.match_id, Match.created_at, Player.name)
            .join(Match, Match.id == Seat.match_id)
            .join(Player, Player.id == Seat.player_id)
            .order_by(Seat.match_id, Seat.position)
            .execution_options(yield_per=PLAN_BATCH)
        )
        known = {}
        with self.connection.begin():
            for match_id, rows in groupby(self.connection.execute(seated), key=itemgetter(0)):
                seats = list(rows)
                names = [seat.name for seat in seats]
                known[identity_digest(seats[0].created_at, names)] = match_id
        return known

    def stage(self, known: dict[bytes, int]) -> list[int]:
        """Check the file's matches and stage the rows of the new ones, a batch at a time;
        the staged ids of unfinished matches."""
        connection, tables, report = self.connection, self.stage_tables, self.report
        stamp = store.ready_to_stage(connection)
        # One transaction of the temporary tables only: the phones' tables stay unlocked.
        with connection.begin():
            for table in tables.values():
                table.create(connection)
            rows = Rows(self.numbers, stamp)
            rows.add_players(self.backup.players)
            for match in self.backup.matches:  # each checked as it comes (BackupError)
                if match.identity in known:
                    report.matches_kept += 1
                    continue
                rows.add_match(match)
                report.matches_added += 1
                if report.matches_added % CHUNK == 0:
                    stage_rows(connection, tables, rows)
            stage_rows(connection, tables, rows)
        self.counts = rows.last
        return rows.in_progress

    def merge(self) -> int:
        """Copy the staged rows in one write transaction; return the matches' id offset."""
        connection = self.connection
        wait = float(current_app.config.get("WRITE_WAIT", WRITE_WAIT))
        started = time.monotonic()
        try:
            counts = {model.__table__: self.counts[kind] for model, kind in OWN_IDS.items()}
            reserved, turn = store.turn_to_copy(connection, counts, wait)
            offsets, committed = store.copy_import(connection, turn, lambda: self.copy(reserved))
            self.report.merge_seconds = committed - started
        except (OperationalError, IntegrityError) as error:
            if isinstance(error, OperationalError) and fault_of(error) == BUSY:  # 503
                raise DatabaseBusy(f"the database stayed locked for {wait:g} s") from error
            raise busy() from None
        return offsets["match"]

    def copy(self, reserved: dict | None) -> dict[str, int]:
        """The copy's statements (in its write): the new players, then every table's
        staged rows; the id offsets used."""
        connection, tables = self.connection, self.stage_tables
        added, statement = add_players(tables)
        self.report.players_added = connection.scalar(added)
        held(connection, Player, self.report.players_added)
        held(connection, Match, self.counts["match"])
        connection.execute(statement)
        connection.execute(map_players(tables))
        offsets = {
            kind: reserved[model.__table__]
            if reserved is not None
            else connection.scalar(select(func.coalesce(func.max(model.id), 0)))
            for model, kind in OWN_IDS.items()
        }
        for model in COPIED:
            if model is derived.PlayerMatchStat:  # the last: held until commit
                derived.in_commit_order(connection)
            connection.execute(merge_statement(model, tables, offsets))
        derived.rate_imported(connection, offsets["match"])
        return offsets


# The import's refusal past a cap, by what the household would hold too many of.
PAST_THE_CAP = {
    Player: N_("With this file the household would have %(count)s players, at most %(cap)s."),
    Match: N_("With this file the household would have %(count)s matches, at most %(cap)s."),
}


def held(connection: Connection, model, adding: int) -> None:
    """Refuse the import (inside its write: nothing is stored) when the household would
    hold more players or matches than it may (``models``'s caps)."""
    if not adding:
        return
    try:
        store.room_for(model, adding, connection)
    except store.Full as full:
        problem = PAST_THE_CAP[model]
        raise BackupError(problem, count=f"{full.total:,}", cap=f"{full.cap:,}") from None


def stage_rows(connection: Connection, tables: dict, rows: Rows) -> None:
    """Insert the rows collected so far into the temporary tables."""
    for model, values in rows.take():
        store.insert_rows(connection, tables[model], values)


def busy() -> BackupError:
    """The refusal when the database changed or stayed busy: nothing was imported."""
    return BackupError(
        N_(
            "The database changed or was busy during the import, so "
            "nothing was imported. Try again."
        )
    )


def staging_tables(connection: Connection) -> dict:
    """The temporary tables of an import: one per table it adds to (a player's id: their
    number in the file), and the players' ids here."""
    metadata = MetaData()

    def temporary(name: str, columns) -> Table:
        return Table(f"import_{name}", metadata, *columns, prefixes=["TEMPORARY"])

    def like(model, names) -> list[Column]:
        return [Column(name, model.__table__.c[name].type) for name in names]

    def numbered(name: str, *columns: str) -> Table:
        key = Column("number", Integer, primary_key=True)
        return temporary(name, [key, *(Column(column, Integer) for column in columns)])

    tables = {
        model: temporary(model.__tablename__, like(model, names)) for model, names in STAGED.items()
    }
    tables["ids"] = numbered("player_id", "id")
    # Every match the file adds, by its number there: its staged id.
    tables["numbers"] = numbered("match_number", "staged")
    return tables


def add_players(tables: dict):
    """How many of the file's players are not here yet (a query: the driver's row count of
    an INSERT ... SELECT is not promised everywhere), and the INSERT ... SELECT of them."""
    staged = tables[Player]
    new = ~exists().where(Player.name_key == staged.c.name_key)
    count = select(func.count()).select_from(staged).where(new)
    names = [name for name in STAGED[Player] if name != "id"]  # its number in the file
    rows = select(*(staged.c[name] for name in names)).where(new)
    return count, insert(Player).from_select(names, rows.order_by(staged.c.id))


def map_players(tables: dict):
    """Every file player's number with their id here."""
    staged = tables[Player]
    return insert(tables["ids"]).from_select(
        ["number", "id"],
        select(staged.c.id, Player.id).join(Player, Player.name_key == staged.c.name_key),
    )


def merge_statement(model, tables: dict, offsets: dict[str, int]):
    """INSERT ... SELECT of a table's staged rows: its own ids, and those of the rows it
    belongs to (its foreign keys), moved past the largest here; players mapped."""
    source_model, names = FROM_STAGE.get(model, (model, STAGED.get(model)))
    staged = tables[source_model]
    values, source = [], staged
    for name in names:
        column = staged.c[name]
        parent = next((key.column.table.name for key in model.__table__.c[name].foreign_keys), "")
        if parent == Player.__tablename__:  # a player's number in the file: their id here
            ids = tables["ids"].alias(f"{name}s")
            source = source.join(ids, ids.c.number == column)
            values.append(ids.c.id)
        elif parent or name == "id":
            values.append(column + offsets[parent or OWN_IDS[model]])
        elif name == "rematch_id":
            values.append(rematch_id(tables["numbers"], column, offsets["match"]))
        else:
            values.append(column)
    return insert(model.__table__).from_select(names, select(*values).select_from(source))


def rematch_id(numbers: Table, number: Column, offset: int):
    """The id of the match that the file's match ``number`` is, when the import adds it
    (staged, moved past the largest id here); None for none, and for a match already here.
    An import links matches only among those it adds: a link to a match here would hand
    whoever holds the new match's link (the importer) the link of one they never held."""
    return select(numbers.c.staged + offset).where(numbers.c.number == number).scalar_subquery()


def wait_for_quiet(connection: Connection, seconds: float, waiting: Waiting | None) -> None:
    """Return when the copy may start: it is short, or nobody is writing (no entry for
    ``QUIET`` s). The copy is a little faster than the staging (1.5 s against 2.2 s), so the
    staging's ``seconds`` are a safe guess of the phones' wait (only on SQLite)."""
    budget = current_app.config.get("IMPORT_LOCK_BUDGET", LOCK_BUDGET)
    quiet = current_app.config.get("IMPORT_QUIET", QUIET)
    if seconds <= budget or not store.copy_holds_up_writers(connection):
        return
    if store.seconds_since_last_entry() >= quiet:
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
    while (idle := store.seconds_since_last_entry()) < quiet:
        time.sleep(min(quiet - idle, 5))
