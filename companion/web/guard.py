"""What the companion accepts from the network: its own names, its own pages' writes, ids
that fit the database.

- **Host.** Only requests for the companion's own names are served (Flask's
  ``TRUSTED_HOSTS``): this machine's LAN address and host name, the host name under the
  network's own domains and the home networks' (``pi.lan``, ``pi.fritz.box``:
  ``network.home_names``), localhost, the host of ``PUBLIC_URL`` and any listed in
  ``TRUSTED_HOSTS``; ports do not matter. Any other name is a 400. Otherwise a web page
  whose host name an attacker makes resolve to the companion (DNS rebinding) would be
  served as if it were the companion's own page, cookies, CSRF token, backup and all.
  Another machine's name under a home domain (``other.lan``) is refused too: the
  household has not given it to us. Werkzeug compares names as the Host header spells
  them, and browsers send them in lower case, without a trailing dot.
- **Origin.** A write (POST, PUT, PATCH, DELETE) whose ``Origin``, or else ``Referer``,
  names another site is a 403: Flask-WTF checks them only over HTTPS. Requests with
  neither (curl, old browsers) still need the CSRF token of a form, as before.
- **Ids.** Every id in a route is ``<id:…>`` (``IdConverter``): ASCII digits without a
  leading zero, so one match has one URL. Werkzeug's ``int`` took "01" and, through
  ``int()``, Arabic-Indic and fullwidth digits: ``/matches/%D9%A1`` served match 1 and
  could start a rematch of it. Any other spelling, and an id too large for the database,
  is a 404 for every method, never a 405 (see ``IdConverter.to_python``), an
  ``OverflowError`` from converting it, nor PostgreSQL's "integer out of range".
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

from flask import Flask, current_app, render_template, request
from flask_babel import gettext
from markupsafe import Markup
from werkzeug.exceptions import Forbidden, NotFound, SecurityError
from werkzeug.routing import BaseConverter
from werkzeug.sansio.utils import host_is_trusted

from companion.models import MAX_ID
from companion.web.errors import wants_json
from companion.web.headers import content_security_policy
from companion.web.network import configured_base, home_names, lan_address, phone_base

# An id as a URL spells it: ASCII digits ([0-9], not \d, which takes any script's
# digits), no leading zero; 18 digits at most, so converting it is cheap and exact.
ID_PATTERN = r"[1-9][0-9]{0,17}"
# Loopback names. IPv6 literals cannot be listed: Werkzeug's host check cuts a trusted
# name at its first colon, so "[::1]" never matches; phones use IPv4 or a name anyway.
LOOPBACK = ("localhost", "127.0.0.1")
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
STANDALONE_SHEETS = ("app.css", "pages.css")  # the refusal page's look, set in it


class IdConverter(BaseConverter):
    """A row id in a URL: one spelling per id (``ID_PATTERN``), at most ``MAX_ID``."""

    regex = ID_PATTERN
    weight = 50  # as Werkzeug's int: a route with an id comes after a static one

    def to_python(self, value: str) -> int:
        """The id, or NotFound when no row can have it.

        Not Werkzeug's ValidationError: the router checks the method before the
        converter, so a ValidationError on ``POST /matches/99999999999/undo`` found the
        GET route "matching" and answered 405; a NotFound is a 404 for every method.
        """
        number = int(value)
        if number > MAX_ID:
            raise NotFound()
        return number

    def to_url(self, value: int) -> str:
        """The id as digits."""
        return str(int(value))


class CrossSite(Forbidden):
    """A write sent from another site's page."""

    description = "This request was sent from another site."


def init_app(app: Flask) -> None:
    """Bound ids, trust only the companion's names, refuse cross-site writes.

    Call it before the blueprints are registered (their routes use the converter) and
    before CSRF protection (a cross-site write is a 403, whatever its token).
    """
    app.url_map.converters["id"] = IdConverter
    app.config["TRUSTED_HOSTS"] = own_names(app.config)
    app.before_request(refuse_cross_site)
    app.register_error_handler(SecurityError, untrusted_host)
    app.register_error_handler(CrossSite, cross_site)


