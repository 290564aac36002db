"""The web layer every feature stands on: rendering (page or htmx fragment), languages,
error pages, security headers, the network guard, the database-fault pages, the pieces a
page shows of a round, what the features share (a match's line in a list, a new player's
name checked), and the site's own small pages."""

from flask import Flask, Response
from flask_compress import Compress

from companion.db import babel
from companion.web import by_address, guard, i18n, present, site, stale
from companion.web.errors import register_error_handlers, wants_json
from companion.web.faults import register_fault_handlers
from companion.web.headers import add_security_headers, template_globals

compress = Compress()


def init_app(app: Flask) -> None:
    """Attach everything the web layer does for every request."""
    guard.init_app(app)
    babel.init_app(
        app,
        locale_selector=i18n.select_locale,
        default_timezone=i18n.household_timezone(app.config.get("TIMEZONE")),
    )
    i18n.install_template_gettext(app)
    # Globals, not context-processor values: imported macros (cards, rows) need them.
    app.jinja_env.globals.update(present.TEMPLATE_GLOBALS)
    app.jinja_env.globals["companion_version"] = site.version()  # the footer's, read once
    register_error_handlers(app)
    register_fault_handlers(app, wants_json)  # 503 for a busy or broken database
    stale.init_app(app)  # a form whose CSRF token no longer fits: 422, send again
    app.after_request(add_security_headers)
    # gzip, brotli or zstd as the phone accepts; not event streams (text/event-stream is
    # not among its types: a compressor would hold each event back).
    compress.init_app(app)
    app.after_request(close_what_compression_wraps)  # runs before the compression
    app.context_processor(template_globals)
    app.register_blueprint(site.bp)
    app.register_blueprint(i18n.bp)
    by_address.init_app(app)  # one address's requests in line, a few at a time


def close_what_compression_wraps(response: Response) -> Response:
    """A streamed answer (a static file) is wrapped by the compressing generator, which
    does not close what it wraps: the answer closes it itself once sent."""
    if response.is_streamed and hasattr(response.response, "close"):
        response.call_on_close(response.response.close)
    return response
