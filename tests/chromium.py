"""The phone-sized Chromium of the browser tests: where it is, how it starts, the phone's
screen, and the pinned htmx served from the npm copies in place of the CDN.

No other module of tests/: bench/table.py imports it too (``tests.chromium``).
"""

import os
from pathlib import Path

from companion.web.htmx import HTMX_COPY, HTMX_URL, SSE_COPY, SSE_URL

HTMX_FILE = HTMX_COPY / "htmx.min.js"
SSE_FILE = SSE_COPY / "sse.min.js"
CHROMIUM = os.environ.get("COMPANION_CHROMIUM", "/usr/bin/chromium")
LAN_HOST = "companion.lan"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A name for the test servers as phones meet the companion at home: an address that
    # is not loopback, so the page is no secure context (no Wake Lock, no service worker).
    f"--host-resolver-rules=MAP {LAN_HOST} 127.0.0.1",
]
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}


def serve_vendored_htmx(route) -> None:
    """Answer the htmx CDN request with the npm copy; CORS so the SRI check can run."""
    serve_vendored(route, HTMX_FILE)


def serve_vendored_sse(route) -> None:
    """Answer the SSE extension's CDN request with the npm copy, as for htmx."""
    serve_vendored(route, SSE_FILE)


def serve_vendored(route, path: Path) -> None:
    """Answer a CDN request with the npm copy of the file; CORS so the SRI check can run."""
    route.fulfill(
        path=path,
        content_type="application/javascript",
        headers={"Access-Control-Allow-Origin": "*"},
    )


def route_cdn(context) -> None:
    """Serve the pinned CDN files to this browser context from the npm copies."""
    context.route(HTMX_URL, serve_vendored_htmx)
    context.route(SSE_URL, serve_vendored_sse)
