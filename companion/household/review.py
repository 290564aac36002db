"""The year at our table (/review/<year>, ?player= for one player): a page to look at.

The figures come from the derived tables (matches, games, nemesis takes), the stored
times (``companion.derived.timing``), the leaderboard's rating run and, for the card
that cost the most, a replay of the year's games through the rules engine; their
meaning is in ``companion.household.yearly``, which computes them. The year's rows are
kept in memory with the stamp of what they were read from (the match rows' fingerprint
and the year's matches' versions), so only the first request after a change reads and
replays them.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta

from flask import Blueprint, abort, redirect, request, url_for
from flask_babel import format_date, gettext, to_user_timezone
from sqlalchemy import func, select

from companion import rules
from companion.db import db
from companion.derived import NemesisCount, PlayerGameStat, PlayerMatchStat
from companion.derived.timing import match_times
from companion.household import statistics as stats
from companion.household import yearly
from companion.household.leaderboard import everyone, round_url
from companion.memo import Memo
from companion.models import MAX_ID, Game, Match, Play, Round, RowChoice, Seat, utcnow
from companion.web.bars import month_bars
from companion.web.chart import SERIES
from companion.web.htmx import render

bp = Blueprint("review", __name__)

YEARS = Memo("review", 8)  # a few years' rows; a household looks at one or two
# Each match's minutes and card costs by (match id, version): a new or changed match is
# read and replayed alone, not the year with it.
MATCHES = Memo("review-matches", 20_000)
FIRST_YEAR, LAST_YEAR = 2000, 2999


class Rows:
    """A year's rows, read once per stamp: matches, games, nemesis takes, card costs."""

    def __init__(self, year: int, stamp: tuple) -> None:
        self.stamp = stamp
        since, until = bounds(year)
        ids = match_ids(since, until)
        replayed = per_match(ids)
        minutes = {match_id: found[0] for match_id, found in replayed.items()}
        self.matches = [m for m in read_matches(ids, minutes) if m.played_at.year == year]
        kept = [match.match_id for match in self.matches]
        self.games = read_games(kept)
        self.nemesis = read_nemesis(kept)
        self.costs: dict[tuple[int, int], int] = defaultdict(int)
        for match_id in kept:
            for key, bulls in replayed[match_id][1].items():
                self.costs[key] += bulls
        self.ratings = rating_changes(set(kept))
        self.reviews: dict[int | None, yearly.Review] = {}  # by player (None: everyone)


def per_match(ids: list[int]) -> dict[int, tuple[int, dict[tuple[int, int], int]]]:
    """Each match's minutes and card costs, from memory for the versions seen before."""
    query = select(Match.id, Match.version).where(Match.id.in_(ids))
    versions = dict(db.session.connection().execute(query).all())
    found, missing = {}, []
    for match_id in ids:
        hit = MATCHES.get((match_id, versions[match_id]))
        if hit is None:
            missing.append(match_id)
        else:
            found[match_id] = hit
    if missing:
        times, costs = match_times(missing), card_costs(missing)
        for match_id in missing:
            value = (times[match_id].match.minutes, costs.get(match_id, {}))
            found[match_id] = MATCHES.put((match_id, versions[match_id]), value)
    return found


def bounds(year: int) -> tuple[datetime, datetime]:
    """The stored (UTC) moments around the year, a day wider: local time decides."""
    return datetime(year, 1, 1) - timedelta(days=1), datetime(year + 1, 1, 1) + timedelta(days=1)


def match_ids(since: datetime, until: datetime) -> list[int]:
    """The matches with a finished game created between two moments."""
    query = (
        select(PlayerMatchStat.match_id)
        .where(PlayerMatchStat.played_at >= since, PlayerMatchStat.played_at < until)
        .distinct()
    )
    return list(db.session.scalars(query))