def own_names(config) -> list[str]:
    """The host names this companion answers to (see the module docstring)."""
    names = [lan_address(), *home_names()]
    public = str(config.get("PUBLIC_URL") or "")
    if public:
        names.append(urlsplit(public if "//" in public else f"//{public}").hostname or "")
    names += [*listed(config.get("TRUSTED_HOSTS")), *LOOPBACK]
    # The phones' names first, each once: the start-up banner lists them (companion.serve).
    return list(dict.fromkeys(name.strip().lower() for name in names if name and name.strip()))


def listed(value: object) -> Iterable[str]:
    """Names from the TRUSTED_HOSTS setting: a list, or text separated by commas."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value.split(",")
    if isinstance(value, list | tuple | set):
        return [str(name) for name in value]
    return str(value).split(",")


def refuse_cross_site() -> None:
    """Refuse (403) a write whose Origin, or else Referer, is not one of our names."""
    if request.method not in UNSAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    source = origin if origin is not None else request.headers.get("Referer")
    if source and not is_own(source):
        raise CrossSite()


def is_own(url: str) -> bool:
    """True when ``url`` (an Origin or a Referer) is on one of the companion's names."""
    parts = urlsplit(url)  # an opaque origin ("null") has no host: not ours
    return parts.scheme in {"http", "https"} and host_is_trusted(
        parts.netloc, current_app.config["TRUSTED_HOSTS"]
    )


def untrusted_host(error: SecurityError):
    """A request for a name that is not the companion's: say which addresses to open."""
    host = without_port(request.environ.get("HTTP_HOST", "")[:100])
    if wants_json():
        message = gettext(
            "The companion does not answer to the name “%(host)s”: a web page elsewhere "
            "could use such a name to reach it. Open %(url)s instead, or add the name to "
            "COMPANION_TRUSTED_HOSTS and restart the companion.",
            host=host,
            url=own_address(),
        )
        return {"error": message}, 400
    # No url_for here: URLs are built for a trusted host only. The page stands alone,
    # its style in it: a style sheet asked of this name would be refused too.
    style = standalone_style(current_app.static_folder)
    page = render_template(
        "errors/host.html", host=host, addresses=phone_addresses(), style=style.css
    )
    policy = content_security_policy(style_hashes=[style.digest])
    return page, 400, {"Content-Security-Policy": policy}


def without_port(host: str) -> str:
    """A Host header's name, without the port it may carry ("pi.lan:8000": "pi.lan")."""
    name, colon, port = host.rpartition(":")
    bare = colon and port.isdigit() and (name.endswith("]") or ":" not in name)
    return name if bare else host


def phone_addresses() -> list[str]:
    """Where a phone reaches the companion, as links: PUBLIC_URL first, then each of its
    names a phone can use (loopback only when it has no other) at the port asked on."""
    port = request.environ.get("SERVER_PORT", "80")
    names = [name for name in current_app.config["TRUSTED_HOSTS"] if not name.startswith(".")]
    phones = [name for name in names if name not in LOOPBACK] or names
    public = current_app.config.get("PUBLIC_URL")
    urls = [f"{str(public).rstrip('/')}/"] if public else []
    urls += [phone_base(request.scheme, name, port) + "/" for name in phones]
    return list(dict.fromkeys(urls))


class Style(NamedTuple):
    """Style sheets set in a page, with the hash a CSP allows them by."""

    css: Markup
    digest: str  # 'sha256-…'


@cache
def standalone_style(static_folder: str) -> Style:
    """The app's style sheets for a page that stands alone, read once: app.css and the
    pages' (where the error pages' look is)."""
    folder = Path(static_folder) / "css"
    css = "\n".join((folder / name).read_text() for name in STANDALONE_SHEETS)
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    return Style(Markup(css), f"'sha256-{digest}'")


def cross_site(error: CrossSite):
    """A write sent from another site's page (a cross-site request forgery)."""
    if wants_json():
        return {"error": gettext("Requests from other sites are refused.")}, 403
    return render_template("errors/cross_site.html"), 403


def own_address() -> str:
    """Where phones reach the companion: PUBLIC_URL, else the LAN address and port."""
    port = request.environ.get("SERVER_PORT", "80")
    return configured_base(current_app.config, request.scheme, "", port) + "/"
