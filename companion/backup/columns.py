"""What a backup holds of every stored table, declared once: each column of each model,
and how the file holds it, or why it is not in the file; and the file's objects with
their fields (``FIELDS``).

A column that is one field of an object of the file (``field``: a match's "pro") is
written, read and staged from here alone: the export writes it (``written``), the checks
read it (``read``), the staging takes it by its name, and the file's format version is
the newest that a declared column came in (``VERSION``). The file's shape (lists of
seats, games, rounds and cards, a match's number) is handled by each of them in turn.
``undeclared`` names any column of the database that is on no list: a stored input
added without deciding its backup fails the tests (tests/backup/test_backup_columns.py).
The derived tables are not in the file at all: they are rebuilt (``DERIVED``).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from sqlalchemy import MetaData

from companion import derived, rules
from companion.backup.fields import (
    BackupError,
    mode_of,
    name_of,
    ruled,
    shown,
    stamp,
    time_of,
    value_of,
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
    Score,
    Seat,
    new_token,
)
from companion.rules import N_

# How a column comes back from the file. All but LEFT and AUTO are staged.
FILE = "file"  # in the file: a field of an object (``field``), or its place in the file
NESTED = "nested"  # the id of the row it belongs to: where it stands in the file
COUNTED = "counted"  # an id the import counts, moved past the largest one here
PLAYER = "player"  # a player, by name in the file, mapped to the player here
FRESH = "fresh"  # written anew by the import (``How.make``): not the household's input
AUTO = "auto"  # an id the database gives: nothing refers to it
LEFT = "left"  # neither in the file nor staged


def text(check: Callable[[str], str]) -> Callable[[dict, str], Any]:
    """The reader of a text that the rules' ``check`` takes (a note's length, say)."""
    return lambda data, key: ruled(check, value_of(data, key, str))


# The readers of a field that holds a value of a kind (``fields.value_of``).
BOOL, INT, TEXT = (partial(value_of, kind=kind) for kind in (bool, int, str))


class How(NamedTuple):
    """A column's way into the file and back: its kind, and where or why. A field of an
    object of the file (``field``) also has that object, its key there ("end.kind": the
    field "kind" of the object "end" within it), its reader (``read(object, key)``:
    checked, as stored, or BackupError) and whether it may be missing (then None; the
    export leaves it out when empty). What the import writes anew has its maker
    (``make(row)``); a column of the file, the format version that brought it."""

    kind: str
    says: str
    holder: str = ""
    key: str = ""
    read: Callable[[dict, str], Any] | None = None
    optional: bool = False
    make: Callable[[dict], Any] | None = None
    since: int = 1


def field(holder: str, key: str, read: Callable, optional: bool = False, since: int = 1) -> How:
    """A column that is one field of an object of the file, read by ``read``; written as
    it is stored (a time as ``fields.stamp`` writes it)."""
    return How(FILE, f"{holder}: “{key}”", holder, key, read, optional, since=since)


def file(says: str, since: int = 1) -> How:
    """A column that the file holds in its shape (a place in a list, a number in a list)."""
    return How(FILE, says, since=since)


def fresh(says: str, make: Callable[[dict], Any]) -> How:
    """A column the import writes anew, ``make(row)``: not in the file."""
    return How(FRESH, says, make=make)


def left(says: str) -> How:
    """A column neither in the file nor staged, and why."""
    return How(LEFT, says)


OWN_ID = How(COUNTED, "the import's own count")
ROW_ID = How(AUTO, "nothing refers to it")
NEW_TOKEN = fresh("a match's link secret: an imported match gets new ones", lambda _: new_token())
COUNTER = fresh("a count of the writes a server took, for the phones' updates: from 0", lambda _: 0)
STARTING = tuple(f"row{row}" for row in range(1, 5))  # a cards game's starting cards

BACKED_UP: dict[type, dict[str, How]] = {
    Player: {
        "id": How(PLAYER, "a player's number in the players list"),
        "name": field("player", "name", name_of),
        "name_key": fresh("derived from the name", lambda row: rules.name_key(row["name"])),
        "archived": field("player", "archived", BOOL),
        "created_at": field("player", "created_at", time_of),
    },
    Match: {
        "id": OWN_ID,
        "created_at": field("match", "created_at", time_of),
        "end_kind": field("match", "end.kind", TEXT),
        "end_value": field("match", "end.value", INT),
        "pro": field("match", "pro", BOOL),
        "version": COUNTER,
        "table_version": COUNTER,
        "input_version": COUNTER,
        "player_token": NEW_TOKEN,
        "watch_token": NEW_TOKEN,
        "links_renewed_at": left("an imported match's links are new, made on import"),
        "rematch_id": file("matches[].rematch: the match's number in the file", since=2),
        "note": field("match", "note", text(rules.match_note), optional=True, since=3),
    },
    Seat: {
        "id": ROW_ID,
        "match_id": How(NESTED, "matches[]"),
        "player_id": How(PLAYER, "matches[].seats[]"),
        "position": file("matches[].seats: its place in the list"),
    },
    Game: {
        "id": OWN_ID,
        "match_id": How(NESTED, "matches[]"),
        "number": file("games[]: its place in the list"),
        "mode": field("game", "mode", mode_of),
        **{row: file(f"games[].starting[{place}]") for place, row in enumerate(STARTING)},
        "created_at": field("game", "created_at", time_of),
    },
    Round: {
        "id": OWN_ID,
        "game_id": How(NESTED, "games[]"),
        "number": file("rounds[]: its place in the list"),
        "created_at": file("rounds[].at (version 1: its game's created_at)", since=2),
    },
    Play: {
        "id": ROW_ID,
        "round_id": How(NESTED, "rounds[]"),
        "game_id": How(NESTED, "games[]: repeated from the round"),
        "player_id": How(PLAYER, "matches[].seats[]: the card's place in the round"),
        "card": file("rounds[].cards[]"),
    },
    RowChoice: {
        "id": OWN_ID,  # its order is the order the choices were made in
        "round_id": How(NESTED, "rounds[]"),
        "player_id": How(PLAYER, "rounds[].choices: the key"),
        "row": file("rounds[].choices: the value"),
    },
    Score: {
        "id": ROW_ID,
        "game_id": How(NESTED, "games[]"),
        "player_id": How(PLAYER, "matches[].seats[]: the score's place"),
        "bulls": file("games[].scores[]: a number"),
        "cards": file("games[].scores[]: a list of cards"),
    },
    Correction: {
        "id": ROW_ID,
        "game_id": How(NESTED, "games[]"),
        "round_number": field("correction", "round", INT),
        "created_at": field("correction", "at", time_of),
        "cards": file("corrections[].cards"),
        "choices": file("corrections[].choices"),
        "dropped": file("corrections[].dropped"),
        "table_version": left("which of the phones' updates showed it: none on a new server"),
    },
    PendingCard: dict.fromkeys(
        ("id", "game_id", "round_number", "player_id", "card"),
        left("a card typed for a round not all in yet: hidden until every card is in"),
    ),
}

# Derived from the inputs, whole: the import stages them from its own replay (or rates
# the matches after its copy), ``flask rebuild`` checks and rebuilds them.
DERIVED = (
    derived.GameResult,
    derived.PlayerGameStat,
    derived.NemesisCount,
    derived.CardTake,
    derived.PlayerMatchStat,
    derived.MatchRating,
    derived.PlayLuck,
    derived.LuckPlayer,
    derived.ReviewCard,
    derived.ReviewPlayer,
)
NOT_TABLES = {"alembic_version": "the schema's revision: the new server's own"}


def by_object() -> dict[str, list[tuple[str, How]]]:
    """The columns that are a field of an object of the file, by that object, in the
    order declared: (column, How)."""
    found: dict[str, list[tuple[str, How]]] = {}
    for declared in BACKED_UP.values():
        for name, how in declared.items():
            if how.read is not None:
                found.setdefault(how.holder, []).append((name, how))
    return found


COLUMNS = by_object()
# An object's columns as ``read`` gives them: a named tuple per object (a file's games
# are read by the ten thousand: a tuple is a third of a dict).
RECORDS = {
    kind: namedtuple(f"{kind.capitalize()}Columns", [name for name, _ in found])
    for kind, found in COLUMNS.items()
}
# The file's format version: the newest that a column came in. Version 1 had no round
# times (its rounds are stored at their game's start) and no rematch; 2 had no note.
VERSION = max(how.since for declared in BACKED_UP.values() for how in declared.values())


class Fields(NamedTuple):
    """An object of the file: the fields it always has, then those it may have (the
    export leaves them out when empty), in the order the export writes them. The
    checks refuse any other field; each field's own check says when it is missing."""

    always: tuple[str, ...]
    optional: tuple[str, ...] = ()


