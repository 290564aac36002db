"""Household players: add once, rename, archive; reused in every match."""

from __future__ import annotations

from flask import Blueprint, abort, redirect, request, url_for
from flask_babel import gettext
from sqlalchemy import exists, func, select, update
from sqlalchemy.exc import IntegrityError

from companion.db import db, read_first
from companion.models import Match, Player, Seat
from companion.rules import RuleError
from companion.rules.names import name_key, player_name
from companion.web.htmx import render

bp = Blueprint("players", __name__, url_prefix="/players")


def clean_name(raw: str | None) -> tuple[str, str | None]:
    """Return the tidied name and an error message, if the name is not acceptable."""
    try:
        return player_name(raw or ""), None
    except RuleError as error:
        return " ".join((raw or "").split()), error.message(gettext)


def name_taken(name: str, except_id: int | None = None) -> bool:
    """True when another player already has this name (in any case)."""
    query = select(Player.id).where(Player.name_key == name_key(name))
    if except_id is not None:
        query = query.where(Player.id != except_id)
    return db.session.scalar(query) is not None


def check_new_name(raw: str | None, except_id: int | None = None) -> tuple[str, str | None]:
    """Return a usable, unused name and an error message if it is not."""
    name, error = clean_name(raw)
    if error is None and name_taken(name, except_id):
        error = gettext("There is already a player called %(name)s.", name=name)
    return name, error


def add_player(name: str) -> Player:
    """Add a player to the session (the caller commits)."""
    player = Player(name=name, name_key=name_key(name))
    db.session.add(player)
    return player


def has_played(player: Player) -> bool:
    """True once the player sat in any match."""
    return bool(db.session.scalar(select(exists().where(Seat.player_id == player.id))))


def all_players() -> list[Player]:
    """Every player, active first, by name."""
    query = select(Player).order_by(Player.archived, func.lower(Player.name))
    return list(db.session.scalars(query))


def get_player(player_id: int) -> Player:
    """The player with this id, or 404."""
    return db.get_or_404(Player, player_id)


@bp.get("/")
def index():
    """List the household's players with a form to add one."""
    return render("players/index.html", "content", players=all_players(), form={}, errors={})


@bp.post("/")
def create():
    """Add a player: checked first without the write lock, then stored briefly."""
    read_first()
    name, error = check_new_name(request.form.get("name"))
    if error:
        return render(
            "players/index.html",
            "content",
            players=all_players(),
            form=request.form,
            errors={"name": error},
        ), 422
    db.session.rollback()  # the check is done: leave the read, then write briefly
    add_player(name)
    if not commit_or_rollback():
        return render(
            "players/index.html",
            "content",
            players=all_players(),
            form=request.form,
            errors={"name": gettext("There is already a player called %(name)s.", name=name)},
        ), 422
    return redirect(url_for("players.index"), code=303)


@bp.get("/<int:player_id>")
def edit(player_id: int):
    """Show a player with forms to rename, archive or delete them."""
    player = get_player(player_id)
    return render(
        "players/edit.html", "content", player=player, played=has_played(player), form={}, errors={}
    )


@bp.post("/<int:player_id>/name")
def rename(player_id: int):
    """Rename a player; their history stays theirs (checked before the write lock)."""
    read_first()
    player = get_player(player_id)
    name, error = check_new_name(request.form.get("name"), except_id=player.id)
    if error is None:
        db.session.rollback()  # the check is done: leave the read, then write briefly
        player = get_player(player_id)
        player.name, player.name_key = name, name_key(name)
        show_on_their_matches(player.id)
        if commit_or_rollback():
            return redirect(url_for("players.index"), code=303)
        error = gettext("There is already a player called %(name)s.", name=name)
    return render(
        "players/edit.html",
        "content",
        player=get_player(player_id),
        played=has_played(player),
        form=request.form,
        errors={"name": error},
    ), 422


def show_on_their_matches(player_id: int) -> None:
    """Raise the version of every match the player sits in (in the caller's transaction).

    Match pages are replayed and rendered once per version and kept (companion.state,
    companion.play.live); a new version makes every page and every phone's live poll show
    the new name at once, as any entry would.
    """
    seated = select(Seat.match_id).where(Seat.player_id == player_id)
    db.session.execute(
        update(Match)
        .where(Match.id.in_(seated))
        .values(version=Match.version + 1, table_version=Match.table_version + 1)
    )


@bp.post("/<int:player_id>/archive")
def archive(player_id: int):
    """Archive or restore a player: archived players are not offered for new matches."""
    player = get_player(player_id)
    player.archived = request.form.get("archived") == "1"
    db.session.commit()
    return redirect(url_for("players.index"), code=303)


@bp.post("/<int:player_id>/delete")
def delete(player_id: int):
    """Delete a player who never played; one with history can only be archived."""
    player = get_player(player_id)
    if has_played(player):
        abort(409)
    db.session.delete(player)
    db.session.commit()
    return redirect(url_for("players.index"), code=303)


def commit_or_rollback() -> bool:
    """Commit; on a constraint violation (a race with another phone) roll back."""
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        read_first()  # the form shown again only reads
        return False
    return True
