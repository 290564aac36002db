"""The one write path: every change that shows on a match page is stored here.

``write_match`` owns a write from start to end. It reads the match (the shared replay
of its current version) without holding the database's write lock, has the caller's
``check`` turn the request into a ``Change`` (or refuse it), then stores the change in
a short transaction asked for as a write (``writing``). That transaction first raises
the match's version, but only if the match is still at the version that was checked;
when another phone wrote in between, the request is checked again against the new
state, so two players sending their own cards at the same moment both get in, and a
second copy of the same entry is refused.

Every other write is here too, one function each: a new match (``create_match``), its
rematch, a player's arrival, new name, archiving and removal, deleting a match, the
rebuild and the import's copy. The version rises here and nowhere else: with every
stored entry, undo and new link, for every match a renamed player sits in
(``rename_player``), and for a finished match when its rematch's first game starts.
``table_version`` rises too, except for cards that stay hidden until the round is
complete, and ``input_version`` with it, except for writes of derived rows alone (a
round's luck, a game's review: ``derived``), which change nothing a replay reads. A
change that may finish or reopen a game refreshes the derived results in the same
transaction (``companion.derived``), and the statistics too, unless
the background process follows the writes (``apart``: then in a short write of its own
moments after, ``statistics_after``); one that ends a match sends ``match_finished``
once it is stored.

A write transaction is always asked for explicitly, with ``writing``: on SQLite it
begins with BEGIN IMMEDIATE after the writer lock (``companion.storage.sqlite``); on other
databases the matches it names are locked with SELECT ... FOR UPDATE (a match write
locks its row with its first statement, the version's UPDATE), so writes to one match
queue while other tables play on. Everything else reads in plain transactions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import NamedTuple, TypeVar

from blinker import Namespace
from flask import Flask, after_this_request, current_app, has_request_context
from sqlalchemy import (
    Connection,
    Engine,
    Select,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from companion import storage
from companion.db import WRITE, WRITE_WAIT, db
from companion.derived import (
    PlayerMatchStat,
    Rebuilt,
    game_review,
    match_rows_going,
    rebuild,
    refresh_match,
    refresh_results,
    statistics_stale,
)
from companion.derived.play_luck import (
    LuckRebuilt,
    deck_of,
    drop_stale_luck,
    missing_matches,
    plays_cards,
    put_figured,
    rebuild_luck,
    seen_at_table,
    stale_luck,
    still_right,
)
from companion.models import (
    Correction,
    Game,
    Match,
    PendingCard,
    Play,
    Player,
    Round,
    RowChoice,
    Seat,
    utcnow,
)
from companion.rules import EndCondition
from companion.rules.names import name_key
from companion.state import MatchState, after_write, current_state, keep_written, played_game
from companion.storage import feed, imports, sqlite

# What the rooms above need of each database's own code (companion.storage), which
# nothing above the store imports (the import-linter contract): one function each,
# named for what it gives them.


def hook_storage(app: Flask) -> None:
    """Hook the database's own handling into an app made apart (the import's trial):
    SQLite's pragmas and writer lock, as the running app has them."""
    storage.init_app(app)


def on_postgresql() -> bool:
    """Whether the app's database is a PostgreSQL server (a club's), not SQLite's file."""
    return storage.is_postgresql(db.engine)


def database_file(app: Flask) -> Path | None:
    """The app's SQLite database file, or None (another database, or one in memory)."""
    with app.app_context():
        url = db.engine.url
    path = storage.sqlite_file_of(url)
    return None if path is None else Path(path)


def stamp_feed(app: Flask) -> feed.Feed:
    """The app's feed of matches' stamps, which every live stream watches."""
    return feed.feed_of(app)


def no_server_on(database: str) -> AbstractContextManager[bool]:
    """Held while it yields True: no server process runs on the SQLite ``database`` file,
    and none can start (a restore replaces the file)."""
    return sqlite.serving_lock(database)


