"""The backup document: every stored input as one versioned JSON file, and a match as CSV.

Only inputs are written, the columns ``columns`` declares in the file; bulls and winners
are derived again on import. The layout is documented in the README ("Backup format").
Everything is read with a handful of plain queries, not ORM objects: a household's whole
history is millions of plays.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from sqlalchemy import select

from companion.backup.columns import FIELDS, STARTING, VERSION, entry, in_file, written
from companion.backup.fields import stamp, stored_stamp
from companion.db import db
from companion.models import (
    Correction,
    Game,
    Match,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
    Seat,
    utcnow,
)
from companion.rules.names import name_key
from companion.state import MatchState

FORMAT = "6nimmt-companion"
OLDEST = 1  # the oldest format version this companion reads (columns.VERSION: the newest)


def match_identity(created_at: datetime, seat_names: Iterable[str]) -> tuple:
    """What makes two matches the same match: their start, to the microsecond, and seats
    (set once when a match is created: the identity survives export and import)."""
    return (created_at, tuple(name_key(name) for name in seat_names))


def identity_digest(created_at: datetime, seat_names: Iterable[str]) -> bytes:
    """A match's identity in 16 bytes, for the sets of them an import keeps (280,000
    matches: 130 MB as tuples, 30 as digests; BLAKE2b's 128 bits: one clash in 10^38)."""
    identity = repr(match_identity(created_at, seat_names)).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(identity, digest_size=16).digest()


def export_document(now: datetime | None = None) -> dict:
    """Every player and every match, as the backup document."""
    players = db.session.execute(select(Player.id, *in_file(Player))).all()
    names = {player.id: player.name for player in players}
    players.sort(key=lambda player: (player.created_at, name_key(player.name)))
    return entry(
        "backup",
        format=FORMAT,
        version=VERSION,
        exported_at=stamp(now or utcnow()),
        players=[entry("player", **written("player", player)) for player in players],
        matches=export_matches(names),
    )


def export_matches(names: dict[int, str]) -> list[dict]:
    """Every match with its seats and games, oldest first; a match that a Rematch
    started is named by its number in the file (1 = the first match)."""
    seats: dict[int, list[int]] = defaultdict(list)
    for match_id, player_id in driver_rows(
        select(Seat.match_id, Seat.player_id).order_by(Seat.match_id, Seat.position)
    ):
        seats[match_id].append(player_id)
    games = export_games(seats, names)
    matches = [
        (row, [names[player_id] for player_id in seats[row.id]])
        for row in db.session.execute(select(Match.id, *in_file(Match)))
    ]
    matches.sort(key=lambda match: match_identity(match[0].created_at, match[1]))
    numbers = {row.id: number for number, (row, _) in enumerate(matches, 1)}
    return [
        entry(
            "match",
            **written("match", row),
            seats=seat_names,
            games=games.get(row.id, []),
            rematch=numbers.get(row.rematch_id),  # left out when none, as for most matches
        )
        for row, seat_names in matches
    ]


def export_games(seats: dict[int, list[int]], names: dict[int, str]) -> dict[int, list[dict]]:
    """Every match's games in order, by match id."""
    query = select(Game.id, Game.match_id, *in_file(Game)).order_by(Game.match_id, Game.number)
    game_rows = db.session.execute(query).all()
    seat_of_game = {row.id: seats[row.match_id] for row in game_rows}
    rounds = export_rounds(seat_of_game, names)
    corrections = export_corrections(seat_of_game, names)
    scores = export_scores(seat_of_game)
    games: dict[int, list[dict]] = defaultdict(list)
    for row in game_rows:
        if row.mode == "cards":
            game = entry(
                "cards game",
                **written("game", row),
                starting=[getattr(row, name) for name in STARTING],
                rounds=rounds.get(row.id, []),
                corrections=corrections.get(row.id),  # left out when none, as most games
            )
        else:
            game = entry("scores game", **written("game", row), scores=scores.get(row.id, []))
        games[row.match_id].append(game)
    return games


def driver_rows(query) -> list[tuple]:
    """The rows of a query without parameters, as the database driver's plain tuples (same
    connection and transaction): for a million plays, SQLAlchemy's rows take three times as
    long. Only numbers, texts, and times read with ``stored_stamp``."""
    connection = db.session.connection()
    cursor = connection.connection.cursor()
    try:
        cursor.execute(str(query.compile(connection)))
        return cursor.fetchall()
    finally:
        cursor.close()


def export_rounds(seat_of_game: dict[int, list[int]], names: dict[int, str]) -> dict:
    """Every cards game's rounds in order: when each was entered, cards in seat order,
    row choices by name."""
    cards: dict[int, dict[int, int]] = defaultdict(dict)
    for round_id, player_id, card in driver_rows(select(Play.round_id, Play.player_id, Play.card)):
        cards[round_id][player_id] = card
    choices: dict[int, dict[str, int]] = defaultdict(dict)
    for round_id, player_id, row in driver_rows(
        select(RowChoice.round_id, RowChoice.player_id, RowChoice.row).order_by(RowChoice.id)
    ):
        choices[round_id][names[player_id]] = row
    rounds: dict[int, list[dict]] = defaultdict(list)
    for round_id, game_id, created_at in driver_rows(
        select(Round.id, Round.game_id, Round.created_at).order_by(Round.game_id, Round.number)
    ):
        played = cards[round_id]
        rounds[game_id].append(
            entry(
                "round",
                at=stored_stamp(created_at),
                cards=[played.get(player_id) for player_id in seat_of_game[game_id]],
                choices=choices.get(round_id),  # rare: left out otherwise
            )
        )
    return rounds


