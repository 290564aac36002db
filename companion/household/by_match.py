"""Figures of every match kept in memory by the match's version, in buckets of match ids:
each match's luck (``companion.household.match_luck``) and each match's reviewed games
(``companion.household.match_review``), for the leaderboard, a player's page and the
year's review.

Why in memory, match by match: summing every stored row at a household's caps (two
million plays) takes seconds, and these figures change in writes of their own after a
game ended (its luck, its review: the background's), which leave the leaderboard's
fingerprint as it was. Every change to them raises the match's version, so each match's
figures are kept with the version they were read at, in buckets of ``BUCKET`` match ids
with a stamp each (count, sum of versions, largest id). A request reads the buckets'
stamps, then the versions of the buckets whose stamp moved, and asks the database again
about the matches whose version changed: one while a game is played.

The pages' questions (a player's figures under the leaderboard's filters, over a year)
are answered bucket by bucket and kept too (``found``): a change to one match finds its
bucket's part again, not every match's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple, Protocol, TypeVar

from sqlalchemy import Integer, func, literal_column, or_, select

from companion.db import db
from companion.memo import Memo
from companion.models import Match

CHUNK = 500  # matches asked about in one query
BUCKET = 1000  # match ids per bucket: 20 at the caps
FOUND = Memo("by_match_found", 64)  # the pages' questions: a few filters and years

Stamp = dict[int, tuple[int, int, int]]  # by bucket: count, sum of versions, largest id
P = TypeVar("P")
T = TypeVar("T")


class Figures(Protocol):
    """What is kept of a match: the version and creation (UTC) it was read at, and its
    players' figures (none before a game counts)."""

    version: int
    played_at: datetime
    players: tuple


class Kept(NamedTuple):
    """Every match's figures by bucket, and the stamps of the versions they were read at."""

    stamp: Stamp
    buckets: dict[int, dict[int, Figures]]


Reader = Callable[[list[int] | None, dict[int, tuple[int, datetime]]], dict[int, Figures]]


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


class ByMatch:
    """One kind of figures of every match, kept in this app's memory (``Memo``)."""

    def __init__(self, name: str) -> None:
        self.memo = Memo(name, 1)  # one value: every match's figures

    def kept(self, read: Reader) -> Kept:
        """Every match's figures, in line with the database (``refreshed``); ``read``
        asks the database about some matches (None: all), at the versions given."""
        now = stamp()
        held = self.memo.get("matches")
        if held is not None and held.stamp == now:
            return held
        return self.memo.alone("matches", lambda: self.brought_to(now, read))

    def brought_to(self, now: Stamp, read: Reader) -> Kept:
        """Every match's figures as kept, refreshed unless the thread waited for already did."""
        held = self.memo.get("matches") or Kept({}, {})
        if held.stamp != now:
            held = self.memo.put("matches", refreshed(held, now, read))
        return held


def refreshed(held: Kept, now: Stamp, read: Reader) -> Kept:
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
        figures = held.buckets.get(number, {}).get(match_id)
        if figures is not None and (figures.version, figures.played_at) == version:
            buckets[number][match_id] = figures
    stale = [match_id for match_id in versions if match_id not in buckets[match_id // BUCKET]]
    # A first read asks once about every match: a third faster than chunk by chunk.
    for chunk in [None] if not held.buckets else chunks(stale, CHUNK):
        for match_id, figures in read(chunk, versions).items():
            buckets[match_id // BUCKET][match_id] = figures
    return Kept(now, buckets)


def read_versions(buckets: list[int]) -> dict[int, tuple[int, datetime]]:
    """The version and creation of every match in these buckets."""
    if not buckets:
        return {}
    ranges = [Match.id.between(number * BUCKET, number * BUCKET + BUCKET - 1) for number in buckets]
    query = select(Match.id, Match.version, Match.created_at).where(or_(*ranges))
    return {row[0]: (row[1], row[2]) for row in db.session.connection().execute(query)}


def players_by_match(
    rows: Iterable[Sequence],
    ids: list[int] | None,
    versions: dict[int, tuple[int, datetime]],
    match: Callable[..., Figures],
    player: Callable[..., Any],
) -> dict[int, Figures]:
    """Each match of ``ids`` (None: every match of ``versions``) as ``match(version,
    played_at, players)``: its players made by ``player(*values)`` from the rows (a match
    id, then a player's values) that name it; none for a match no row names."""
    players: dict[int, list] = {}
    for match_id, *values in rows:
        players.setdefault(match_id, []).append(player(*values))
    return {
        match_id: match(*versions[match_id], tuple(players.get(match_id, ())))
        for match_id in (versions if ids is None else ids)
        if match_id in versions
    }


def chunks(ids: Sequence[int], size: int) -> Iterator[list[int]]:
    """``ids`` in lists of at most ``size``."""
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def in_range(
    matches: dict[int, Figures],
    since: datetime | None,
    until: datetime | None,
    players: int | None = None,
) -> Iterator[tuple[int, Figures]]:
    """Of these matches, those with figures created in [since, until) at which
    ``players`` sat (None: any number), with their ids."""
    for match_id, figures in matches.items():
        if not figures.players:
            continue
        if since is not None and figures.played_at < since:
            continue
        if until is not None and figures.played_at >= until:
            continue
        if players is not None and len(figures.players) != players:
            continue
        yield match_id, figures


def found(
    held: Kept,
    key: tuple,
    part: Callable[[dict[int, Figures]], P],
    combine: Callable[[list[P]], T],
) -> T:
    """What ``combine`` makes of what ``part`` finds in each bucket of matches: kept while
    they stay as they are, and each bucket's part while its bucket does. ``key`` names
    the question and its kind of figures (a luck question and a review question never
    share a key)."""
    have = FOUND.get(key)
    if have is not None and have[0] == held.stamp:
        return have[2]
    before = have[1] if have is not None else {}
    parts = {}
    for number, matches in sorted(held.buckets.items()):
        stamped = before.get(number)
        if stamped is None or stamped[0] != held.stamp[number]:
            stamped = (held.stamp[number], part(matches))
        parts[number] = stamped
    made = combine([value for _stamp, value in parts.values()])
    FOUND.put(key, (held.stamp, parts, made))
    return made


Extreme = tuple[Any, list[tuple[int, int]]] | None  # a value, and its (match, player)s


def extreme(
    held: Kept,
    field: str,
    pick: Callable[[Iterable], Any],
    where: tuple[datetime | None, datetime | None, int | None],
    first: Callable[[Any, set[tuple[int, int]]], T],
) -> T | None:
    """Of the matches created in [since, until) (``where``: since, until, and a player
    or None for everyone), the players' figure ``field`` that ``pick`` (min or max)
    picks, and what ``first(value, pairs)`` makes of the (match, player) pairs that have
    it (the year's unluckiest play, its costliest): a bucket at a time (``found``)."""
    since, until, player_id = where

    def part(matches: dict[int, Figures]) -> Extreme:
        values = [
            (value, match_id, mine.player_id)
            for match_id, figures in in_range(matches, since, until)
            for mine in figures.players
            if (value := getattr(mine, field)) is not None and player_id in (None, mine.player_id)
        ]
        if not values:
            return None
        value = pick(value for value, _match, _player in values)
        return value, [(match, player) for each, match, player in values if each == value]

    def combine(parts: list[Extreme]) -> T | None:
        found_parts = [part for part in parts if part is not None]
        if not found_parts:
            return None
        value = pick(value for value, _pairs in found_parts)
        pairs = {pair for each, its in found_parts if each == value for pair in its}
        return first(value, pairs)

    return found(held, (field, *where), part, combine)