def writers_turn(database: str) -> sqlite.WriterLock:
    """The turn to write to the SQLite ``database`` file that every process of the app
    takes (a restore holds it while it swaps the file)."""
    return sqlite.writer_lock(database)


@contextmanager
def only_import(connection: Connection) -> Iterator[bool]:
    """Held while it yields True: no other import runs on this database, in any server
    process or server; yields False (holding nothing) when another one does."""
    with ExitStack() as held:
        try:
            held.enter_context(imports.only_import(connection))
        except imports.AnotherImport:
            yield False
            return
        yield True


def ready_to_stage(connection: Connection) -> Callable[[datetime], object]:
    """Ready the import's own connection for its temporary tables (SQLite keeps them in a
    file, not in the process's memory); how a time is written to this database."""
    imports.sqlite_temp_on_disk(connection)
    return imports.date_converter(connection)


def insert_rows(connection: Connection, table: Table, rows: list[tuple]) -> None:
    """Insert plain tuples, in the table's column order, the fastest way the database
    takes them (the import's staged rows: COPY, or the driver's executemany)."""
    imports.insert_rows(connection, table, rows)


def turn_to_copy(
    connection: Connection, counts: dict[Table, int], wait: float
) -> tuple[dict | None, AbstractContextManager]:
    """Before the import's copy: on PostgreSQL, the id each table's new rows start after,
    kept free for them (None elsewhere); and the turn to write that the copy holds
    (``copy_import``). Each waits ``wait`` seconds at most for other writers."""
    reserved = imports.postgresql_reserve_ids(connection, counts, wait)
    return reserved, imports.turn_to_write(connection, wait)


def copy_holds_up_writers(connection: Connection) -> bool:
    """True where the import's copy makes every other writer wait until it commits
    (SQLite, one writer at a time), so it must be short."""
    return imports.copy_holds_up_writers(connection)


# Sent (with the app and match_id) once a change has ended a match. Its one listener is
# companion.backup.copies.copy_after_finished_match (the automatic copy of the database),
# connected for each app by companion.backup.init_app.
match_finished = Namespace().signal("match-finished")

STORED = "stored"
RACED = "raced"  # a unique key tripped: another phone stored the same entry just before
Copied = TypeVar("Copied")
WRITE_ATTEMPTS = 10  # each retry means another phone of the table stored something


class NewRound(NamedTuple):
    """A round to store: its game, its number and every player's card, by player id."""

    game_id: int
    number: int
    plays: Mapping[int, int]


@dataclass
class Change:
    """What a checked request does to a match, applied inside the write transaction."""

    rows: list = field(default_factory=list)  # new rows (ORM objects)
    # A round's cards, stored by two statements rather than the ORM's unit of work: the
    # table's most frequent write, its rows at a quarter of the CPU (issue 59).
    round: NewRound | None = None
    deletes: list = field(default_factory=list)  # DELETE statements (an undo)
    statements: list = field(default_factory=list)  # any other statement (new links)
    clear_hidden: int | None = None  # game id whose hidden cards the new round replaces
    hidden: bool = False  # only hidden cards: the match's table_version stays
    # Only the last round of a game, score-only games and undo can finish or reopen a
    # game: every other change skips the replay of results and statistics.
    results: bool = False
    # Games whose inputs a correction changed (any game of the match): their results
    # and figures are replayed even when their bulls stay the same.
    replay: tuple[int, ...] = ()


class Full(Exception):
    """The household holds as many players (or matches) as it may (``models``'s caps):
    nothing was stored."""

    def __init__(self, model: type[Player] | type[Match], total: int, cap: int):
        super().__init__(model.__name__)
        self.model, self.total, self.cap = model, total, cap  # total: with the new ones


def room_for(model: type[Player] | type[Match], adding: int = 1, bind=None) -> None:
    """Raise ``Full`` unless the household has room for ``adding`` more (inside a write,
    which on SQLite holds every other writer off; on PostgreSQL two writes at once may pass
    the cap by one each, which costs nothing it protects). ``bind``: the session's
    connection, or another (the import's own)."""
    cap = held_at_most(model)
    total = (bind or db.session).scalar(select(func.count()).select_from(model)) + adding
    if total > cap:
        raise Full(model, total, cap)