def with_columns(kind: str, always: tuple = (), optional: tuple = ()) -> Fields:
    """The fields of an object: first its columns' (``field``; "end.kind" stands as
    "end"), then ``always``; then ``optional``, then its optional columns'."""
    fields = [how for _, how in COLUMNS[kind]]
    first = dict.fromkeys(how.key.split(".")[0] for how in fields if not how.optional)
    last = tuple(how.key for how in fields if how.optional)
    return Fields((*first, *always), (*optional, *last))


def within(kind: str, outer: str) -> Fields:
    """The fields of the object ``outer`` within an object of ``kind``: its columns'."""
    prefix = outer + "."
    fields = (how.key for _, how in COLUMNS[kind] if how.key.startswith(prefix))
    return Fields(tuple(key.removeprefix(prefix) for key in fields))


FIELDS = {
    "backup": Fields(("format", "version", "exported_at", "players", "matches")),
    "player": with_columns("player"),
    "match": with_columns("match", ("seats", "games"), ("rematch",)),
    "end": within("match", "end"),
    "cards game": with_columns("game", ("starting", "rounds"), ("corrections",)),
    "scores game": with_columns("game", ("scores",)),
    # "at" from version 2 on: ``check.round_times`` asks for it there.
    "round": Fields(("at", "cards"), ("choices",)),
    "correction": with_columns("correction", ("cards",), ("choices", "dropped")),
    "dropped": Fields(("round", "player", "row")),
}
EMPTY = (None, [], {})


