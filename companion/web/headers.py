"""What every answer carries: the security headers, Vary, and the values every template
needs. Compression (gzip, brotli, zstd) is Flask-Compress's, attached in ``web.init_app``."""

from collections.abc import Sequence
from functools import wraps

from flask import Response, current_app, make_response
from flask_babel import get_locale

from companion.web.htmx import HTMX_CONFIG, pinned_scripts
from companion.web.i18n import LANGUAGES


def add_security_headers(response: Response) -> Response:
    """Set CSP and friends on every response, and Vary on pages htmx may fragment."""
    # A page that sets its own (one with its style in it: guard.untrusted_host) keeps it.
    response.headers.setdefault("Content-Security-Policy", content_security_policy())
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    if response.mimetype == "text/html":
        response.vary.add("HX-Request")
    return response


def no_store(view):
    """Decorator: no cache (the browser's, a proxy's) may keep this view's answer.

    For answers that hold a link token (invite, join) or everything stored (exports).
    """

    @wraps(view)
    def answer(*args, **kwargs):
        response = make_response(view(*args, **kwargs))
        response.headers["Cache-Control"] = "no-store"
        return response

    return answer


def content_security_policy(style_hashes: Sequence[str] = ()) -> str:
    """The CSP: our own files plus the pinned htmx scripts, nothing inline but the
    styles of ``style_hashes`` ('sha256-…')."""
    # The configured URLs, so a COMPANION_HTMX_URL override (a local copy) is allowed too.
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' {current_app.config['HTMX_URL']} {current_app.config['SSE_URL']}",
            " ".join(["style-src 'self'", *style_hashes]),
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
        "pinned_scripts": pinned_scripts,
    }
