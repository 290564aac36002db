"""Undo: find the last thing entered into a match and take it back, nothing else; or
take the last game back to just after one of its rounds in one step ("undo to here")."""

from __future__ import annotations

from typing import NamedTuple

from flask import abort, redirect, request, session, url_for
from flask_babel import gettext, ngettext
from sqlalchemy import Row, delete, func, select

from companion.db import db
from companion.models import Game, PendingCard, Play, Round, RowChoice
from companion.play.entry import race_message, show_with_errors
from companion.state import MatchState, PlayedGame, current_state
from companion.store import RACED, Change, write_match
from companion.web.access import require_player
from companion.web.htmx import render

UNDONE = "undone"  # session key: an undone round's cards, for this phone's fields


class LastInput(NamedTuple):
    """The most recent entry of a match: what it is, in words, and how to take it back."""

    key: str  # names this exact entry, so a second tap cannot undo one more
    text: str
    change: Change  # deletes it (the rows below it go with it: ON DELETE CASCADE)
    cards: dict[int, int] | None = None  # a placed round's cards (never hidden ones)


class StaleUndo(Exception):
    """The entry the player confirmed is no longer the last one (a double tap, a phone)."""

    def __init__(self, state: MatchState, last: LastInput | None):
        super().__init__(last.key if last else None)
        self.state = state
        self.last = last


def last_input(state: MatchState) -> LastInput | None:
    """Return the newest entry: a row choice, a round, hidden cards, a game's start or
    typed scores. Reads the replayed match and, for the ids to delete, a few rows."""
    if not state.games:
        return None
    game = state.games[-1]
    if game.game.mode == "scores":
        return typed_scores(game)
    if game.entered:
        return hidden_cards(game)
    stored = newest_round(game.game.id)
    if stored is None:
        return game_start(game)
    round_id, round_number = stored
    choice = newest_choice(state, round_id, round_number)
    if choice is not None:
        return choice
    return placed_round(state, game, round_id, round_number)


def typed_scores(game: PlayedGame) -> LastInput:
    """A score-only game's typed scores, as the entry that undo deletes."""
    text = gettext("the typed scores of game %(game)d", game=game.number)
    return LastInput(f"game:{game.game.id}", text, deleting(Game, game.game.id))


def hidden_cards(game: PlayedGame) -> LastInput:
    """The cards entered so far for the coming round (still hidden), as one entry."""
    count = len(game.entered)
    text = ngettext(
        "the %(num)d card entered so far for round %(round)d",
        "the %(num)d cards entered so far for round %(round)d",
        count,
        round=game.rounds_played + 1,
    )
    change = Change(deletes=[delete(PendingCard).where(PendingCard.game_id == game.game.id)])
    return LastInput(f"entered:{game.game.id}:{count}", text, change)


def newest_round(game_id: int) -> Row | None:
    """The id and number of a game's newest stored round, if it has one.

    Not the replay's last round: a game waiting for a choice a correction asked for has
    rounds stored after the one it waits at.
    """
    return db.session.execute(
        select(Round.id, Round.number)
        .where(Round.game_id == game_id)
        .order_by(Round.number.desc())
        .limit(1)
    ).first()


def game_start(game: PlayedGame) -> LastInput:
    """A game with no round yet: its start (the starting cards), as the entry."""
    cards = ", ".join(str(card) for card in game.game.starting)
    text = gettext(
        "the start of game %(game)d (starting cards %(cards)s)", game=game.number, cards=cards
    )
    return LastInput(f"game:{game.game.id}", text, deleting(Game, game.game.id))


def newest_choice(state: MatchState, round_id: int, round_number: int) -> LastInput | None:
    """The newest row choice stored for a round, as the entry, if it has one."""
    choice = db.session.execute(
        select(RowChoice.id, RowChoice.player_id, RowChoice.row)
        .where(RowChoice.round_id == round_id)
        .order_by(RowChoice.id.desc())
        .limit(1)
    ).first()
    if choice is None:
        return None
    text = gettext(
        "%(player)s's choice of row %(row)d in round %(round)d",
        player=state.name(choice.player_id),
        row=choice.row,
        round=round_number,
    )
    return LastInput(f"choice:{choice.id}", text, deleting(RowChoice, choice.id))


def placed_round(
    state: MatchState, game: PlayedGame, round_id: int, round_number: int
) -> LastInput:
    """A stored round with no row choice: its cards, as the entry (they go back to the
    fields of the phone that undoes it)."""
    plays = db.session.execute(
        select(Play.player_id, Play.card).where(Play.round_id == round_id).order_by(Play.card)
    ).all()
    cards = ", ".join(f"{state.name(player_id)} {card}" for player_id, card in plays)
    text = gettext(
        "round %(round)d of game %(game)d (%(cards)s)",
        round=round_number,
        game=game.number,
        cards=cards,
    )
    return LastInput(f"round:{round_id}", text, deleting(Round, round_id), dict(plays))