def held_at_most(model: type[Player] | type[Match]) -> int:
    """The cap on the household's players or matches (``models``; the app's config)."""
    return current_app.config["PLAYERS_HELD" if model is Player else "MATCHES_HELD"]


class MovedOn(Exception):
    """The match changed between the check and the write: check again."""


def write_match(match_id: int, check: Callable[[MatchState], Change]) -> str:
    """Check a request against the match as it is now and store its change: STORED, or
    RACED when another phone stored the same entry first. ``check`` refuses a request
    by raising its own exception, which passes through with nothing stored."""
    for _ in range(WRITE_ATTEMPTS):
        state = current_state(match_id)
        change = check(state)
        try:
            return store(state, change)
        except MovedOn:
            continue
    return RACED


def store(state: MatchState, change: Change) -> str:
    """Store a checked change if the match is still at the version checked."""
    match_id = state.match.id
    try:
        # No match named: the version's conditional UPDATE is the write's first statement
        # and takes the match's row lock itself (PostgreSQL), a round trip fewer than
        # SELECT ... FOR UPDATE. A writer that got there first makes it wait, and its
        # commit makes the version differ: MovedOn, and the request is checked again.
        with writing():
            if not raise_version(match_id, state.version, hidden=change.hidden):
                raise MovedOn
            if change.clear_hidden is not None:
                clear = {"game_id": change.clear_hidden}
                db.session.connection().execute(HIDDEN_CLEAR, clear)
            for statement in [*change.deletes, *change.statements]:
                db.session.execute(statement)
            db.session.add_all(change.rows)
            db.session.flush()
            if change.round is not None:
                insert_round(change.round)
            if not state.games and any(isinstance(row, Game) for row in change.rows):
                raise_versions(rematched(match_id))
            after = (
                after_write(state, change.hidden) if adds_to_the_open_game(state, change) else None
            )
            finished = (change.results or bool(change.replay)) and refresh_results(
                match_id, state.player_ids, change.replay, statistics=not apart(), written=after
            )
            if change.replay:
                drop_stale_luck(change.replay)
            # Where a background process follows the writes (a server), it looks itself.
            more_luck = not (change.hidden or apart()) and (
                bool(change.replay) or plays_cards(match_id)
            )
            game_review.drop(match_id, change.replay, last=change.results)
    except IntegrityError:
        return RACED
    if after is not None:
        # Committed: kept before this request waits for its socket, where the streams
        # its commit woke (the nudge) run and read it. A reader that came between the
        # commit and here (another thread, a green database driver) replays as before.
        keep_written(after)
    if more_luck:
        after_the_answer(partial(luck_after, match_id))
    if finished:
        match_finished.send(current_app._get_current_object(), match_id=match_id)
    return STORED


def adds_to_the_open_game(state: MatchState, change: Change) -> bool:
    """Whether ``change`` adds to the open game alone (its plays, row choices and hidden
    cards; the game may end with it): the replay after it differs in the open game
    alone (``state.after_write``)."""
    current = state.current
    return (
        current is not None
        and not (change.deletes or change.statements or change.replay)
        and change.clear_hidden in (None, current.game.id)
        and (change.round is None or change.round.game_id == current.game.id)
        and all(
            isinstance(row, RowChoice)
            or (isinstance(row, PendingCard) and row.game_id == current.game.id)
            for row in change.rows
        )
    )


def insert_round(new: NewRound) -> None:
    """Store a round and its plays (inside the write): two statements on the write's
    connection, the plays in one round trip. The unique keys refuse a round or a card
    stored twice as they refuse the ORM's rows (``IntegrityError``: RACED)."""
    connection = db.session.connection()
    round_id = connection.execute(
        ROUND_INSERT, {"game_id": new.game_id, "number": new.number, "created_at": utcnow()}
    ).scalar_one()
    plays = [
        {"round_id": round_id, "game_id": new.game_id, "player_id": player_id, "card": card}
        for player_id, card in new.plays.items()
    ]
    connection.execute(PLAY_INSERT, plays)