def entry(kind: str, /, **values) -> dict:
    """An object of the file of ``kind``, its fields in the declared order; a field it
    may have is left out when it is empty (None, [] or {})."""
    always, optional = FIELDS[kind]
    written = {name: values.pop(name) for name in always}
    for name in optional:
        if (value := values.pop(name, None)) not in EMPTY:
            written[name] = value
    if values:
        raise TypeError(f"no field {', '.join(values)} in the file's {kind}")
    return written


def written(kind: str, row: Any) -> dict:
    """The fields of an object of ``kind`` that are its columns, as the file holds them,
    from ``row`` (a query's row, the columns by name): for ``entry``."""
    values: dict[str, Any] = {}
    inner: dict[str, dict] = {}
    for name, how in COLUMNS[kind]:
        value = getattr(row, name)
        value = stamp(value) if isinstance(value, datetime) else value
        outer, _, key = how.key.rpartition(".")
        if outer:
            values.setdefault(outer, None)  # in its place among the fields
            inner.setdefault(outer, {})[key] = value
        else:
            values[key] = value
    return values | {outer: entry(outer, **fields) for outer, fields in inner.items()}


def object_of(data: Any, kind: str) -> dict:
    """``data`` as an object of the file of ``kind`` (``FIELDS``), refused if it has any
    other field."""
    required, optional = FIELDS[kind]
    if not isinstance(data, dict):
        raise BackupError(
            N_("Each entry must be an object with the fields %(fields)s."),
            fields=", ".join(required),
        )
    for key in data:
        if key not in required and key not in optional:
            raise BackupError(N_("Unknown field “%(field)s”."), field=shown(key))
    return data


def read(kind: str, data: dict) -> tuple:
    """The columns that are fields of an object of ``kind`` (checked by ``object_of``),
    read and checked (``RECORDS``: by name); an optional one that is missing: None."""
    values = []
    inner: dict[str, dict] = {}
    for _, how in COLUMNS[kind]:
        outer, _, key = how.key.rpartition(".")
        holder = data
        if outer:
            if outer not in inner:
                inner[outer] = object_of(value_of(data, outer, dict), outer)
            holder = inner[outer]
        values.append(None if how.optional and key not in holder else how.read(holder, key))
    return RECORDS[kind]._make(values)


def in_file(model: type) -> list:
    """The columns of a table that the file holds (``FILE``), in the order declared."""
    return [getattr(model, name) for name, how in BACKED_UP[model].items() if how.kind == FILE]


def staged(model: type) -> tuple[str, ...]:
    """The columns of a table the import stages, in the order declared."""
    return tuple(name for name, how in BACKED_UP[model].items() if how.kind not in (LEFT, AUTO))


def undeclared(metadata: MetaData) -> list[str]:
    """Every column of ``metadata``'s tables (as "table.column") that is neither declared
    here nor in a derived table: none, unless one was added without a decision."""
    declared = {model.__tablename__: set(columns) for model, columns in BACKED_UP.items()}
    derived_tables = {model.__tablename__ for model in DERIVED}
    return [
        f"{table.name}.{column.name}"
        for table in metadata.sorted_tables
        if table.name not in derived_tables and table.name not in NOT_TABLES
        for column in table.columns
        if column.name not in declared.get(table.name, ())
    ]
