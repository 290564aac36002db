"""The rules in short, and "Where does my card go?": the dispute resolver as a page.

The page mirrors POST /api/resolve with the same engine: type in the rows and the
revealed cards, see every placement explained, pick a row when a card is too low.
Players are keyed by their play line (1-10), so every message lands on its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from flask import Blueprint, request
from flask_babel import gettext
from werkzeug.datastructures import MultiDict

from companion import rules
from companion.rules import RuleError
from companion.rules.names import name_key, player_name
from companion.web import present
from companion.web.htmx import render

bp = Blueprint("resolver", __name__)

TEMPLATE = "resolver/resolve.html"
MIN_LINES = 4
MAX_LINES = rules.MAX_PLAYERS
ROW_FIELDS = tuple(f"row{number}" for number in range(1, rules.ROWS + 1))
SEPARATORS = re.compile(r"[\s,;]+")

# The rules page's worked example, as the form takes it (the page links to it filled in).
WORKED_EXAMPLE = {
    "row1": "5 12",
    "row2": "20 24",
    "row3": "30 37",
    "row4": "31 32 33 34 40",
    "player1": "Anna",
    "card1": "39",
    "player2": "Ben",
    "card2": "42",
    "player3": "Cleo",
    "card3": "3",
}


@dataclass
class TypedPosition(rules.Position):
    """A position read from the form: rows as typed tokens, plays and choices keyed by
    line; also each line's player name and what is wrong, by field."""

    names: dict[int, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@bp.get("/rules")
def rules_page():
    """Show the rules of 6 nimmt! in short."""
    return render("resolver/rules.html", block="content", example=WORKED_EXAMPLE)


@bp.get("/resolve")
def form():
    """Show the resolver form, filled from the query string (more lines keep the values)."""
    return render(TEMPLATE, block="resolver", **form_context(request.args))


@bp.post("/resolve")
def resolve():
    """Place the typed-in round with the rules engine, or show what is wrong, and where."""
    values = request.form
    context = form_context(values)
    if "more" in values:
        return render(TEMPLATE, block="resolver", **context)
    position = read_position(values)
    result = play(position)
    if result is None:
        context["errors"] = position.errors
        return render(TEMPLATE, block="resolver", **context), 422
    context.update(result_context(result, position, values))
    return render(TEMPLATE, block="resolver", **context)


@bp.get("/patterns")
def patterns():
    """Show every table component in its states, built from a real round."""
    return render("pages/patterns.html", **pattern_context())


def line_count(values: MultiDict) -> int:
    """Return how many play lines to show: what was asked for and what is filled, 4-10."""
    asked = [
        int(value)
        for value in values.getlist("lines")
        if value.isascii() and value.isdigit() and len(value) < 4
    ]
    if "more" in values:
        asked = [max(asked, default=MIN_LINES) + 2]
    filled = [
        n
        for n in range(1, MAX_LINES + 1)
        if values.get(f"player{n}", "").strip() or values.get(f"card{n}", "").strip()
    ]
    return max(MIN_LINES, min(MAX_LINES, max(asked + filled, default=MIN_LINES)))


def form_context(values: MultiDict) -> dict:
    """Return what the form needs: the values as typed, the lines, the decks, no errors."""
    lines = line_count(values)
    names = [*ROW_FIELDS, "deck"]
    names += [f"{kind}{n}" for n in range(1, lines + 1) for kind in ("player", "card")]
    typed = {name: values[name] for name in names if name in values}
    decks = [(deck, rules.players_for_deck(deck)) for deck in reversed(rules.DECKS)]
    return {"form": typed, "lines": lines, "decks": decks, "errors": {}}


def read_position(values: MultiDict) -> TypedPosition:
    """Read the rows, the play lines, the row choices and the deck; note bad names and decks."""
    rows = [
        [card for card in SEPARATORS.split(values.get(name, "")) if card] for name in ROW_FIELDS
    ]
    position = TypedPosition(rows=rows)
    deck = values.get("deck", str(rules.STANDARD_DECK))
    if deck not in {str(size) for size in rules.DECKS}:
        position.errors["deck"] = gettext("Choose a deck from the list.")
    else:
        position.deck = int(deck)
    seen: set[str] = set()
    for line in range(1, MAX_LINES + 1):
        name = " ".join(values.get(f"player{line}", "").split())
        card = values.get(f"card{line}", "").strip()
        if not (name or card):
            continue
        error = name_error(name, seen)
        if error:
            position.errors[f"player{line}"] = error
        seen.add(name_key(name))
        position.plays.append((line, card))
        position.names[line] = name
        if f"choice{line}" in values:
            position.choices[line] = values[f"choice{line}"]
    return position


def name_error(name: str, seen: set[str]) -> str | None:
    """Return what is wrong with a play line's player name, if anything."""
    try:
        player_name(name)
    except RuleError as error:
        return error.message(gettext)
    if name_key(name) in seen:
        return gettext("Two lines are for %(name)s: each player plays one card.", name=name)
    return None


def play(position: TypedPosition) -> rules.RoundResult | None:
    """Resolve the position with the engine; on a rule broken, note it by its field."""
    if position.errors:
        return None
    try:
        return position.play(name=position.names.__getitem__)
    except RuleError as error:
        field_name = present.field_for(error, card="card{}", row="row{}")
        position.errors[field_name] = error.message(gettext)
        return None


def result_context(result: rules.RoundResult, position: TypedPosition, values: MultiDict) -> dict:
    """Return the steps, and either the row choice to make or the rows and bulls after."""
    name = position.names.__getitem__
    context: dict = {"steps": present.step_views(result.steps, name), "has_result": True}
    if result.pending is not None:
        kept = [*ROW_FIELDS, "deck", "lines"]
        kept += [f"{kind}{line}" for line in position.names for kind in ("player", "card")]
        kept += [f"choice{line}" for line in position.choices]
        context["choice"] = present.choice_view(result.pending, name)
        context["choice_field"] = f"choice{result.pending.player}"
        context["hidden"] = {key: values[key] for key in kept if values.get(key)}
        return context
    totals = result.bulls_by_player()
    context["rows_after"] = result.rows
    context["changed"] = present.changed_rows(result.steps)
    context["tally_rows"] = [(name(line), totals.get(line, 0)) for line in position.names]
    return context


def pattern_context() -> dict:
    """Resolve the worked example with the engine: stopped at the choice, then complete."""
    rows = [[int(card) for card in WORKED_EXAMPLE[name].split()] for name in ROW_FIELDS]
    plays = [(WORKED_EXAMPLE[f"player{n}"], int(WORKED_EXAMPLE[f"card{n}"])) for n in (1, 2, 3)]
    stopped = rules.play_round(rows, plays)
    done = rules.play_round(rows, plays, {stopped.pending.player: stopped.pending.suggested})
    try:
        rules.check_rows([[5, 12], [24, 20], [30], [40]])
    except RuleError as error:
        field_error = error.message(gettext)
    return {
        "rows_before": rows,
        "rows_after": done.rows,
        "changed": present.changed_rows(done.steps),
        "steps": present.step_views(done.steps),
        "choice": present.choice_view(stopped.pending),
        "field_error": field_error,
        "samples": (1, 5, 10, 11, 55),
    }
