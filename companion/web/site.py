"""Pages of the site itself: the health check and the pinned htmx files; the version
that runs."""

from importlib.metadata import version as installed_version

from flask import Blueprint, current_app, send_from_directory
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from companion import store
from companion.db import db
from companion.web.htmx import HTMX_COPY, SSE_COPY

bp = Blueprint("web", __name__)
# pyproject.toml's [project] name: its version is the companion's (CHANGELOG.md).
DISTRIBUTION = "companion"
YEAR = 365 * 24 * 60 * 60  # the copies' URLs carry their version (?v=)
# Seconds the derived data may be behind the table before /healthz says so: the
# background process catches up in seconds, and is started again within a minute.
BEHIND = 5 * 60


def version() -> str:
    """The companion's version, as pip installed it from pyproject.toml (make run
    installs again when that file changes)."""
    return installed_version(DISTRIBUTION)


@bp.get("/vendor/htmx.min.js")
def htmx_copy():
    """The pinned htmx file, for phones that cannot reach its CDN (404 until installed).

    Its URL carries the version (?v=), so a phone may keep it for a year.
    """
    return send_from_directory(HTMX_COPY, "htmx.min.js", max_age=YEAR)


@bp.get("/vendor/sse.min.js")
def sse_copy():
    """The pinned SSE extension of htmx, as htmx_copy serves htmx."""
    return send_from_directory(SSE_COPY, "sse.min.js", max_age=YEAR)


@bp.get("/healthz")
def healthz():
    """Report 200 when the app can reach its database, 503 when it cannot; "behind" (and
    by how many seconds) when the derived data has not followed the table for BEHIND.

    Behind is still 200: the table is served, and a proxy or a monitor that reads only
    the code must not take it away from the phones (one that reads the status can warn).
    """
    try:
        db.session.execute(text("SELECT 1"))
        behind = store.derived_behind()
    except SQLAlchemyError:
        current_app.logger.exception("Health check: database unreachable")
        return {"status": "unavailable"}, 503
    if behind > BEHIND:
        return {"status": "behind", "behind_seconds": round(behind)}
    return {"status": "ok"}
