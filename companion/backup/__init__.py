"""Backup and move: export everything as one JSON file, import it, a match as CSV.

The web pages and the command line (``flask --app companion export [FILE]`` and
``import FILE``) share one export and one import; the format is in the README
("Backup format"). Import checks the whole file first, then writes in one transaction.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import click
from flask import Blueprint, Flask, Response, current_app, redirect, request, session, url_for
from flask.cli import with_appcontext
from flask_babel import gettext, to_user_timezone
from flask_wtf.csrf import CSRFError, validate_csrf
from sqlalchemy import func, select
from werkzeug.datastructures import FileStorage
from werkzeug.exceptions import RequestEntityTooLarge
from wtforms import ValidationError

from companion.backup.apart import ImportRunning, fill_luck_apart, import_turn, import_upload
from companion.backup.copies import (
    copy_after_finished_match,
    copy_after_import,
    copy_target,
    folder_of,
    last_failure,
    list_copies,
    wait_for_copies,
)
from companion.backup.document import dump, export_document, match_csv
from companion.backup.fields import BackupError
from companion.backup.load import Report, check_and_import
from companion.backup.restore import restore_command
from companion.db import csrf, db
from companion.derived.timing import match_times
from companion.models import Match, Player, texts_of, utcnow
from companion.rules import N_
from companion.state import match_state
from companion.store import database_file, fill_all_missing_luck, match_finished, on_postgresql
from companion.web.access import grant
from companion.web.headers import no_store
from companion.web.htmx import render
from companion.web.stale import shows_again

bp = Blueprint("backup", __name__)

# A household's whole history is a few MB; the app's default request limit is 64 KB.
DEFAULT_MAX_UPLOAD = 64 * 1024 * 1024
REPORT_KEY = "backup_report"
MAX_GRANTS = 10


def backup_page(errors: dict[str, str], report: dict | None = None):
    """The backup page: what is stored, the export link, the import form, the copies."""
    counts = {
        "players": db.session.scalar(select(func.count(Player.id))),
        "matches": db.session.scalar(select(func.count(Match.id))),
    }
    database = database_file(current_app)
    folder = folder_of(database) if database else None
    return render(
        "backup/index.html",
        "backup",
        counts=counts,
        errors=errors,
        report=report,
        copies=list_copies(folder) if folder else [],
        failure=last_failure(folder) if folder else None,
        folder=folder,
        automatic=copy_target(current_app) is not None,
        postgresql=on_postgresql(),
    )


@bp.get("/backup")
def index():
    """Export everything, or import a backup file."""
    return backup_page({}, session.pop(REPORT_KEY, None))


@bp.get("/backup/export.json")
@no_store
def export_json():
    """Every player and match as one JSON file, to download."""
    now = utcnow()
    name = f"6nimmt-companion-{now:%Y-%m-%d}.json"
    return Response(
        dump(export_document(now)),
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@bp.post("/backup/import")
@csrf.exempt  # checked by token_first, from the form's address, before the turn
def import_file():
    """Import a backup file: all of it, or nothing with a message (422; 409: another runs)."""
    token_first()
    try:
        upload = posted_file()  # all of it, before the turn: a slow upload holds nobody up
        with import_turn():
            report = import_upload(upload.stream)
    except ImportRunning as running:
        return backup_page({"file": running.message(gettext)}), 409
    except BackupError as error:
        return backup_page({"file": error.message(gettext)}), 422
    copy_after(report)
    if report.matches_added:
        fill_luck_apart()
    session[REPORT_KEY] = report.as_dict()
    # Links are new on import: this phone gets the player link of matches still being
    # played, so it can go on, invite the others, or delete them (a few: it is a cookie).
    for match_id in report.in_progress[-MAX_GRANTS:]:
        match = db.session.get(Match, match_id)
        grant(match.id, match.player_token)
    return redirect(url_for("backup.index"), code=303)


def token_first() -> None:
    """Check the CSRF token before any of the file is read: the form sends it in its
    address (``?csrf_token=``), since a token in the form's fields comes only after a
    whole upload, and an upload without it is not worth reading (up to 64 MB).
    A write from another site's page never gets this far (``web.guard``)."""
    if not current_app.config.get("WTF_CSRF_ENABLED", True):
        return
    try:
        validate_csrf(request.args.get("csrf_token"))
    except ValidationError as error:
        raise CSRFError(error.args[0]) from None  # answered as a stale form


@shows_again("backup.import_file")
def import_again(message: str):
    """The import refused as a stale form: its page, with the message by the file field
    (nothing of the upload is read: the file is chosen again)."""
    return backup_page({"file": message}), 422


def max_upload() -> int:
    """The largest backup file in bytes: the page's upload and the command line's file."""
    return current_app.config.get("BACKUP_MAX_UPLOAD", DEFAULT_MAX_UPLOAD)


