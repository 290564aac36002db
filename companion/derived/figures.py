"""A finished game's and a match's statistics as plain values: pure, no database.

``companion.derived`` stores these values; the benchmark and the tests call them too.
They read what the rules engine did (``rules.Step``) and never apply a rule themselves.

The nemesis is defined here, once (the player page says the same in words): when a
player's card is the sixth card of a row (``rules.SIXTH``), the engine's step lists the
five cards taken in row order; the fifth of them is the card that filled the row. Its
owner (the player who played it, in this round or an earlier one) is the *filler* of
that take, and ``NemesisRow`` counts takes by filler. A player who filled the row
themselves counts for nobody; a too-low take has no filler, because the taker chose the
row. A player's nemesis is the filler with the most takes over all games (ties share).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from companion import rules


class GameRow(NamedTuple):
    """A PlayerGameStat row's values."""

    game_id: int
    match_id: int
    player_id: int
    bulls: int
    cards: bool
    sixth_takes: int | None = None
    too_low_takes: int | None = None
    clean_rounds: int | None = None
    fives: int | None = None
    worst_round: int | None = None
    worst_round_number: int | None = None


class NemesisRow(NamedTuple):
    """A NemesisCount row's values."""

    game_id: int
    match_id: int
    player_id: int
    rival_id: int
    takes: int


class TakeRow(NamedTuple):
    """A CardTake row's values: bulls a card took in a game (the sixth card of a row or a
    too-low card; each card is played once in a game)."""

    game_id: int
    match_id: int
    player_id: int
    card: int
    bulls: int


class MatchRow(NamedTuple):
    """A PlayerMatchStat row's values."""

    match_id: int
    player_id: int
    played_at: datetime
    players: int
    games: int
    bulls: int
    best_game: int
    worst_game: int
    finished: bool
    rank: int | None
    won: bool
    winners: int
    minutes: int  # the match's time at the table (``companion.derived.timing``)
    best_game_number: int  # the game of ``best_game``
    clean_game: int  # the match's game with the fewest bulls for the whole table
    clean_bulls: int  # the table's bulls in it
    fives: int  # 55s caught over the match's games
    worst_round: int  # most bulls taken in one round over the match's games (0: none)
    worst_round_game: int | None  # the game and round of the first such round
    worst_round_number: int | None


class GameFigures(NamedTuple):
    """A finished game's rows in the three per-game tables."""

    games: list[GameRow]
    rivals: list[NemesisRow]
    takes: list[TakeRow]


def game_rows(
    game_id: int, match_id: int, bulls: Mapping[int, int], table: rules.GameState | None
) -> GameFigures:
    """The figures of one finished game: from its replayed steps, or bulls only (scores)."""
    if table is None:
        rows = [GameRow(game_id, match_id, player, count, False) for player, count in bulls.items()]
        return GameFigures(rows, [], [])
    tally = tally_game(game_id, match_id, table)
    rows = [
        tally.row(game_id, match_id, player, bulls[player], len(table.rounds)) for player in bulls
    ]
    rivals = [
        NemesisRow(game_id, match_id, player, rival, count)
        for (player, rival), count in sorted(tally.fillers.items())
    ]
    return GameFigures(rows, rivals, tally.takes)


