"""The JSON API: the dispute resolver, usable without any stored match."""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, jsonify, request
from flask_babel import gettext, ngettext
from werkzeug.exceptions import RequestEntityTooLarge

from companion import rules
from companion.rules import N_, RuleError
from companion.rules.names import name_key, player_name

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.post("/resolve")
def resolve():
    """Resolve a round on a typed-in table, or say which player must choose a row."""
    try:
        result = parse_position(read_json()).play()
    except RuleError as error:
        return error_response(error.message(gettext))
    return jsonify(result_json(result))


@bp.errorhandler(RequestEntityTooLarge)
def too_large(_error):
    """Answer an oversized body like any other bad request."""
    return error_response(gettext("The request is too large."))


def error_response(message: str):
    """Return the API's 400 answer with a message a player understands."""
    return jsonify(error=message), 400


def read_json() -> Any:
    """Return the request body parsed as JSON, or raise RuleError."""
    try:
        return json.loads(request.get_data(cache=False))
    except (ValueError, RecursionError) as error:
        raise RuleError(N_("The request body must be JSON.")) from error


def parse_position(payload: Any) -> rules.Position:
    """Check the request's shape and types; the rules module checks the rest."""
    if not isinstance(payload, dict):
        raise RuleError(N_("The request body must be a JSON object."))
    unknown = set(payload) - {"rows", "plays", "choices", "deck"}
    if unknown:
        raise RuleError(N_("Unknown field “%(field)s”."), field=sorted(unknown)[0][:20])
    deck = parse_deck(payload.get("deck", rules.STANDARD_DECK))
    rows = parse_rows(payload.get("rows"))
    plays = parse_plays(payload.get("plays"))
    choices = parse_choices(payload.get("choices", {}), plays)
    return rules.Position(rows, plays, choices, deck)


def parse_deck(value: Any) -> int:
    """Return the highest card in use: 104, or a pro-variant deck."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in rules.DECKS:
        raise RuleError(N_("“deck” must be 104, or 24, 34, 44, 54 or 64 for the pro variant."))
    return value


def parse_rows(value: Any) -> tuple[tuple[Any, ...], ...]:
    """Return the rows as tuples; their cards are checked by the rules module."""
    if not isinstance(value, list) or len(value) != rules.ROWS:
        raise RuleError(N_("“rows” must be a list of exactly 4 rows."))
    if not all(isinstance(row, list) for row in value):
        raise RuleError(N_("Each row must be a list of cards."))
    return tuple(tuple(json_number(card) for card in row[: rules.ROW_LIMIT + 1]) for row in value)


def parse_plays(value: Any) -> list[tuple[str, Any]]:
    """Return the plays as (player, card) pairs, each player once (case aside)."""
    if not isinstance(value, list) or not 1 <= len(value) <= rules.MAX_PLAYERS:
        raise RuleError(N_("“plays” must be a list of 1 to 10 plays."))
    plays, seen = [], set()
    for play in value:
        if not isinstance(play, dict) or set(play) != {"player", "card"}:
            raise RuleError(N_("Each play must be an object with “player” and “card”."))
        name = player_name(play["player"])
        if name_key(name) in seen:  # "Anna" and "anna" are one player, as on the forms
            raise RuleError(N_("%(player)s has two cards in this round."), player=name)
        seen.add(name_key(name))
        plays.append((name, json_number(play["card"])))
    return plays


def parse_choices(value: Any, plays: list[tuple[str, Any]]) -> dict[str, Any]:
    """Return the row choices by the name as the plays spell it; rows are checked by the
    rules module."""
    if not isinstance(value, dict) or len(value) > rules.MAX_PLAYERS:
        raise RuleError(N_("“choices” must be an object mapping a player to a row."))
    spelled = {name_key(player): player for player, _ in plays}
    choices: dict[str, Any] = {}
    for raw, row in value.items():
        name = player_name(raw)
        player = spelled.get(name_key(name), name)
        if player in choices:
            raise RuleError(N_("%(player)s has two row choices."), player=player)
        choices[player] = json_number(row)
    return choices


def json_number(value: Any) -> Any:
    """Refuse a number written as text: the forms send text, the API takes JSON numbers.

    Everything else is checked by the rules module (a card of the deck, a row 1-4).
    """
    if isinstance(value, str):
        raise RuleError(
            N_("“%(value)s” is text: cards and rows are JSON numbers, like 39."),
            value=value[:12],
        )
    return value


def result_json(result: rules.RoundResult) -> dict[str, Any]:
    """Return a round's outcome in the API's shape."""
    body: dict[str, Any] = {
        "steps": [step_json(step) for step in result.steps],
        "rows": [list(row) for row in result.rows],
    }
    if result.pending is None:
        return {"status": "resolved", **body, "bulls": result.bulls_by_player()}
    pending = result.pending
    return {
        "status": "needs_choice",
        "player": pending.player,
        "card": pending.card,
        "options": [
            {"row": option.row, "cards": list(option.cards), "bulls": option.bulls}
            for option in pending.options
        ],
        "suggested": pending.suggested,
        "explanation": rules.explain_choice(pending, gettext=gettext),
        **body,
    }


def step_json(step: rules.Step) -> dict[str, Any]:
    """Return one placement in the API's shape."""
    return {
        "player": step.player,
        "card": step.card,
        "row": step.row,
        "action": step.action,
        "taken": list(step.taken),
        "bulls": step.bulls,
        "explanation": rules.explain(step, gettext=gettext, ngettext=ngettext),
    }
