"""HTMX_URL can point at another copy of the pinned htmx file; the page and CSP follow it."""

import html as html_module
import json
import re

import pytest

from companion import create_app
from companion.web.htmx import HTMX_INTEGRITY, HTMX_URL, SSE_URL

LOCAL_COPY = "http://127.0.0.1:8123/htmx.min.js"


def htmx_script(html: str) -> dict:
    """What the page's loader takes htmx from (static/js/htmx-loader.js)."""
    [scripts] = re.findall(r"data-scripts='([^']*)'", html)
    return json.loads(html_module.unescape(scripts))[0]


def script_sources(response) -> list[str]:
    """The sources the CSP allows for scripts."""
    directives = dict(
        part.strip().split(" ", 1)
        for part in response.headers["Content-Security-Policy"].split(";")
    )
    return directives["script-src"].split()


@pytest.mark.app_config(HTMX_URL=LOCAL_COPY)
def test_configured_htmx_url_is_loaded_with_the_same_sri(client):
    """The page loads the configured copy, still checked against the pinned hash."""
    script = htmx_script(client.get("/").text)
    assert script["src"] == LOCAL_COPY
    assert script["integrity"] == HTMX_INTEGRITY


@pytest.mark.app_config(HTMX_URL=LOCAL_COPY)
def test_csp_allows_the_configured_htmx_url_only(client):
    """The CSP names the configured copy instead of the CDN, so the browser runs it."""
    sources = script_sources(client.get("/"))
    assert sources == ["'self'", LOCAL_COPY, SSE_URL]
    assert HTMX_URL not in sources


def test_csp_allows_the_cdn_by_default(client):
    """Without an override the CDN URL is the one allowed."""
    assert script_sources(client.get("/")) == ["'self'", HTMX_URL, SSE_URL]


def test_htmx_url_from_the_environment(monkeypatch, tmp_path):
    """COMPANION_HTMX_URL sets it, like any other COMPANION_* setting."""
    monkeypatch.setenv("COMPANION_HTMX_URL", LOCAL_COPY)
    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite",
            "SECRET_KEY": "test",
            "TESTING": True,
        }
    )
    response = app.test_client().get("/healthz")
    assert script_sources(response) == ["'self'", LOCAL_COPY, SSE_URL]