ROUND_INSERT = insert(Round.__table__).returning(Round.__table__.c.id)
PLAY_INSERT = insert(Play.__table__)


def apart() -> bool:
    """Whether a background process follows this app's writes (``companion.background``):
    luck, and the statistics of a game that ended, are then left to it."""
    return bool(current_app.config.get("LUCK_APART"))


def statistics_after(match_id: int) -> bool:
    """After a write that finished, reopened or corrected a game while the background
    process ran (``apart``): the match's statistics (its games' and its own rows, the
    ratings) brought in line in a short write of their own. Nothing is written when they
    are in line already. Whether they were not.

    Nothing on a page of the table reads them: the leaderboard and the players' pages
    do, and show the finished game once this write is in, moments after the round's."""
    if not statistics_stale(match_id):
        db.session.rollback()
        return False
    with writing(match_id):
        refresh_match(match_id)
    return True


def after_the_answer(work: Callable[[], None]) -> None:
    """Run ``work`` once this request's answer has gone out (the server closes it after
    the last byte: gunicorn and waitress alike), in an app context of its own; at once
    outside a request, or where the app's ``AFTER_THE_ANSWER`` is off (the tests' client
    closes no answer). The phone that sent the request does not wait for it."""
    if not has_request_context() or not current_app.config.get("AFTER_THE_ANSWER", True):
        work()
        return
    app = current_app._get_current_object()

    def in_its_own_context() -> None:
        with app.app_context():
            try:
                work()
            except Exception:  # the answer is gone: the log is all that can tell
                app.logger.exception("the work after an answer failed")

    @after_this_request
    def when_closed(response):
        response.call_on_close(in_its_own_context)
        return response


def luck_after(match_id: int, limit: int | None = None) -> int | None:
    """After a write that left a match's luck stale (every card round, a game's end, a
    correction, an undo): the stale luck figured with no write open (the slow part), then
    stored a game at a time, each in a short write that raises the match's versions, so
    every page shows it: the second push, after the round's own. The version it left the
    match at; None when the match moved on meanwhile (its next look figures what is new),
    is gone, or has more stale games than ``limit`` (the newest first, then the oldest:
    a big import's backlog goes a few games at a time, and other tables' luck between).

    A game's rows are stored even when the match moved on meanwhile, as long as the
    rounds they are of are still as they were figured (``play_luck.still_right``): a
    table sending rounds faster than their luck is figured (at a Pi's share of a core
    during an import's fill) would otherwise never see any."""
    figured = stale_luck(match_id, limit)
    db.session.rollback()  # the read ends: no snapshot is held while the next writes wait
    if figured is None:
        return None
    version, moved = figured.version, False
    for luck in figured.games:
        try:
            with writing():
                # First: on PostgreSQL it takes the match's row lock. The table version
                # rises too where the table's live pages show the luck (``seen_at_table``).
                if not raise_version(match_id, version, hidden=True):
                    moved = True
                    # the row lock, as the table's writes take it
                    raise_versions([match_id], derived=True)
                    luck = still_right(luck)
                    if luck is None:
                        raise MovedOn
                    carry_correction(match_id)
                elif seen_at_table(luck):
                    raise_table_version(match_id)
                    carry_correction(match_id)
                put_figured(luck)
        except MovedOn:  # its rounds changed: the next look figures them again
            continue
        except IntegrityError:  # another process stored them meanwhile
            return None
        version += 1
    return None if figured.more or moved else version


def review_after(match_id: int, limit: int | None = None) -> int:
    """After a game's end (in the background process): the review of each of the match's
    finished card games not reviewed yet (the newest first, ``limit`` at most), figured
    with no write open (seconds for ten players), then stored in a short write of its own
    if the game's inputs are still those it was figured from (else the write that changed
    them dropped it, and the next look figures it again). How many games it stored."""
    done = 0
    for game_id in game_review.unreviewed(match_id)[:limit]:
        work = review_work(match_id, game_id)
        if work is not None:
            work.done.extend(work.rounds)
            done += finish_review(work)
    return done