def stamp_of(year: int) -> tuple:
    """What the year's figures are made of: the match rows and the year's matches'
    versions (a correction that leaves every total as it was still changes a card)."""
    since, until = bounds(year)
    versions = select(func.count(Match.id), func.coalesce(func.sum(Match.version), 0)).where(
        Match.created_at >= since, Match.created_at < until
    )
    return (*stats.fingerprint(), *db.session.execute(versions).one())


def year_rows(year: int) -> Rows:
    """The year's rows, from memory while nothing they are made of has changed."""
    stamp = stamp_of(year)
    kept = YEARS.get(year)
    if kept is not None and kept.stamp == stamp:
        return kept
    return YEARS.put(year, Rows(year, stamp))


def read_matches(ids: list[int], minutes: dict[int, int]) -> list[yearly.MatchIn]:
    """The matches as the review counts them, from their rows in ``PlayerMatchStat``."""
    stat = PlayerMatchStat
    query = select(
        stat.match_id, stat.player_id, stat.played_at, stat.games, stat.finished, stat.won
    ).where(stat.match_id.in_(ids))
    seats: dict[int, list] = defaultdict(list)
    for row in db.session.connection().execute(query.order_by(stat.match_id, stat.player_id)):
        seats[row.match_id].append(row)
    matches = []
    for match_id, rows in seats.items():
        first = rows[0]
        matches.append(
            yearly.MatchIn(
                match_id,
                local(first.played_at),
                minutes[match_id],
                first.finished,
                first.games,
                tuple(row.player_id for row in rows),
                tuple(row.player_id for row in rows if row.won and row.finished),
            )
        )
    return sorted(matches, key=lambda match: (match.played_at, match.match_id))


def local(moment: datetime) -> datetime:
    """A stored UTC moment in the app's timezone, naive."""
    return to_user_timezone(moment).replace(tzinfo=None)


def read_games(ids: list[int]) -> list[yearly.GameIn]:
    """Every player's finished games in the matches, with the games' numbers."""
    stat = PlayerGameStat
    query = (
        select(
            stat.match_id,
            Game.number,
            stat.player_id,
            stat.bulls,
            stat.fives,
            stat.worst_round,
            stat.worst_round_number,
        )
        .join(Game, Game.id == stat.game_id)
        .where(stat.match_id.in_(ids))
    )
    return [yearly.GameIn(*row) for row in db.session.connection().execute(query)]


def read_nemesis(ids: list[int]) -> list[tuple[int, int, int]]:
    """Takes by (player, rival) over the matches."""
    row = NemesisCount
    query = (
        select(row.player_id, row.rival_id, func.sum(row.takes))
        .where(row.match_id.in_(ids))
        .group_by(row.player_id, row.rival_id)
    )
    return [tuple(values) for values in db.session.connection().execute(query)]


def card_costs(ids: list[int]) -> dict[int, dict[tuple[int, int], int]]:
    """Bulls taken by (player, card played) in each match's finished card games: every
    game replayed through the rules engine from its inputs (read in bulk)."""
    connection = db.session.connection()
    finished = select(PlayerGameStat.game_id).where(PlayerGameStat.cards)
    games = connection.execute(
        select(Game.id, Game.match_id, Game.row1, Game.row2, Game.row3, Game.row4).where(
            Game.match_id.in_(ids), Game.id.in_(finished)
        )
    ).all()
    seats: dict[int, list[int]] = defaultdict(list)
    for match_id, player_id in connection.execute(
        select(Seat.match_id, Seat.player_id)
        .where(Seat.match_id.in_(ids))
        .order_by(Seat.match_id, Seat.position)
    ):
        seats[match_id].append(player_id)
    rounds = read_rounds(ids)
    costs: dict[int, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))
    for game_id, match_id, *starting in games:
        table = rules.replay_game(starting, rounds[game_id], seats[match_id])
        for result in table.rounds:
            for step in result.steps:
                if step.action != rules.PLACED:
                    costs[match_id][step.player, step.card] += step.bulls
    return {match_id: dict(found) for match_id, found in costs.items()}


