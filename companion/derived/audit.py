"""Stored rows that break the models' constraints or the rules: named, never replayed.

``rebuild`` replays every match from its stored inputs, and the engine trusts them:
they were checked when they were entered. A database put together some other way (a
copy brought back, rows edited by hand) may hold what no form lets through: SQLite
checks a CHECK or a foreign key only when a row is written, and never looks again, and
no constraint says that a starting card is a card of the deck. The engine would stop on
such a row with an IndexError. So ``rebuild`` asks here first, and each problem is one
line that names the row: its table, its id and what is wrong with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlalchemy import CheckConstraint, Table, exists, select, text

from companion import rules
from companion.db import db
from companion.models import Game, Match
from companion.state import parse_pile_text


def broken_rows() -> list[str]:
    """Rows that break a CHECK or a foreign key of the models, whatever the database
    holds of those constraints itself: read from ``db.metadata``, not from the file."""
    problems: list[str] = []
    for table in db.metadata.sorted_tables:
        problems += failed_checks(table)
        problems += missing_parents(table)
    return problems


def failed_checks(table: Table) -> Iterator[str]:
    """Each row of ``table`` that a CHECK constraint of its model refuses."""
    (key,) = table.primary_key.columns
    for constraint in table.constraints:
        if not isinstance(constraint, CheckConstraint):
            continue
        rule = str(constraint.sqltext)
        named = [column for column in table.columns if re.search(rf"\b{column.name}\b", rule)]
        # NOT (...) is false for NULL, as the CHECK itself lets NULL pass.
        query = select(key, *named).where(text(f"NOT ({rule})")).order_by(key)
        for row_id, *values in db.session.execute(query):
            shown = ", ".join(f"{c.name}={v!r}" for c, v in zip(named, values, strict=True))
            yield f"{table.name} {row_id}: {shown} breaks the check {rule} ({constraint.name})"


def missing_parents(table: Table) -> Iterator[str]:
    """Each row of ``table`` whose foreign key names a row that does not exist."""
    (key,) = table.primary_key.columns
    for foreign in table.foreign_keys:
        column, parent = foreign.parent, foreign.column
        query = (
            select(key, column)
            .where(column.is_not(None), ~exists().where(parent == column))
            .order_by(key)
        )
        for row_id, value in db.session.execute(query):
            yield (
                f"{table.name} {row_id}: {column.name}={value!r} names no "
                f"{parent.table.name} row (no {parent.table.name} {value})"
            )


def match_problem(match: Match) -> str | None:
    """What the rules refuse in a match's stored inputs, naming the row; or None."""
    players = [seat.player_id for seat in match.seats]
    most = rules.PRO_MAX_PLAYERS if match.pro else rules.MAX_PLAYERS
    if not rules.MIN_PLAYERS <= len(players) <= most:
        return f"match {match.id}: {len(players)} seats, not {rules.MIN_PLAYERS} to {most}"
    deck = rules.deck_size(len(players), match.pro)
    for game in match.games:
        problem = game_problem(game, players, deck)
        if problem:
            return problem
    return None


def game_problem(game: Game, players: list[int], deck: int) -> str | None:
    """What the rules refuse in one game's stored inputs, naming the row; or None."""
    where = place(game)
    if game.mode == "scores":
        return scores_problem(game, deck, where)
    try:
        rules.check_starting_cards(list(game.starting), deck)
    except rules.RuleError as error:
        return f"game {game.id} {where}: starting cards {game.starting}: {error}"
    rows: rules.Rows = tuple((card,) for card in game.starting)
    played: set[int] = set()
    waiting = None
    for stored in game.rounds:
        plays = [(play.player_id, play.card) for play in stored.plays]
        if waiting is not None and game.corrections:
            # A correction left an earlier round waiting: the rounds after it wait too,
            # their cards checked, their placing and choices judged once it goes on.
            try:
                rules.check_plays(
                    rows, plays, deck=deck, players=players, played=played, starting=game.starting
                )
            except rules.RuleError as error:
                return f"round {stored.id} {place(game, stored.number)}: {error}"
            played.update(card for _, card in plays)
            continue
        if waiting is not None:
            return f"round {waiting} {where}: a card waits for a row choice, yet a round follows"
        choices = {choice.player_id: choice.row for choice in stored.choices}
        try:
            result = rules.play_round(
                rows,
                plays,
                choices,
                deck=deck,
                players=players,
                played=played,
                starting=game.starting,
            )
        except rules.RuleError as error:
            return f"round {stored.id} {place(game, stored.number)}: {error}"
        rows = result.rows
        played.update(card for _, card in plays)
        waiting = stored.id if result.pending is not None else None
    return None


def scores_problem(game: Game, deck: int, where: str) -> str | None:
    """A score-only game's entry whose pile is not cards of the deck; or None."""
    for score in game.scores:
        if score.cards is None:
            continue
        try:
            for card in parse_pile_text(score.cards):
                rules.parse_card(card, deck)
        except ValueError as error:  # RuleError is one; so is int("x")
            return f"score {score.id} {where}: pile {score.cards!r}: {error}"
    return None


def place(game: Game, round_number: int | None = None) -> str:
    """Where a row is, as a player would find it: "(match 3, game 2, round 7)"."""
    more = f", round {round_number}" if round_number is not None else ""
    return f"(match {game.match_id}, game {game.number}{more})"
