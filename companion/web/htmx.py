"""htmx: where it is loaded from, how it is configured, and fragment rendering."""

from pathlib import Path

from flask import current_app, render_template, request, url_for
from jinja2_fragments.flask import render_block

# The one place the htmx version lives: base.html, the CSP and the browser tests read it.
HTMX_VERSION = "2.0.8"
HTMX_URL = f"https://unpkg.com/htmx.org@{HTMX_VERSION}/dist/htmx.min.js"
# sha384 of the npm package's dist/htmx.min.js, so a tampered CDN copy is refused.
HTMX_INTEGRITY = "sha384-/TgkGk7p307TH7EXJDuUlgG3Ce1UVolAOFopFekQkkXihi5u/6OCvVKyz1W+idaz"
# The same file from the npm registry, which `make run` (and `make test`) install into
# this ignored folder: served when the CDN cannot be reached. Never committed.
NODE_MODULES = Path(__file__).resolve().parents[2] / "vendor" / "node_modules"
HTMX_COPY = NODE_MODULES / "htmx.org" / "dist"
# htmx's extension for Server-Sent Events (live pushes to the match pages), pinned the
# same way: CDN, SRI hash of the npm package's dist/sse.min.js, and the local copy.
SSE_VERSION = "2.2.4"
SSE_URL = f"https://unpkg.com/htmx-ext-sse@{SSE_VERSION}/dist/sse.min.js"
SSE_INTEGRITY = "sha384-A986SAtodyH8eg8x8irJnYUk7i9inVQqYigD6qZ9evobksGNIXfeFvDwLSHcp31N"
SSE_COPY = NODE_MODULES / "htmx-ext-sse" / "dist"

# Rendered into <meta name="htmx-config">. Indicator styles would be an inline <style>
# (blocked by our CSP), and eval is never needed; 422 carries a form with its errors.
HTMX_CONFIG = {
    "includeIndicatorStyles": False,
    "allowEval": False,
    # Settling the style attribute would set inline styles, which our CSP refuses.
    "attributesToSettle": ["class", "width", "height"],
    "responseHandling": [
        {"code": "204", "swap": False},
        {"code": "[23]..", "swap": True},
        {"code": "422", "swap": True},
        # Another import is running: the backup form says so beside its file field.
        {"code": "409", "swap": True},
        # The database could not take it: show why, keep the form as typed (faults.py).
        {
            "code": "503",
            "swap": True,
            "error": True,  # not "successful": table.js keeps the notice up
            "target": "#server-notice",
            "select": "#server-message",
            "swapOverride": "innerHTML",
        },
        {"code": "[45]..", "swap": False, "error": True},
        {"code": "...", "swap": False},
    ],
}


def pinned_scripts(sse: bool = False) -> list[dict]:
    """What static/js/htmx-loader.js loads, in order: each file's CDN URL, SRI hash and
    the companion's own copy. htmx, and on the live match pages its SSE extension."""
    config = current_app.config
    scripts = [("HTMX", "web.htmx_copy")] + ([("SSE", "web.sse_copy")] if sse else [])
    return [
        {
            "src": config[f"{name}_URL"],
            "integrity": config[f"{name}_INTEGRITY"],
            "copy": url_for(copy, v=config[f"{name}_VERSION"]),
        }
        for name, copy in scripts
    ]


def is_fragment_request() -> bool:
    """True when htmx asks for a piece of a page rather than a whole one."""
    headers = request.headers
    # Boosted links and history restores swap the whole body, so they need the full page.
    return (
        headers.get("HX-Request") == "true"
        and headers.get("HX-Boosted") != "true"
        and headers.get("HX-History-Restore-Request") != "true"
    )


def render(template_name: str, block: str | None = None, **context) -> str:
    """Render the full page, or only `block` when htmx asks for a fragment."""
    if block is None or not is_fragment_request():
        return render_template(template_name, **context)
    # A block runs without its template's top level, so a block's {% from ... import %}
    # must sit inside the block. Context processors run as in render_template.
    return render_block(template_name, block, **context)
