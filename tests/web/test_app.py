"""The app shell: configuration, health, errors, headers, languages and fragments."""

import base64
import gzip
import hashlib
import json
import logging.config
import re
import shutil
import stat
import time
from datetime import timedelta
from html.parser import HTMLParser

import brotli
import conftest
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from driver import add_players
from flask_migrate import upgrade
from sqlalchemy import inspect, text, update

from companion import background, create_app, serve, store
from companion.db import db
from companion.models import Player, utcnow
from companion.serve import parse_args
from companion.web import site
from companion.web.htmx import (
    HTMX_INTEGRITY,
    HTMX_URL,
    HTMX_VERSION,
    SSE_INTEGRITY,
    SSE_VERSION,
    render,
)
from companion.web.network import phone_url, print_qr

CSP = (
    "default-src 'self'; script-src 'self' "
    f"https://unpkg.com/htmx.org@{HTMX_VERSION}/dist/htmx.min.js "
    f"https://unpkg.com/htmx-ext-sse@{SSE_VERSION}/dist/sse.min.js; "
    "style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)


class Tags(HTMLParser):
    """Collects every start tag with its attributes."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def find(self, tag: str) -> list[dict]:
        """Attributes of every `tag` element."""
        return [attrs for name, attrs in self.tags if name == tag]


@pytest.fixture
def clean_env(monkeypatch):
    """No COMPANION_* configuration leaks in from the shell running the tests."""
    for name in ("COMPANION_DATABASE_URL", "COMPANION_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)


# --- configuration ---------------------------------------------------------


def test_defaults(clean_env):
    """Without env vars the database lives in instance/ and cookies are locked down."""
    app = create_app({"TESTING": True, "SECRET_KEY": "x"})
    assert app.config["SQLALCHEMY_DATABASE_URI"].endswith("/instance/companion.sqlite")
    assert app.config["SESSION_COOKIE_HTTPONLY"] is True
    assert app.config["SESSION_COOKIE_SAMESITE"] == "Lax"
    assert app.config["MAX_CONTENT_LENGTH"] == 64 * 1024


def test_config_from_env(monkeypatch, tmp_path):
    """COMPANION_* env vars configure the app; DATABASE_URL and SECRET_KEY map by name."""
    monkeypatch.setenv("COMPANION_DATABASE_URL", f"sqlite:///{tmp_path}/env.sqlite")
    monkeypatch.setenv("COMPANION_SECRET_KEY", "1234")  # all digits, still a string
    monkeypatch.setenv("COMPANION_SESSION_COOKIE_SECURE", "true")
    app = create_app({"TESTING": True})
    assert app.config["SQLALCHEMY_DATABASE_URI"] == f"sqlite:///{tmp_path}/env.sqlite"
    assert app.config["SECRET_KEY"] == "1234"
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert "DATABASE_URL" not in app.config


def test_secret_key_generated_once(clean_env, tmp_path):
    """The first start writes a private key file; later starts reuse it."""
    key_file = tmp_path / "secret_key"
    first = create_app({"TESTING": True, "SECRET_KEY_FILE": str(key_file)})
    second = create_app({"TESTING": True, "SECRET_KEY_FILE": str(key_file)})
    assert len(first.config["SECRET_KEY"]) == 64
    assert second.config["SECRET_KEY"] == first.config["SECRET_KEY"]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


@pytest.mark.database  # PostgreSQL's migrations too
def test_migrations_reach_head_and_match_models(tmp_path, monkeypatch):
    """`flask db upgrade` runs cleanly and leaves nothing for autogenerate to add."""
    # env.py configures logging from alembic.ini; not our business inside pytest.
    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "x",
            "SQLALCHEMY_DATABASE_URI": conftest.database_url(tmp_path / "m.db", empty=True),
        }
    )
    with app.app_context():
        upgrade()
        assert "alembic_version" in inspect(db.engine).get_table_names()
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, db.metadata) == []


# --- health ----------------------------------------------------------------


def test_healthz(client):
    """The health check answers ok when the database answers."""
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json == {"status": "ok"}


def test_healthz_database_unreachable(tmp_path):
    """The health check answers 503 when the database cannot be opened (its folder went)."""
    missing = tmp_path / "gone" / "companion.sqlite"
    app = create_app(
        {"TESTING": True, "SECRET_KEY": "x", "SQLALCHEMY_DATABASE_URI": f"sqlite:///{missing}"}
    )
    shutil.rmtree(missing.parent)  # the start made it; it vanished while running
    response = app.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.json == {"status": "unavailable"}


@pytest.mark.database
def test_healthz_says_when_the_derived_data_is_behind_the_table(app, client):
    """Statistics, luck and reviews that have not followed a phone's entry for more than
    five minutes (the background process died, or keeps dying): 200, status "behind"."""
    in_line = background.InLine()
    app.config[store.IN_LINE] = in_line  # as `python -m companion.serve` sets it
    add_players(client, "Anna")  # an entry, now
    in_line.mark(at=time.time() - 10 * 60)  # last in line ten minutes before it
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json["status"] == "behind"
    assert 10 * 60 <= response.json["behind_seconds"] < 11 * 60
    in_line.mark()  # the background process caught up
    assert client.get("/healthz").json == {"status": "ok"}


@pytest.mark.database
def test_healthz_is_ok_when_nothing_was_entered_since_the_data_was_in_line(app, client):
    """A quiet household: the background process last looked an hour ago, and nothing
    has been entered since (nor is it behind by less than five minutes)."""
    in_line = background.InLine()
    app.config[store.IN_LINE] = in_line
    add_players(client, "Anna")
    with app.app_context():
        db.session.execute(update(Player).values(created_at=utcnow() - timedelta(hours=2)))
        db.session.commit()
    in_line.mark(at=time.time() - 60 * 60)
    assert client.get("/healthz").json == {"status": "ok"}
    add_players(client, "Ben")  # now: after the mark, but behind by less than five minutes
    in_line.mark(at=time.time() - 4 * 60)
    assert client.get("/healthz").json == {"status": "ok"}


# --- errors ----------------------------------------------------------------


def test_404_page(client):
    """An unknown page shows the app's own 404 page."""
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "This card is not in the deck" in response.text


def test_404_api_is_json(client):
    """An unknown API path answers JSON, not a page."""
    response = client.get("/api/no-such-endpoint")
    assert response.status_code == 404
    assert response.json == {"error": "Not Found"}


@pytest.mark.app_config(PROPAGATE_EXCEPTIONS=False)
@pytest.mark.parametrize(
    ("path", "expect_json"), [("/boom", False), ("/api/boom", True)], ids=["page", "api"]
)
def test_500(app, path, expect_json):
    """A crash shows the app's 500 page, or JSON under /api/."""

    def boom():
        raise RuntimeError("the engine tripped")

    app.add_url_rule(path, "boom", boom)
    response = app.test_client().get(path)
    assert response.status_code == 500
    if expect_json:
        assert response.json == {"error": "Internal Server Error"}
    else:
        assert "Something went wrong on our side" in response.text


# --- headers and markup ----------------------------------------------------

UNPACK = {"br": brotli.decompress, "gzip": gzip.decompress}


def without_token(page: bytes) -> bytes:
    """The page with its CSRF token blanked out, to compare two requests' pages byte by byte."""
    blanked, count = re.subn(rb'"X-CSRFToken": "[^"]+"', b'"X-CSRFToken": ""', page)
    assert count == 1
    return blanked


@pytest.mark.parametrize("path", ["/", "/healthz", "/no-such-page", "/static/css/app.css"])
def test_security_headers(client, path):
    """Every response carries the CSP and the other protective headers."""
    with client.get(path) as response:  # closes the static file's stream
        headers = response.headers
    assert headers["Content-Security-Policy"] == CSP
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"


def test_vary_on_html_only(client):
    """Pages vary with HX-Request (they may be fragments); JSON does not."""
    assert "HX-Request" in client.get("/").headers["Vary"]
    assert "HX-Request" not in client.get("/healthz").headers.get("Vary", "")


@pytest.mark.parametrize("encoding", ["br", "gzip"])
def test_pages_and_styles_go_compressed_to_a_browser_that_accepts_it(client, encoding):
    """What a phone downloads is compressed (Flask-Compress), and the same once unpacked."""
    plain = client.get("/").data
    packed = client.get("/", headers={"Accept-Encoding": encoding})
    assert packed.headers["Content-Encoding"] == encoding
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert len(packed.data) < len(plain) / 2
    # The CSRF token is signed with the second it was made in: two requests may differ there.
    assert without_token(UNPACK[encoding](packed.data)) == without_token(plain)
    with client.get("/static/css/app.css", headers={"Accept-Encoding": "br"}) as style:
        assert style.headers["Content-Encoding"] == "br"
        assert brotli.decompress(style.get_data()).startswith(b"/*")


def test_a_client_that_asks_for_no_encoding_gets_the_page_as_it_is(client):
    response = client.get("/")
    assert "Content-Encoding" not in response.headers
    assert response.text.startswith("<!doctype html>")


def test_page_has_no_inline_script_or_style(client):
    """The CSP forbids inline code, so the markup must not contain any."""
    html = client.get("/").text
    tags = Tags(html)
    assert all("src" in script for script in tags.find("script"))
    assert tags.find("style") == []
    assert not any("style" in attrs for _, attrs in tags.tags)
    assert not any(name.startswith("on") for _, attrs in tags.tags for name in attrs)


def test_htmx_pinned_with_sri_and_configured(client):
    """htmx comes from the pinned URL with SRI, and 422 answers are swapped."""
    tags = Tags(client.get("/").text)
    [loader, own] = tags.find("script")
    assert loader["src"] == "/static/js/htmx-loader.js" and "defer" in loader
    # The loader takes htmx from its CDN, checked by its hash, else from this server.
    assert json.loads(loader["data-scripts"]) == [
        {
            "src": HTMX_URL,
            "integrity": HTMX_INTEGRITY,
            "copy": f"/vendor/htmx.min.js?v={HTMX_VERSION}",
        }
    ]
    assert own == {"src": "/static/js/table.js", "defer": None}
    [config] = [meta for meta in tags.find("meta") if meta.get("name") == "htmx-config"]
    settings = json.loads(config["content"])
    assert settings["includeIndicatorStyles"] is False
    assert {"code": "422", "swap": True} in settings["responseHandling"]
    viewport = [meta for meta in tags.find("meta") if meta.get("name") == "viewport"]
    assert viewport == [{"name": "viewport", "content": "width=device-width, initial-scale=1"}]


@pytest.mark.app_config(WTF_CSRF_ENABLED=True)
def test_htmx_requests_carry_csrf_token(client):
    """htmx sends the CSRF token as a header, so hx-post and hx-delete pass CSRFProtect."""
    [body] = Tags(client.get("/").text).find("body")
    assert json.loads(body["hx-headers"])["X-CSRFToken"]


# --- languages -------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "lang", "heading"),
    [
        ("de-DE,de;q=0.9,en;q=0.5", "de", "Kein Streit mehr am Tisch"),
        ("en-GB", "en", "Keep the table honest"),
        ("en-GB,de;q=0.5", "en", "Keep the table honest"),  # the order, not an exact match
        ("fr-FR,fr;q=0.9", "fr", "Fini les disputes à table"),
        ("it", "en", "Keep the table honest"),
        (None, "en", "Keep the table honest"),
    ],
)
def test_language_from_browser(client, accept, lang, heading):
    """Without a choice, the page follows the browser's languages, else English."""
    headers = {"Accept-Language": accept} if accept else {}
    html = client.get("/", headers=headers).text
    assert f'<html lang="{lang}">' in html
    assert heading in html


