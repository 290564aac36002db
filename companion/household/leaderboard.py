"""The household leaderboard, a player's statistics page and head to head (GET only).

Filters are plain query parameters from forms that work without JavaScript; a value
the forms never send gets a message next to its field and status 422, and the page
shows the default in its place.
"""

from __future__ import annotations

from typing import NamedTuple

from flask import Blueprint, current_app, request, url_for
from flask_babel import format_date, gettext
from sqlalchemy import func, select

from companion import rules
from companion.db import db
from companion.household import player_page as player_stats
from companion.household import statistics as stats
from companion.household.players import get_player
from companion.models import Player
from companion.web.htmx import render

bp = Blueprint("leaderboard", __name__)

HISTORY_PAGE = 20
PLAYER_COUNTS = range(rules.MIN_PLAYERS, rules.MAX_PLAYERS + 1)


class Row(NamedTuple):
    """One line of the leaderboard: place (None without a rated match), player, figures."""

    place: int | None
    player: Player
    figures: stats.Figures


def everyone() -> list[Player]:
    """Every household player, archived too, by name."""
    return list(db.session.scalars(select(Player).order_by(func.lower(Player.name))))


def read_filters(args) -> tuple[stats.Filters, dict[str, str]]:
    """The leaderboard filters from the query string, and a message per bad value."""
    errors = {}
    period = args.get("period", "all")
    if period not in stats.PERIODS:
        errors["period"] = gettext("Choose this month, this year or all time.")
        period = "all"
    players = args.get("players", "")
    count = rules.whole_number(players, PLAYER_COUNTS.start, PLAYER_COUNTS.stop - 1)
    if players and count is None:
        errors["players"] = gettext("Choose any number of players, or 2 to 10.")
    return stats.Filters(period, count), errors


def ranked(players: list[Player], figures: dict[int, stats.Figures]) -> list[Row]:
    """Rated players by rating (equal ratings share a place), then everyone else by name."""

    def key(player: Player):
        rating = figures[player.id].rating if player.id in figures else None
        return (rating is None, -rating.ordinal if rating else 0)

    rows: list[Row] = []
    for player in sorted(players, key=key):
        figure = figures.get(player.id) or stats.Figures(player.id)
        place = None
        if figure.rating is not None:
            ahead = rows[-1] if rows else None
            same = ahead and ahead.figures.rating.ordinal == figure.rating.ordinal
            place = ahead.place if same else len(rows) + 1
        rows.append(Row(place, player, figure))
    return rows


@bp.get("/leaderboard")
def index():
    """All household players ranked by skill, with their matches, wins and bulls."""
    filters, errors = read_filters(request.args)
    rows = ranked(everyone(), stats.board(filters).figures)
    form = {"period": filters.period, "players": str(filters.players or "")}
    return render(
        "leaderboard/index.html", "board", rows=rows, form=form, errors=errors, counts=PLAYER_COUNTS
    ), 422 if errors else 200


def read_page(args, pages: int) -> tuple[int, dict[str, str]]:
    """The history page asked for, and a message if there is no such page."""
    value = args.get("page", "1")
    page = rules.whole_number(value, 1, pages)
    if page is not None:
        return page, {}
    return 1, {
        "page": gettext(
            "There is no page “%(page)s”: pages go from 1 to %(pages)d.",
            page=value[:12],
            pages=pages,
        )
    }


@bp.get("/players/<id:player_id>/stats")
def player(player_id: int):
    """One player's figures, card-by-card figures, nemesis, rating chart and history."""
    player = get_player(player_id)
    pages = player_stats.history_pages(player.id, HISTORY_PAGE)
    page, errors = read_page(request.args, pages)
    board = stats.board()
    return render(
        "leaderboard/player.html",
        "history",
        player=player,
        errors=errors,
        **player_context(player, board),
        page=page,
        pages=pages,
        history=player_stats.history(player.id, page, HISTORY_PAGE),
    ), 422 if errors else 200


def player_context(player: Player, board: stats.Board) -> dict:
    """What the player page shows besides the history."""
    points = player_stats.rating_points(board.run, player.id)
    cards = player_stats.card_figures(player.id)
    return {
        "figures": board.figures.get(player.id) or stats.Figures(player.id),
        "cards": cards,
        "worst_url": round_url(*cards.worst_at) if cards.worst_at else None,
        "nemesis": nemesis(player.id),
        "points": points,
        "chart": player_stats.rating_chart(player.name, points, format_date) if points else None,
    }


def round_url(match_id: int, game: int, round_number: int) -> str:
    """Where to see one round again: its replay, or the match's scoreboard without one."""
    if "replay.show" in current_app.view_functions:  # companion.household.replay (match history)
        return url_for("replay.show", match_id=match_id, number=game, round=round_number)
    return url_for("play.scoreboard", match_id=match_id)


class Nemesis(NamedTuple):
    """The player's nemesis (several when tied), their count, and the next in line."""

    names: list[str]
    takes: int
    runners: list[tuple[str, int]]


def nemesis(player_id: int) -> Nemesis | None:
    """Who most often filled the rows this player took (see companion.derived)."""
    rivals = player_stats.nemeses(player_id)
    if not rivals:
        return None
    names = dict(db.session.execute(select(Player.id, Player.name)).all())
    top = rivals[0][1]
    return Nemesis(
        [names[rival] for rival, takes in rivals if takes == top],
        top,
        [(names[rival], takes) for rival, takes in rivals if takes < top][:3],
    )


def read_pair(args, players: list[Player]) -> tuple[list[int | None], dict[str, str]]:
    """The two players to compare, and a message per bad choice."""
    known = {str(player.id): player.id for player in players}
    chosen, errors = [], {}
    for field in ("first", "second"):
        value = args.get(field, "")
        chosen.append(known.get(value))
        if value and value not in known:
            errors[field] = gettext("Choose a player from the list.")
    if chosen[0] is not None and chosen[0] == chosen[1]:
        errors["second"] = gettext("Choose two different players.")
    return chosen, errors


@bp.get("/leaderboard/head-to-head")
def head_to_head():
    """Two players compared: matches together, who finished ahead, bulls per game."""
    players = everyone()
    (first, second), errors = read_pair(request.args, players)
    duel = None
    if first is not None and second is not None and not errors:
        duel = stats.head_to_head(first, second)
    names = {player.id: player.name for player in players}
    return render(
        "leaderboard/head_to_head.html",
        "duel",
        players=players,
        names=names,
        first=first,
        second=second,
        duel=duel,
        errors=errors,
        form=request.args,
    ), 422 if errors else 200
