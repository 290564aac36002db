"""The year at our table (/review/<year>, ?player= for one player): a page to look at.

The figures are sums and firsts over the derived tables (matches with their minutes and
figures, nemesis takes, card takes, every match's ratings: ``companion.derived``),
asked of the database for the year's matches: nothing is replayed here. Their meaning
is in ``companion.household.yearly``, which makes the review of them. A review is kept
in memory with the stamp of what it was made of (the match rows up to the year's end
and the year's matches' versions), so a request after a change asks the database again.
The year's luck and choices are asked apart (``companion.household.luck_figures`` and
``companion.household.choices``, every match's kept in memory): a game's luck and its
review are figured in writes after the one that finished it.
"""

from __future__ import annotations

from datetime import date, datetime

from flask import Blueprint, abort, redirect, request, url_for
from flask_babel import format_date, get_timezone, gettext, to_user_timezone, to_utc
from sqlalchemy import Float, Select, cast, func, literal, select

from companion import rules
from companion.db import db
from companion.derived import CardTake, MatchRating, NemesisCount, PlayerMatchStat
from companion.household import choices, luck_figures, match_luck, yearly
from companion.household.leaderboard import everyone, round_url
from companion.household.skill import START, Rating
from companion.memo import Memo
from companion.models import MAX_ID, Match, Player, utcnow
from companion.web.bars import month_bars
from companion.web.chart import SERIES
from companion.web.htmx import render

bp = Blueprint("review", __name__)

REVIEWS = Memo("review", 64)  # (year, player): a household looks at a year or two
FIRST_YEAR, LAST_YEAR = 2000, 2999


class Year:
    """A year's matches as the database is asked about them: from its first moment to
    the next year's (the app's timezone, stored as UTC), for the household or one player."""

    def __init__(self, year: int, player_id: int | None) -> None:
        self.year, self.player_id = year, player_id
        self.since, self.until = to_utc(datetime(year, 1, 1)), to_utc(datetime(year + 1, 1, 1))

    def match_rows(self, *columns) -> Select:
        """Columns of the year's match rows (the player's own, or everyone's)."""
        stat = PlayerMatchStat
        query = select(*columns).where(stat.played_at >= self.since, stat.played_at < self.until)
        if self.player_id is not None:
            query = query.where(stat.player_id == self.player_id)
        return query

    def of_year(self, query: Select, model) -> Select:
        """``query`` over ``model``'s rows of the year's matches (the player's rows). The
        matches are found first, by their time: a join on every row is slower."""
        ids = select(Match.id).where(Match.created_at >= self.since, Match.created_at < self.until)
        query = query.where(model.match_id.in_(ids))
        if self.player_id is not None:
            query = query.where(model.player_id == self.player_id)
        return query

    def beside(self) -> tuple[int | None, int | None]:
        """The nearest years before and after this one with a match (the player's), the
        only ones the page links to; None where there is none."""
        stat, player = PlayerMatchStat, self.player_id
        mine = () if player is None else (stat.player_id == player,)
        before = select(func.max(stat.played_at)).where(stat.played_at < self.since, *mine)
        after = select(func.min(stat.played_at)).where(stat.played_at >= self.until, *mine)
        moments = [db.session.scalar(query) for query in (before, after)]
        return tuple(local(moment).year if moment else None for moment in moments)

    def stamp(self) -> tuple:
        """What the year's review is made of: the match rows up to the year's end (the
        ratings before it too; rows are replaced, never updated, ids never reused) and
        the year's matches' versions (a correction that leaves every total as it was
        may still change a card)."""
        stat = PlayerMatchStat
        rows = select(func.count(stat.id), func.coalesce(func.max(stat.id), 0)).where(
            stat.played_at < self.until
        )
        versions = select(func.count(Match.id), func.coalesce(func.sum(Match.version), 0)).where(
            Match.created_at >= self.since, Match.created_at < self.until
        )
        connection = db.session.connection()
        return (*connection.execute(rows).one(), *connection.execute(versions).one())


def review_of(year: int, player_id: int | None) -> yearly.Review:
    """The year's review (for one player, or the household), from memory while nothing it
    is made of has changed."""
    asked, key = Year(year, player_id), (year, player_id)
    stamp = asked.stamp()
    kept = REVIEWS.get(key)
    if kept is None or kept[0] != stamp:
        # One maker per review: twenty phones asking at once wait for one computation
        # (on PostgreSQL, 0.3 s alone, 2.2 s each when every request made its own).
        kept = REVIEWS.alone(key, lambda: review_at(key, asked, stamp))
    return kept[1]


