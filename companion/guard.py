"""What the companion accepts from the network: ids that fit the database.

Every ``<int:…>`` in a route is ``BoundedInt``: an id too long or too large for SQLite
is a 404 like any id that does not exist, never an ``OverflowError`` (or, past 4,300
digits, a ``ValueError``) from converting it.
"""

from __future__ import annotations

from flask import Flask
from werkzeug.routing import IntegerConverter, ValidationError

from companion.models import MAX_ID

ID_DIGITS = len(str(MAX_ID))


class BoundedInt(IntegerConverter):
    """Werkzeug's ``int`` converter, at most ``MAX_ID`` and bounded before converting."""

    def __init__(self, map, fixed_digits=0, min=None, max=MAX_ID, signed=False):
        super().__init__(map, fixed_digits, min, max, signed)

    def to_python(self, value: str) -> int:
        """The id, or ValidationError (no route matches: 404) when it is out of range."""
        if len(value.lstrip("-")) > ID_DIGITS:  # leading zeros count for int() too
            raise ValidationError()
        return super().to_python(value)


def init_app(app: Flask) -> None:
    """Bound every route's ids; call before the blueprints are registered."""
    app.url_map.converters["int"] = BoundedInt
