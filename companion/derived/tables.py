"""The derived tables: results, not inputs, each rebuildable from the inputs.

The statistics: per game and player, per rival, per card that took bulls, per match and
player. Each finished game's bulls per player (``GameResult``) is derived too, but its
model is in ``companion.models``: the replay (``companion.state``), below this package,
reads it. Every table cascades with its match or game, so a deleted match leaves no
trace.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from companion.db import db


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


class CardTake(db.Model):
    """Derived: the bulls one card took in one finished card game: the sixth card of a
    row or a too-low card (each card is played once in a game, by one player)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    card: Mapped[int]
    bulls: Mapped[int]

    __table_args__ = (
        UniqueConstraint("game_id", "card", name="uq_card_take_card"),
        # Covering: the year's sums by card (and player) read the index alone.
        Index("ix_card_take_match", "match_id", "player_id", "card", "bulls"),
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
    minutes: Mapped[int]  # the match's time at the table (companion.derived.timing)
    # Over the match's games, for the year's review (``companion.derived.figures``):
    best_game_number: Mapped[int]  # the game of best_game, the first on a tie
    clean_game: Mapped[int]  # the game in which the table took fewest bulls, the first
    clean_bulls: Mapped[int]  # the table's bulls in it
    fives: Mapped[int]  # 55s caught
    worst_round: Mapped[int]  # most bulls taken in one round (0: never took a row)
    worst_round_game: Mapped[int | None]  # where: the first game and round with as many
    worst_round_number: Mapped[int | None]

    __table_args__ = (
        UniqueConstraint("match_id", "player_id", name="uq_match_stat_player"),
        Index("ix_match_stat_player", "player_id"),
        Index("ix_match_stat_played", "played_at", "match_id"),
        {"sqlite_autoincrement": True},
    )


class MatchRating(db.Model):
    """Derived: a player's rating after a finished match (``companion.derived.ratings``).

    ``played_at`` is the match's, for the order matches are rated in and the year's
    review, which reads a player's rating before and after a year.
    """

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    played_at: Mapped[datetime]
    mu: Mapped[float]
    sigma: Mapped[float]

    __table_args__ = (
        UniqueConstraint("match_id", "player_id", name="uq_match_rating_player"),
        # A player's latest rating before a moment: one step down this index.
        Index("ix_match_rating_player", "player_id", "played_at", "match_id", "mu", "sigma"),
        Index("ix_match_rating_played", "played_at", "match_id"),
    )


class PlayLuck(db.Model):
    """Derived: one play of a placed round, from its player's point of view
    (``companion.rules.luck``): its chance of taking a row, the bulls it was expected to
    take, the bulls it took. ``whole``: figured with the player's whole hand (the game was
    over), else with the round's card alone (``companion.derived.play_luck``)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    round_number: Mapped[int]
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    card: Mapped[int]
    chance: Mapped[float]
    expected: Mapped[float]
    bulls: Mapped[int]
    samples: Mapped[int]  # 0: every set of the others' cards counted
    whole: Mapped[bool]

    __table_args__ = (
        UniqueConstraint("game_id", "round_number", "player_id", name="uq_play_luck_player"),
        Index("ix_play_luck_match", "match_id"),
    )


class LuckPlayer(db.Model):
    """Derived: a player's luck over a card game whose every round is figured with the
    whole hands (the game is over), summed from its ``PlayLuck`` rows in the write that
    stores them (``companion.derived.play_luck.put_figured``): the bulls expected and
    taken, and the lowest chance of a play that took a row (None when none did). The
    household's pages sum these (``companion.household.match_luck``), a row per game and
    player, not one per play."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    expected: Mapped[float]
    bulls: Mapped[int]
    lowest: Mapped[float | None]

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", name="uq_luck_player_game"),
        # Covering: a match's sums per player read the index alone, not the rows.
        Index(
            "ix_luck_player_match",
            "match_id",
            "player_id",
            "game_id",
            "expected",
            "bulls",
            "lowest",
        ),
    )


class ReviewCard(db.Model):
    """Derived: a card a player still held in a round of a finished game, weighed as if it
    had been played (``companion.rules.review``): the bulls it was expected to take this
    round and to the game's end. ``played``: the card the player chose; ``noise``: the
    sampling noise of the play's loss (one standard error, the same on each card of the
    play). A too-low card played (on its row alone): ``row_1`` to ``row_4``, the bulls to
    the game's end had it taken each row, ``row_loss``, the row chosen's less the
    best's, and ``row_noise``, that loss's sampling noise (else None, 0 and 0). Figured
    by the server's background process after the game's end
    (``companion.derived.game_review``)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    round_number: Mapped[int]
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    card: Mapped[int]
    played: Mapped[bool]
    this_round: Mapped[float]
    to_game_end: Mapped[float]
    noise: Mapped[float]
    row_1: Mapped[float | None]
    row_2: Mapped[float | None]
    row_3: Mapped[float | None]
    row_4: Mapped[float | None]
    row_loss: Mapped[float] = mapped_column(default=0.0, server_default="0")
    row_noise: Mapped[float] = mapped_column(default=0.0, server_default="0")

    __table_args__ = (
        UniqueConstraint(
            "game_id", "round_number", "player_id", "card", name="uq_review_card_hand"
        ),
        Index("ix_review_card_match", "match_id"),
    )


class ReviewPlayer(db.Model):
    """Derived: a player's game in a kept review, summed from its ``ReviewCard`` rows in
    the write that stores them (``companion.derived.game_review.put``): what the choices
    cost (the plays' losses, a too-low card's row's too), the plays graded best or good,
    the plays, and the largest loss of a play graded worse than best (None when none
    was). The household's pages sum these rows (``companion.household.choices``), not
    every card of every hand: 0.2 s for 14,000 reviewed games, not 3 s (bench)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    cost: Mapped[float]
    good: Mapped[int]
    plays: Mapped[int]
    costliest: Mapped[float | None]

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", name="uq_review_player_game"),
        # Covering: a match's sums per player read the index alone, not the rows.
        Index(
            "ix_review_player_match",
            "match_id",
            "player_id",
            "game_id",
            "cost",
            "good",
            "plays",
            "costliest",
        ),
    )
