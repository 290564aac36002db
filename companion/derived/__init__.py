"""Derived data, all of it: the tables (``tables``), their refresh and their check.

Each finished game's results (``results``) and the statistics computed from them and
the engine's steps by ``companion.derived.figures`` (per game and player, per rival,
per card that took bulls, per match and player, with the match's minutes from
``companion.derived.timing``) are results, not inputs: written in the write that finishes or
reopens a game (``refresh_results``, called by ``companion.store``), and rebuildable
from the inputs (``flask --app companion rebuild``, see ``rebuild``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Connection, delete, insert, select

from companion import rules, storage
from companion.db import db
from companion.derived import ratings
from companion.derived.audit import broken_rows, match_problem
from companion.derived.figures import (
    Finished,
    GameRow,
    MatchRow,
    NemesisRow,
    TakeRow,
    game_rows,
    match_rows,
)
from companion.derived.results import compared, put_results, replay_results
from companion.derived.tables import (
    CardTake,
    LuckPlayer,
    MatchRating,
    NemesisCount,
    PlayerGameStat,
    PlayerMatchStat,
    PlayLuck,
    ReviewCard,
    ReviewPlayer,
)
from companion.derived.timing import match_times
from companion.models import Game, GameResult, Match
from companion.state import MatchState, PlayedGame, match_state, played_game, stored_results

# Every derived table; GameResult's model is in companion.models, below the replay
# (companion.state) that reads it.
__all__ = [
    "CardTake",
    "GameResult",
    "LuckPlayer",
    "MatchRating",
    "NemesisCount",
    "PlayLuck",
    "PlayerGameStat",
    "PlayerMatchStat",
    "ReviewCard",
    "ReviewPlayer",
]


# ---------------------------------------------------------------------------
# Reading and writing the tables


def stored_rows(
    match_ids: Sequence[int] | None = None,
    tables: Sequence[str] = ("games", "rivals", "takes", "matches"),
) -> dict[str, set]:
    """The derived rows as stored, as sets of value tuples (all matches, or some)."""
    found = {}
    for name in tables:
        model, row = STATISTICS[name]
        query = select(*(getattr(model, column) for column in row._fields))
        if match_ids is not None:
            query = query.where(model.match_id.in_(match_ids))
        found[name] = {row._make(values) for values in db.session.execute(query)}
    return found


def write_rows(
    games: Sequence[GameRow],
    rivals: Sequence[NemesisRow],
    takes: Sequence[TakeRow],
    matches: Sequence[MatchRow],
) -> None:
    """Insert derived rows in bulk (the caller deletes what they replace)."""
    for model, rows in (
        (PlayerGameStat, games),
        (NemesisCount, rivals),
        (CardTake, takes),
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
    for model in (PlayerGameStat, NemesisCount, CardTake):
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
    kept = stored_game_rows(match_id)
    stale, fresh = changed_games(kept, results)
    if stale:
        delete_rows(match_id, stale)
    player_ids = [seat.player_id for seat in match.seats]
    new = figure_games(match_id, fresh, results, player_ids, replayed)
    kept |= {game_id: figures.games for game_id, figures in new.items()}
    wanted = match_figures(match, results, kept, player_ids)
    store_figures(match, new, wanted)


def stored_game_rows(match_id: int) -> dict[int, list[GameRow]]:
    """A match's stored game rows, by game."""
    kept: dict[int, list[GameRow]] = {}
    for row in stored_rows([match_id], ["games"])["games"]:
        kept.setdefault(row.game_id, []).append(row)
    return kept


def changed_games(
    kept: dict[int, list[GameRow]], results: dict[int, dict[int, int]]
) -> tuple[list[int], list[int]]:
    """The games whose stored rows no longer match their results (stale: to delete) and
    the games with results whose rows are missing or differ (fresh: to figure)."""
    have = {game_id: {row.player_id: row.bulls for row in rows} for game_id, rows in kept.items()}
    stale = [game_id for game_id in have if have[game_id] != results.get(game_id)]
    fresh = [game_id for game_id in results if have.get(game_id) != results[game_id]]
    return stale, fresh


def figure_games(
    match_id: int,
    fresh: Sequence[int],
    results: dict[int, dict[int, int]],
    player_ids: list[int],
    replayed: PlayedGame | None,
) -> dict:
    """The figures (``GameFigures``) of the fresh games, by game, each replayed once."""
    figures = {}
    for game_id in fresh:
        if replayed is not None and replayed.game.id == game_id:
            table = replayed.table
        else:
            table = played_game(db.session.get(Game, game_id), player_ids).table
        figures[game_id] = game_rows(game_id, match_id, results[game_id], table)
    return figures