def too_large() -> BackupError:
    """The refusal of a file past ``max_upload``."""
    return BackupError(N_("The file is larger than %(mb)d MB."), mb=max_upload() // (1024 * 1024))


def posted_file() -> FileStorage:
    """The form's file, all of it arrived (past 500 KB werkzeug keeps it in a temporary
    file, not in memory), before the turn to import is taken: a phone on poor Wi-Fi
    that takes a minute to send it holds no other import up meanwhile."""
    request.max_content_length = max_upload()
    try:
        upload = request.files.get("file")
    except RequestEntityTooLarge:
        raise too_large() from None
    if upload is None or not upload.filename:
        raise BackupError(N_("Choose a backup file to import."))
    return upload


@bp.get("/matches/<id:match_id>/export.csv")
@no_store
def match_csv_file(match_id: int):
    """One match for a spreadsheet: bulls per game and player, and the totals."""
    state = match_state(db.get_or_404(Match, match_id))
    labels = gettext("Game"), gettext("Total"), gettext("Played at"), gettext("Minutes")
    texts = [(gettext(typed.label), text) for typed, text in texts_of(state.match)]
    text = match_csv(state, *labels[:2], csv_times(match_id), labels[2:], texts)
    name = f"6nimmt-match-{match_id}-{state.match.created_at:%Y-%m-%d}.csv"
    return Response(
        text, mimetype="text/csv", headers={"Content-Disposition": f'attachment; filename="{name}"'}
    )


def csv_times(match_id: int) -> dict[int, tuple[str, int]]:
    """When each finished game (0: the match) was played, local time, and its minutes."""
    times = match_times([match_id])[match_id]
    spans = {**times.games, 0: times.match} if times.games else {}
    return {
        number: (to_user_timezone(span.start).strftime("%Y-%m-%d %H:%M"), span.minutes)
        for number, span in spans.items()
    }


@click.command("export")
@click.argument("file", required=False)
@with_appcontext
def export_command(file: str | None) -> None:
    """Write every player and match as one JSON backup to FILE (or to standard output)."""
    document = export_document()
    text = dump(document)
    if file in (None, "-"):
        click.echo(text, nl=False)
        return
    path = Path(file)
    try:
        write_backup(path, text)
    except OSError as error:  # a folder, a missing one, a full disk: one line, exit 1
        raise click.ClickException(f"Cannot write {file}: {error.strerror}.") from None
    click.echo(
        f"Exported {len(document['players'])} players and "
        f"{len(document['matches'])} matches to {path}.",
        err=True,
    )


def write_backup(path: Path, text: str) -> None:
    """Write ``text`` to ``path``: a plain file replaced whole, never half a backup."""
    if path.exists() and not path.is_file():  # a pipe or a device: write through it
        path.write_text(text, encoding="utf-8")
        return
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)  # gone once it replaced the file; else half written


@click.command("import")
@click.argument("file")
@with_appcontext
def import_command(file: str) -> None:
    """Import a JSON backup from FILE (- for standard input); what is already here stays."""
    try:
        with import_turn():  # before the file is read: another import refuses at once
            report = check_and_import(read_file(file), waiting=say_waiting)
    except BackupError as error:
        raise click.ClickException(error.message()) from None
    click.echo(
        f"Players: {report.players_added} added, {report.players_kept} already here. "
        f"Matches: {report.matches_added} added, {report.matches_kept} already here "
        "(skipped)."
    )
    if report.matches_added:
        click.echo("Figuring the luck of every play of the imported matches…")
        fill_all_missing_luck()
    if copy_after(report):
        wait_for_copies(timeout=600)  # this process ends next: the copy must be done


def read_file(file: str) -> bytes:
    """The bytes of FILE (- for standard input), at most the page's limit (/dev/zero has
    no end), or a one-line refusal."""
    limit = max_upload()
    try:
        if file == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(file, "rb") as opened:
                data = opened.read(limit + 1)
    except OSError as error:
        raise click.ClickException(f"Cannot read {file}: {error.strerror}.") from None
    if len(data) > limit:
        raise too_large()
    return data


def say_waiting(seconds: float) -> None:
    """Tell the command line why a big import has not started writing yet."""
    click.echo(
        "Someone is playing: waiting for a quiet moment to write "
        f"(it takes about {max(1, round(seconds))} s). Ctrl+C stops, importing nothing.",
        err=True,
    )


def copy_after(report: Report) -> threading.Thread | None:
    """After an import that added anything, the automatic copy (as after a finished match)."""
    if not (report.players_added or report.matches_added):
        return None
    return copy_after_import(current_app._get_current_object())


def init_app(app: Flask) -> None:
    """Register the backup page and ``export``, ``import`` and ``restore`` on the app's
    command line, and copy the database after each of the app's finished matches."""
    app.register_blueprint(bp)
    app.cli.add_command(export_command)
    app.cli.add_command(import_command)
    app.cli.add_command(restore_command)
    # Every match that ends is followed by an automatic copy of the database.
    match_finished.connect(copy_after_finished_match, sender=app)
