"""The rows a checked backup adds, as plain tuples ready for the database driver.

Matches, games, rounds and row choices get ids of their own counted from 1 (the import
moves them past the largest ids there when it copies them in); players are their
number in the file (mapped to their ids in the same step). Every value is already as
the database takes it (times through the driver's own conversion), so a million rows
go to the driver without passing through SQLAlchemy one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from itertools import chain, repeat
from typing import Any

from companion import derived
from companion.backup import columns
from companion.backup.check import GameIn, MatchIn, PlayerIn
from companion.derived import figures
from companion.derived.figures import GameRow, MatchRow, NemesisRow, TakeRow
from companion.derived.timing import GameTimes, counted, timeline
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
    new_token,
)
from companion.rules.names import name_key

# The staged columns of each table in row order, parents first: the inputs' as
# ``columns`` declares them, the derived tables' as their figures are rows.
INPUTS = (Match, Seat, Game, Round, Play, RowChoice, Score, Correction)
STAGED: dict[type, tuple[str, ...]] = {
    **{model: columns.staged(model) for model in INPUTS},
    derived.PlayerGameStat: GameRow._fields,
    derived.NemesisCount: NemesisRow._fields,
    derived.CardTake: TakeRow._fields,
    derived.PlayerMatchStat: MatchRow._fields,
}
PLAYER_COLUMNS = columns.staged(Player)[1:]  # staged after the number that stands for its id
# Which counter a staged id belongs to, for the tables that carry their own.
OWN_IDS = {
    model: model.__tablename__
    for model in INPUTS
    if columns.BACKED_UP[model]["id"].kind == columns.COUNTED
}
MOVED = {"match_id": "match", "game_id": "game", "round_id": "round"}
MAPPED = ("player_id", "rival_id")  # a player's number in the file, mapped to their id

Stamp = Callable[[datetime], Any]


def player_rows(players: list[PlayerIn], stamp: Stamp) -> list[tuple]:
    """The file's players with their numbers (1, 2, ... in file order)."""
    return [
        (number, player.name, name_key(player.name), player.archived, stamp(player.created_at))
        for number, player in enumerate(players, 1)
    ]


def import_minutes(match: MatchIn) -> int:
    """The match's minutes as ``companion.derived.timing`` counts them once it is
    imported, from its rounds' times (a version 1 file's are their game's start)."""
    games = [
        GameTimes(number, game.mode, game.created_at, tuple(game.round_times))
        for number, game in enumerate(match.games, 1)
    ]
    return timeline(match.created_at, counted(games)).match.minutes


class Rows:
    """The staged rows of every table, collected match by match and taken in batches."""

    def __init__(self, numbers: dict[str, int], stamp: Stamp) -> None:
        self.numbers, self.stamp = numbers, stamp
        # Every table's rows, and "numbers": every match of the file (see ``number``).
        self.rows: dict[type | str, list[tuple]] = {table: [] for table in (*STAGED, "numbers")}
        self.last = dict.fromkeys(OWN_IDS.values(), 0)
        self.in_progress: list[int] = []  # staged ids of matches still being played

    def number(self, match: MatchIn, staged: int) -> None:
        """A match the file adds, by its number there, for the rematch links that name it."""
        self.rows["numbers"].append((match.number, staged))

    def take(self) -> Iterator[tuple[type | str, list[tuple]]]:
        """The rows collected so far, table by table, parents first; then none."""
        taken, self.rows = self.rows, {table: [] for table in self.rows}
        return iter(taken.items())

    def add_match(self, match: MatchIn) -> None:
        """A match, its seats and games, and its statistics."""
        self.last["match"] = match_id = self.last["match"] + 1
        end, started = match.end, self.stamp(match.created_at)
        tokens = (new_token(), new_token())
        row = (match_id, started, end.kind, end.value, match.pro, 0, 0, *tokens, match.rematch)
        self.rows[Match].append(row)
        self.number(match, match_id)
        seats = [self.numbers[name] for name in match.seats]
        self.rows[Seat].extend(zip(repeat(match_id), seats, range(1, len(seats) + 1)))
        finished = []
        for number, game in enumerate(match.games, 1):
            rows = self.add_game(match_id, number, game, seats)
            if game.results is not None:
                numbers = self.numbers
                bulls = {numbers[name]: count for name, count in game.results.items()}
                finished.append(figures.Finished(number, bulls, rows))
        minutes = import_minutes(match) if finished else 0
        rows = figures.match_rows(match_id, match.created_at, seats, end, finished, minutes)
        self.rows[derived.PlayerMatchStat].extend((*row[:2], started, *row[3:]) for row in rows)
        if len(finished) < len(match.games) or not rows or not rows[0].finished:
            self.in_progress.append(match_id)

    def add_game(self, match_id: int, number: int, game: GameIn, seats: list[int]) -> list[GameRow]:
        """A game with its rounds or scores, and its statistics once finished (its game
        rows returned, with the players' numbers)."""
        self.last["game"] = game_id = self.last["game"] + 1
        started = self.stamp(game.created_at)
        starting = game.starting or (None,) * 4
        self.rows[Game].append((game_id, match_id, number, game.mode, *starting, started))
        if game.rounds:
            self.add_rounds(game_id, game.rounds, seats, map(self.stamp, game.round_times))
        self.rows[Correction].extend(
            (game_id, number, self.stamp(at), cards, choices, dropped)
            for number, at, cards, choices, dropped in game.corrections
        )
        if game.scores:
            self.rows[Score].extend(
                (game_id, seat, None, ",".join(map(str, score)))
                if isinstance(score, list)
                else (game_id, seat, score, None)
                for seat, score in zip(seats, game.scores, strict=True)
            )
        if game.results is None:
            return []
        named, rivals, takes = game.figures  # players by name, ids 0: filled in here
        numbers = self.numbers
        rows = [GameRow(game_id, match_id, numbers[row[2]], *row[3:]) for row in named]
        self.rows[derived.PlayerGameStat].extend(rows)
        self.rows[derived.NemesisCount].extend(
            (game_id, match_id, numbers[row[2]], numbers[row[3]], row[4]) for row in rivals
        )
        self.rows[derived.CardTake].extend(
            (game_id, match_id, numbers[row[2]], *row[3:]) for row in takes
        )
        return rows

    def add_rounds(self, game_id: int, rounds: list, seats: list[int], times: Iterable) -> None:
        """A cards game's rounds (entered at ``times``), plays and row choices."""
        first = self.last["round"] + 1
        self.last["round"] = first + len(rounds) - 1
        ids = range(first, first + len(rounds))
        self.rows[Round].extend(zip(ids, repeat(game_id), range(1, len(rounds) + 1), times))
        # One zip for the whole game: round ids each repeated once per seat.
        self.rows[Play].extend(
            zip(
                chain.from_iterable(map(repeat, ids, repeat(len(seats)))),
                repeat(game_id),
                chain.from_iterable(repeat(seats, len(rounds))),
                chain.from_iterable(cards for cards, _ in rounds),
            )
        )
        choices, numbers = self.rows[RowChoice], self.numbers
        for round_id, (_, chosen) in zip(ids, rounds, strict=True):
            for name, row in chosen.items():  # in most rounds none
                self.last["row_choice"] += 1
                choices.append((self.last["row_choice"], round_id, numbers[name], row))
