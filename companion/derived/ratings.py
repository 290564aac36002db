"""Each finished match's ratings, kept: OpenSkill's Plackett-Luce model, match by match.

Each finished match is one multiplayer game for the model, every player a team of one,
ranked by total bulls: fewest first, equal totals share a rank (``PlayerMatchStat.rank``).
The matches are rated in the order they were played (``played_at``, then id), and a
``MatchRating`` row keeps each player's mu and sigma after each of them.

A rating depends on every earlier match of its players, so a change to a match's
ranks (a game finished, undone or corrected, a match deleted or imported) rates it
and every later match again (``rerate_from``), inside the write and on PostgreSQL in
the turn of ``in_commit_order``, which every writer of match rows takes: whoever rates
sees the rows of every writer before it. Nearly always the match is the last one and
nothing after it moves. The leaderboard's in-memory run (``companion.household.skill``)
rates the same matches with the same function (``rate``); ``rebuild`` checks the rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from typing import NamedTuple

from openskill.models import PlackettLuce, PlackettLuceRating
from sqlalchemy import Connection, and_, column, delete, or_, select, table

from companion import storage
from companion.derived.tables import MatchRating, PlayerMatchStat
from companion.storage.imports import date_converter, insert_rows

MODEL = PlackettLuce()


class Ranked(NamedTuple):
    """One finished match as the model sees it: its players' ranks, 1 = fewest bulls."""

    match_id: int
    ranks: tuple[tuple[int, int], ...]  # (player id, rank), by player id


class RatingRow(NamedTuple):
    """A MatchRating row's values."""

    match_id: int
    player_id: int
    played_at: datetime
    mu: float
    sigma: float


def rate(
    current: dict[int, PlackettLuceRating], match: Ranked
) -> list[tuple[int, PlackettLuceRating | None, PlackettLuceRating]]:
    """One match rated: (player, rating before it or None for a first match, after it)
    for each of its players, from their latest ratings in ``current`` (not changed)."""
    players = [player for player, _rank in match.ranks]
    old = [current.get(player) for player in players]
    teams = [[rating or MODEL.rating()] for rating in old]
    rated = MODEL.rate(teams, ranks=[rank for _player, rank in match.ranks])
    return [
        (player, before, new) for player, before, (new,) in zip(players, old, rated, strict=True)
    ]


def rating_of(mu: float, sigma: float) -> PlackettLuceRating:
    """A stored rating as the model's own object."""
    return MODEL.rating(mu=mu, sigma=sigma)


def rated_rows(
    matches: Sequence[tuple[Ranked, datetime]], current: dict[int, PlackettLuceRating]
) -> Iterator[RatingRow]:
    """The rows of matches rated in order after the ratings in ``current`` (updated)."""
    for match, played_at in matches:
        for player, _before, new in rate(current, match):
            current[player] = new
            yield RatingRow(match.match_id, player, played_at, new.mu, new.sigma)


def finished_from(connection: Connection, start: tuple | None) -> list[tuple[Ranked, datetime]]:
    """The finished matches in the order they are rated, from ``start`` (played_at, match
    id) on, or all."""
    return list(finished(connection, start))


def finished(
    connection: Connection, start: tuple | None, batch: int | None = None
) -> Iterator[tuple[Ranked, datetime]]:
    """``finished_from``, a match at a time; with ``batch``, read ``batch`` rows at a
    time (PostgreSQL: a server-side cursor) instead of all at once."""
    stat = PlayerMatchStat
    query = select(stat.match_id, stat.played_at, stat.player_id, stat.rank).where(stat.finished)
    if start is not None:
        query = query.where(from_on(stat, start))
    query = query.order_by(stat.played_at, stat.match_id, stat.player_id)
    if batch is not None:
        query = query.execution_options(yield_per=batch)
    for (match_id, played_at), group in groupby(connection.execute(query), key=itemgetter(0, 1)):
        yield Ranked(match_id, tuple((player, rank) for *_key, player, rank in group)), played_at


