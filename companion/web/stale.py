"""A form the companion can no longer check (its CSRF token): sent back to send again.

Tokens live as long as the session (``WTF_CSRF_TIME_LIMIT = None``), so a form left open
through a game night still goes through. A token that does not fit the session (the
cookie was cleared, the secret key changed, a token missing) is answered like a form
gone stale: 422 in the player's language, nothing saved, the values typed kept and a
fresh token, never Werkzeug's bare 400. A view that can show its own form with a
message registers with ``shows_again``; every other form gets the page that sends the
same values again (``faults.send_again``, as the 503 page does).
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, current_app, render_template, request
from flask_babel import gettext
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from companion.web.errors import wants_json
from companion.web.faults import fault_of, send_again, unavailable

# Endpoint → view that shows its form again, with ``message`` for the whole form.
Shower = Callable[..., object]
SHOWERS: dict[str, Shower] = {}


def shows_again(*endpoints: str) -> Callable[[Shower], Shower]:
    """Register ``show(message, **view_args)`` to answer a stale post to ``endpoints``."""

    def register(show: Shower) -> Shower:
        for endpoint in endpoints:
            SHOWERS[endpoint] = show
        return show

    return register


def init_app(app: Flask) -> None:
    """Answer every CSRF failure as a stale form."""
    app.register_error_handler(CSRFError, stale_form)


def stale_form(error: CSRFError):
    """Nothing was saved: the form again (its own, or the page to send again), 422."""
    current_app.logger.info("%s %s: %s", request.method, request.path, error.description)
    message = stale_message()
    if wants_json():
        return {"error": message}, 400
    show = SHOWERS.get(request.endpoint or "")
    if show is not None:
        try:
            return show(message, **(request.view_args or {}))
        except HTTPException:  # its match is gone: the page that sends again says so
            pass
        except Exception as failure:  # an error handler that raises would be a 500
            if fault_of(failure) is None:
                raise
            return unavailable(fault_of(failure), failure, as_json=False)
    page = render_template("errors/503.html", message=message, **send_again())
    # htmx: the page's section replaces what <main> shows, whatever the form's target.
    swap = {"HX-Retarget": "#main", "HX-Reswap": "innerHTML", "HX-Reselect": "#send-again"}
    return page, 422, swap if request.headers.get("HX-Request") == "true" else {}


def stale_message() -> str:
    """What the player is told, in their language."""
    return gettext(
        "This form could not be checked any more (the browser's cookies were cleared, "
        "or the companion's key changed). Nothing was saved: check it and send it again."
    )
