"""What the players entered, as SQLAlchemy models; results are derived by the rules engine.

Nothing here is derived but one table: each finished game's bulls per player
(``GameResult``), which the replay (``companion.state``) reads, so it sits below it. It
is kept with the other derived tables (the statistics per game and player, per rival,
per match and player, in ``companion.derived``): written in the same transaction that
finishes a game (``companion.store``, through ``companion.derived``'s refresh) and
rebuildable from the inputs (``flask --app companion rebuild``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import CheckConstraint, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from companion import rules
from companion.db import db
from companion.rules import N_

# No row id is above PostgreSQL's integer (SQLite's would go on to 2**63 - 1): a larger
# id in a URL or form is one that does not exist, never an error of the database.
MAX_ID = 2**31 - 1
# What a household holds at most (issue 30). A family plays a few matches a week: 50 years
# of two matches a week is 5,200 matches, of four 10,400; a household seats a dozen people,
# a club a few dozen, over the years. The caps stand well above that, and low enough that
# every page listing players or matches, the leaderboard and the year's review stay fast
# with every match in one year (bench/household_cap.py): at 100,000 matches and 500
# players the leaderboard's first request for this year took 20 s here, which a Raspberry
# Pi would not finish within the worker's 30 s, and the review was 763 KB.
MAX_PLAYERS_HELD = 200
MAX_MATCHES_HELD = 20_000


def utcnow() -> datetime:
    """The current time in UTC (stored naive, read as UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)


def new_token() -> str:
    """An unguessable link secret: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


class Typed(NamedTuple):
    """A text the players type about a match, declared on its column (``info``) with its
    rule and its words, as Django keeps a field's ``verbose_name`` and ``help_text``: the
    new-match form, the match page's form (``POST /matches/<id>/<name>``), the match page,
    the history, the match's CSV and its BG Stats play read every one from
    ``MATCH_TEXTS``, so a new text is its column here, its rule and its backup line."""

    check: Callable[[Any], str | None]  # the rules' function: stored form, or RuleError
    label: str  # its field on the match page, its row in the CSV
    optional: str  # its field on the new-match form, which may stay empty
    hint: str  # under both fields
    add: str  # the match page's form, while it is empty
    change: str  # the match page's form, once it is not
    save: str  # that form's button
    bgstats: str = ""  # the BG Stats play's text field that carries it, if any
    most: int = 0  # its length at most: its column's (``MATCH_TEXTS`` fills it in)


class Player(db.Model):
    """A household player, reused across evenings."""

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(30))
    # casefold()ed name: makes "Anna" and "anna" the same player, in the database too.
    name_key: Mapped[str] = mapped_column(String(90), unique=True)
    archived: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Match(db.Model):
    """Games in a row with one set of players and house rules, until the end condition."""

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    end_kind: Mapped[str] = mapped_column(String(12))
    end_value: Mapped[int]
    pro: Mapped[bool] = mapped_column(default=False)
    # Bumped by every write to the match: phones poll it to know when to refresh.
    version: Mapped[int] = mapped_column(default=0)
    # Bumped by every write but hidden cards and derived rows the table's live pages do
    # not show (a round's luck without a chance said: derived.play_luck.seen_at_table):
    # while it stays, a newer version differs from an older one only by cards waiting to
    # be revealed, and by what pages read apart (companion.state.shared_replay).
    table_version: Mapped[int] = mapped_column(default=0, server_default="0")
    # Bumped with table_version by every write but those of derived rows alone (a round's
    # luck, a game's review): while it stays, a replay reads the same rows
    # (companion.state.replayed_table), whatever the versions say.
    input_version: Mapped[int] = mapped_column(default=0, server_default="0")
    # The match its Rematch started (one at most): the finished match then leads there.
    # No foreign key: SQLite cannot add one without copying the match table (see its
    # migration); deleting a match clears the links to it in the same write.
    rematch_id: Mapped[int | None] = mapped_column(default=None)
    # The secrets of the player link (enter cards and choices) and the watch link.
    player_token: Mapped[str] = mapped_column(String(64), default=new_token, unique=True)
    watch_token: Mapped[str] = mapped_column(String(64), default=new_token, unique=True)
    # When "Make new links" last replaced them: a rematch's links are handed to the phones
    # of the match before only while they are the ones it was started with.
    links_renewed_at: Mapped[datetime | None] = mapped_column(default=None)
    # The players' note on the match ("Oma's 80th"), as ``rules.match_note`` takes it.
    note: Mapped[str | None] = mapped_column(
        String(rules.MAX_NOTE),
        default=None,
        info={
            "typed": Typed(
                rules.match_note,
                N_("Note"),
                N_("Note (optional)"),
                N_("Such as “Oma’s 80th”: shown with the match and in the history."),
                N_("Add a note"),
                N_("Change the note"),
                N_("Save the note"),
                bgstats="comments",
            )
        },
    )

    seats: Mapped[list[Seat]] = relationship(
        back_populates="match",
        order_by="Seat.position",
        cascade="all, delete-orphan",
        lazy="selectin",
    )
    games: Mapped[list[Game]] = relationship(
        back_populates="match",
        order_by="Game.number",
        cascade="all, delete-orphan",
        lazy="selectin",
    )

    __table_args__ = (
        CheckConstraint("end_kind IN ('more_than', 'at_least', 'games')", name="end_kind"),
        CheckConstraint("end_value BETWEEN 1 AND 1000", name="end_value"),
        Index("uq_match_rematch_id", "rematch_id", unique=True),
    )


# The texts the players type about a match, by column name, in the columns' order.
MATCH_TEXTS: dict[str, Typed] = {
    column.name: column.info["typed"]._replace(most=column.type.length)
    for column in Match.__table__.columns
    if "typed" in column.info
}


def texts_of(match: Match) -> list[tuple[Typed, str]]:
    """The match's texts that are filled in, each with its declaration, in order."""
    return [(typed, text) for name, typed in MATCH_TEXTS.items() if (text := getattr(match, name))]


