"""Correct a past round: its cards and row choices as a form, checked like a new round,
shown with what it changes, then stored with what it replaced, the game replayed.

One URL per round: GET shows the form filled in; POST checks it and shows what would
change (the confirmation, with the values in hidden fields), and POST with ``confirm``
stores it through the one write path and answers 303 to the match page.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from flask import abort, redirect, request, url_for
from flask_babel import gettext
from sqlalchemy import delete, select

from companion import rules
from companion.db import db
from companion.models import Play, Round, RowChoice
from companion.play.correction_diff import Changes, describe, record
from companion.play.entry import Rejected, race_message, translate
from companion.state import MatchState, PlayedGame, current_state, stored_rounds
from companion.store import RACED, Change, write_match
from companion.web.access import PLAYER, access, require_player
from companion.web.htmx import render
from companion.web.present import field_for


class Plan(NamedTuple):
    """A checked correction: the change to store and what it changes."""

    change: Change
    changes: Changes


class Stale(Rejected):
    """A correction sent from a form older than the match (another phone wrote first)."""


class Review(Exception):
    """A checked correction not confirmed yet: show what it would change."""

    def __init__(self, state: MatchState, plan: Plan):
        super().__init__()
        self.state, self.plan = state, plan


def game_of(state: MatchState, number: int) -> PlayedGame:
    """The match's cards game with this number, or 404."""
    if not 1 <= number <= len(state.games) or state.games[number - 1].game.mode != "cards":
        abort(404)
    return state.games[number - 1]


def values_of(state: MatchState, game: PlayedGame, number: int) -> dict[str, str]:
    """The round's stored cards and choices as the form's values."""
    rounds = stored_rounds(game.game.id)
    if not 1 <= number <= len(rounds):
        abort(404)
    plays, choices = rounds[number - 1]
    values = {f"card-{player}": str(card) for player, card in plays}
    values.update({f"row-{player}": str(row) for player, row in choices.items()})
    return values


def correct_form(match_id: int, game: int, number: int):
    """The round's cards and row choices as a form, filled in (player link only)."""
    state = current_state(match_id)
    if access(state.match) != PLAYER:
        abort(403)
    played = game_of(state, game)
    values = {**values_of(state, played, number), "version": inputs_stamp(played)}
    try:  # said at once, not after the cards are typed
        refuse_while_hidden(state, played)
    except Rejected as rejected:
        return show_form(state, game, number, values, rejected.errors)
    return show_form(state, game, number, values, {})


def show_form(state: MatchState, game: int, number: int, form, errors, status: int = 200):
    """The correction form with these values and messages."""
    page = render(
        "matches/correct.html",
        "correct",
        state=state,
        game_number=game,
        number=number,
        form=form,
        errors=errors,
    )
    return page, status


def correct(match_id: int, game: int, number: int):
    """Check a correction; show what it changes, or store it once confirmed."""
    form = request.form
    confirmed = "confirm" in form and "edit" not in form

    def check(state: MatchState) -> Change:
        require_player(state.match)
        plan = plan_correction(state, game, number, form)
        if not confirmed:
            raise Review(state, plan)
        return plan.change

    try:
        stored = write_match(match_id, check)
    except Stale as stale:  # the round as it is now, to check and send again
        state = current_state(match_id)
        fresh_game = game_of(state, game)
        fresh = {**values_of(state, fresh_game, number), "version": inputs_stamp(fresh_game)}
        return show_form(state, game, number, fresh, stale.errors, 422)
    except Rejected as rejected:
        return show_form(current_state(match_id), game, number, form, rejected.errors, 422)
    except Review as review:
        return show_review(review, game, number, form)
    if stored == RACED:
        return show_form(current_state(match_id), game, number, form, {"form": race_message()}, 422)
    # At the notice of what changed: a page with a fragment skips its autofocus, which
    # would scroll to the next round's fields, above the notice's lines.
    return redirect(url_for("play.show", match_id=match_id, _anchor="corrected"), 303)


