"""The derived tables: results, not inputs, each rebuildable from the inputs.

Each finished game's bulls per player (``GameResult``, for fast scoreboards) and the
statistics: per game and player, per rival, per match and player. Every table cascades
with its match or game, so a deleted match leaves no trace.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from companion.db import db


class GameResult(db.Model):
    """Derived: a finished game's bulls for one player, for fast scoreboards."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    bulls: Mapped[int]

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", name="uq_result_player"),
        Index("ix_result_player", "player_id"),
    )


class PlayerGameStat(db.Model):
    """Derived: one player's figures in one finished game; card figures NULL for scores."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    bulls: Mapped[int]
    cards: Mapped[bool]  # entered card by card; the figures below only then
    sixth_takes: Mapped[int | None]
    too_low_takes: Mapped[int | None]
    clean_rounds: Mapped[int | None]  # rounds in which the player took no bulls
    fives: Mapped[int | None]  # 55s caught (0 or 1)
    worst_round: Mapped[int | None]  # most bulls taken in one round
    worst_round_number: Mapped[int | None]  # the first round with that many

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", name="uq_game_stat_player"),
        # Covering: a player's sums and head to head read the index alone, not the rows.
        Index(
            "ix_game_stat_player",
            "player_id",
            "cards",
            "bulls",
            "sixth_takes",
            "too_low_takes",
            "clean_rounds",
            "fives",
            "worst_round",
            "game_id",
        ),
        Index("ix_game_stat_match", "match_id"),
    )


class NemesisCount(db.Model):
    """Derived: in one game, how often a rival's card filled a row the player took.

    The rival is the *filler* defined in ``companion.derived.figures`` (the nemesis).
    """

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    rival_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    takes: Mapped[int]

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", "rival_id", name="uq_nemesis_rival"),
        Index("ix_nemesis_player", "player_id"),
        Index("ix_nemesis_match", "match_id"),
    )


class PlayerMatchStat(db.Model):
    """Derived: one player's figures in a match that has at least one finished game.

    AUTOINCREMENT: ids are never reused, so (count, max id) fingerprints the table for
    the ratings cache (rows are replaced, never updated), as long as rows are committed
    in the order of their ids (``in_commit_order``).
    """

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    played_at: Mapped[datetime]  # the match's created_at, for the period filter
    players: Mapped[int]  # seats in the match, for the players filter
    games: Mapped[int]  # finished games
    bulls: Mapped[int]  # total over the finished games
    best_game: Mapped[int]  # fewest bulls in one game
    worst_game: Mapped[int]  # most bulls in one game
    finished: Mapped[bool]  # rules.standing(...).over
    rank: Mapped[int | None]  # finished only: 1 + players with fewer bulls
    won: Mapped[bool]
    winners: Mapped[int]  # how many share the win (0 while not finished)

    __table_args__ = (
        UniqueConstraint("match_id", "player_id", name="uq_match_stat_player"),
        Index("ix_match_stat_player", "player_id"),
        Index("ix_match_stat_played", "played_at", "match_id"),
        {"sqlite_autoincrement": True},
    )
