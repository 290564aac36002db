"""Settings: defaults, then COMPANION_* environment variables, then a test's own; and the
secret key, generated once into the instance folder."""

import os
import secrets
from pathlib import Path

from flask import Flask

from companion.models import MAX_MATCHES_HELD, MAX_PLAYERS_HELD
from companion.private import FILE_MODE, FOLDER_MODE, tighten
from companion.startup import OTHER_KEY, ensure_folder, secret_key_problem
from companion.storage import sqlite_uri
from companion.storage.feed import PER_ADDRESS, PER_CLIENT, PER_MATCH
from companion.web.htmx import (
    HTMX_INTEGRITY,
    HTMX_URL,
    HTMX_VERSION,
    SSE_INTEGRITY,
    SSE_URL,
    SSE_VERSION,
)

PROJECT_ROOT = Path(__file__).resolve().parent.parent


# Env vars whose names differ from the Flask config keys they set; read verbatim
# because from_prefixed_env would parse an all-digit secret as a number.
ENV_ALIASES = {
    "COMPANION_DATABASE_URL": "SQLALCHEMY_DATABASE_URI",
    "COMPANION_SECRET_KEY": "SECRET_KEY",
}


def configure(app: Flask, test_config: dict | None) -> None:
    """Load defaults, then COMPANION_* env vars, then the test config; ensure a secret key."""
    instance = Path(app.instance_path)
    app.config.from_mapping(
        DEFAULTS,
        SQLALCHEMY_DATABASE_URI=f"sqlite:///{instance / 'companion.sqlite'}",
        SECRET_KEY_FILE=str(instance / "secret_key"),
    )
    app.config.from_prefixed_env("COMPANION")
    app.config.pop("DATABASE_URL", None)
    for env_name, key in ENV_ALIASES.items():
        if env_name in os.environ:
            app.config[key] = os.environ[env_name]
    if test_config is not None:
        app.config.from_mapping(test_config)
    if not sqlite_uri(app.config["SQLALCHEMY_DATABASE_URI"]):
        # A database server may restart (or drop idle connections): a pooled connection
        # is tried before use, so no phone gets the 503 of a connection that died idle.
        options = app.config.setdefault("SQLALCHEMY_ENGINE_OPTIONS", {})
        options.setdefault("pool_pre_ping", True)
    tighten(app.instance_path, FOLDER_MODE)  # made by an older version, or by hand
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = load_or_create_secret_key(Path(app.config["SECRET_KEY_FILE"]))


# Every setting's default but the two in the instance folder (the database, the secret
# key file), which ``configure`` adds.
DEFAULTS = {
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    # The cookie is written only when the session changes (a link granted, "I am"),
    # never again by every answer: a phone's requests cross (a live update's fetch
    # while "I am" is tapped), and an answer that set the cookie it was sent with
    # would take back what the other one just stored. So a seat lasts
    # PERMANENT_SESSION_LIFETIME (31 days) from the phone's last link or "I am".
    "SESSION_REFRESH_EACH_REQUEST": False,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    # A CSRF token lives as long as the session it is bound to (the HttpOnly, SameSite
    # cookie): a form left open through a game night still goes through. Flask-WTF's
    # default hour adds nothing against another site, which never sees the token.
    "WTF_CSRF_TIME_LIMIT": None,
    "HTMX_VERSION": HTMX_VERSION,
    "HTMX_URL": HTMX_URL,
    "HTMX_INTEGRITY": HTMX_INTEGRITY,
    "SSE_VERSION": SSE_VERSION,
    "SSE_URL": SSE_URL,
    "SSE_INTEGRITY": SSE_INTEGRITY,
    # Match pages open an event stream (companion.play.push): only a server whose
    # open streams cost no thread turns it on (gunicorn's gevent worker, serve.py).
    "LIVE_PUSH": False,
    # Open streams of one match a server process holds from one client address, and
    # in all (COMPANION_STREAMS_PER_CLIENT, ..._PER_MATCH): past them the oldest
    # closes and its page reconnects (companion.storage.feed).
    "STREAMS_PER_CLIENT": PER_CLIENT,
    "STREAMS_PER_MATCH": PER_MATCH,
    # ... and from one client address over every match (COMPANION_STREAMS_PER_ADDRESS).
    "STREAMS_PER_ADDRESS": PER_ADDRESS,
    # Requests of one client address the app works on at once, the rest waiting in line
    # (COMPANION_REQUESTS_PER_ADDRESS; companion.web.by_address): a phone sends one or
    # two at a time; a club behind a proxy without ProxyFix raises it.
    "REQUESTS_PER_ADDRESS": 4,
    # What a household holds at most (companion.models; COMPANION_PLAYERS_HELD, ...).
    "PLAYERS_HELD": MAX_PLAYERS_HELD,
    "MATCHES_HELD": MAX_MATCHES_HELD,
    # How often a match page polls while it has no stream (None: never, for tests).
    "LIVE_POLL": "2s",
    # Seconds between "alive" events on a quiet event stream (COMPANION_LIVE_HEARTBEAT;
    # companion.play.push); a page that hears nothing for 8/3 of it opens a new stream
    # (templates/matches/_stream.html). Tests shorten it.
    "LIVE_HEARTBEAT": 15.0,
    # Where the household plays, as a finished match's BG Stats play names it
    # (COMPANION_LOCATION; companion.play.bgstats).
    "LOCATION": "Home",
    # The household's timezone, for every time a page, a CSV or a BG Stats play shows
    # (COMPANION_TIMEZONE, e.g. Europe/Berlin); unset: the machine's own
    # (companion.web.i18n.household_timezone). Times are stored in UTC.
    "TIMEZONE": None,
    # The address the server listens on (COMPANION_HOST, or serve's --host). On
    # loopback alone the links stay on loopback, and the invite says that other phones
    # cannot reach it (companion.web.network.loopback_only).
    "HOST": None,
    # HTTPS: the certificate and its key (COMPANION_CERT, COMPANION_KEY; PEM files), which
    # serve.py hands to gunicorn; links printed outside a request then say https://
    # (companion.web.tls). Unset: plain HTTP.
    "CERT": None,
    "KEY": None,
}


def load_or_create_secret_key(path: Path) -> str:
    """Read the local secret key, generating it (mode 0600) on first start."""
    try:
        if path.exists():
            tighten(path, FILE_MODE)
            return path.read_text().strip()
        ensure_folder(path.parent, "the secret key", OTHER_KEY)
        key = secrets.token_hex(32)
        # O_EXCL: two workers starting at once must not overwrite each other's key.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_text().strip()
        try:
            with os.fdopen(fd, "w") as file:
                file.write(key + "\n")
        except OSError:  # a full disk: leave no empty key for the next start
            path.unlink(missing_ok=True)
            raise
    except OSError as error:  # a read-only instance folder, or a key of another user
        raise secret_key_problem(path, error) from None
    return key
