"""The rows a checked backup adds, as plain tuples ready for the database driver.

Matches, games, rounds and row choices get ids of their own counted from 1 (the import
moves them past the largest ids there when it copies them in); players are their
number in the file (mapped to their ids in the same step). Every row is put in the
order ``columns`` declares from values named by column: a game's plays by keyword
(``Rows.many``), a match, game, player or correction as a ``Layout`` of names made
once (``Rows.row``: a game's row takes a microsecond, as a hand-written tuple nearly
did). What the import writes anew is made as declared, times go through the driver's
own conversion, so a million rows reach the driver without SQLAlchemy one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from itertools import chain, count, repeat
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import DateTime

from companion import derived
from companion.backup import columns
from companion.backup.check import CorrectionIn, GameIn, MatchIn
from companion.derived import figures
from companion.derived.figures import GameRow, MatchRow, NemesisRow, TakeRow
from companion.derived.timing import GameTimes, counted, timeline
from companion.models import Correction, Game, Match, Play, Player, Round, RowChoice, Score, Seat

# The inputs' tables, parents first; players are staged by their number in the file.
INPUTS = (Match, Seat, Game, Round, Play, RowChoice, Score, Correction)
# The staged columns of each table in row order: the inputs' as ``columns`` declares
# them, the derived tables' as their figures are rows.
STAGED: dict[type, tuple[str, ...]] = {
    **{model: columns.staged(model) for model in (Player, *INPUTS)},
    derived.PlayerGameStat: GameRow._fields,
    derived.NemesisCount: NemesisRow._fields,
    derived.CardTake: TakeRow._fields,
    derived.PlayerMatchStat: MatchRow._fields,
}
# What the import writes anew in an input's row (``columns.fresh``).
MADE = {
    model: [(name, how.make) for name, how in columns.BACKED_UP[model].items() if how.make]
    for model in (Player, *INPUTS)
}
NO_START = (None,) * len(columns.STARTING)  # a score-only game's starting cards
# Which counter a staged id belongs to, for the tables that carry their own.
OWN_IDS = {
    model: model.__tablename__
    for model in INPUTS
    if columns.BACKED_UP[model]["id"].kind == columns.COUNTED
}

Stamp = Callable[[datetime], Any]


class Layout(NamedTuple):
    """How a table's staged rows are made from values given in the order of ``given``
    (its columns by name): put in the staged order, with what the import writes anew
    (``columns.fresh``); ``times``: the places of the given times."""

    model: type
    given: tuple[str, ...]
    order: Callable[[tuple], tuple]
    times: tuple[int, ...]


def layout(model: type, *given: str) -> Layout:
    """The layout of ``model``'s rows given as ``given``: every staged column but those
    made anew, each once (else TypeError, as this module is imported)."""
    names = (*given, *(name for name, _ in MADE[model]))
    if sorted(names) != sorted(STAGED[model]):
        raise TypeError(f"{model.__name__} is staged as {STAGED[model]}, not {names}")
    order = itemgetter(*(names.index(name) for name in STAGED[model]))
    table = model.__table__.c
    times = (place for place, name in enumerate(given) if isinstance(table[name].type, DateTime))
    return Layout(model, given, order, tuple(times))


# The inputs' rows as ``Rows`` gives their values: the ids, then the columns that
# ``columns.read`` checked (and a correction's stored lists, as ``check`` keeps them).
PLAYER = layout(Player, "id", *columns.RECORDS["player"]._fields)
MATCH = layout(Match, "id", "rematch_id", *columns.RECORDS["match"]._fields)
GAME = layout(Game, "id", "match_id", "number", *columns.STARTING, *columns.RECORDS["game"]._fields)
CORRECTION = layout(Correction, "game_id", *CorrectionIn._fields)
# ... and a match's seats, a game's rounds, plays, row choices and scores, a column each.
SEATS = layout(Seat, "match_id", "player_id", "position")
ROUNDS = layout(Round, "id", "game_id", "number", "created_at")
PLAYS = layout(Play, "round_id", "game_id", "player_id", "card")
CHOICES = layout(RowChoice, "id", "round_id", "player_id", "row")
SCORES = layout(Score, "game_id", "player_id", "bulls", "cards")


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

    def row(self, layout: Layout, values: tuple) -> tuple:
        """A staged row from its values given as ``layout`` says: times as the driver
        takes them, what the import writes anew made as ``columns`` declares."""
        if layout.times:
            values = list(values)
            for place in layout.times:
                values[place] = self.stamp(values[place])
        if made := MADE[layout.model]:
            named = dict(zip(layout.given, values, strict=True))
            values = (*values, *(make(named) for _, make in made))
        return layout.order(values)

    def many(self, layout: Layout, *columns: Iterable) -> Iterator[tuple]:
        """Staged rows from their columns' values given as ``layout`` says, each an
        iterable (the shortest ends them), times as the driver takes them."""
        if layout.times:
            columns = tuple(
                map(self.stamp, values) if place in layout.times else values
                for place, values in enumerate(columns)
            )
        # strict=False: a repeat() goes on, the other columns end it.
        return zip(*layout.order(columns), strict=False)

    def number(self, match: MatchIn, staged: int) -> None:
        """A match the file adds, by its number there, for the rematch links that name it."""
        self.rows["numbers"].append((match.number, staged))

    def take(self) -> Iterator[tuple[type | str, list[tuple]]]:
        """The rows collected so far, table by table, parents first; then none."""
        taken, self.rows = self.rows, {table: [] for table in self.rows}
        return iter(taken.items())

    def add_players(self, players: list) -> None:
        """The file's players (their columns) with their numbers (1, 2, ... in file order)."""
        self.rows[Player].extend(
            self.row(PLAYER, (number, *player)) for number, player in enumerate(players, 1)
        )

    def add_match(self, match: MatchIn) -> None:
        """A match, its seats and games, and its statistics."""
        self.last["match"] = match_id = self.last["match"] + 1
        self.rows[Match].append(self.row(MATCH, (match_id, match.rematch, *match.columns)))
        self.number(match, match_id)
        seats = [self.numbers[name] for name in match.seats]
        positions = range(1, len(seats) + 1)
        self.rows[Seat].extend(self.many(SEATS, repeat(match_id), seats, positions))
        finished = []
        for number, game in enumerate(match.games, 1):
            rows = self.add_game(match_id, number, game, seats)
            if game.results is not None:
                numbers = self.numbers
                bulls = {numbers[name]: count for name, count in game.results.items()}
                finished.append(figures.Finished(number, bulls, rows))
        minutes = import_minutes(match) if finished else 0
        end, started = match.end, self.stamp(match.created_at)
        rows = figures.match_rows(match_id, match.created_at, seats, end, finished, minutes)
        self.rows[derived.PlayerMatchStat].extend((*row[:2], started, *row[3:]) for row in rows)
        if len(finished) < len(match.games) or not rows or not rows[0].finished:
            self.in_progress.append(match_id)

    def add_game(self, match_id: int, number: int, game: GameIn, seats: list[int]) -> list[GameRow]:
        """A game with its rounds or scores, and its statistics once finished (its game
        rows returned, with the players' numbers)."""
        self.last["game"] = game_id = self.last["game"] + 1
        starting = game.starting or NO_START
        self.rows[Game].append(
            self.row(GAME, (game_id, match_id, number, *starting, *game.columns))
        )
        if game.rounds:
            self.add_rounds(game_id, game.rounds, seats, game.round_times)
        self.rows[Correction].extend(
            self.row(CORRECTION, (game_id, *correction)) for correction in game.corrections
        )
        if game.scores:  # per seat: bulls, or the cards of the pile
            bulls = [None if isinstance(pile, list) else pile for pile in game.scores]
            piles = [",".join(map(str, p)) if isinstance(p, list) else None for p in game.scores]
            self.rows[Score].extend(self.many(SCORES, repeat(game_id), seats, bulls, piles))
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

    def add_rounds(self, game_id: int, rounds: list, seats: list[int], times: list) -> None:
        """A cards game's rounds (entered at ``times``), plays and row choices."""
        first = self.last["round"] + 1
        self.last["round"] = first + len(rounds) - 1
        ids = range(first, first + len(rounds))
        self.rows[Round].extend(
            self.many(ROUNDS, ids, repeat(game_id), range(1, len(rounds) + 1), times)
        )
        # One zip for the whole game: round ids each repeated once per seat.
        self.rows[Play].extend(
            self.many(
                PLAYS,
                chain.from_iterable(map(repeat, ids, repeat(len(seats)))),
                repeat(game_id),
                chain.from_iterable(repeat(seats, len(rounds))),
                chain.from_iterable(cards for cards, _ in rounds),
            )
        )
        numbers = self.numbers
        chosen = [  # in most rounds none
            (round_id, numbers[name], row)
            for round_id, (_, choices) in zip(ids, rounds, strict=True)
            for name, row in choices.items()
        ]
        if chosen:
            first = self.last["row_choice"] + 1
            self.last["row_choice"] += len(chosen)
            rows = self.many(CHOICES, count(first), *zip(*chosen, strict=True))
            self.rows[RowChoice].extend(rows)