@dataclass
class ReviewWork:
    """A finished game's review being figured, a round at a time (``rounds``; those done
    so far in ``done``), from these inputs, for ``finish_review`` to store."""

    match_id: int
    game_id: int
    inputs: tuple
    rounds: Iterator[list]
    done: list[list] = field(default_factory=list)


def review_work(match_id: int, game_id: int) -> ReviewWork | None:
    """A finished card game's review to figure (None for a game not over): read, then the
    read ends, so nothing is held while the table writes meanwhile."""
    game = db.session.get(Game, game_id)
    if game is None:
        return None
    replayed = played_game(game, [seat.player_id for seat in game.match.seats])
    if not replayed.finished:
        db.session.rollback()
        return None
    rounds = game_review.rounds_to_review(replayed, deck_of(game.match))
    inputs = game_review.inputs_of(replayed)
    db.session.rollback()
    return ReviewWork(match_id, game_id, inputs, rounds)


def finish_review(work: ReviewWork) -> bool:
    """Store a review whose rounds are all figured (``put_review``)."""
    rows = game_review.rows_from(work.match_id, work.game_id, work.done)
    return put_review(work.match_id, work.game_id, work.inputs, rows, again=False)


def put_review(match_id: int, game_id: int, inputs: tuple, rows: list[dict], again: bool) -> bool:
    """Store a game's review, figured with no write open, in a short write of its own if
    the game's inputs are still those it was figured from (``game_review.inputs_of``);
    ``again``: in place of what is kept of it (``flask rebuild``), else only if none is
    kept. The match's versions rise: every page shows it, a push as luck's. Whether it
    was stored."""
    with writing():
        game = db.session.get(Game, game_id)
        if game is None or (not again and game_review.kept(game_id)):
            return False
        now = played_game(game, [seat.player_id for seat in game.match.seats])
        if game_review.inputs_of(now) != inputs:
            return False
        raise_versions([match_id], derived=True)
        carry_correction(match_id)
        game_review.replace(game_id, rows)
    return True


def history_to_review(skip: Collection[int] = ()) -> int | None:
    """A match (not one of ``skip``) with a finished card game that has no review (the
    newest game's): what the background process reviews when nothing else waits."""
    return game_review.unreviewed_match(skip)


def unreviewed_games(match_id: int) -> list[int]:
    """The match's finished card games with no review kept, the newest first."""
    return game_review.unreviewed(match_id)


def reviews_left(match_id: int) -> int:
    """How many of the match's finished card games have no review kept yet."""
    return len(game_review.unreviewed(match_id))


def follow_changes(engine: Engine, every: float | None = None) -> Callable:
    """How a process follows every change to this database (SQLite's data_version, looked
    at every ``every`` seconds; PostgreSQL's NOTIFY), as the live streams' feed does
    (``companion.background``)."""
    return storage.follower(engine, every)


def carry_correction(match_id: int) -> None:
    """After the match's table version rose for derived rows alone (inside the write): a
    correction that was the newest thing at the table still is, so every page still says
    what it changed (``state.match_state`` shows the one made at the current version)."""
    now = select(Match.table_version).where(Match.id == match_id).scalar_subquery()
    games = select(Game.id).where(Game.match_id == match_id)
    db.session.execute(
        update(Correction)
        .where(Correction.game_id.in_(games), Correction.table_version == now - 1)
        .values(table_version=now)
        .execution_options(synchronize_session=False)
    )


def fill_missing_luck(after: int = 0, limit: int = 20) -> list[int]:
    """Figure the luck of up to ``limit`` matches past id ``after`` that have none (after
    an import or an upgrade), each in a write of its own; their ids
    (``companion.derived.play_luck``)."""
    matches = missing_matches(after, limit)
    for match_id in matches:
        luck_after(match_id)
    return matches


