"""Each finished game's results (``GameResult``): compared with the replay, put right
(``companion.state.stored_results`` reads them).

The results are written in the write that finishes or reopens a game
(``refresh_results``, called by ``companion.store``) and by ``rebuild``; both compare
what is stored with what the replay wants in one place (``compared``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, delete, insert, select

from companion.db import db
from companion.models import Game, GameResult
from companion.state import PlayedGame, played_game, read

# Statements built once (``companion.state``'s reads do the same): a game's last round
# runs them, and SQLAlchemy then skips building and keying them.
RESULTS = select(GameResult.player_id, GameResult.bulls).where(
    GameResult.game_id == bindparam("game_id")
)
RESULTS_DELETE = delete(GameResult).where(GameResult.game_id == bindparam("game_id"))
RESULTS_INSERT = insert(GameResult)


def compared(game: PlayedGame) -> tuple[dict[int, int], dict[int, int]]:
    """A replayed game's results as stored and as the replay wants them (none while the
    game is open)."""
    return stored_bulls(game.game.id), game.bulls if game.finished else {}


def stored_bulls(game_id: int) -> dict[int, int]:
    """A game's stored results, by player: a plain read, not ``Game.results`` (its ORM
    collection would load a detached game's, one a kept replay holds)."""
    return dict(read(RESULTS, game_id=game_id).all())


def sync_results(game: PlayedGame) -> None:
    """Make the derived GameResult rows match the replayed game (call inside the write)."""
    stored, wanted = compared(game)
    if stored != wanted:
        put_results(game.game.id, wanted)


def put_results(game_id: int, wanted: dict[int, int]) -> None:
    """Replace a game's GameResult rows with ``wanted`` (inside the write): two
    statements, the new rows in one round trip, not the ORM's unit of work (a game's last
    round, issue 59). Nothing reads the ORM collection ``Game.results``."""
    connection = db.session.connection()
    connection.execute(RESULTS_DELETE, {"game_id": game_id})
    if wanted:
        rows = [
            {"game_id": game_id, "player_id": player_id, "bulls": count}
            for player_id, count in wanted.items()
        ]
        connection.execute(RESULTS_INSERT, rows)


def replay_results(
    match_id: int,
    player_ids: list[int],
    corrected: Sequence[int] = (),
    written: PlayedGame | None = None,
) -> PlayedGame | None:
    """Replay a match's last game, and the games a correction changed, for their results
    (inside the write); the last game's replay, for the statistics to take rather than
    replay it again. ``written``: the last game as the write has replayed it already
    (``state.after_write``), taken as it is."""
    if written is not None:
        last = written.game
    else:
        last = db.session.scalars(
            select(Game).where(Game.match_id == match_id).order_by(Game.number.desc())
        ).first()
    for game_id in corrected:
        if last is None or game_id != last.id:
            sync_results(played_game(db.session.get(Game, game_id), player_ids))
    if last is None:
        return None
    replayed = written or played_game(last, player_ids)  # of the games not corrected, the last
    sync_results(replayed)  # can have changed
    return replayed