def deleting(model, row_id: int) -> Change:
    """The change that deletes one row (and, by the database's cascade, what hangs on it);
    the game it touches may reopen or finish, so results are refreshed."""
    return Change(deletes=[delete(model).where(model.id == row_id)], results=True)


def confirm_undo(match_id: int):
    """Ask before undoing the last thing entered (works without JavaScript)."""
    state = current_state(match_id)
    return render("matches/undo.html", "undo", state=state, last=last_input(state))


def undo(match_id: int):
    """Undo the last thing entered, if it is still the one the player confirmed."""

    undone: list = []  # what was undone, and the game and round it was in

    def check(state: MatchState) -> Change:
        require_player(state.match)
        last = last_input(state)
        if last is None or request.form.get("expect") != last.key:
            raise StaleUndo(state, last)
        game = state.games[-1]  # the one last_input takes from
        undone[:] = [last, game.number, game.rounds_played]
        return last.change

    try:
        stored = write_match(match_id, check)
    except StaleUndo as stale:
        page = render("matches/undo.html", "undo", state=stale.state, last=stale.last, stale=True)
        return page, 409
    if stored == RACED:
        return show_with_errors(match_id, {"form": race_message()})
    if undone and undone[0].cards:
        give_back(match_id, *undone[1:], undone[0].cards)
    return redirect(url_for("play.show", match_id=match_id), 303)


def give_back(match_id: int, game: int, number: int, cards: dict[int, int]) -> None:
    """Keep an undone round's cards for this phone's next match page, which puts them back
    into the fields (``typed_back``): the phone that undid a round fixes a card, it does
    not type them all again. Only a placed round's cards: every phone has seen them."""
    by_player = {str(pid): card for pid, card in cards.items()}
    session[UNDONE] = {"match": match_id, "game": game, "round": number, "cards": by_player}


def typed_back(state: MatchState) -> dict[str, str]:
    """The entry form's values: an undone round's cards, once, on the phone that undid it
    (while the match still asks for that round), else nothing."""
    undone = session.get(UNDONE)
    if not isinstance(undone, dict) or undone.get("match") != state.match.id:
        return {}
    session.pop(UNDONE)
    current = state.current
    if current is None or current.entered:
        return {}
    if (current.number, current.rounds_played + 1) != (undone.get("game"), undone.get("round")):
        return {}
    return {f"card-{pid}": str(card) for pid, card in undone["cards"].items()}


class Later(NamedTuple):
    """What "undo to here" takes back: the entries after a round, and how to."""

    count: int  # entries, as Undo counts them: a round, a row choice, the hidden cards
    change: Change


def entries_after(state: MatchState, game_number: int, number: int) -> Later:
    """The entries of the match's last game after its round ``number`` (404 otherwise)."""
    if not state.games or state.games[-1].number != game_number:
        abort(404)
    game = state.games[-1]
    if game.game.mode != "cards":
        abort(404)
    game_id = game.game.id
    rounds = db.session.execute(
        select(Round.id, Round.number).where(Round.game_id == game_id)
    ).all()
    if not 1 <= number <= len(rounds):
        abort(404)
    later = [round_id for round_id, other in rounds if other > number]
    choices = db.session.scalar(
        select(func.count(RowChoice.id)).where(RowChoice.round_id.in_(later))
    )
    count = len(later) + choices + bool(game.entered)
    deletes = [
        delete(PendingCard).where(PendingCard.game_id == game_id),
        delete(Round).where(Round.id.in_(later)),
    ]
    return Later(count, Change(deletes=deletes, results=True))


def confirm_undo_to(match_id: int, game: int, number: int):
    """Ask before taking the game back to just after a round, saying how many entries go."""
    state = current_state(match_id)
    later = entries_after(state, game, number)
    return render_undo_to(state, game, number, later.count)


def render_undo_to(state: MatchState, game: int, number: int, count: int, stale=False):
    """The "undo to here" confirmation."""
    return render(
        "matches/undo_to.html",
        "undo",
        state=state,
        game_number=game,
        number=number,
        count=count,
        stale=stale,
    )


def undo_to(match_id: int, game: int, number: int):
    """Take the game back to just after the round, if the match is as confirmed."""

    def check(state: MatchState) -> Change:
        require_player(state.match)
        later = entries_after(state, game, number)
        if request.form.get("version") != str(state.version) or not later.count:
            raise StaleUndo(state, None)
        return later.change

    try:
        stored = write_match(match_id, check)
    except StaleUndo as stale:
        count = entries_after(stale.state, game, number).count
        return render_undo_to(stale.state, game, number, count, stale=True), 409
    if stored == RACED:
        return show_with_errors(match_id, {"form": race_message()})
    return redirect(url_for("play.show", match_id=match_id), 303)