def show_review(review: Review, game: int, number: int, form):
    """What a checked correction would change, to confirm; or the form again to edit."""
    if "edit" in form:
        return show_form(review.state, game, number, form, {})
    return render(
        "matches/correct_confirm.html",
        "correct",
        state=review.state,
        game_number=game,
        number=number,
        form=form,
        changes=review.plan.changes,
    )


def inputs_stamp(game: PlayedGame) -> str:
    """What a correction form was filled from: a digest of its game's stored rounds (cards
    and row choices). Not the match's version, which derived data raises too (each
    round's luck, a game's review, seconds after): a correction being typed then was
    refused as if another phone had changed the round."""
    stored = [
        (sorted(plays), sorted(choices.items())) for plays, choices in stored_rounds(game.game.id)
    ]
    rounds = repr((tuple(game.game.starting), stored))
    return hashlib.sha256(rounds.encode()).hexdigest()[:16]


def plan_correction(state: MatchState, number: int, round_number: int, form) -> Plan:
    """Check a correction of round ``round_number`` of game ``number`` against the match."""
    if form.get("version") != inputs_stamp(game_of(state, number)):
        raise Stale(
            {
                "form": gettext(
                    "The match changed since this form was shown (another phone?). "
                    "Here is the round as it is now; check and send again."
                )
            }
        )
    game = game_of(state, number)
    rounds = stored_rounds(game.game.id)
    if not 1 <= round_number <= len(rounds):
        abort(404)
    refuse_while_hidden(state, game)
    ids = state.player_ids
    before = rules.replay_game(game.game.starting, rounds, ids)
    if round_number > len(before.rounds):
        waiting = before.pending
        raise Rejected(
            {
                "form": gettext(
                    "First %(player)s chooses a row for %(card)d.",
                    player=state.name(waiting.player),
                    card=waiting.card,
                )
            }
        )
    plays, choices, own_dropped = read_round(state, game, before, rounds, round_number, form)
    new = [*rounds[: round_number - 1], (plays, choices), *rounds[round_number:]]
    if (
        sorted(plays) == sorted(rounds[round_number - 1][0])
        and choices == rounds[round_number - 1][1]
    ):
        raise Rejected({"form": gettext("Nothing was changed.")})
    after = rules.settle(game.game.starting, new, ids)
    check_match(state, game, after.game)
    changes = describe(
        state, number, round_number, (rounds, before), after, stored=False, also=own_dropped
    )
    return Plan(change_for(state, game, round_number, rounds, after), changes)


def refuse_while_hidden(state: MatchState, game: PlayedGame) -> None:
    """Refuse a correction of a game whose coming round has hidden cards in, before any
    card is looked at: a check against them ("already entered by another player") would
    tell, card by card, which cards the others hold. Once all are in, they are placed."""
    if game is state.current and game.entered:
        raise Rejected(
            {
                "form": gettext(
                    "The next round's cards are being entered (%(entered)d of %(players)d in). "
                    "Correct this round once they are all in, or undo them first.",
                    entered=len(game.entered),
                    players=len(state.player_ids),
                )
            }
        )


def read_round(state: MatchState, game: PlayedGame, before, rounds, number: int, form):
    """The form's cards and choices for round ``number``, checked like a new round, and
    the round's stored choices that its new cards no longer need (dropped)."""
    rows = before.rounds[number - 2].rows if number > 1 else [(c,) for c in game.game.starting]
    others = played_elsewhere(rounds, number)
    entries = typed_cards(state, form)
    choices = typed_choices(state, form)
    # A choice stored with the round that its new cards no longer need goes by itself
    # (named in the preview); one typed for a card that is not too low is refused.
    stored = rounds[number - 1][1]
    unneeded = rules.unneeded_choices(rows, entries, choices, state.deck)
    dropped = {player: row for player, row in unneeded.items() if stored.get(player) == row}
    choices = {player: row for player, row in choices.items() if player not in dropped}
    check_placed(state, game, rows, entries, choices, others)
    plays = [(player, rules.parse_card(card, state.deck)) for player, card in entries]
    return (
        plays,
        choices,
        tuple(rules.Dropped(number, player, row) for player, row in dropped.items()),
    )


