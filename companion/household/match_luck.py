"""Each match's luck as stored, kept in memory by the match's version: for the
leaderboard, a player's page and the year's review (``companion.household.luck_figures``
asks it their questions).

A player's luck over some games is the bulls their cards were expected to take less the
bulls they took (``rules.PlayerLuck``), summed over the finished card games whose luck
is complete: every round figured with the whole hands (as
``companion.derived.play_luck.finished_luck`` counts them), and shown per game. Pages
only read the stored ``PlayLuck`` rows: a game an import brought counts once the
background has figured it; a score-only game or one still going on never does.

Why in memory, match by match: summing every stored play at a household's caps (two
million rows) takes seconds, and a game's luck changes in a write of its own after the
game ended (``play_luck.fill_luck``), which leaves the leaderboard's fingerprint as it
was. Every change to a match's luck raises the match's version, so each match's sums are
kept with the version they were read at (``KEPT``), in buckets of ``BUCKET`` match ids
with a stamp each (count, sum of versions, largest id). A request reads the buckets'
stamps, then the versions of the buckets whose stamp moved, and asks the database again
about the matches whose version changed: one while a game is played.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import Integer, Select, case, func, literal_column, or_, select

from companion import rules
from companion.db import db
from companion.derived.tables import PlayLuck
from companion.memo import Memo
from companion.models import Match

KEPT = Memo("match_luck", 1)  # one value: every match's luck
CHUNK = 500  # matches asked about in one query
BUCKET = 1000  # match ids per bucket: 20 at the caps


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


Stamp = dict[int, tuple[int, int, int]]  # by bucket: count, sum of versions, largest id


class Kept(NamedTuple):
    """Every match's luck by bucket, and the stamps of the versions it was read at."""

    stamp: Stamp
    buckets: dict[int, dict[int, MatchLuck]]


def stamp() -> Stamp:
    """Each bucket's count of matches, sum of their versions and largest id: any write to
    a match raises its version, deleting one lowers the count."""
    bucket = Match.id // literal_column(str(BUCKET), Integer)
    query = (
        select(bucket, func.count(), func.sum(Match.version), func.max(Match.id))
        .group_by(bucket)
        .order_by(bucket)
    )
    return {
        number: (count, int(versions), highest)
        for number, count, versions, highest in db.session.connection().execute(query)
    }


def kept() -> Kept:
    """Every match's luck, in line with the database (``refreshed``)."""
    now = stamp()
    held = KEPT.get("matches")
    if held is not None and held.stamp == now:
        return held
    return KEPT.alone("matches", lambda: brought_to(now))


def brought_to(now: Stamp) -> Kept:
    """Every match's luck as kept, refreshed unless the thread waited for already did."""
    held = KEPT.get("matches") or Kept({}, {})
    if held.stamp != now:
        held = KEPT.put("matches", refreshed(held, now))
    return held


def refreshed(held: Kept, now: Stamp) -> Kept:
    """``held`` brought to the stamps ``now``: the buckets whose stamp moved read again
    for the matches whose version (or creation: SQLite reuses a deleted match's id)
    changed, the others kept as they are (never changed: a page may be reading them)."""
    buckets = {
        number: held.buckets[number] for number in now if held.stamp.get(number) == now[number]
    }
    versions = read_versions([number for number in now if number not in buckets])
    for match_id, version in versions.items():
        number = match_id // BUCKET
        if number not in buckets:
            buckets[number] = {}
        luck = held.buckets.get(number, {}).get(match_id)
        if luck is not None and (luck.version, luck.played_at) == version:
            buckets[number][match_id] = luck
    stale = [match_id for match_id in versions if match_id not in buckets[match_id // BUCKET]]
    # A first read asks once about every match: a third faster than chunk by chunk.
    for chunk in [None] if not held.buckets else chunks(stale, CHUNK):
        for match_id, luck in read_matches(chunk, versions).items():
            buckets[match_id // BUCKET][match_id] = luck
    return Kept(now, buckets)


def read_versions(buckets: list[int]) -> dict[int, tuple[int, datetime]]:
    """The version and creation of every match in these buckets."""
    if not buckets:
        return {}
    ranges = [Match.id.between(number * BUCKET, number * BUCKET + BUCKET - 1) for number in buckets]
    query = select(Match.id, Match.version, Match.created_at).where(or_(*ranges))
    return {row[0]: (row[1], row[2]) for row in db.session.connection().execute(query)}


def chunks(ids: Sequence[int], size: int) -> Iterator[list[int]]:
    """``ids`` in lists of at most ``size``."""
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def read_matches(
    ids: list[int] | None, versions: dict[int, tuple[int, datetime]]
) -> dict[int, MatchLuck]:
    """The luck of these matches (None: all of them) as stored, at ``versions``."""
    where = [] if ids is None else [PlayLuck.match_id.in_(ids)]
    players: dict[int, list[PlayerInMatch]] = {}
    for match_id, player_id, games, expected, bulls, lowest in db.session.connection().execute(
        player_sums(where)
    ):
        luck = Luck(games, float(expected), int(bulls))
        players.setdefault(match_id, []).append(PlayerInMatch(player_id, luck, lowest))
    return {
        match_id: MatchLuck(*versions[match_id], tuple(players.get(match_id, ())))
        for match_id in (versions if ids is None else ids)
        if match_id in versions
    }


def player_sums(where: list) -> Select:
    """(match, player, games, expected, bulls, lowest chance of a play that took a row)
    over each match's complete games. A player's game is complete when it has a row for
    every round, each figured with the whole hands: a round's rows are written together,
    so then every round of the game is figured so."""
    whole = func.sum(case((PlayLuck.whole, 1), else_=0))
    games = (
        select(
            PlayLuck.match_id,
            PlayLuck.player_id,
            func.sum(PlayLuck.expected).label("expected"),
            func.sum(PlayLuck.bulls).label("bulls"),
            func.min(case((PlayLuck.bulls > 0, PlayLuck.chance))).label("lowest"),
        )
        .where(*where)
        .group_by(PlayLuck.match_id, PlayLuck.player_id, PlayLuck.game_id)
        .having(func.count() == rules.HAND_SIZE, whole == rules.HAND_SIZE)
        .subquery()
    )
    return (
        select(
            games.c.match_id,
            games.c.player_id,
            func.count(),
            func.sum(games.c.expected),
            func.sum(games.c.bulls),
            func.min(games.c.lowest),
        )
        .group_by(games.c.match_id, games.c.player_id)
        .order_by(games.c.match_id, games.c.player_id)
    )