def match_figures(
    match: Match,
    results: dict[int, dict[int, int]],
    kept: dict[int, list[GameRow]],
    player_ids: list[int],
) -> set[MatchRow]:
    """The match rows that its finished games make, from their results and game rows."""
    numbers = dict(
        db.session.execute(select(Game.id, Game.number).where(Game.id.in_(results))).all()
    )
    finished = [
        Finished(numbers[game_id], results[game_id], kept[game_id])
        for game_id in sorted(results, key=numbers.get)
    ]
    end = rules.EndCondition(match.end_kind, match.end_value)
    minutes = match_times([match.id])[match.id].match.minutes if results else 0
    return set(match_rows(match.id, match.created_at, player_ids, end, finished, minutes))


def store_figures(match: Match, new: dict, wanted: set[MatchRow]) -> None:
    """Insert the fresh games' rows, and replace the match rows when they differ (the
    ratings from this match on are then figured again)."""
    games = [row for figures in new.values() for row in figures.games]
    rivals = [row for figures in new.values() for row in figures.rivals]
    takes = [row for figures in new.values() for row in figures.takes]
    changed = wanted != stored_rows([match.id], ["matches"])["matches"]
    if changed:
        in_commit_order(db.session.connection())  # before the rows go: see ``ratings``
        db.session.execute(delete(PlayerMatchStat).where(PlayerMatchStat.match_id == match.id))
    write_rows(games, rivals, takes, sorted(wanted) if changed else [])
    if changed:  # its ranks may have moved: this match and the later ones rated again
        ratings.rerate_from(db.session.connection(), (match.created_at, match.id))


@contextmanager
def match_rows_going(played_at: datetime, match_id: int) -> Iterator[None]:
    """Around deleting a match (inside the write): its rows go in the turn of the writers
    of match rows, and the matches after it are rated again without it."""
    connection = db.session.connection()
    in_commit_order(connection)
    yield
    ratings.rerate_from(connection, (played_at, match_id))


def rate_imported(connection: Connection, after_id: int) -> None:
    """After an import's copy of matches with ids past ``after_id`` (in its write, in the
    turn of ``in_commit_order``): the matches from its first one on rated again."""
    stat = PlayerMatchStat
    query = select(stat.played_at, stat.match_id).where(stat.match_id > after_id)
    first = connection.execute(query.order_by(stat.played_at, stat.match_id).limit(1)).first()
    if first is not None:
        ratings.rate_new_from(connection, tuple(first))


def refresh_results(
    match_id: int,
    player_ids: list[int],
    corrected: Sequence[int] = (),
    statistics: bool = True,
    written: MatchState | None = None,
) -> bool:
    """After a write that may finish or reopen a game (inside it): the last game's
    results, and those of games a correction changed, replayed once; the figures of
    corrected games dropped; the match's statistics brought in line, or left to a write
    of their own when not ``statistics`` (``statistics_stale`` then says so). True when
    the match is over now. ``written``: the match as a write that added to its open game
    alone replayed it (``state.after_write``): its last game is not replayed again, nor
    its stored results read for whether the match is over (a game's last round)."""
    last = written.games[-1] if written is not None else None
    replayed = replay_results(match_id, player_ids, corrected, last)
    if corrected:  # the same bulls may come from other placements: figures anew
        delete_rows(match_id, list(corrected))
    if statistics:
        refresh_match(match_id, replayed)
    return written.over if written is not None else match_over(match_id, player_ids)


def match_over(match_id: int, player_ids: Sequence[int]) -> bool:
    """Whether the match's finished games end it, by its results (inside the write). Its
    end condition in a small query: the match's ORM object would load its seats, players
    and games (the selectin relationships) in every game's last round (issue 59)."""
    db.session.flush()
    condition = select(Match.end_kind, Match.end_value).where(Match.id == match_id)
    end = rules.EndCondition(*db.session.execute(condition).one())
    return rules.standing(player_ids, list(stored_results(match_id).values()), end).over


def statistics_stale(match_id: int) -> bool:
    """Whether the match's statistics lag behind its results: a game finished, reopened
    or corrected since they were brought in line (a write that left them to a write of
    their own: ``refresh_results``), so a finished game has no game rows, or rows are
    left of a game that is no longer finished."""
    finished = select(GameResult.game_id).join(Game, Game.id == GameResult.game_id)
    figured = select(PlayerGameStat.game_id).where(PlayerGameStat.match_id == match_id)
    return set(db.session.scalars(finished.where(Game.match_id == match_id))) != set(
        db.session.scalars(figured)
    )