def fill_all_missing_luck() -> int:
    """Figure every match's missing luck, a match at a time; how many matches."""
    after = done = 0
    while matches := fill_missing_luck(after):
        after, done = matches[-1], done + len(matches)
    return done


def create_match(
    end: EndCondition,
    pro: bool,
    seats: list[int],
    new_name: str | None,
    texts: Mapping[str, str | None] | None = None,
) -> Match | None:
    """Store a new match: its house rules, the seated players in order, a new player
    typed in the form (seated last) and its texts (``models.MATCH_TEXTS``: the note). None
    when that name was taken meanwhile (the unique key, in a race with another phone):
    nothing is stored."""
    try:
        with writing():
            room_for(Match)
            match = Match(end_kind=end.kind, end_value=end.value, pro=pro, **(texts or {}))
            players = [db.session.get(Player, player_id) for player_id in seats]
            if new_name:
                players.append(new_player(new_name))
            match.seats = [Seat(player=p, position=index) for index, p in enumerate(players, 1)]
            db.session.add(match)
    except IntegrityError:
        return None
    return match


def new_player(name: str) -> Player:
    """Add a player to the session (inside a write); ``Full`` at the cap."""
    room_for(Player)
    player = Player(name=name, name_key=name_key(name))
    db.session.add(player)
    return player


def add_player(name: str) -> bool:
    """Store a new player; False when the name was taken meanwhile (the unique key)."""
    try:
        with writing():
            new_player(name)
    except IntegrityError:
        return False
    return True


def rename_player(player_id: int, name: str) -> bool:
    """Rename a player, raising the version of every match they sit in, so the new name
    shows there at once; False when the name was taken meanwhile (the unique key)."""
    seated = list(db.session.scalars(select(Seat.match_id).where(Seat.player_id == player_id)))
    renamed = update(Player).where(Player.id == player_id)
    try:
        with writing(*seated):
            db.session.execute(renamed.values(name=name, name_key=name_key(name)))
            raise_versions(seated)
    except IntegrityError:
        return False
    return True


def archive_player(player_id: int, archived: bool) -> None:
    """Archive a player (not offered for new matches) or restore them."""
    with writing():
        db.session.execute(update(Player).where(Player.id == player_id).values(archived=archived))


def delete_player(player_id: int) -> bool:
    """Delete a player (one who never played: the caller checks); False if there is none."""
    with writing():
        player = db.session.get(Player, player_id)
        if player is None:
            return False
        db.session.delete(player)
    return True


# What a phone enters, each stamped when it was stored: the newest says when someone
# last played (row choices, scores and hidden cards come with their round or game).
ENTRIES = (Round, Game, Match, Player, Correction)


def seconds_since_last_entry() -> float:
    """How long since a phone last entered something (a round, a game, a match, a player,
    a correction): not since the database file last changed, which a start-up's
    migration, a checkpoint or an import of its own also do. Read on a connection of its
    own: the import's holds its staged rows, outside any transaction."""
    return seconds_since(select(func.max(model.created_at)) for model in ENTRIES)


def seconds_since_newest_entry() -> float:
    """``seconds_since_last_entry`` as the newest row of each kind by its id says it: a
    look up the key, not a scan of every round (the background process asks at each
    look while a game waits for its review). An import adds rows past the table's ids
    with their own, older times: until the table's next entry this says "longer ago"
    than it was, and a review may go on meanwhile, which costs the table time, never an
    entry. The import's own wait for quiet reads the exact one."""
    return seconds_since(
        select(model.created_at).order_by(model.id.desc()).limit(1) for model in ENTRIES
    )


# The config's key of when the background process last had the derived data in line
# (``companion.background.InLine``; None, or missing, when no background process runs).
IN_LINE = "DERIVED_IN_LINE"


def derived_behind() -> float:
    """Seconds the derived data (statistics, luck, reviews) is behind the table: since the
    background process last had it in line, when a phone entered something after; 0 when
    it is in line, or no background process follows the writes."""
    in_line = current_app.config.get(IN_LINE)
    if in_line is None:
        return 0.0
    since = in_line.seconds_ago()
    return since if seconds_since_newest_entry() < since else 0.0


