"""Each match's luck as stored, kept in memory by the match's version
(``companion.household.by_match``): for the leaderboard, a player's page and the year's
review (``companion.household.luck_figures`` asks it their questions).

A player's luck over some games is the bulls their cards were expected to take less the
bulls they took (``rules.PlayerLuck``), summed over the finished card games whose luck
is complete: every round figured with the whole hands (as
``companion.derived.play_luck.finished_luck`` counts them), and shown per game. Pages
only read each player's stored sums of a game (``LuckPlayer``, a row per game and
player, not one per play): a game an import brought counts once the background has
figured it; a score-only game or one still going on never does.

A game's luck changes in a write of its own after the game ended
(``play_luck.fill_luck``), which raises the match's version: ``by_match`` reads again
the matches whose version moved.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Select, func, select

from companion import rules
from companion.db import db
from companion.derived.tables import LuckPlayer
from companion.household.by_match import ByMatch, Kept, players_by_match


class Luck(NamedTuple):
    """A player's luck over some games: the games, the bulls their cards were expected to
    take and the bulls they took."""

    games: int
    expected: float
    bulls: int

    @property
    def per_game(self) -> float:
        """Luck per game (``rules.PlayerLuck.luck``): positive, fewer bulls than expected."""
        return rules.PlayerLuck(0, self.expected, self.bulls).luck / self.games


class PlayerInMatch(NamedTuple):
    """A player's luck over a match's complete games, and the lowest chance of their plays
    that took a row (None when none did)."""

    player_id: int
    luck: Luck
    lowest: float | None


class MatchLuck(NamedTuple):
    """A match's luck at one version: when it was created (UTC), and its players' luck
    (none before a complete game)."""

    version: int
    played_at: datetime
    players: tuple[PlayerInMatch, ...]


KEPT = ByMatch("match_luck")


def kept() -> Kept:
    """Every match's luck, in line with the database (``by_match``)."""
    return KEPT.kept(read_matches)


def read_matches(
    ids: list[int] | None, versions: dict[int, tuple[int, datetime]]
) -> dict[int, MatchLuck]:
    """The luck of these matches (None: all of them) as stored, at ``versions``."""
    where = [] if ids is None else [LuckPlayer.match_id.in_(ids)]
    rows = db.session.connection().execute(player_sums(where))
    return players_by_match(rows, ids, versions, MatchLuck, player_in_match)


def player_in_match(player_id: int, games: int, expected, bulls, lowest) -> PlayerInMatch:
    """A player's row of ``player_sums`` (its match's id left out)."""
    return PlayerInMatch(player_id, Luck(games, float(expected), int(bulls)), lowest)


def player_sums(where: list) -> Select:
    """(match, player, games, expected, bulls, lowest chance of a play that took a row)
    over each match's complete games: each player's sums of a game (``LuckPlayer``) are
    kept only for a game whose every round is figured with the whole hands."""
    return (
        select(
            LuckPlayer.match_id,
            LuckPlayer.player_id,
            func.count(),
            func.sum(LuckPlayer.expected),
            func.sum(LuckPlayer.bulls),
            func.min(LuckPlayer.lowest),
        )
        .where(*where)
        .group_by(LuckPlayer.match_id, LuckPlayer.player_id)
        .order_by(LuckPlayer.match_id, LuckPlayer.player_id)
    )
