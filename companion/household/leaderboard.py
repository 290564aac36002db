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
# The leaderboard's orders: a player's value, smallest first (None: no place by it yet).
# Skill goes by the skill a player surely has, so one lucky match does not top the list.
ORDERS = {
    "skill": lambda figures: -figures.rating.ordinal if figures.rating else None,
    "wins": lambda figures: -figures.won if figures.matches else None,
    "bulls": lambda figures: figures.average,
}
DEFAULT_ORDER = "skill"


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


def read_order(args) -> tuple[str, dict[str, str]]:
    """The leaderboard's order from the query string, and a message if there is no such."""
    order = args.get("order", DEFAULT_ORDER)
    if order in ORDERS:
        return order, {}
    return DEFAULT_ORDER, {"order": gettext("Choose the order: skill, wins or bulls per game.")}


def ranked(
    players: list[Player], figures: dict[int, stats.Figures], order: str = DEFAULT_ORDER
) -> list[Row]:
    """Players by ``order`` (equal values share a place), then by skill, then by name
    (``players``' order); who has no value for it yet comes last, without a place."""
    value, skill = ORDERS[order], ORDERS[DEFAULT_ORDER]

    def key(pair: tuple[Player, stats.Figures]) -> tuple:
        mine, sure = value(pair[1]), skill(pair[1])
        return (mine is None, mine or 0, sure is None, sure or 0)

    found = [(player, figures.get(player.id) or stats.Figures(player.id)) for player in players]
    rows: list[Row] = []
    for player, figure in sorted(found, key=key):  # a stable sort: the rest by name
        place = None
        if (mine := value(figure)) is not None:
            same = rows and value(rows[-1].figures) == mine
            place = rows[-1].place if same else len(rows) + 1
        rows.append(Row(place, player, figure))
    return rows


def order_urls(filters: stats.Filters) -> dict[str, str]:
    """Each order's plain link, keeping the filters (defaults left out of the URL)."""
    kept = {"period": None if filters.period == "all" else filters.period}
    kept["players"] = filters.players
    return {
        order: url_for("leaderboard.index", **kept, order=None if order == DEFAULT_ORDER else order)
        for order in ORDERS
    }


@bp.get("/leaderboard")
def index():
    """All household players ranked by skill, wins or bulls, with their matches, wins,
    bulls, luck and choices."""
    filters, errors = read_filters(request.args)
    order, wrong_order = read_order(request.args)
    errors |= wrong_order
    rows = ranked(everyone(), stats.board(filters).figures, order)
    form = {"period": filters.period, "players": str(filters.players or "")}
    form["order"] = "" if order == DEFAULT_ORDER else order  # the filters keep the order
    return render(
        "leaderboard/index.html",
        "board",
        rows=rows,
        luck=stats.luck(filters),
        choices=stats.choices(filters),
        form=form,
        errors=errors,
        counts=PLAYER_COUNTS,
        order=order,
        order_urls=order_urls(filters),
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
    """One player's figures, card-by-card figures, luck and choices, nemesis, rating
    chart and history."""
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
        "luck": stats.luck().get(player.id),
        "choices": stats.choices().get(player.id),
        "cards": cards,
        "worst_url": round_url(*cards.worst_at) if cards.worst_at else None,
        "nemesis": nemesis(player.id),
        "points": points,
        # One point draws no line, only an empty frame: the page says so in words.
        "chart": player_stats.rating_chart(player.name, points, format_date)
        if len(points) > 1
        else None,
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
