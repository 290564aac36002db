"""Undo: find the last thing entered into a match and take it back, nothing else."""

from __future__ import annotations

from typing import Any, NamedTuple

from flask import redirect, request, url_for
from flask_babel import gettext, ngettext

from companion.db import db, read_first
from companion.play.blueprint import bp
from companion.play.entry import race_message, show_with_errors
from companion.state import MatchState, get_match, match_state
from companion.store import RACED, save
from companion.web.access import require_player
from companion.web.htmx import render


class LastInput(NamedTuple):
    """The most recent entry of a match: what it is, in words, and its row."""

    key: str  # names this exact entry, so a second tap cannot undo one more
    text: str
    entry: Any


def last_input(state: MatchState) -> LastInput | None:
    """Return the newest entry: a row choice, a round, a game's start or typed scores."""
    if not state.games:
        return None
    game = state.games[-1]
    number = game.number
    if game.game.mode == "scores":
        return LastInput(
            f"game:{game.game.id}",
            gettext("the typed scores of game %(game)d", game=number),
            game.game,
        )
    if game.entered:
        return LastInput(
            f"entered:{game.game.id}:{len(game.entered)}",
            ngettext(
                "the %(num)d card entered so far for round %(round)d",
                "the %(num)d cards entered so far for round %(round)d",
                len(game.entered),
                round=game.rounds_played + 1,
            ),
            game.game.pending_cards,
        )
    if not game.game.rounds:
        cards = ", ".join(str(card) for card in game.game.starting)
        return LastInput(
            f"game:{game.game.id}",
            gettext(
                "the start of game %(game)d (starting cards %(cards)s)", game=number, cards=cards
            ),
            game.game,
        )
    round_ = game.game.rounds[-1]
    if round_.choices:
        choice = round_.choices[-1]
        return LastInput(
            f"choice:{choice.id}",
            gettext(
                "%(player)s's choice of row %(row)d in round %(round)d",
                player=state.name(choice.player_id),
                row=choice.row,
                round=round_.number,
            ),
            choice,
        )
    cards = ", ".join(
        f"{state.name(play.player_id)} {play.card}"
        for play in sorted(round_.plays, key=lambda play: play.card)
    )
    return LastInput(
        f"round:{round_.id}",
        gettext(
            "round %(round)d of game %(game)d (%(cards)s)",
            round=round_.number,
            game=number,
            cards=cards,
        ),
        round_,
    )


def undo_input(state: MatchState, last: LastInput) -> None:
    """Delete the entry in the session (the caller commits)."""
    entries = last.entry if isinstance(last.entry, list) else [last.entry]
    for entry in entries:
        db.session.delete(entry)


@bp.get("/matches/<int:match_id>/undo")
def confirm_undo(match_id: int):
    """Ask before undoing the last thing entered (works without JavaScript)."""
    state = match_state(get_match(match_id))
    return render("matches/undo.html", "undo", state=state, last=last_input(state))


@bp.post("/matches/<int:match_id>/undo")
def undo(match_id: int):
    """Undo the last thing entered, if it is still the one the player confirmed."""
    read_first()  # a phone without the player link is refused without the write lock
    require_player(get_match(match_id))
    db.session.rollback()
    state = match_state(get_match(match_id))
    require_player(state.match)
    last = last_input(state)
    if last is None or request.form.get("expect") != last.key:
        return render("matches/undo.html", "undo", state=state, last=last, stale=True), 409
    undo_input(state, last)
    if save(state) == RACED:
        return show_with_errors(match_id, {"form": race_message()})
    return redirect(url_for("play.show", match_id=match_id), 303)