def export_corrections(seat_of_game: dict[int, list[int]], names: dict[int, str]) -> dict:
    """Every game's corrections in the order they were made, players by name, by game id."""
    found: dict[int, list[dict]] = defaultdict(list)
    query = select(Correction.game_id, *in_file(Correction))
    for made in db.session.execute(query.order_by(Correction.game_id, Correction.id)):
        seated = [names[player] for player in seat_of_game[made.game_id]]
        found[made.game_id].append(
            entry(
                "correction",
                **written("correction", made),
                cards=items(made.cards),
                choices={seated[seat - 1]: row for seat, row in pairs(made.choices)},
                dropped=[
                    entry("dropped", round=later, player=seated[seat - 1], row=row)
                    for later, seat, row in pairs(made.dropped)
                ],
            )
        )
    return found


def items(text: str) -> list[int]:
    """A stored list of numbers: "41,42" as [41, 42]."""
    return [int(item) for item in text.split(",") if item]


def pairs(text: str) -> list[tuple[int, ...]]:
    """A stored list of pairs or triples: "3:2,4:1" as (3, 2), (4, 1)."""
    return [tuple(map(int, item.split(":"))) for item in text.split(",") if item]


def export_scores(seat_of_game: dict[int, list[int]]) -> dict[int, list]:
    """Every score-only game's entries in seat order: bulls, or the cards of the pile."""
    typed: dict[int, dict[int, int | list[int]]] = defaultdict(dict)
    for game_id, player_id, bulls, cards in driver_rows(
        select(Score.game_id, Score.player_id, Score.bulls, Score.cards)
    ):
        typed[game_id][player_id] = bulls if cards is None else items(cards)
    return {
        game_id: [entries.get(player_id) for player_id in seat_of_game[game_id]]
        for game_id, entries in typed.items()
    }


def dump(document: dict) -> str:
    """The document as text: one line per player and per match, readable and diffable."""

    def line(value) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    head = ",\n".join(
        f"  {line(key)}: {line(document[key])}" for key in FIELDS["backup"].always[:3]
    )
    players = ",\n".join(f"    {line(player)}" for player in document["players"])
    matches = ",\n".join(f"    {line(match)}" for match in document["matches"])
    return f'{{\n{head},\n  "players": [\n{players}\n  ],\n  "matches": [\n{matches}\n  ]\n}}\n'


# Where a spreadsheet may find a formula (CSV injection): at the start of a cell, or
# after a separator that one splits on and we did not (German and French spreadsheets
# split on ";", whatever the quotes), a formula's first character ("=", "+", "-", "@",
# tab, CR) after any spaces or quotes. An apostrophe there makes it text.
FORMULA_PART = re.compile(r"(?:^|(?<=[,;\t\r\n]))(?=[\s\"]*[=+\-@\t\r])")
# A cell holding one of these is quoted: a separator (the comma, a spreadsheet's ";" or
# tab), the quote itself, or a line break.
QUOTED = re.compile(r"[,;\t\"\r\n]")


def csv_cell(value: object) -> str:
    """A cell as CSV text that a spreadsheet in any language keeps whole and never runs.

    Not the csv module's writer: it quotes a cell only for the comma, and a name may
    hold a ";" (``rules.names``).
    """
    text = FORMULA_PART.sub("'", value) if isinstance(value, str) else str(value)
    return '"' + text.replace('"', '""') + '"' if QUOTED.search(text) else text


def csv_line(values: Iterable[object]) -> str:
    """A row of cells as one CSV line, ended as RFC 4180 says (CRLF)."""
    return ",".join(csv_cell(value) for value in values) + "\r\n"


def match_csv(
    state: MatchState,
    game_label: str,
    total_label: str,
    times: Mapping[int, tuple[str, int]] | None = None,
    time_labels: Sequence[str] = (),
    texts: Sequence[tuple[str, str]] = (),
) -> str:
    """A match for a spreadsheet: one row per finished game, one column per player, totals;
    and the match's texts (its note), a last row each: ``texts``, each label and text.

    ``times``: when each finished game (by number; 0 for the whole match) was played
    and its minutes, as two more columns headed ``time_labels``. Starts with a byte
    order mark, so that spreadsheet programs read the names as UTF-8.
    """
    names = (player.name for player in state.players)
    lines = [csv_line([game_label, *names, *time_labels])]
    times = times or {}
    for game in state.finished_games:
        bulls = (game.bulls.get(pid, 0) for pid in state.player_ids)
        lines.append(csv_line([game.number, *bulls, *times.get(game.number, ())]))
    totals = (state.standing.totals[pid] for pid in state.player_ids)
    lines.append(csv_line([total_label, *totals, *times.get(0, ())]))
    lines.extend(csv_line(row) for row in texts)
    return "\ufeff" + "".join(lines)
