"""The round form's card fields, rendered once for every phone of the table.

After each round every phone gets its entry form again, each with a field per open
seat: ten phones of ten players rendered a hundred fields a round, the same few apart
from their order. An empty field with no note is the same on every phone (its seat's
name, whether it is the last or has the focus), so it is rendered once and kept
(``Memo``, per app). A field holding a card or a note is rendered each time: what a
phone typed or sent is its own, and no answer's time may depend on whether another
phone had the same.
"""

from __future__ import annotations

from flask import current_app
from markupsafe import Markup

from companion.memo import Memo

EMPTY_FIELDS = Memo("card_fields", 1024)  # a table of ten: ten seats, focus, last


def card_field(player_id: int, label: str, values: dict, notes: dict, last: bool, focus) -> Markup:
    """The card field of seat ``player_id`` (labelled ``label``) with this phone's
    ``values`` and ``notes`` (by field name), ``last`` of its form or not, the focus in
    it when it is seat ``focus``'s."""
    name = f"card-{player_id}"
    autofocus = player_id == focus
    if values.get(name) or name in notes:
        return render_field(name, label, values, notes, last, autofocus)
    key = (name, label, last, autofocus)
    return EMPTY_FIELDS.through(key, lambda: render_field(name, label, {}, {}, last, autofocus))


def render_field(name: str, label: str, values: dict, notes: dict, last: bool, autofocus: bool):
    """The field as ``_form.html``'s ``field`` macro renders it."""
    field = current_app.jinja_env.get_template("_form.html").module.field
    return field(
        name,
        label,
        values,
        notes,
        inputmode="numeric",
        maxlength=3,
        enterkeyhint="done" if last else "next",
        autofocus=autofocus,
    )
