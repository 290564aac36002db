"""The 6 nimmt! table companion: a Flask + htmx app for one household's games."""

import os
import re
import secrets
from pathlib import Path

from flask import Flask, Response, current_app, render_template, request
from flask_babel import get_locale
from werkzeug.exceptions import HTTPException

from companion import present
from companion.commands import register_commands
from companion.db import babel, csrf, db, migrate
from companion.faults import (
    OTHER_KEY,
    check_storage,
    ensure_folder,
    register_fault_handlers,
    secret_key_problem,
)
from companion.htmx import HTMX_CONFIG, HTMX_INTEGRITY, HTMX_URL, HTMX_VERSION
from companion.i18n import LANGUAGES, install_template_gettext, select_locale

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# Env vars whose names differ from the Flask config keys they set; read verbatim
# because from_prefixed_env would parse an all-digit secret as a number.
ENV_ALIASES = {
    "COMPANION_DATABASE_URL": "SQLALCHEMY_DATABASE_URI",
    "COMPANION_SECRET_KEY": "SECRET_KEY",
}


def create_app(test_config: dict | None = None) -> Flask:
    """Create and configure the companion app."""
    app = Flask(
        __name__,
        instance_path=str(PROJECT_ROOT / "instance"),
        instance_relative_config=True,
        template_folder=str(PROJECT_ROOT / "templates"),
        static_folder=str(PROJECT_ROOT / "static"),
    )
    # Block tags leave no blank lines and indentation behind: a phone downloads less.
    app.jinja_options = {**app.jinja_options, "trim_blocks": True, "lstrip_blocks": True}
    configure(app, test_config)
    from companion import guard  # it needs serve, which needs create_app

    guard.init_app(app)
    check_storage(app)  # a read-only or missing database stops here, in one line

    db.init_app(app)
    # Batch mode: SQLite cannot ALTER most things, Alembic copies the table instead.
    migrate.init_app(app, db, directory=str(PROJECT_ROOT / "migrations"), render_as_batch=True)
    csrf.init_app(app)
    babel.init_app(app, locale_selector=select_locale)
    install_template_gettext(app)

    # Globals, not context-processor values: imported macros (cards, rows) need them.
    app.jinja_env.globals.update(present.TEMPLATE_GLOBALS)
    register_blueprints(app)
    register_commands(app)
    register_error_handlers(app)
    register_fault_handlers(app, wants_json)  # 503 for a busy or broken database
    app.after_request(add_security_headers)
    app.context_processor(template_globals)
    from companion.live import QuietPolls

    app.wsgi_app = QuietPolls(app)
    return app


def configure(app: Flask, test_config: dict | None) -> None:
    """Load defaults, then COMPANION_* env vars, then the test config; ensure a secret key."""
    app.config.from_mapping(
        SQLALCHEMY_DATABASE_URI=f"sqlite:///{Path(app.instance_path) / 'companion.sqlite'}",
        SECRET_KEY_FILE=str(Path(app.instance_path) / "secret_key"),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        MAX_CONTENT_LENGTH=64 * 1024,
        HTMX_VERSION=HTMX_VERSION,
        HTMX_URL=HTMX_URL,
        HTMX_INTEGRITY=HTMX_INTEGRITY,
    )
    app.config.from_prefixed_env("COMPANION")
    app.config.pop("DATABASE_URL", None)
    for env_name, key in ENV_ALIASES.items():
        if env_name in os.environ:
            app.config[key] = os.environ[env_name]
    if test_config is not None:
        app.config.from_mapping(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = load_or_create_secret_key(Path(app.config["SECRET_KEY_FILE"]))


def load_or_create_secret_key(path: Path) -> str:
    """Read the local secret key, generating it (mode 0600) on first start."""
    try:
        if path.exists():
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


def register_blueprints(app: Flask) -> None:
    """Attach every feature blueprint."""
    from companion import (
        api,
        backup,
        games,
        history,
        i18n,
        leaderboard,
        links,
        live,
        matches,
        pages,
        players,
        replay,
        resolver,
    )

    app.register_blueprint(pages.bp)
    app.register_blueprint(i18n.bp)
    app.register_blueprint(players.bp)
    app.register_blueprint(matches.bp)
    app.register_blueprint(games.bp)
    app.register_blueprint(links.bp)
    app.register_blueprint(live.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(resolver.bp)
    app.register_blueprint(leaderboard.bp)
    app.register_blueprint(history.bp)
    app.register_blueprint(replay.bp)
    app.register_blueprint(backup.bp)
    # The JSON API stores nothing and takes no cookies, so a forged request gains nothing.
    csrf.exempt(api.bp)


def wants_json() -> bool:
    """True for JSON API paths, which answer errors in JSON."""
    return request.path == "/api" or request.path.startswith("/api/")


def register_error_handlers(app: Flask) -> None:
    """Render 404 and 500 as pages of the app, and every API error as JSON."""

    @app.errorhandler(403)
    def forbidden(error: HTTPException):
        """A write without the match's player link."""
        if wants_json():
            return {"error": error.name}, 403
        return render_template("errors/403.html"), 403

    @app.errorhandler(404)
    def not_found(error: HTTPException):
        """Page not found."""
        if wants_json():
            return {"error": error.name}, 404
        return render_template("errors/404.html"), 404

    @app.errorhandler(500)
    def server_error(error: HTTPException):
        """Unexpected failure; Flask has already logged the traceback."""
        if wants_json():
            return {"error": error.name}, 500
        return render_template("errors/500.html"), 500

    @app.errorhandler(HTTPException)
    def other_http_error(error: HTTPException):
        """Any other HTTP error: JSON for the API, Werkzeug's plain page elsewhere."""
        if wants_json():
            return {"error": error.name}, error.code
        return error


def add_security_headers(response: Response) -> Response:
    """Set CSP and friends on every response, and Vary on pages htmx may fragment."""
    response.headers["Content-Security-Policy"] = content_security_policy()
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    if response.mimetype == "text/html":
        response.vary.add("HX-Request")
        compact_html(response)
    return response


# Runs of whitespace between and inside tags, left by template indentation. Browsers
# render a run like one space; no page uses <pre> or <textarea>, where it would matter.
WHITESPACE_RUN = re.compile(r"\s{2,}")


def compact_html(response: Response) -> None:
    """Collapse template indentation in an HTML answer: fewer bytes to a phone.

    A live poll's answer is made of pieces compacted once when rendered (``compact``),
    and says so with ``response.compacted``: it is not scanned again for every phone.
    """
    if getattr(response, "compacted", False):
        return
    if not response.direct_passthrough and not response.is_streamed:
        response.set_data(compact(response.get_data(as_text=True)))


def compact(html: str) -> str:
    """The HTML with every run of whitespace made one space."""
    return WHITESPACE_RUN.sub(" ", html)


def content_security_policy() -> str:
    """The CSP: our own files plus the one pinned htmx script, nothing inline."""
    # The configured URL, so a COMPANION_HTMX_URL override (a local copy) is allowed too.
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' {current_app.config['HTMX_URL']}",
            "style-src 'self'",
            "img-src 'self' data:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def template_globals() -> dict:
    """Values every template needs: the language switch and the htmx settings."""
    return {
        "current_locale": str(get_locale() or "en"),
        "languages": LANGUAGES,
        "htmx_config": HTMX_CONFIG,
    }
