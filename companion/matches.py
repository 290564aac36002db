"""Matches: start one with players and house rules, follow it, read its scoreboard."""

from __future__ import annotations

from flask import Blueprint, redirect, request, url_for
from flask_babel import gettext
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from companion import present, rules
from companion.chart import line_chart
from companion.db import db, read_first
from companion.htmx import render
from companion.links import access, grant, me
from companion.models import Match, Player, Seat
from companion.players import add_player, check_new_name
from companion.state import MatchState, current_state

bp = Blueprint("matches", __name__, url_prefix="/matches")

END_KINDS = (rules.MORE_THAN, rules.AT_LEAST, rules.GAMES)


def active_players() -> list[Player]:
    """Players who can be seated in a new match."""
    query = select(Player).where(Player.archived.is_(False)).order_by(Player.name)
    return list(db.session.scalars(query))


def recent_matches(limit: int = 20) -> list[Match]:
    """The newest matches first."""
    return list(db.session.scalars(select(Match).order_by(Match.id.desc()).limit(limit)))


def get_match(match_id: int) -> Match:
    """The match with this id, or 404."""
    return db.get_or_404(Match, match_id)


@bp.get("/new")
def new():
    """Show the form that starts a match."""
    form = {"end_kind": rules.MORE_THAN, "end_value": str(rules.DEFAULT_LIMIT), "deck": "standard"}
    return render(
        "matches/new.html",
        "content",
        players=active_players(),
        form=form,
        errors={},
        seat_count=rules.MAX_PLAYERS,
    )


@bp.post("/")
def create():
    """Start a match: seat the players in order and fix the house rules.

    The form is checked without the write lock; the match is then stored briefly (a
    name taken meanwhile trips the unique key and is reported).
    """
    read_first()
    seats, new_name, errors = read_seats(request.form)
    end, end_errors = read_end(request.form)
    errors.update(end_errors)
    pro = request.form.get("deck") == "pro"
    total = len(seats) + (1 if new_name else 0)
    if "seats" not in errors and not rules.MIN_PLAYERS <= total <= rules.MAX_PLAYERS:
        errors["seats"] = gettext("Seat 2 to 10 players.")
    if pro and total > rules.PRO_MAX_PLAYERS and "seats" not in errors:
        errors["deck"] = gettext("The pro variant is for 2 to 6 players.")
    if errors:
        return new_match_form(errors), 422
    db.session.rollback()  # the check is done: leave the read, then write briefly
    match = Match(end_kind=end.kind, end_value=end.value, pro=pro)
    players = [db.session.get(Player, player_id) for player_id in seats]
    if new_name:
        players.append(add_player(new_name))
    match.seats = [Seat(player=player, position=index) for index, player in enumerate(players, 1)]
    db.session.add(match)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        read_first()  # the form shown again only reads
        return new_match_form({"new_player": gettext("That name was just taken.")}), 422
    grant(match, match.player_token)  # the phone that starts a match holds its player link
    return redirect(url_for("matches.show", match_id=match.id), code=303)


def new_match_form(errors: dict[str, str]):
    """Render the new-match form again with the player's entries and the errors."""
    return render(
        "matches/new.html",
        "content",
        players=active_players(),
        form=request.form,
        errors=errors,
        seat_count=rules.MAX_PLAYERS,
    )


def read_seats(form) -> tuple[list[int], str | None, dict[str, str]]:
    """Return the seated player ids in order, a new player's name, and any errors."""
    errors: dict[str, str] = {}
    active = {player.id for player in active_players()}
    seats: list[int] = []
    for position in range(1, rules.MAX_PLAYERS + 1):
        value = form.get(f"seat_{position}", "").strip()
        if not value:
            continue
        if not value.isdigit() or int(value) not in active:
            errors[f"seat_{position}"] = gettext("Choose a player from the list.")
        elif int(value) in seats:
            errors[f"seat_{position}"] = gettext("This player already has a seat.")
        else:
            seats.append(int(value))
    new_name = None
    if form.get("new_player", "").strip():
        new_name, error = check_new_name(form.get("new_player"))
        if error:
            errors["new_player"] = error
    return seats, new_name, errors