class Seat(db.Model):
    """A player's place at the table in one match (seating order)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    position: Mapped[int]

    match: Mapped[Match] = relationship(back_populates="seats")
    player: Mapped[Player] = relationship(lazy="joined")

    __table_args__ = (
        UniqueConstraint("match_id", "player_id", name="uq_seat_player"),
        UniqueConstraint("match_id", "position", name="uq_seat_position"),
    )


class Game(db.Model):
    """One deal: starting cards and rounds (cards mode), or typed scores (score mode)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("match.id", ondelete="CASCADE"))
    number: Mapped[int]
    mode: Mapped[str] = mapped_column(String(6))  # "cards" or "scores"
    row1: Mapped[int | None]
    row2: Mapped[int | None]
    row3: Mapped[int | None]
    row4: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    match: Mapped[Match] = relationship(back_populates="games")
    rounds: Mapped[list[Round]] = relationship(
        back_populates="game", order_by="Round.number", cascade="all, delete-orphan"
    )
    scores: Mapped[list[Score]] = relationship(cascade="all, delete-orphan")
    pending_cards: Mapped[list[PendingCard]] = relationship(cascade="all, delete-orphan")
    corrections: Mapped[list[Correction]] = relationship(
        cascade="all, delete-orphan", order_by="Correction.id"
    )
    results: Mapped[list[GameResult]] = relationship(cascade="all, delete-orphan")  # derived

    __table_args__ = (
        UniqueConstraint("match_id", "number", name="uq_game_number"),
        CheckConstraint("mode IN ('cards', 'scores')", name="mode"),
    )

    @property
    def starting(self) -> tuple[int, ...]:
        """The four starting cards, row 1 to 4 (cards mode)."""
        return tuple(card for card in (self.row1, self.row2, self.row3, self.row4) if card)