def test_language_cookie_overrides_browser(client):
    """Choosing a language sets a year-long cookie that beats Accept-Language."""
    response = client.get("/lang/de?next=/healthz")
    assert response.status_code == 303
    assert response.headers["Location"] == "/healthz"
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("lang=de;")
    assert "Max-Age=31536000" in cookie
    assert "SameSite=Lax" in cookie
    html = client.get("/", headers={"Accept-Language": "en"}).text
    assert "Kein Streit mehr am Tisch" in html


def test_language_switch_on_every_page(client):
    """Each page links to every language and comes back to itself."""
    html = client.get("/no-such-page").text
    assert 'href="/lang/de?next=/no-such-page"' in html
    assert 'href="/lang/en?next=/no-such-page"' in html
    assert 'href="/lang/fr?next=/no-such-page"' in html


@pytest.mark.parametrize(
    "unsafe",
    [
        "//evil.com",
        "https://evil.com",
        "/\\evil.com",
        "javascript:alert(1)",
        "evil.com",
        "/\t/evil.com",
        "",
        "///evil.com",
    ],
)
def test_language_switch_refuses_foreign_next(client, unsafe):
    """`next` must be a path on this site; anything else goes home (no open redirect)."""
    response = client.get("/lang/de", query_string={"next": unsafe})
    assert response.status_code == 303
    assert response.headers["Location"] == "/"