def review_at(key: tuple, year: Year, stamp: tuple) -> tuple:
    """The review kept for ``stamp``, made again unless the thread waited for did."""
    kept = REVIEWS.get(key)
    if kept is None or kept[0] != stamp:
        kept = REVIEWS.put(key, (stamp, make_review(year)))
    return kept


def make_review(year: Year) -> yearly.Review:
    """The review from the database's answers about the year."""
    matches = read_matches(year)
    return yearly.year_review(
        year.year,
        year.player_id,
        matches,
        read_wins(year),
        rating_changes(year),
        cleanest(year),
        worst_round(year),
        fives(year),
        read_nemesis(year),
        costliest(year),
    )


def luck_of(year: int, player_id: int | None) -> yearly.YearLuck:
    """The year's luckiest and unluckiest players (or one player's luck) and unluckiest
    play, over the complete card games of the matches created in it."""
    asked, held = Year(year, player_id), match_luck.kept()
    luck = luck_figures.luck_by_player(asked.since, asked.until, held=held)
    play = luck_figures.unluckiest(asked.since, asked.until, player_id, held)
    unlucky = None
    if play is not None:
        where = (play.match_id, play.game, play.round)
        unlucky = yearly.Unlucky(play.player_id, play.card, play.chance, play.bulls, *where)
    per_game = {player: (mine.per_game, mine.games) for player, mine in luck.items()}
    return yearly.year_luck(player_id, per_game, unlucky)


def luck_context(year: int, player_id: int | None) -> dict:
    """The year's luck for the page, with the unluckiest play's round to replay."""
    luck = luck_of(year, player_id)
    url = round_url(*luck.play[4:]) if luck.play else None
    return {"luck": luck, "unlucky_url": url, "luck_games": yearly.LUCK_GAMES}


def choices_of(year: int, player_id: int | None) -> yearly.YearChoices:
    """The year's best decision-maker (or one player's choices) and costliest play, over
    the reviewed games of the matches created in it."""
    asked, held = Year(year, player_id), choices.kept()
    by_player = choices.choices_by_player(asked.since, asked.until, held=held)
    decisions = {
        player: yearly.Decisions(mine.accuracy, mine.per_game, mine.games)
        for player, mine in by_player.items()
    }
    play = choices.costliest(asked.since, asked.until, player_id, held)
    return yearly.year_choices(player_id, decisions, play)


def choices_context(year: int, player_id: int | None) -> dict:
    """The year's choices for the page, with the costliest play's round to replay."""
    found = choices_of(year, player_id)
    url = round_url(*found.play[4:]) if found.play else None
    return {"choices": found, "costly_url": url, "review_games": yearly.REVIEW_GAMES}


def read_matches(year: Year) -> list[yearly.MatchIn]:
    """The year's matches: when (local time), minutes, over or not, finished games."""
    stat = PlayerMatchStat
    query = year.match_rows(stat.match_id, stat.played_at, stat.minutes, stat.finished, stat.games)
    rows = db.session.connection().execute(query.distinct().order_by(stat.played_at, stat.match_id))
    zone = get_timezone()  # asked once: Flask-Babel's lookup costs more than the conversion
    return [
        yearly.MatchIn(match_id, zone.fromutc(at.replace(tzinfo=zone)).replace(tzinfo=None), *rest)
        for match_id, at, *rest in rows
    ]


def read_wins(year: Year) -> list[tuple[int, int]]:
    """(match, winner) of the year's finished matches, shared wins once for each."""
    stat = PlayerMatchStat
    query = year.match_rows(stat.match_id, stat.player_id).where(stat.finished, stat.won)
    return [tuple(row) for row in db.session.connection().execute(query)]


def local(moment: datetime) -> datetime:
    """A stored UTC moment in the app's timezone, naive."""
    return to_user_timezone(moment).replace(tzinfo=None)