def read_rounds(ids: list[int]) -> dict[int, list]:
    """Every round's plays and row choices in the matches, by game, in order."""
    connection = db.session.connection()
    rounds: dict[int, dict[int, tuple[list, dict]]] = defaultdict(dict)
    plays = (
        select(Round.game_id, Round.number, Play.player_id, Play.card)
        .join(Play, Play.round_id == Round.id)
        .join(Game, Game.id == Round.game_id)
        .where(Game.match_id.in_(ids))
    )
    for game_id, number, player_id, card in connection.execute(plays):
        rounds[game_id].setdefault(number, ([], {}))[0].append((player_id, card))
    choices = (
        select(Round.game_id, Round.number, RowChoice.player_id, RowChoice.row)
        .join(RowChoice, RowChoice.round_id == Round.id)
        .join(Game, Game.id == Round.game_id)
        .where(Game.match_id.in_(ids))
        .order_by(RowChoice.id)
    )
    for game_id, number, player_id, row in connection.execute(choices):
        rounds[game_id][number][1][player_id] = row
    return {game: [found[n] for n in sorted(found)] for game, found in rounds.items()}


def rating_changes(year_ids: set[int]) -> dict[int, tuple[float, float]]:
    """Each player's shown rating before the year and after it (the all-time run)."""
    run = stats.board().run
    inside = [index for index, match in enumerate(run.inputs) if match.match_id in year_ids]
    if not inside:
        return {}
    first, last = inside[0], inside[-1]
    changes = {}
    for player, points in run.history.items():
        before = [ordinal for index, ordinal in points if index < first]
        during = [ordinal for index, ordinal in points if first <= index <= last]
        if during:
            changes[player] = (before[-1] if before else 0.0, during[-1])
    return changes


def review_of(year: int, player_id: int | None) -> yearly.Review:
    """The year's review (for one player, or the household)."""
    rows = year_rows(year)
    if player_id not in rows.reviews:
        rows.reviews[player_id] = yearly.year_review(
            year, rows.matches, rows.games, rows.nemesis, rows.costs, rows.ratings, player_id
        )
    return rows.reviews[player_id]


def charts(review: yearly.Review, names: dict[int, str]) -> dict:
    """The two charts by month: games (one bar a month) and wins (stacked by winner)."""
    months = [format_date(date(review.year, month, 1), "LLL").rstrip(".") for month in range(1, 13)]
    games = [
        (gettext("Games"), "series-0", values) for _key, values in review.games_by_month.series
    ]
    order = list(names)
    wins = [
        (names[player], f"series-{order.index(player) % SERIES}", values)
        for player, values in review.wins_by_month.series
    ]
    return {
        "games_chart": month_bars(games, months, review.games_by_month.top),
        "wins_chart": month_bars(wins, months, review.wins_by_month.top),
    }


def read_player(value: str, known: set[int]) -> tuple[int | None, dict[str, str]]:
    """The player asked for (none: the household), and a message if there is no such one."""
    if not value:
        return None, {}
    player_id = rules.whole_number(value, 1, MAX_ID)
    if player_id in known:
        return player_id, {}
    return None, {"player": gettext("Choose a player from the list.")}


@bp.get("/review")
def this_year():
    """The review of the year we are in."""
    return redirect(url_for("review.show", year=local(utcnow()).year), 303)


@bp.get("/review/<year>")
def show(year: str):
    """A year at the table in figures and charts, for the household or one player."""
    year = rules.whole_number(year, FIRST_YEAR, LAST_YEAR)
    if year is None:
        abort(404)
    players = everyone()
    player_id, errors = read_player(request.args.get("player", ""), {p.id for p in players})
    review = review_of(year, player_id)
    names = {player.id: player.name for player in players}
    return render(
        "household/review.html",
        "review",
        review=review,
        names=names,
        **charts(review, names),
        players=players,
        form={"player": str(player_id or "")},
        errors=errors,
        worst_url=round_url(*review.worst_round[2:]) if review.worst_round else None,
        this_year=local(utcnow()).year,
    ), 422 if errors else 200