@dataclass
class Tally:
    """A game's takes counted by player, round by round (``tally_game``).

    Counted for the players who took a row (a take is at least one bull, so a round
    without one is a clean round): most players take nothing in most rounds.
    """

    sixth: dict[int, int] = field(default_factory=dict)
    too_low: dict[int, int] = field(default_factory=dict)
    fives: dict[int, int] = field(default_factory=dict)
    took: dict[int, int] = field(default_factory=dict)  # rounds in which the player took a row
    worst: dict[int, tuple[int, int]] = field(default_factory=dict)  # (bulls, round)
    fillers: dict[tuple[int, int], int] = field(default_factory=dict)  # (taker, filler)
    owner: dict[int, int] = field(default_factory=dict)  # who played each card so far
    takes: list[TakeRow] = field(default_factory=list)

    def count_take(self, player: int, action: str, cards: Sequence[int]) -> None:
        """Count one take: a 55 in it, too low or the sixth card, and who filled the row."""
        if 55 in cards:
            self.fives[player] = self.fives.get(player, 0) + 1
        if action == rules.TOO_LOW:
            self.too_low[player] = self.too_low.get(player, 0) + 1
            return
        self.sixth[player] = self.sixth.get(player, 0) + 1
        filler = self.owner.get(cards[-1])  # the fifth card of the row
        if filler is not None and filler != player:
            key = (player, filler)
            self.fillers[key] = self.fillers.get(key, 0) + 1

    def count_round(self, taken: Mapping[int, int], number: int) -> None:
        """Count a round's bulls by taker: one more round with a take, and the worst round."""
        for player, count in taken.items():
            self.took[player] = self.took.get(player, 0) + 1
            if count > self.worst.get(player, (0, None))[0]:
                self.worst[player] = (count, number)

    def row(self, game_id: int, match_id: int, player: int, bulls: int, rounds: int) -> GameRow:
        """A player's row of the game, with the figures counted for them."""
        return GameRow(
            game_id,
            match_id,
            player,
            bulls,
            True,
            self.sixth.get(player, 0),
            self.too_low.get(player, 0),
            rounds - self.took.get(player, 0),
            self.fives.get(player, 0),
            *self.worst.get(player, (0, None)),
        )


def tally_game(game_id: int, match_id: int, table: rules.GameState) -> Tally:
    """Count each take of a game's rounds, in the order the engine made them."""
    tally = Tally()
    for number, result in enumerate(table.rounds, 1):
        taken: dict[int, int] = {}  # bulls by taker in this round
        for player, card, _row, action, cards, count, _ends in result.steps:
            tally.owner[card] = player
            if action == rules.PLACED:
                continue
            tally.takes.append(TakeRow(game_id, match_id, player, card, count))
            taken[player] = taken.get(player, 0) + count
            tally.count_take(player, action, cards)
        tally.count_round(taken, number)
    return tally


class Finished(NamedTuple):
    """One of a match's finished games: its number, bulls by player and its game rows."""

    number: int
    bulls: Mapping[int, int]
    rows: Sequence[GameRow]


def match_rows(
    match_id: int,
    played_at: datetime,
    player_ids: Sequence[int],
    end: rules.EndCondition,
    games: Sequence[Finished],
    minutes: int,
) -> list[MatchRow]:
    """Each player's figures in a match from its finished games, in order (none: no
    rows), and the minutes they took. A figure over games keeps the earliest on a tie."""
    if not games:
        return []
    standing = rules.standing(player_ids, [game.bulls for game in games], end)
    totals = standing.totals
    clean = min(games, key=lambda game: (sum(game.bulls.values()), game.number))
    fives = fives_by_player(games)
    worst_round = worst_rounds(games)
    rows = []
    for player in player_ids:
        per_game = [(game.bulls.get(player, 0), game.number) for game in games]
        best, worst = min(per_game), max(count for count, _number in per_game)
        rank = 1 + sum(total < totals[player] for total in totals.values())
        took = worst_round.get(player, (0, None, None))
        rows.append(
            MatchRow(
                match_id,
                player,
                played_at,
                len(player_ids),
                len(games),
                totals[player],
                best[0],
                worst,
                standing.over,
                rank if standing.over else None,
                player in standing.winners,
                len(standing.winners),
                minutes,
                best[1],
                clean.number,
                sum(clean.bulls.values()),
                fives.get(player, 0),
                *took,
            )
        )
    return rows


def fives_by_player(games: Sequence[Finished]) -> dict[int, int]:
    """The 55s each player caught over a match's games (only players who caught one)."""
    fives: dict[int, int] = {}
    for game in games:
        for row in game.rows:
            if row.fives:
                fives[row.player_id] = fives.get(row.player_id, 0) + row.fives
    return fives


def worst_rounds(games: Sequence[Finished]) -> dict[int, tuple[int, int, int]]:
    """Each player's worst round over a match's games: (bulls, game, round), the first."""
    worst: dict[int, tuple[int, int, int]] = {}
    for game in games:
        for row in game.rows:
            if row.worst_round and row.worst_round > worst.get(row.player_id, (0,))[0]:
                worst[row.player_id] = (row.worst_round, game.number, row.worst_round_number)
    return worst
