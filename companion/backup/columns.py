"""What a backup holds of every stored table, declared once: each column of each model,
and how the file holds it, or why it is not in the file; and the file's objects with
their fields (``FIELDS``).

The export reads the columns the file holds (``in_file``) and writes its objects with
``entry``; the checks read them with ``fields.object_of``, both from ``FIELDS``. The
staging reads its columns from here (``staged``), in the order declared, which is the
order ``rows.Rows`` writes them in.
``undeclared`` names any column of the database that is on no list: a stored input
added without deciding its backup fails the tests (tests/backup/test_backup_columns.py).
The derived tables are not in the file at all: they are rebuilt (``DERIVED``).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from sqlalchemy import MetaData

from companion import derived
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
)

# How a column comes back from the file. All but LEFT and AUTO are staged.
FILE = "file"  # a field of the file, as it is there
NESTED = "nested"  # the id of the row it belongs to: where it stands in the file
COUNTED = "counted"  # an id the import counts, moved past the largest one here
PLAYER = "player"  # a player, by name in the file, mapped to the player here
FRESH = "fresh"  # written anew by the import: not the household's input
AUTO = "auto"  # an id the database gives: nothing refers to it
LEFT = "left"  # neither in the file nor staged


class How(NamedTuple):
    """A column's way into the file and back: its kind, and where or why."""

    kind: str
    says: str


# A field of the file, where; not in the file but written anew on import, or left, why.
file, fresh, left = partial(How, FILE), partial(How, FRESH), partial(How, LEFT)
OWN_ID = How(COUNTED, "the import's own count")
ROW_ID = How(AUTO, "nothing refers to it")
NEW_TOKEN = fresh("a match's link secret: an imported match gets new ones")
COUNTER = fresh("a count of the writes a server took, for the phones' updates: from 0")

BACKED_UP: dict[type, dict[str, How]] = {
    Player: {
        "id": How(PLAYER, "a player's number in the players list"),
        "name": file("players[].name"),
        "name_key": fresh("derived from the name (rules.names.name_key)"),
        "archived": file("players[].archived"),
        "created_at": file("players[].created_at"),
    },
    Match: {
        "id": OWN_ID,
        "created_at": file("matches[].created_at"),
        "end_kind": file("matches[].end.kind"),
        "end_value": file("matches[].end.value"),
        "pro": file("matches[].pro"),
        "version": COUNTER,
        "table_version": COUNTER,
        "player_token": NEW_TOKEN,
        "watch_token": NEW_TOKEN,
        "links_renewed_at": left("an imported match's links are new, made on import"),
        "rematch_id": file("matches[].rematch: the match's number in the file"),
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
        "mode": file("games[].mode"),
        **{f"row{row}": file(f"games[].starting[{row - 1}]") for row in range(1, 5)},
        "created_at": file("games[].created_at"),
    },
    Round: {
        "id": OWN_ID,
        "game_id": How(NESTED, "games[]"),
        "number": file("rounds[]: its place in the list"),
        "created_at": file("rounds[].at (version 1: its game's created_at)"),
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
        "round_number": file("corrections[].round"),
        "created_at": file("corrections[].at"),
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
    derived.ReviewCard,
)
NOT_TABLES = {"alembic_version": "the schema's revision: the new server's own"}


class Fields(NamedTuple):
    """An object of the file: the fields it always has, then those it may have (the
    export leaves them out when empty), in the order the export writes them. The
    checks refuse any other field; each field's own check says when it is missing."""

    always: tuple[str, ...]
    optional: tuple[str, ...] = ()


FIELDS = {
    "backup": Fields(("format", "version", "exported_at", "players", "matches")),
    "player": Fields(("name", "archived", "created_at")),
    "match": Fields(("created_at", "end", "pro", "seats", "games"), ("rematch",)),
    "end": Fields(("kind", "value")),
    "cards game": Fields(("mode", "created_at", "starting", "rounds"), ("corrections",)),
    "scores game": Fields(("mode", "created_at", "scores")),
    # "at" from version 2 on: ``check.round_times`` asks for it there.
    "round": Fields(("at", "cards"), ("choices",)),
    "correction": Fields(("round", "at", "cards"), ("choices", "dropped")),
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