class GameResult(db.Model):
    """Derived: a finished game's bulls for one player, for fast scoreboards and the
    replay of a match's finished games (``companion.derived.results`` keeps them)."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    bulls: Mapped[int]

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", name="uq_result_player"),
        Index("ix_result_player", "player_id"),
    )


class Round(db.Model):
    """One round of a cards-mode game: everyone's revealed card and any row choices."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    number: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    game: Mapped[Game] = relationship(back_populates="rounds")
    plays: Mapped[list[Play]] = relationship(cascade="all, delete-orphan", lazy="selectin")
    choices: Mapped[list[RowChoice]] = relationship(
        cascade="all, delete-orphan", lazy="selectin", order_by="RowChoice.id"
    )

    __table_args__ = (
        UniqueConstraint("game_id", "number", name="uq_round_number"),
        CheckConstraint("number BETWEEN 1 AND 10", name="number"),
    )


class Play(db.Model):
    """The card a player revealed in a round."""

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("round.id", ondelete="CASCADE"))
    # Repeated from the round so the database itself refuses a card twice in one game.
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    card: Mapped[int]

    __table_args__ = (
        UniqueConstraint("round_id", "player_id", name="uq_play_player"),
        UniqueConstraint("game_id", "card", name="uq_play_card"),
        CheckConstraint("card BETWEEN 1 AND 104", name="card"),
    )


class RowChoice(db.Model):
    """The row a too-low card's player chose to take."""

    id: Mapped[int] = mapped_column(primary_key=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("round.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    row: Mapped[int]

    __table_args__ = (
        UniqueConstraint("round_id", "player_id", name="uq_choice_player"),
        CheckConstraint("row BETWEEN 1 AND 4", name="row"),
    )


class Correction(db.Model):
    """A past round corrected: what it replaced and when. The round itself holds the new
    inputs; this row keeps the old ones, so the replay can say "corrected"."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    round_number: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The round's inputs before, players as seats (1 = first): cards in seat order
    # "41,42,43", choices "seat:row", comma-separated.
    cards: Mapped[str] = mapped_column(String(200))
    choices: Mapped[str] = mapped_column(String(100), default="")
    # Later rounds' row choices the correction made unneeded: "round:seat:row".
    dropped: Mapped[str] = mapped_column(String(400), default="")
    # The match's table_version the correction made: its phones show what changed while
    # the match stays there. None once imported (nothing to show any more).
    table_version: Mapped[int | None] = mapped_column(default=None)

    __table_args__ = (
        CheckConstraint("round_number BETWEEN 1 AND 10", name="round_number"),
        CheckConstraint("cards != ''", name="cards"),
        Index("ix_correction_game", "game_id", "round_number"),
    )


class PendingCard(db.Model):
    """A card one phone entered for the coming round, hidden until every card is in.

    Two players' cards may be equal here: refusing one would tell its phone the other's
    hidden card. A round whose cards repeat is not placed until they are fixed."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    round_number: Mapped[int]
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    card: Mapped[int]

    __table_args__ = (
        UniqueConstraint("game_id", "round_number", "player_id", name="uq_pending_player"),
        CheckConstraint("card BETWEEN 1 AND 104", name="card"),
        CheckConstraint("round_number BETWEEN 1 AND 10", name="round_number"),
    )


class Score(db.Model):
    """A score-only game's entry for one player: bulls typed, or the cards of the pile."""

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("game.id", ondelete="CASCADE"))
    player_id: Mapped[int] = mapped_column(ForeignKey("player.id"))
    bulls: Mapped[int | None]
    # The pile as typed ("5 22 47 55"), normalised to comma-separated cards.
    cards: Mapped[str | None] = mapped_column(String(400))

    __table_args__ = (
        UniqueConstraint("game_id", "player_id", name="uq_score_player"),
        CheckConstraint("bulls IS NULL OR bulls BETWEEN 0 AND 171", name="bulls"),
        CheckConstraint("(bulls IS NULL) != (cards IS NULL)", name="one_kind"),
    )