def played_elsewhere(rounds, number: int) -> set[int]:
    """The cards played in the game's rounds other than round ``number``."""
    return {
        card for index, (plays, _) in enumerate(rounds, 1) if index != number for _, card in plays
    }


def typed_cards(state: MatchState, form) -> list[tuple[int, str]]:
    """Each player's card as typed in the form; refused when one is missing."""
    entries = [(player, form.get(f"card-{player}", "").strip()) for player in state.player_ids]
    missing = {
        f"card-{player}": gettext("%(player)s's card is missing.", player=state.name(player))
        for player, card in entries
        if not card
    }
    if missing:
        raise Rejected(missing)
    return entries


def typed_choices(state: MatchState, form) -> dict[int, int]:
    """The row choices typed in the form, by player; refused when one is not a row."""
    choices, errors = {}, {}
    for player in state.player_ids:
        value = form.get(f"row-{player}", "").strip()
        if value:
            try:
                choices[player] = rules.parse_row_choice(value)
            except rules.RuleError as error:
                errors[f"row-{player}"] = translate(error)
    if errors:
        raise Rejected(errors)
    return choices


def check_placed(state: MatchState, game: PlayedGame, rows, entries, choices, others) -> None:
    """Play the corrected round on the rows before it: refused when the rules refuse a
    card, or when a too-low card has no row chosen for it."""
    try:
        result = rules.play_round(
            rows,
            entries,
            choices,
            deck=state.deck,
            played=others,
            starting=game.game.starting,
            name=state.name,
        )
    except rules.RuleError as error:
        raise Rejected({field_for(error, card="card-{}"): translate(error)}) from error
    if result.pending is not None:
        waiting = result.pending
        raise Rejected(
            {
                f"row-{waiting.player}": gettext(
                    "%(card)d is too low: choose the row %(player)s took.",
                    card=waiting.card,
                    player=state.name(waiting.player),
                )
            }
        )


def check_match(state: MatchState, game: PlayedGame, after: rules.GameState) -> None:
    """Refuse a correction that leaves the match impossible: a game before the last one
    waiting for a choice, or an end before a game that was already played."""
    last = state.games[-1]
    if game is not last and not after.finished:
        raise Rejected(
            {
                "form": gettext(
                    "This correction leaves game %(game)d waiting for a row choice, but a "
                    "later game has been played. Undo the later games first.",
                    game=game.number,
                )
            }
        )
    bulls = [after.bulls() if other is game else other.bulls for other in state.games]
    for played in range(1, len(state.games)):
        if rules.standing(state.player_ids, bulls[:played], state.end).over:
            raise Rejected(
                {
                    "form": gettext(
                        "With this correction the match would have ended after game "
                        "%(game)d, but game %(next)d has already been played.",
                        game=played,
                        next=played + 1,
                    )
                }
            )


def change_for(state: MatchState, game: PlayedGame, number: int, rounds, after) -> Change:
    """The statements that store a correction: the round's rows replaced, the choices
    dropped deleted, the correction recorded; the game's results replayed."""
    game_id = game.game.id
    round_ids = dict(
        db.session.execute(select(Round.number, Round.id).where(Round.game_id == game_id)).all()
    )
    round_id = round_ids[number]
    deletes = [
        delete(Play).where(Play.round_id == round_id),
        delete(RowChoice).where(RowChoice.round_id == round_id),
        *(
            delete(RowChoice).where(
                RowChoice.round_id == round_ids[item.round], RowChoice.player_id == item.player
            )
            for item in after.dropped
        ),
    ]
    plays, choices = after.rounds[number - 1]
    rows = [
        *(Play(round_id=round_id, game_id=game_id, player_id=p, card=c) for p, c in plays),
        *(RowChoice(round_id=round_id, player_id=p, row=r) for p, r in choices.items()),
        record(state, game_id, number, rounds[number - 1], after.dropped, state.table_version + 1),
    ]
    return Change(rows=rows, deletes=deletes, results=True, replay=(game_id,))