def seconds_since(newest_of_each: Iterable[Select]) -> float:
    """Seconds since the newest of these times (each query's one), on a connection of its
    own; infinity when there is none."""
    with db.engine.connect() as connection:
        newest = [connection.execute(query).scalar() for query in newest_of_each]
    stamped = [moment for moment in newest if moment is not None]
    return (utcnow() - max(stamped)).total_seconds() if stamped else float("inf")


def start_rematch(old_id: int, make: Callable[[], Match]) -> int:
    """The rematch of a finished match: the one it already has, else the new match that
    ``make`` builds, stored and linked from the old one in one write. The old match's
    versions rise, so its pages offer the rematch; of two phones at once, one stores."""
    with writing(old_id):
        existing = db.session.scalar(select(Match.rematch_id).where(Match.id == old_id))
        if existing is not None:
            return existing
        room_for(Match)
        match = make()
        db.session.add(match)
        db.session.flush()
        db.session.execute(
            update(Match).where(Match.id == old_id).values(rematch_id=match.id),
            execution_options={"synchronize_session": False},
        )
        raise_versions([old_id])
    return match.id


def rematched(match_id: int) -> list[int]:
    """The match this one is the rematch of (none or one). Its versions rise when this
    one's first game starts: its TV, which kept the result meanwhile, follows then."""
    return list(db.session.scalars(select(Match.id).where(Match.rematch_id == match_id)))


def delete_match(match_id: int, version: int | None) -> bool:
    """Delete a match and what cascades from it, if it is still at ``version`` (the one
    its deletion was confirmed at; checked inside the write, as ``raise_version`` does);
    False if it moved on. A match it was the rematch of offers Rematch again."""
    with writing(match_id):  # cascades: seats, games, rounds, plays, scores, results
        query = select(Match.version, Match.created_at).where(Match.id == match_id)
        current = db.session.execute(query).first()
        if current is None or current.version != version:
            return False
        db.session.execute(
            update(Match).where(Match.rematch_id == match_id).values(rematch_id=None),
            execution_options={"synchronize_session": False},
        )
        with match_rows_going(current.created_at, match_id):
            db.session.execute(delete(Match).where(Match.id == match_id))
    return True


def rebuild_matches(echo: Callable[[str], None]) -> Rebuilt:
    """Replay every match and put its derived rows right (``flask rebuild``), in one write
    that holds every match: the version of each match that differed rises, so no server
    shows what it kept of the old results."""
    with writing(every_match=True):
        rebuilt = rebuild(check=False, echo=echo)
        raise_versions(list(rebuilt.differing))
    return rebuilt


def fill_statistics() -> None:
    """Derive the statistics once for games played before the statistics tables existed
    (an upgrade: the server's start, and a copy tried out before ``restore``)."""
    has_matches = db.session.scalar(select(Seat.id).limit(1)) is not None
    has_statistics = db.session.scalar(select(PlayerMatchStat.id).limit(1)) is not None
    if has_matches and not has_statistics:
        rebuild_matches(echo=lambda line: None)


def rebuild_all_luck(check: bool, echo: Callable[[str], None]) -> LuckRebuilt:
    """Figure every card game's luck again (``flask rebuild``): compared, and unless
    ``check`` put right (and filled in where none is kept yet) in one write that raises
    the versions of the matches it changed."""
    if check:
        return rebuild_luck(check=True, echo=echo)
    with writing(every_match=True):
        found = rebuild_luck(check=False, echo=echo)
        raise_versions(sorted({*found.differing, *found.missing}))
    return found


