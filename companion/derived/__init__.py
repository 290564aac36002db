"""Derived data, all of it: the tables (``tables``), their refresh and their check.

Each finished game's results (``results``) and the statistics computed from them and
the engine's steps by ``companion.derived.figures`` (per game and player, per rival,
per match and player) are results, not inputs: written in the write that finishes or
reopens a game (``refresh_results``, called by ``companion.store``), and rebuildable
from the inputs (``flask --app companion rebuild``, see ``rebuild``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sqlalchemy import Connection, delete, insert, select

from companion import rules, storage
from companion.db import db
from companion.derived.audit import broken_rows, match_problem
from companion.derived.figures import GameRow, MatchRow, NemesisRow, game_rows, match_rows
from companion.derived.results import compared, put_results, replay_results
from companion.derived.tables import GameResult, NemesisCount, PlayerGameStat, PlayerMatchStat
from companion.models import Game, Match
from companion.state import PlayedGame, match_state, played_game, stored_results

__all__ = ["GameResult", "NemesisCount", "PlayerGameStat", "PlayerMatchStat"]


# ---------------------------------------------------------------------------
# Reading and writing the tables


def stored_rows(
    match_ids: Sequence[int] | None = None, tables: Sequence[str] = ("games", "rivals", "matches")
) -> dict[str, set]:
    """The derived rows as stored, as sets of value tuples (all matches, or some)."""
    found = {}
    for name in tables:
        model, row = TABLES[name]
        query = select(*(getattr(model, column) for column in row._fields))
        if match_ids is not None:
            query = query.where(model.match_id.in_(match_ids))
        found[name] = {row._make(values) for values in db.session.execute(query)}
    return found


def write_rows(
    games: Sequence[GameRow], rivals: Sequence[NemesisRow], matches: Sequence[MatchRow]
) -> None:
    """Insert derived rows in bulk (the caller deletes what they replace)."""
    for model, rows in (
        (PlayerGameStat, games),
        (NemesisCount, rivals),
        (PlayerMatchStat, matches),
    ):
        if rows:
            if model is PlayerMatchStat:
                in_commit_order(db.session.connection())
            db.session.execute(insert(model), [row._asdict() for row in rows])


def in_commit_order(connection: Connection) -> None:
    """Before adding match rows: on PostgreSQL, wait for the turn to add them, until commit.

    The leaderboard tells that the match rows changed by their count and largest id
    (``companion.household.statistics.fingerprint``), which is only sure while no row
    is committed after a row with a larger id. SQLite has one writer at a time. On
    PostgreSQL writes to different matches run side by side, and the sequence hands out
    ids in the order they are asked for: so whoever adds match rows first takes this
    lock, held until its transaction ends, and the ids come in the order of commits.
    Only writes that finish a game take it, and only for their last statements.
    """
    storage.in_commit_order(connection)  # PostgreSQL's advisory lock


def delete_rows(match_id: int, game_ids: Sequence[int] | None = None) -> None:
    """Delete a match's derived rows: the games' rows given, else everything."""
    for model in (PlayerGameStat, NemesisCount):
        query = delete(model).where(model.match_id == match_id)
        if game_ids is not None:
            query = query.where(model.game_id.in_(game_ids))
        db.session.execute(query)
    if game_ids is None:
        db.session.execute(delete(PlayerMatchStat).where(PlayerMatchStat.match_id == match_id))


def refresh_match(match_id: int, replayed: PlayedGame | None = None) -> None:
    """Bring a match's derived rows in line with its game results (inside the write).

    Called after every write to a match that may finish or reopen a game: games whose
    results appeared or changed are replayed for their figures (``replayed``, a game the
    write has just replayed, is not replayed again), games that lost them (undo) lose
    theirs, and the match rows are replaced when their values differ. Nothing is written
    when nothing changed.
    """
    db.session.flush()
    match = db.session.get(Match, match_id)
    if match is None:
        return
    results = stored_results(match_id)
    have: dict[int, dict[int, int]] = {}
    query = select(PlayerGameStat.game_id, PlayerGameStat.player_id, PlayerGameStat.bulls)
    for game_id, player_id, bulls in db.session.execute(
        query.where(PlayerGameStat.match_id == match_id)
    ):
        have.setdefault(game_id, {})[player_id] = bulls
    stale = [game_id for game_id in have if have[game_id] != results.get(game_id)]
    fresh = [game_id for game_id in results if have.get(game_id) != results[game_id]]
    if stale:
        delete_rows(match_id, stale)
    player_ids = [seat.player_id for seat in match.seats]
    games, rivals = [], []
    for game_id in fresh:
        if replayed is not None and replayed.game.id == game_id:
            table = replayed.table
        else:
            table = played_game(db.session.get(Game, game_id), player_ids).table
        more_games, more_rivals = game_rows(game_id, match_id, results[game_id], table)
        games += more_games
        rivals += more_rivals
    end = rules.EndCondition(match.end_kind, match.end_value)
    wanted = set(
        match_rows(
            match_id,
            match.created_at,
            player_ids,
            end,
            [results[game_id] for game_id in sorted(results)],
        )
    )
    matches = []
    if wanted != stored_rows([match_id], ["matches"])["matches"]:
        db.session.execute(delete(PlayerMatchStat).where(PlayerMatchStat.match_id == match_id))
        matches = sorted(wanted)
    write_rows(games, rivals, matches)


def refresh_results(match_id: int, player_ids: list[int], corrected: Sequence[int] = ()) -> bool:
    """After a write that may finish or reopen a game (inside it): the last game's
    results, and those of games a correction changed, replayed once; the figures of
    corrected games made anew; the match's statistics brought in line. True when the
    match is over now."""
    replayed = replay_results(match_id, player_ids, corrected)
    if corrected:  # the same bulls may come from other placements: figures anew
        delete_rows(match_id, list(corrected))
    refresh_match(match_id, replayed)
    return bool(
        db.session.scalar(
            select(PlayerMatchStat.finished).where(PlayerMatchStat.match_id == match_id).limit(1)
        )
    )


def replayed_rows(match: Match) -> dict[str, set]:
    """A match's derived rows computed from its inputs alone (every game replayed)."""
    return rows_of(match_state(match, replay_all=True))


