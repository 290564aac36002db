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
    # Counted for the players who took a row (a take is at least one bull, so a round
    # without one is a clean round): most players take nothing in most rounds.
    sixth: dict = {}
    too_low: dict = {}
    fives: dict = {}
    took: dict = {}  # rounds in which the player took a row
    worst: dict = {}
    fillers: dict[tuple[int, int], int] = {}
    owner: dict[int, int] = {}
    takes: list[TakeRow] = []
    for number, result in enumerate(table.rounds, 1):
        taken: dict = {}
        for player, card, _row, action, cards, count, _ends in result.steps:
            owner[card] = player
            if action == rules.PLACED:
                continue
            takes.append(TakeRow(game_id, match_id, player, card, count))
            taken[player] = taken.get(player, 0) + count
            if 55 in cards:
                fives[player] = fives.get(player, 0) + 1
            if action == rules.TOO_LOW:
                too_low[player] = too_low.get(player, 0) + 1
                continue
            sixth[player] = sixth.get(player, 0) + 1
            filler = owner.get(cards[-1])  # the fifth card of the row
            if filler is not None and filler != player:
                key = (player, filler)
                fillers[key] = fillers.get(key, 0) + 1
        for player, count in taken.items():
            took[player] = took.get(player, 0) + 1
            if count > worst.get(player, (0, None))[0]:
                worst[player] = (count, number)
    rounds = len(table.rounds)
    rows = [
        GameRow(
            game_id,
            match_id,
            player,
            bulls[player],
            True,
            sixth.get(player, 0),
            too_low.get(player, 0),
            rounds - took.get(player, 0),
            fives.get(player, 0),
            *worst.get(player, (0, None)),
        )
        for player in bulls
    ]
    rivals = [
        NemesisRow(game_id, match_id, player, rival, count)
        for (player, rival), count in sorted(fillers.items())
    ]
    return GameFigures(rows, rivals, takes)


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
    fives: dict[int, int] = {}
    worst_round: dict[int, tuple[int, int, int]] = {}  # (bulls, game, round), the first
    for game in games:
        for row in game.rows:
            if row.fives:
                fives[row.player_id] = fives.get(row.player_id, 0) + row.fives
            if row.worst_round and row.worst_round > worst_round.get(row.player_id, (0,))[0]:
                worst_round[row.player_id] = (row.worst_round, game.number, row.worst_round_number)
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
