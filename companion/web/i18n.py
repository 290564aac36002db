"""Language choice: a cookie set by plain links, else the browser's preference."""

from urllib.parse import urlsplit

import pytz
import tzlocal
from flask import Blueprint, abort, g, has_request_context, redirect, request, url_for
from flask_babel import get_translations

bp = Blueprint("i18n", __name__)

# Shown in their own language, so a player can find theirs whatever the page shows.
LANGUAGES = {"en": "English", "de": "Deutsch", "fr": "Français"}
DEFAULT_LANGUAGE = "en"
LANG_COOKIE = "lang"
ONE_YEAR = 365 * 24 * 60 * 60


def household_timezone(configured: str | None) -> str:
    """The timezone the household's times are shown in: the TIMEZONE setting, else the
    machine's own (a Raspberry Pi is set to the household's), else UTC.

    tzlocal reads the machine's zone by name on Linux, macOS and Windows alike. A name
    that is no timezone stops the start with a message, not every page with a 500.
    """
    name = configured or tzlocal.get_localzone_name() or "UTC"
    try:
        pytz.timezone(name)
    except pytz.UnknownTimeZoneError:
        told = f"COMPANION_TIMEZONE={name!r}" if configured else f"the machine's zone {name!r}"
        raise ValueError(
            f"{told} is not a timezone: set COMPANION_TIMEZONE to a name such as Europe/Berlin"
        ) from None
    return name


def select_locale() -> str:
    """Pick the UI language: the lang cookie, then Accept-Language, then English."""
    if not has_request_context():  # CLI commands and background work
        return DEFAULT_LANGUAGE
    chosen = request.cookies.get(LANG_COOKIE)
    if chosen in LANGUAGES:
        return chosen
    return preferred_language(request.accept_languages) or DEFAULT_LANGUAGE


def preferred_language(accepted) -> str | None:
    """The first language we speak in the browser's order, by its primary subtag.

    Werkzeug's best_match prefers any exact match over a regional one, so "en-GB,
    fr;q=0.5" would pick French; a phone set to British English wants English.
    """
    for tag, quality in accepted:  # highest quality first
        code = tag.replace("_", "-").split("-")[0].lower()
        if quality > 0 and code in LANGUAGES:
            return code
    return None


def install_template_gettext(app) -> None:
    """Templates translate with this request's catalogue, found once per request.

    Flask-Babel's own template functions look the catalogue up again for every string,
    through half a dozen context lookups; a page has a hundred strings, and the live
    regions are rendered again for every new version of a match. Call after Babel's
    init_app, which installs those.
    """
    app.jinja_env.install_gettext_callables(
        gettext=lambda string: catalogue().ugettext(string),
        ngettext=lambda singular, plural, n: catalogue().ungettext(singular, plural, n),
        pgettext=lambda context, string: catalogue().upgettext(context, string),
        npgettext=lambda context, singular, plural, n: catalogue().unpgettext(
            context, singular, plural, n
        ),
        newstyle=True,
    )


def gettext(string: str, **variables) -> str:
    """Flask-Babel's ``gettext`` with this request's catalogue found once (``catalogue``):
    the engine's explanations of a round's ten cards ask it twenty times for every new
    version of a match (issue 59)."""
    text = catalogue().ugettext(string)
    return text % variables if variables else text


def ngettext(singular: str, plural: str, num: int, **variables) -> str:
    """Flask-Babel's ``ngettext`` with this request's catalogue found once: ``num`` is
    there for the format as ``%(num)d``."""
    variables.setdefault("num", num)
    return catalogue().ungettext(singular, plural, num) % variables


def catalogue():
    """The translations of this request's language (kept on ``g``), as Flask-Babel has them."""
    if not has_request_context():
        return get_translations()
    found = g.get("_catalogue")
    if found is None:
        found = g._catalogue = get_translations()
    return found


def safe_next_url(target: str | None) -> str:
    """Return target if it is a path on this site, else the home page (no open redirect)."""
    home = url_for("play.home")
    if not target or not target.startswith("/") or target.startswith("//"):
        return home
    # Browsers read "\" as "/" and drop tabs and newlines, so "/\evil.com" is "//evil.com".
    if "\\" in target or any(ord(char) < 32 or ord(char) == 127 for char in target):
        return home
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return home
    return target


@bp.get("/lang/<code>")
def set_language(code: str):
    """Remember the chosen language for a year and go back to where the player was."""
    if code not in LANGUAGES:
        abort(404)
    response = redirect(safe_next_url(request.args.get("next")), code=303)
    response.set_cookie(LANG_COOKIE, code, max_age=ONE_YEAR, httponly=True, samesite="Lax")
    return response
