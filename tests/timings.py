"""Puts a played match's entries at known moments, for the time it took."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import update

from companion.db import db
from companion.models import Game, Round

START = datetime(2026, 3, 14, 19, 30)


def set_times(app, match_id: int, start: datetime = START) -> None:
    """Game 1 (cards) starts at ``start``, its rounds two minutes apart but an hour's pause
    before round 6; game 2 (typed scores) is entered 7 minutes after game 1's last round.

    Counted: game 1 is 10 gaps, 9 of 2 minutes and the pause as 20 (38 min); game 2 is 7;
    the match 45, from 19:30.
    """
    with app.app_context():
        game = db.session.scalar(db.select(Game).where(Game.match_id == match_id, Game.number == 1))
        db.session.execute(update(Game).where(Game.id == game.id).values(created_at=start))
        for number in range(1, 11):
            moment = start + timedelta(minutes=2 * number + (60 if number >= 6 else 0))
            query = update(Round).where(Round.game_id == game.id, Round.number == number)
            db.session.execute(query.values(created_at=moment))
        second = update(Game).where(Game.match_id == match_id, Game.number == 2)
        db.session.execute(second.values(created_at=start + timedelta(minutes=87)))
        db.session.commit()
