"""The round form's card fields: an empty one is rendered once for every phone, one that
holds a card or a note on each phone alone (companion.play.fields)."""

from flask import render_template_string

from companion.play.fields import EMPTY_FIELDS, card_field, render_field

MACRO = """{% from "_form.html" import field %}{{ field(name, label, values, notes,
inputmode="numeric", maxlength=3, enterkeyhint=hint, autofocus=focus) }}"""


def macro(name, label, values, notes, last, focus) -> str:
    """The field as the template's macro renders it in a page."""
    hint = "done" if last else "next"
    return render_template_string(
        MACRO, name=name, label=label, values=values, notes=notes, hint=hint, focus=focus
    )


def test_an_empty_field_is_the_macros_and_kept_for_the_next_phone(app):
    with app.test_request_context():
        first = card_field(7, "Anna <3", {}, {}, True, 7)
        assert str(first) == macro("card-7", "Anna <3", {}, {}, True, True)
        assert "autofocus" in first and "Anna &lt;3" in first and 'enterkeyhint="done"' in first
        assert card_field(7, "Anna <3", {}, {}, True, 7) is first  # rendered once
        other = card_field(7, "Anna <3", {}, {}, False, None)  # not last, no focus
        assert other is not first and "autofocus" not in other
        assert 'enterkeyhint="next"' in other


def test_a_field_with_a_card_or_a_note_is_rendered_for_its_phone_alone(app):
    """What a phone typed or sent is its own: never kept, so no other phone's answer
    comes sooner for having typed the same card."""
    with app.test_request_context():
        typed = card_field(7, "Anna", {"card-7": "47"}, {}, False, None)
        noted = card_field(7, "Anna", {}, {"card-7": "Typed twice."}, False, None)
        assert 'value="47"' in typed and str(typed) == str(
            render_field("card-7", "Anna", {"card-7": "47"}, {}, False, False)
        )
        assert "Typed twice." in noted and 'aria-invalid="true"' in noted
        kept = EMPTY_FIELDS.values()
        assert all("47" not in value and "Typed twice" not in value for value in kept.values())
        assert {key[0] for key in kept} <= {"card-7"} and all(len(key) == 4 for key in kept)