def test_language_switch_unknown_language(client):
    """Only the languages we translate exist."""
    assert client.get("/lang/it").status_code == 404


# --- fragments -------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "fragment"),
    [
        ({}, False),
        ({"HX-Request": "true"}, True),
        ({"HX-Request": "true", "HX-Boosted": "true"}, False),
        ({"HX-Request": "true", "HX-History-Restore-Request": "true"}, False),
    ],
    ids=["plain", "htmx", "boosted", "history-restore"],
)
def test_render_block(app, headers, fragment):
    """render() gives htmx only the named block, everyone else the whole page."""
    with app.test_request_context("/", headers=headers):
        html = render("pages/home.html", block="content")
    assert "<h1>Keep the table honest</h1>" in html
    assert ("<!doctype html>" not in html) is fragment


def test_render_without_block_is_full_page(app):
    """Without a block name even htmx gets the full page."""
    with app.test_request_context("/", headers={"HX-Request": "true"}):
        assert "<!doctype html>" in render("pages/home.html")


def test_home_view_fragment(client):
    """The home view answers htmx with its content block only."""
    response = client.get("/", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<html" not in response.text
    assert "Keep the table honest" in response.text
    assert "HX-Request" in response.headers["Vary"]


# --- serving on the LAN ----------------------------------------------------


def test_serve_args_from_env(monkeypatch):
    """Host, port and workers come from flags, else COMPANION_HOST / _PORT / _WORKERS."""
    monkeypatch.setenv("COMPANION_HOST", "127.0.0.1")
    monkeypatch.setenv("COMPANION_PORT", "8123")
    monkeypatch.setenv("COMPANION_WORKERS", "3")
    monkeypatch.delenv("COMPANION_CERT", raising=False)  # HTTPS: tests/serve/test_https.py
    monkeypatch.delenv("COMPANION_KEY", raising=False)
    plain = {"cert": None, "key": None}
    assert vars(parse_args([])) == {
        "host": "127.0.0.1",
        "port": 8123,
        "workers": 3,
        "workers_why": "as COMPANION_WORKERS asks",
        **plain,
    }
    assert vars(parse_args(["--host", "0.0.0.0", "--port", "9000", "--workers", "1"])) == {
        "host": "0.0.0.0",
        "port": 9000,
        "workers": 1,
        "workers_why": "as --workers asks",
        **plain,
    }


def test_serve_defaults_to_one_worker_per_core_up_to_four(monkeypatch):
    monkeypatch.delenv("COMPANION_WORKERS", raising=False)
    monkeypatch.setattr(serve, "memory_mb", lambda: 4096)  # a Raspberry Pi 4's
    for cores, workers, why in [
        (None, 1, "1 worker: one core"),
        (1, 1, "1 worker: one core"),
        (2, 2, "2 workers: one per core"),
        (4, 4, "4 workers: one per core"),
        (16, 4, "4 workers: one per core, at most 4"),
    ]:
        monkeypatch.setattr("os.cpu_count", lambda cores=cores: cores)
        args = parse_args([])
        assert (args.workers, serve.workers_line(args)) == (workers, why)


def test_a_machine_with_a_gigabyte_or_less_serves_with_one_worker_and_says_why(monkeypatch):
    """A Pi Zero 2 W (512 MB) or an old Pi 3 (1 GB): a second worker's memory is a
    tenth of what the machine has, and one worker serves a table well within its CPU."""
    monkeypatch.delenv("COMPANION_WORKERS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    for memory in (427, 512, 921, 1024):
        monkeypatch.setattr(serve, "memory_mb", lambda memory=memory: memory)
        args = parse_args([])
        assert args.workers == 1
        assert serve.workers_line(args) == f"1 worker: this machine has {memory} MB of memory"
    monkeypatch.setattr(serve, "memory_mb", lambda: 1025)
    assert parse_args([]).workers == 4
    monkeypatch.setattr(serve, "memory_mb", lambda: None)  # no /proc/meminfo: by its cores
    assert parse_args([]).workers == 4


def test_workers_asked_for_are_taken_whatever_the_memory(monkeypatch):
    monkeypatch.setattr(serve, "memory_mb", lambda: 512)
    monkeypatch.setenv("COMPANION_WORKERS", "3")
    assert serve.workers_line(parse_args([])) == "3 workers: as COMPANION_WORKERS asks"
    asked = parse_args(["--workers", "2"])
    assert (asked.workers, serve.workers_line(asked)) == (2, "2 workers: as --workers asks")


def test_the_memory_is_read_from_proc_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:         437468 kB\nMemFree:           12000 kB\n")
    assert serve.memory_mb(meminfo) == 427
    assert serve.memory_mb(tmp_path / "absent") is None  # Windows, macOS
    meminfo.write_text("MemFree:           12000 kB\n")
    assert serve.memory_mb(meminfo) is None


def test_serve_refuses_zero_workers(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--workers", "0"])
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_phone_url():
    """A concrete host is used as is; all interfaces mean this machine's LAN address."""
    assert phone_url("192.168.1.20", 8000) == "http://192.168.1.20:8000/"
    assert phone_url("0.0.0.0", 8000).startswith("http://")
    assert "0.0.0.0" not in phone_url("0.0.0.0", 8000)
    assert phone_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/"  # it listens there alone
    assert phone_url("::1", 8000) == "http://[::1]:8000/"


def test_print_qr(capsys):
    """The QR code is printed as text a terminal can show."""
    print_qr("http://192.168.1.20:8000/")
    lines = capsys.readouterr().out.splitlines()
    width = len(lines[0])
    assert width >= 25  # version 2+ with its quiet zone
    assert {len(line) for line in lines} == {width}
    assert len(lines) == (width + 1) // 2  # square: each text line holds two module rows


@pytest.mark.sqlite_only("SQLite's pragma")
def test_database_is_sqlite_with_foreign_keys(app):
    """SQLite connections enforce foreign keys."""
    with app.app_context():
        assert db.session.execute(text("PRAGMA foreign_keys")).scalar() == 1


def test_the_pinned_htmx_copy_is_served_for_a_year(client):
    """The npm copy that make run installs is served with the CDN copy's SRI-checked bytes."""
    with client.get(f"/vendor/htmx.min.js?v={HTMX_VERSION}") as response:
        assert response.status_code == 200
        assert response.mimetype in ("application/javascript", "text/javascript")
        assert response.cache_control.max_age == 365 * 24 * 60 * 60
        digest = base64.b64encode(hashlib.sha384(response.get_data()).digest()).decode()
    assert f"sha384-{digest}" == HTMX_INTEGRITY


def test_the_pinned_sse_extension_copy_is_served_for_a_year(client):
    """The SSE extension's npm copy, with the bytes its SRI hash names."""
    with client.get(f"/vendor/sse.min.js?v={SSE_VERSION}") as response:
        assert response.status_code == 200
        assert response.cache_control.max_age == 365 * 24 * 60 * 60
        digest = base64.b64encode(hashlib.sha384(response.get_data()).digest()).decode()
    assert f"sha384-{digest}" == SSE_INTEGRITY


def test_without_the_htmx_copy_the_fallback_is_a_plain_404(client, monkeypatch, tmp_path):
    monkeypatch.setattr(site, "HTMX_COPY", tmp_path)
    assert client.get("/vendor/htmx.min.js").status_code == 404