def rebuild_all_reviews(check: bool, echo: Callable[[str], None]) -> game_review.ReviewsRebuilt:
    """Review every finished card game again (``flask rebuild``): compared with what is
    kept, and unless ``check`` put right and filled in a game at a time, each in a short
    write of its own that raises its match's versions (``put_review``). A review takes
    seconds of CPU: the table plays on meanwhile, as while the background reviews."""
    found = game_review.ReviewsRebuilt([], [])
    for match_id in db.session.scalars(select(Match.id).order_by(Match.id)).all():
        match = db.session.get(Match, match_id)
        stale = game_review.out_of_line(match) if match is not None else []
        db.session.rollback()  # the read ends: nothing is held while a review is stored
        for game in stale:
            if game.missing:
                found.missing.append(match_id)
            else:
                found.differing.append(match_id)
                echo(f"match {match_id} game {game.number}: review differs")
            if not check:
                put_review(match_id, game.game_id, game.inputs, game.rows, again=True)
    return found


def copy_import(
    connection: Connection, turn: AbstractContextManager, copy: Callable[[], Copied]
) -> tuple[Copied, float]:
    """The import's copy (``companion.backup.load``): ``copy`` in one write transaction
    on the import's own connection, whose temporary tables hold the staged rows, inside
    its ``turn`` to write (SQLite's writer lock). Nothing a phone shows changes: the
    matches are new. Returns what ``copy`` returned and the moment it was committed,
    before the turn ends: the phones' writes waited until then."""
    with turn:
        with connection.begin():
            copied = copy()
        return copied, time.monotonic()


def raise_versions(match_ids: list[int], derived: bool = False) -> None:
    """Raise the versions of these matches (inside a write that holds them); ``derived``:
    for derived rows alone, their input_version stays (``raise_version``)."""
    if match_ids:
        db.session.execute(
            update(Match)
            .where(Match.id.in_(match_ids))
            .values(
                version=Match.version + 1,
                table_version=Match.table_version + 1,
                input_version=Match.input_version + int(not derived),
            )
            .execution_options(synchronize_session=False)
        )


@contextmanager
def writing(*match_ids: int, every_match: bool = False) -> Iterator[None]:
    """One write transaction, asked for explicitly: committed when the block ends,
    rolled back if it raises. Whatever the session read before ends first."""
    db.session.rollback()
    db.session.connection(execution_options={WRITE: True})
    try:
        wait = float(current_app.config.get("WRITE_WAIT", WRITE_WAIT))
        storage.lock_rows(db.session, match_ids, every_match, wait)
        yield
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    feed.nudge(current_app)  # this process's streams look at once


def raise_version(match_id: int, version: int, hidden: bool, derived: bool = False) -> bool:
    """Raise the match's versions if it is still at ``version``; False if it moved on.
    ``hidden``: nothing the table's live pages show changes, only hidden cards or derived
    rows they do not show (table_version and input_version stay); ``derived``: only
    derived rows (input_version stays: ``state.replayed_table``).

    A plain Core statement on the write's connection: no ORM object holds the versions,
    so there is nothing for the session to synchronise (a tenth of the ORM's cost).
    """
    raised = {"tables": int(not hidden), "inputs": int(not hidden and not derived)}
    statement = db.session.connection().execute(
        VERSION_RAISE, {"match_id": match_id, "version": version, **raised}
    )
    return statement.rowcount == 1


def raise_table_version(match_id: int) -> None:
    """Raise the match's table version alone (inside a write that raised its version):
    derived rows the table's live pages show (``luck_after``)."""
    db.session.connection().execute(TABLE_RAISE, {"match_id": match_id})


HIDDEN_CLEAR = delete(PendingCard.__table__).where(
    PendingCard.__table__.c.game_id == bindparam("game_id")
)
TABLE_RAISE = (
    update(Match.__table__)
    .where(Match.__table__.c.id == bindparam("match_id"))
    .values(table_version=Match.__table__.c.table_version + 1)
)
VERSION_RAISE = (
    update(Match.__table__)
    .where(Match.__table__.c.id == bindparam("match_id"))
    .where(Match.__table__.c.version == bindparam("version"))
    .values(
        version=Match.__table__.c.version + 1,
        table_version=Match.__table__.c.table_version + bindparam("tables"),
        input_version=Match.__table__.c.input_version + bindparam("inputs"),
    )
)