def from_on(model, start: tuple):
    """``model``'s rows at or after (played_at, match id) ``start``."""
    played_at, match_id = start
    later = or_(model.played_at > played_at, model.match_id >= match_id)
    return and_(model.played_at >= played_at, later)  # the first: a range of the index


def before(model, start: tuple):
    """``model``'s rows before (played_at, match id) ``start``: the rest of ``from_on``."""
    played_at, match_id = start
    earlier = or_(model.played_at < played_at, model.match_id < match_id)
    return and_(model.played_at <= played_at, earlier)  # the first: a range of the index


def stored_from(connection: Connection, start: tuple | None) -> set[RatingRow]:
    """The stored rating rows from ``start`` on (or all)."""
    row = MatchRating
    query = select(row.match_id, row.player_id, row.played_at, row.mu, row.sigma)
    if start is not None:
        query = query.where(from_on(row, start))
    return {RatingRow(*values) for values in connection.execute(query)}


def latest_before(connection: Connection, players: set[int], start: tuple) -> dict:
    """Each player's rating after their last match before ``start``, if any."""
    row = MatchRating
    current = {}
    for player in sorted(players):
        query = (
            select(row.mu, row.sigma)
            .where(row.player_id == player, before(row, start))
            .order_by(row.played_at.desc(), row.match_id.desc())
            .limit(1)
        )
        found = connection.execute(query).first()
        if found is not None:
            current[player] = rating_of(*found)
    return current


def rerate_from(connection: Connection, start: tuple | None, put_right: bool = True) -> list[int]:
    """Rate the finished matches again from ``start`` (played_at, match id) on, after a
    change to that match (inside the write), or all of them (None); the ids of the
    matches whose stored ratings differ, replaced unless not ``put_right``."""
    storage.in_commit_order(connection)
    matches = finished_from(connection, start)
    players = {player for match, _at in matches for player, _rank in match.ranks}
    earlier = latest_before(connection, players, start) if start is not None else {}
    wanted = set(rated_rows(matches, earlier))
    moved = sorted({row.match_id for row in wanted ^ stored_from(connection, start)})
    if moved and put_right:
        going = delete(MatchRating)
        if start is not None:
            going = going.where(from_on(MatchRating, start))
        connection.execute(going)
        write_ratings(connection, wanted)
    return moved


BATCH = 10_000  # rating rows an import's rating holds at once


def rate_new_from(connection: Connection, start: tuple) -> None:
    """After an import's copy (in its write): every finished match from ``start`` on rated
    again and its rows replaced, ``BATCH`` at a time. The matches the import added have
    no rows yet, so their rows differ anyway: nothing is compared, and a file of
    280,000 matches is rated in the memory of a few thousand (``rerate_from`` holds
    every row twice, to compare)."""
    storage.in_commit_order(connection)
    connection.execute(delete(MatchRating).where(from_on(MatchRating, start)))
    current: dict[int, PlackettLuceRating] = {}
    seen: set[int] = set()  # players whose rating before ``start`` was looked up
    rows: list[RatingRow] = []
    for match, played_at in finished(connection, start, BATCH):
        new = {player for player, _rank in match.ranks} - seen
        if new:
            current.update(latest_before(connection, new, start))
            seen |= new
        rows.extend(rated_rows([(match, played_at)], current))
        if len(rows) >= BATCH:
            write_ratings(connection, rows)
            rows = []
    write_ratings(connection, rows)


RATING_ROWS = table("match_rating", *(column(name) for name in RatingRow._fields))


def write_ratings(connection: Connection, rows) -> None:
    """Insert rating rows in bulk, as the driver takes them (an import rates thousands:
    SQLAlchemy's executemany would take five times as long)."""
    stamp = date_converter(connection)
    plain = [(*row[:2], stamp(row.played_at), *row[3:]) for row in sorted(rows)]
    insert_rows(connection, RATING_ROWS, plain)


def all_rated(connection: Connection) -> set[RatingRow]:
    """Every finished match rated from the start, as the rows should be."""
    return set(rated_rows(finished_from(connection, None), {}))
