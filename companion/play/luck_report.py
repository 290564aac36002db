"""Luck at the table: a game's figures as JSON (``luck.json``), and the game's end and the
match's end with each player's expected bulls beside the bulls they took.

The figures are ``companion.rules.luck``'s, kept per play by
``companion.derived.play_luck``; this module only reads and arranges them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from flask import abort, jsonify

from companion import rules
from companion.derived import play_luck
from companion.state import MatchState, PlayedGame, current_state, played_game


class LuckLine(NamedTuple):
    """A player's game or match: the bulls their cards were expected to cost, the bulls
    they took, and the difference (positive: luckier than their cards)."""

    player_id: int
    name: str
    expected: float
    bulls: int
    luck: float


class LuckView(NamedTuple):
    """What the game's end (or the match's) shows of luck: a line per player in seat
    order, and the luckiest and unluckiest (None when all were equally lucky)."""

    lines: list[LuckLine]
    luckiest: LuckLine | None
    unluckiest: LuckLine | None

    def of(self, player_id: int) -> LuckLine | None:
        """A player's line."""
        return next((line for line in self.lines if line.player_id == player_id), None)


def luck_json(match_id: int, game: int):
    """A game's placed rounds: each play's chance of taking a row, expected and taken
    bulls; each player's expected bulls, bulls and luck (``rules.luck``). Rounds not
    figured yet (the server's background is on them) are named under ``pending``."""
    state = current_state(match_id)
    if game > len(state.games):
        abort(404)
    kept = play_luck.read(replayed_game(state, state.games[game - 1]))
    document = luck_document(state, game, kept.rows)
    if kept.pending:
        document["pending"] = kept.pending
    return jsonify(document)


def replayed_game(state: MatchState, game: PlayedGame) -> PlayedGame:
    """A game with its rounds replayed (a finished game's page state has its results only)."""
    if game.table is None and game.game.mode == "cards":
        return played_game(game.game, state.player_ids)
    return game


def luck_document(state: MatchState, game: int, rows: Sequence[play_luck.LuckRow]) -> dict:
    """``luck.json``'s document: floats at full precision; ``samples`` only when drawn."""
    samples = max((row.samples for row in rows), default=0)
    rounds: dict[int, list[dict]] = {}
    for row in rows:
        rounds.setdefault(row.round_number, []).append(
            {
                "player_id": row.player_id,
                "name": state.name(row.player_id),
                "card": row.card,
                "chance": row.chance,
                "expected": row.expected,
                "bulls": row.bulls,
            }
        )
    document = {
        "match": state.match.id,
        "game": game,
        "method": "sampled" if samples else "exact",
        **({"samples": samples} if samples else {}),
        "rounds": [{"round": number, "plays": plays} for number, plays in rounds.items()],
        "players": [
            {
                "player_id": line.player_id,
                "name": line.name,
                "expected": line.expected,
                "bulls": line.bulls,
                "luck": line.luck,
            }
            for line in luck_lines(state, summed(rows))
        ],
    }
    return document


def summed(rows: Sequence[play_luck.LuckRow]) -> dict[int, rules.PlayerLuck]:
    """Each player's expected bulls and bulls over these rows, by player id."""
    odds = [
        [rules.Odds(row.player_id, row.card, row.chance, row.expected, row.bulls, row.samples)]
        for row in rows
    ]
    return {luck.player: luck for luck in rules.game_luck(odds)}


def luck_lines(state: MatchState, by_player: dict[int, rules.PlayerLuck]) -> list[LuckLine]:
    """A line per player with figures, in seat order."""
    return [
        LuckLine(player_id, state.name(player_id), luck.expected, luck.bulls, luck.luck)
        for player_id in state.player_ids
        if (luck := by_player.get(player_id)) is not None
    ]


def luck_view(state: MatchState, games: Sequence[PlayedGame]) -> LuckView | None:
    """Luck over these finished games as stored (None when none is figured yet)."""
    ids = [game.game.id for game in games if game.game.mode == "cards"]
    lines = luck_lines(state, play_luck.finished_luck(ids)) if ids else []
    if not lines:
        return None
    luckiest = max(lines, key=lambda line: line.luck)
    unluckiest = min(lines, key=lambda line: line.luck)
    if luckiest.luck == unluckiest.luck:
        return LuckView(lines, None, None)
    return LuckView(lines, luckiest, unluckiest)