def rows_of(state) -> dict[str, set]:
    """The derived rows of a match replayed from its inputs (``match_state``)."""
    games, rivals, takes = set(), set(), set()
    finished = []
    for game in state.finished_games:
        figures = game_rows(game.game.id, state.match.id, game.bulls, game.table)
        games.update(figures.games)
        rivals.update(figures.rivals)
        takes.update(figures.takes)
        finished.append(Finished(game.game.number, game.bulls, figures.games))
    minutes = match_times([state.match.id])[state.match.id].match.minutes if finished else 0
    matches = match_rows(
        state.match.id, state.match.created_at, state.player_ids, state.end, finished, minutes
    )
    return {"games": games, "rivals": rivals, "takes": takes, "matches": set(matches)}


class Rebuilt(NamedTuple):
    """What ``rebuild`` replayed, and how much of it differed from what was stored."""

    games: int
    differing_games: int
    matches: int
    differing_matches: int
    differing: tuple[int, ...] = ()  # the ids of the matches that differed in anything
    broken: tuple[str, ...] = ()  # rows that break a constraint or the rules (``audit``)
    differing_ratings: int = 0  # matches whose stored ratings differed
    # Matches whose statistics the background process has not written yet (a game that
    # ended moments ago: ``store.statistics_after``): not compared, with ``check``.
    pending_statistics: int = 0


def rebuild(check: bool, echo=print) -> Rebuilt:
    """Replay every match once from its inputs: its games' results and its statistics,
    then rate every finished match from the start (``ratings``), compared with what is
    stored and, unless ``check``, put right (the caller commits). With ``check``, the
    statistics the background process has not written yet (``statistics_stale``: a game
    that ended while it runs, or a copy taken meanwhile) are counted apart, as luck
    and reviews not figured yet are: the server's background writes them.

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
    games = differing_games = matches = differing_matches = pending = 0
    differing: list[int] = []
    for match in db.session.scalars(select(Match).order_by(Match.id)):
        problem = match_problem(match)
        if problem:
            echo(problem)
            broken.append(problem)
            continue
        state = match_state(match, replay_all=True)
        games += len(state.games)
        matches += 1
        moved_games = rebuild_results(state, check, echo)
        if check and statistics_stale(match.id):  # the background writes them soon
            pending += 1
            moved_statistics = False
        else:
            moved_statistics = rebuild_statistics(state, check, echo)
        differing_games += moved_games
        differing_matches += moved_statistics
        if moved_games or moved_statistics:
            differing.append(match.id)
    moved = check_ratings(check, echo)
    differing += moved
    distinct = tuple(dict.fromkeys(differing))
    return Rebuilt(
        games,
        differing_games,
        matches,
        differing_matches,
        distinct,
        tuple(broken),
        len(moved),
        pending,
    )


def rebuild_results(state: MatchState, check: bool, echo) -> int:
    """How many of a replayed match's games have stored results other than the replay's
    (each echoed, and unless ``check`` put right)."""
    differing = 0
    for game in state.games:
        stored, wanted = compared(game)
        if stored != wanted:
            differing += 1
            echo(f"match {state.match.id} game {game.number}: stored {stored}, replayed {wanted}")
            if not check:
                put_results(game.game.id, wanted)
    return differing


def rebuild_statistics(state: MatchState, check: bool, echo) -> bool:
    """Whether a replayed match's stored statistics differ from the replay's (echoed with
    the tables that differ, and unless ``check`` written anew)."""
    match_id = state.match.id
    wanted, stored = rows_of(state), stored_rows([match_id])
    if wanted == stored:
        return False
    names = ", ".join(name for name in STATISTICS if wanted[name] != stored[name])
    echo(f"match {match_id}: derived statistics differ ({names})")
    if not check:
        delete_rows(match_id)
        write_rows(*(sorted(wanted[name]) for name in STATISTICS))
    return True


def check_ratings(check: bool, echo) -> list[int]:
    """Every finished match rated again from the start and compared with the stored
    ratings; unless ``check``, put right. The ids of the matches whose ratings differ."""
    moved = ratings.rerate_from(db.session.connection(), None, put_right=not check)
    if moved:
        echo(f"ratings differ in {len(moved)} matches, the first match {moved[0]}")
    return moved


STATISTICS = {  # the derived statistics tables by name: their model and their row
    "games": (PlayerGameStat, GameRow),
    "rivals": (NemesisCount, NemesisRow),
    "takes": (CardTake, TakeRow),
    "matches": (PlayerMatchStat, MatchRow),
}
