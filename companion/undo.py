"""Undo: find the last thing entered into a match and take it back, nothing else."""

from __future__ import annotations

from typing import Any, NamedTuple

from flask_babel import gettext, ngettext

from companion.db import db
from companion.state import MatchState


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
