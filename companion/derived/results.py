"""Each finished game's results (``GameResult``): compared with the replay, put right
(``companion.state.stored_results`` reads them).

The results are written in the write that finishes or reopens a game
(``refresh_results``, called by ``companion.store``) and by ``rebuild``; both compare
what is stored with what the replay wants in one place (``compared``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from companion.db import db
from companion.models import Game, GameResult
from companion.state import PlayedGame, played_game


def compared(game: PlayedGame) -> tuple[dict[int, int], dict[int, int]]:
    """A replayed game's results as stored and as the replay wants them (none while the
    game is open)."""
    stored = {result.player_id: result.bulls for result in game.game.results}
    return stored, game.bulls if game.finished else {}


def sync_results(game: PlayedGame) -> None:
    """Make the derived GameResult rows match the replayed game (call inside the write)."""
    stored, wanted = compared(game)
    if stored != wanted:
        put_results(game, wanted)


def put_results(game: PlayedGame, wanted: dict[int, int]) -> None:
    """Replace a game's GameResult rows with ``wanted`` (inside the write)."""
    # Delete and flush first: inserting before the delete would trip the unique key.
    game.game.results.clear()
    db.session.flush()
    game.game.results.extend(
        GameResult(player_id=player_id, bulls=count) for player_id, count in wanted.items()
    )


def replay_results(
    match_id: int, player_ids: list[int], corrected: Sequence[int] = ()
) -> PlayedGame | None:
    """Replay a match's last game, and the games a correction changed, for their results
    (inside the write); the last game's replay, for the statistics to take rather than
    replay it again."""
    last = db.session.scalars(
        select(Game).where(Game.match_id == match_id).order_by(Game.number.desc())
    ).first()
    for game_id in corrected:
        if last is None or game_id != last.id:
            sync_results(played_game(db.session.get(Game, game_id), player_ids))
    if last is None:
        return None
    replayed = played_game(last, player_ids)  # of the games not corrected, only the last
    sync_results(replayed)  # can have changed
    return replayed