def read_end(form) -> tuple[rules.EndCondition, dict[str, str]]:
    """Return the end condition from the form, or the errors."""
    kind = form.get("end_kind", rules.MORE_THAN)
    value = form.get("end_value", "").strip()
    if kind not in END_KINDS:
        return rules.EndCondition(), {"end_kind": gettext("Choose how the match ends.")}
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= 1000:
        return rules.EndCondition(), {"end_value": gettext("Enter a number from 1 to 1000.")}
    return rules.EndCondition(kind, int(value)), {}


@bp.get("/<int:match_id>")
def show(match_id: int):
    """The match at the table: the rows, the next thing to enter, the score."""
    state = current_state(match_id)
    return render("matches/show.html", "match", **board(state), form={}, errors={})


def board(state: MatchState, view: str = "match") -> dict:
    """What the match page shows: the current game's table, last steps, choice, score."""
    standing = state.standing
    current = state.current
    finished = state.finished_games
    last_round = current.last_round if current else None
    steps = present.step_views(last_round.steps, state.name) if last_round else []
    level, mine = access(state.match), me(state.match.id)
    return {
        "view": view,
        "match_id": state.match.id,
        "version": state.version,
        "level": level,
        "me": mine,
        "form_key": form_key(state, level, mine),
        "state": state,
        "standing": standing,
        "end_text": state.end.describe(gettext),
        "winner_names": ", ".join(state.name(player) for player in standing.winners),
        "current": current,
        # The round on screen: the one waiting for a row choice, else the next to enter.
        "round_number": current.rounds_played + (current.pending is None) if current else 0,
        "steps": steps,
        "steps_round": current.rounds_played if current else 0,
        "changed_rows": {step.row for step in steps},
        "choice": present.choice_view(current.pending, state.name)
        if current and current.pending
        else None,
        "seen": current.seen if current else set(),
        "last_game": finished[-1] if finished and not current else None,
    }


def form_key(state: MatchState, level: str | None, mine: int | None) -> str:
    """What decides this phone's entry forms: when it changes, polling replaces them."""
    return phone_form_key(
        table_key(state), level, mine, state.current.entered if state.current else {}
    )


def table_key(state: MatchState) -> str:
    """The part of the form key that is the same for every phone: game, round, choice."""
    current = state.current
    if current is None:
        return f"{len(state.games)}:{state.over}"
    return f"{current.number}:{current.rounds_played}:{current.pending is not None}"


def phone_form_key(table: str, level: str | None, mine: int | None, entered) -> str:
    """One phone's form key. Not the others' entries: a card being typed must survive
    them (a card typed for a player who got in meanwhile is refused with a message)."""
    return f"{table}:{level}:{mine}:{mine in entered}"


@bp.get("/<int:match_id>/grid")
def grid(match_id: int):
    """The card grid's buttons, cards seen in the open game disabled (loaded by htmx)."""
    state = current_state(match_id)
    seen = state.current.seen if state.current else set()
    return render("matches/grid.html", deck=state.deck, seen=seen)


@bp.get("/<int:match_id>/scoreboard")
def scoreboard(match_id: int):
    """Totals, every game's bulls, the leader, the distance to the limit and a chart."""
    state = current_state(match_id)
    context = board(state)
    return render(
        "matches/scoreboard.html",
        "scoreboard",
        **context,
        leader_names=", ".join(state.name(p) for p in context["standing"].leaders),
        chart=totals_chart(state),
    )


def totals_chart(state: MatchState):
    """The chart of each player's total after each complete game."""
    history = state.running_totals()
    series = [[totals[player_id] for totals in history] for player_id in state.player_ids]
    limit = None if state.end.kind == rules.GAMES else state.end.value
    return line_chart([player.name for player in state.players], series, limit)
