"""A busy, read-only, full or missing database: a 503 that keeps what was typed.

While running, a write that cannot have the database (``companion.db`` bounds the wait)
or that the database refuses for a reason outside the request (read-only, disk full,
I/O, a PostgreSQL server gone) answers 503 with Retry-After, in the user's language,
without touching the database: a page whose "Send again" button posts the same values,
or, for htmx, a notice while the form on screen stays as it was. The reason goes to
the log. The same causes found at start stop it (``companion.startup``).
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable
from urllib.parse import urlsplit

from flask import Flask, current_app, render_template, request
from flask_babel import gettext
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from companion.db import DatabaseBusy, DatabaseUnavailable
from companion.store import on_postgresql
from companion.web.i18n import safe_next_url

BUSY, READ_ONLY, FULL, UNAVAILABLE = "busy", "read-only", "full", "unavailable"
# SQLite's primary result codes (the low byte of an extended one) that are not the
# request's fault; any other error is a bug, and a 500.
FAULTS = {
    sqlite3.SQLITE_BUSY: BUSY,
    sqlite3.SQLITE_LOCKED: BUSY,
    sqlite3.SQLITE_READONLY: READ_ONLY,
    sqlite3.SQLITE_PERM: READ_ONLY,
    sqlite3.SQLITE_FULL: FULL,
    sqlite3.SQLITE_IOERR: UNAVAILABLE,
    sqlite3.SQLITE_CANTOPEN: UNAVAILABLE,
}
# PostgreSQL's SQLSTATEs that are not the request's fault: whole codes, or classes by
# their first characters. The rest (a unique key, a value out of range) is not storage.
SQLSTATES = {
    "55P03": BUSY,  # lock_not_available: the row lock waited past lock_timeout
    "40P01": BUSY,  # deadlock_detected
    "40001": BUSY,  # serialization_failure
    "57014": BUSY,  # query_canceled: statement_timeout
    "53300": BUSY,  # too_many_connections
    "25006": READ_ONLY,  # read_only_sql_transaction: a standby, or set read-only
    "53100": FULL,  # disk_full
    "08": UNAVAILABLE,  # connection_exception
    "57P": UNAVAILABLE,  # the server shutting down, restarting or starting up
    "53": UNAVAILABLE,  # insufficient_resources: memory, files
    "58": UNAVAILABLE,  # system_error: I/O
}
DENIED = {errno.EROFS, errno.EACCES, errno.EPERM}
# Seconds a client is asked to wait: a busy database frees up in moments, the others
# need someone at the computer.
RETRY_AFTER = {BUSY: 2, READ_ONLY: 60, FULL: 60, UNAVAILABLE: 30}


def fault_of(error: BaseException) -> str | None:
    """BUSY, READ_ONLY, FULL or UNAVAILABLE for a storage failure; None for anything else."""
    if isinstance(error, DatabaseBusy):
        return BUSY
    if isinstance(error, DatabaseUnavailable):  # the writer lock file could not be opened
        cause = getattr(error.__cause__, "errno", None)
        return FULL if cause == errno.ENOSPC else READ_ONLY if cause in DENIED else UNAVAILABLE
    original = getattr(error, "orig", error)
    code = getattr(original, "sqlite_errorcode", None)
    if isinstance(code, int):
        return FAULTS.get(code & 0xFF)
    if not hasattr(original, "sqlstate"):  # neither SQLite nor psycopg: not ours to judge
        return None
    state = original.sqlstate
    if state is None:  # psycopg's own: a connection that failed or was lost
        return UNAVAILABLE if isinstance(error, (OperationalError, InterfaceError)) else None
    return next((SQLSTATES[key] for key in (state, state[:3], state[:2]) if key in SQLSTATES), None)


def register_fault_handlers(app: Flask, wants_json: Callable[[], bool]) -> None:
    """Answer storage faults with 503; let every other database error be a 500."""

    def storage_fault(error: Exception):
        """The database could not take this request: 503, nothing half-saved."""
        fault = fault_of(error)
        if fault is None:
            raise error  # a bug, not the storage: Flask logs it and answers 500
        return unavailable(fault, error, wants_json())

    # DBAPIError: PostgreSQL's read-only is an InternalError, a lost connection an
    # InterfaceError; fault_of picks out the storage faults from any of them.
    for error_class in (DatabaseBusy, DatabaseUnavailable, DBAPIError):
        app.register_error_handler(error_class, storage_fault)


def unavailable(fault: str, error: Exception, as_json: bool):
    """The 503 answer for ``fault``: JSON, an htmx notice, or a page to send again."""
    reason = getattr(error, "orig", None) or error  # SQLite's words, without the SQL
    current_app.logger.warning(
        "%s %s answered 503 (%s): %s", request.method, request.path, fault, reason
    )
    headers = {"Retry-After": str(RETRY_AFTER[fault])}
    message = fault_message(fault)
    if as_json:
        return {"error": message}, 503, headers
    if request.headers.get("HX-Request") == "true":
        # htmx swaps this into the page's notice and leaves the form as it was typed.
        return render_template("errors/_notice.html", message=message), 503, headers
    return render_template("errors/503.html", message=message, **send_again()), 503, headers


def fault_message(fault: str) -> str:
    """What the player is told, in their language; none of it needs the database."""
    if fault == BUSY:
        return gettext(
            "The companion is busy storing something else (an import?). Nothing was "
            "saved: send it again in a moment."
        )
    if fault == READ_ONLY and on_postgresql():
        return gettext(
            "The companion cannot save: its database is read-only. Nothing was saved. "
            "Whoever runs the companion should check its database server."
        )
    if fault == READ_ONLY:
        return gettext(
            "The companion cannot save: its database is read-only. Nothing was saved. "
            "Whoever runs the companion should check its instance folder."
        )
    if fault == FULL:
        return gettext(
            "The companion cannot save: the disk of the computer it runs on is full. "
            "Nothing was saved. Free some space there, then send it again."
        )
    return gettext(
        "The companion cannot reach its database. Nothing was saved. Whoever runs the "
        "companion should look at its window for the reason."
    )


def send_again() -> dict:
    """What the 503 page offers: the same request again, with the values typed."""
    action = request.full_path.rstrip("?")
    resend = None
    if request.method == "POST" and not request.files:  # a file must be chosen again
        resend = [(name, value) for name, value in request.form.items(multi=True)]
        resend = [(name, value) for name, value in resend if name != "csrf_token"]
    back = safe_next_url(None)
    if request.referrer:  # same-origin only (Referrer-Policy): the page it came from
        parts = urlsplit(request.referrer)
        back = safe_next_url(parts.path + (f"?{parts.query}" if parts.query else ""))
    return {"action": action, "method": request.method, "resend": resend, "back": back}
