"""What the pages ask of every match's luck (``companion.household.match_luck``): each
player's luck under the leaderboard's filters or over a year, and the unluckiest play.

The answers are kept with the stamps of the luck they were found in, bucket by bucket
(``companion.household.by_match.found``): a change to one match finds its bucket's part
again, not every match's.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import select

from companion.db import db
from companion.derived.play_luck import complete_games
from companion.derived.tables import LuckPlayer, PlayLuck
from companion.household.by_match import Kept, extreme, found, in_range
from companion.household.match_luck import Luck, MatchLuck, kept
from companion.models import Game, Match


class Play(NamedTuple):
    """One play that took a row: its chance of doing so, where it was, and who played it."""

    chance: float
    bulls: int
    card: int
    player_id: int
    match_id: int
    game: int  # number in the match
    round: int


def luck_by_player(
    since: datetime | None = None,
    until: datetime | None = None,
    players: int | None = None,
    held: Kept | None = None,
) -> dict[int, Luck]:
    """Each player's luck over the complete games of the matches created in [since,
    until) with ``players`` at the table (the leaderboard's filters; None: any), from
    ``held`` (default: ``kept()``)."""

    def part(matches: dict[int, MatchLuck]) -> dict[int, list]:
        return add_up(luck for _id, luck in in_range(matches, since, until, players))

    def combine(parts: list[dict[int, list]]) -> dict[int, Luck]:
        totals: dict[int, list] = {}
        for totalled in parts:
            for player_id, (games, expected, bulls) in totalled.items():
                have = totals.setdefault(player_id, [0, 0.0, 0])
                have[0] += games
                have[1] += expected
                have[2] += bulls
        return {player_id: Luck(*values) for player_id, values in totals.items()}

    return found(held or kept(), ("luck", since, until, players), part, combine)


def add_up(matches: Iterable[MatchLuck]) -> dict[int, list]:
    """Each player's [games, expected, bulls] over these matches (plain lists while
    adding: thousands of players' matches in a bucket)."""
    totals: dict[int, list] = {}
    for luck in matches:
        for player_id, (games, expected, bulls), _lowest in luck.players:
            have = totals.get(player_id)
            if have is None:
                totals[player_id] = [games, expected, bulls]
            else:
                have[0] += games
                have[1] += expected
                have[2] += bulls
    return totals


def unluckiest(
    since: datetime | None = None,
    until: datetime | None = None,
    player_id: int | None = None,
    held: Kept | None = None,
) -> Play | None:
    """The unluckiest play of the complete games of the matches created in [since,
    until), of everyone or of one player, from ``held`` (default: ``kept()``): of the
    plays that took a row, the one with the lowest chance of doing so; more bulls first
    on a tie, then the earliest (by the match's creation, its id, the game, the round)
    and the lower player id."""
    return extreme(held or kept(), "lowest", min, (since, until, player_id), first_play)


def first_play(chance: float, where: set[tuple[int, int]]) -> Play | None:
    """Of the plays with this chance that took a row in the complete games of these
    (match, player) pairs, the one with the most bulls, then the earliest."""
    matches = sorted({match_id for match_id, _player in where})
    complete = complete_games(LuckPlayer.match_id.in_(matches))
    query = (
        select(
            PlayLuck.bulls,
            PlayLuck.card,
            PlayLuck.player_id,
            PlayLuck.match_id,
            Game.number,
            PlayLuck.round_number,
            Match.created_at,
        )
        .join(Game, Game.id == PlayLuck.game_id)
        .join(Match, Match.id == PlayLuck.match_id)
        .where(PlayLuck.chance == chance, PlayLuck.bulls > 0, PlayLuck.game_id.in_(complete))
    )
    plays = [
        (-bulls, created, match_id, game, number, player, card)
        for bulls, card, player, match_id, game, number, created in db.session.connection().execute(
            query
        )
        if (match_id, player) in where
    ]
    if not plays:
        return None
    bulls, _created, match_id, game, number, player, card = min(plays)
    return Play(chance, -bulls, card, player, match_id, game, number)
