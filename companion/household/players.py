"""Household players: add once, rename, archive; reused in every match."""

from __future__ import annotations

from flask import Blueprint, abort, redirect, request, url_for
from flask_babel import gettext
from sqlalchemy import exists, func, select

from companion.db import db
from companion.models import Player, Seat
from companion.store import Full, add_player, archive_player, delete_player, rename_player
from companion.web.htmx import render
from companion.web.names import check_new_name
from companion.web.present import players_full

bp = Blueprint("players", __name__, url_prefix="/players")


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
    name, error = check_new_name(request.form.get("name"))
    try:
        if error is None and not add_player(name):
            error = gettext("There is already a player called %(name)s.", name=name)
    except Full:
        error = players_full()
    if error:
        return render(
            "players/index.html",
            "content",
            players=all_players(),
            form=request.form,
            errors={"name": error},
        ), 422
    return redirect(url_for("players.index"), code=303)


@bp.get("/<id:player_id>")
def edit(player_id: int):
    """Show a player with forms to rename, archive or delete them."""
    player = get_player(player_id)
    return render(
        "players/edit.html", "content", player=player, played=has_played(player), form={}, errors={}
    )


@bp.post("/<id:player_id>/name")
def rename(player_id: int):
    """Rename a player; their history stays theirs (checked before the write lock).

    The new name shows on every match they sit in at once: the rename raises those
    matches' versions (``store.rename_player``), as any entry would.
    """
    player = get_player(player_id)
    name, error = check_new_name(request.form.get("name"), except_id=player.id)
    if error is None:
        if rename_player(player_id, name):
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


@bp.post("/<id:player_id>/archive")
def archive(player_id: int):
    """Archive or restore a player: archived players are not offered for new matches."""
    get_player(player_id)
    archived = request.form.get("archived") == "1"
    archive_player(player_id, archived)
    return redirect(url_for("players.index"), code=303)


@bp.post("/<id:player_id>/delete")
def delete(player_id: int):
    """Delete a player who never played; one with history can only be archived."""
    if has_played(get_player(player_id)):
        abort(409)
    if not delete_player(player_id):
        abort(404)
    return redirect(url_for("players.index"), code=303)