def rows_of(state) -> dict[str, set]:
    """The derived rows of a match replayed from its inputs (``match_state``)."""
    games, rivals = set(), set()
    for game in state.finished_games:
        more_games, more_rivals = game_rows(game.game.id, state.match.id, game.bulls, game.table)
        games.update(more_games)
        rivals.update(more_rivals)
    matches = match_rows(
        state.match.id,
        state.match.created_at,
        state.player_ids,
        state.end,
        [game.bulls for game in state.finished_games],
    )
    return {"games": games, "rivals": rivals, "matches": set(matches)}


class Rebuilt(NamedTuple):
    """What ``rebuild`` replayed, and how much of it differed from what was stored."""

    games: int
    differing_games: int
    matches: int
    differing_matches: int
    differing: tuple[int, ...] = ()  # the ids of the matches that differed in anything
    broken: tuple[str, ...] = ()  # rows that break a constraint or the rules (``audit``)


def rebuild(check: bool, echo=print) -> Rebuilt:
    """Replay every match once from its inputs: its games' results and its statistics,
    compared with what is stored and, unless ``check``, put right (the caller commits).

    ``echo`` reports each difference. Rows of a match that no longer exists cannot
    remain: every derived table cascades with its match. Rows that break a constraint
    or the rules are named (``audit``) and never replayed: a row that breaks a
    constraint stops everything before any replay, a match the rules refuse is skipped.
    """
    broken = broken_rows()
    for problem in broken:
        echo(problem)
    if broken:
        return Rebuilt(0, 0, 0, 0, broken=tuple(broken))
    games = differing_games = matches = differing_matches = 0
    differing: list[int] = []
    for match in db.session.scalars(select(Match).order_by(Match.id)):
        problem = match_problem(match)
        if problem:
            echo(problem)
            broken.append(problem)
            continue
        state = match_state(match, replay_all=True)
        for game in state.games:
            games += 1
            stored, wanted = compared(game)
            if stored != wanted:
                differing_games += 1
                differing.append(match.id)
                echo(f"match {match.id} game {game.number}: stored {stored}, replayed {wanted}")
                if not check:
                    put_results(game, wanted)
        matches += 1
        wanted_rows, stored_rows_ = rows_of(state), stored_rows([match.id])
        if wanted_rows != stored_rows_:
            differing_matches += 1
            differing.append(match.id)
            names = ", ".join(name for name in TABLES if wanted_rows[name] != stored_rows_[name])
            echo(f"match {match.id}: derived statistics differ ({names})")
            if not check:
                delete_rows(match.id)
                write_rows(*(sorted(wanted_rows[name]) for name in TABLES))
    distinct = tuple(dict.fromkeys(differing))
    return Rebuilt(games, differing_games, matches, differing_matches, distinct, tuple(broken))


TABLES = {
    "games": (PlayerGameStat, GameRow),
    "rivals": (NemesisCount, NemesisRow),
    "matches": (PlayerMatchStat, MatchRow),
}