def cleanest(year: Year) -> yearly.Clean | None:
    """The finished game with the fewest bulls per player (the player's fewest), the
    earliest on a tie: each match keeps its own (``PlayerMatchStat``)."""
    stat = PlayerMatchStat
    if year.player_id is None:
        columns = (stat.match_id, stat.clean_game, stat.players, stat.clean_bulls)
        order = cast(stat.clean_bulls, Float) / stat.players
    else:
        columns = (stat.match_id, stat.best_game_number, literal(1), stat.best_game)
        order = stat.best_game
    query = year.match_rows(*columns).order_by(order, stat.played_at, *columns[:2])
    found = db.session.connection().execute(query.limit(1)).first()
    return yearly.Clean(*found) if found is not None else None


def worst_round(year: Year) -> yearly.Rounded | None:
    """The most bulls one player took in one round: the earliest such round (then the
    player with the lower id); each match keeps each player's first."""
    stat = PlayerMatchStat
    where = (stat.match_id, stat.worst_round_game, stat.worst_round_number)
    query = year.match_rows(stat.player_id, stat.worst_round, *where).where(stat.worst_round > 0)
    query = query.order_by(stat.worst_round.desc(), stat.played_at, *where, stat.player_id)
    found = db.session.connection().execute(query.limit(1)).first()
    return yearly.Rounded(*found) if found is not None else None


def fives(year: Year) -> dict[int, int]:
    """55s caught by each player who caught one."""
    stat = PlayerMatchStat
    query = year.match_rows(stat.player_id, func.sum(stat.fives)).where(stat.fives > 0)
    return dict(db.session.connection().execute(query.group_by(stat.player_id)).all())


def read_nemesis(year: Year) -> list[tuple[int, int, int]]:
    """Takes by (player, rival) over the year."""
    row = NemesisCount
    query = year.of_year(select(row.player_id, row.rival_id, func.sum(row.takes)), row)
    query = query.group_by(row.player_id, row.rival_id)
    return [tuple(values) for values in db.session.connection().execute(query)]


def costliest(year: Year) -> tuple[int, int] | None:
    """The card that took the most bulls (summed over who played it), the lower on a tie."""
    take = CardTake
    bulls = func.sum(take.bulls)
    query = year.of_year(select(take.card, bulls), take).group_by(take.card)
    found = db.session.connection().execute(query.order_by(bulls.desc(), take.card).limit(1))
    row = found.first()
    return tuple(row) if row is not None else None


def rating_changes(year: Year) -> dict[int, tuple[float, float]]:
    """Each player's Skill before the year and after it, for the players who
    played a rated match in it: their last stored ratings before its first moment and
    before the next year's (``MatchRating``, every match rated in order of play)."""
    players = (
        [year.player_id]
        if year.player_id is not None
        else db.session.scalars(select(Player.id).order_by(Player.id)).all()
    )
    changes = {}
    for player in players:
        after = last_rating(player, year.until)
        if after is None or after[0] < year.since:
            continue
        before = last_rating(player, year.since)
        changes[player] = (before[1] if before else START.skill, after[1])
    return changes


def last_rating(player_id: int, until: datetime) -> tuple[datetime, float] | None:
    """When a player's last rated match before ``until`` was played, and their Skill
    after it."""
    row = MatchRating
    query = (
        select(row.played_at, row.mu, row.sigma)
        .where(row.player_id == player_id, row.played_at < until)
        .order_by(row.played_at.desc(), row.match_id.desc())
        .limit(1)
    )
    found = db.session.connection().execute(query).first()
    if found is None:
        return None
    played_at, mu, sigma = found
    return played_at, Rating(mu, sigma).skill


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


def year_url(year: int) -> str:
    """The year's own address, with the query as it came: the query is not url_for's
    arguments, which would take ?year=, ?endpoint= or ?_scheme= as their own."""
    query = request.query_string.decode(errors="replace")
    return url_for("review.show", year=year) + (f"?{query}" if query else "")


@bp.get("/review/<year>")
def show(year: str):
    """A year at the table in figures and charts, for the household or one player."""
    number = rules.whole_number(year, FIRST_YEAR, LAST_YEAR)
    if number is None:
        abort(404)
    if year != str(number):  # one URL per year: /review/02026 and "2026 " lead to it
        return redirect(year_url(number), 301)
    year = number
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
        **luck_context(year, player_id),
        **choices_context(year, player_id),
        years_beside=Year(year, player_id).beside(),
    ), 422 if errors else 200
