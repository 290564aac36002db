"""A busy database on a phone: the message shows, what was typed stays, sending again works."""

import threading

import pytest
from browsing import htmx_started
from conftest import make_app, stop_server
from holders import held_by_another_program
from playwright.sync_api import expect
from waitress import create_server

from companion.db import db
from companion.models import Player

pytestmark = pytest.mark.browser


@pytest.fixture
def busy_server(tmp_path):
    """A server whose writes wait only 0.3 s for the database; yields (app, base URL)."""
    app = make_app(tmp_path / "busy.sqlite", WTF_CSRF_ENABLED=True, WRITE_WAIT=0.3)
    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.effective_port}"
    stop_server(server, thread)


def players(app) -> list[str]:
    with app.app_context():
        return sorted(db.session.scalars(db.select(Player.name)))


def test_a_player_added_while_the_database_is_busy_keeps_the_name(page, busy_server, artifacts):
    app, base = busy_server
    page.goto(f"{base}/players/")
    htmx_started(page)
    page.get_by_label("New player").fill("Zoe")
    with held_by_another_program(app):
        page.get_by_role("button", name="Add player").click()
        notice = page.locator("#server-message")
        notice.wait_for()
        assert "busy storing something else" in notice.inner_text()
        assert page.get_by_label("New player").input_value() == "Zoe"
        page.screenshot(path=artifacts / "busy-notice.png")
    assert players(app) == []
    page.get_by_role("button", name="Add player").click()  # the same form, sent again
    page.get_by_role("link", name="Zoe").wait_for()
    page.locator("#server-message").wait_for(state="detached")  # the notice goes
    assert players(app) == ["Zoe"]


def test_without_javascript_the_busy_page_sends_the_name_again(page_nojs, busy_server, artifacts):
    app, base = busy_server
    page_nojs.goto(f"{base}/players/")
    page_nojs.get_by_label("New player").fill("Zoe")
    with held_by_another_program(app):
        page_nojs.get_by_role("button", name="Add player").click()
        assert page_nojs.locator("h1").inner_text() == "Not saved yet"
        page_nojs.screenshot(path=artifacts / "busy-page.png")
    assert players(app) == []
    page_nojs.get_by_role("button", name="Send again").click()
    assert page_nojs.url == f"{base}/players/"
    # The click waits for the players page to commit, not for its list to be read in.
    expect(page_nojs.get_by_role("link", name="Zoe")).to_have_count(1)
    assert players(app) == ["Zoe"]
