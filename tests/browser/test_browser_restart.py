"""A seat survives a browser restart (issue 31), in Chromium on the real server (gevent
workers) at a LAN address: a browser closed and opened again keeps only the cookies with
an expiry; the phone is still Anna, holds the player link and sends her card."""

import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import tokens
from phones import FormPhone, joined
from playwright.sync_api import expect
from test_browser_push import database_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_browser_restart_at_home_keeps_the_seat(browser, served, tmp_path):
    _server, port = served(COMPANION_TRUSTED_HOSTS=LAN_HOST)
    base = f"http://{LAN_HOST}:{port}"
    app = database_app(tmp_path)
    _client, _ids, match_id, _none = joined(app, f"http://127.0.0.1:{port}", 0, FormPhone)
    before = new_phone_context(browser)
    try:
        phone = before.new_page()
        phone.goto(f"{base}/matches/{match_id}/join/{tokens(app, match_id)[0]}")
        phone.get_by_role("button", name="I am Anna").click()
        expect(phone.get_by_text("You are Anna on this phone.")).to_be_visible()
        kept = [cookie for cookie in before.cookies() if cookie["expires"] != -1]
    finally:
        before.close()  # the browser is closed: session cookies go
    restarted = new_phone_context(browser)
    try:
        restarted.add_cookies(kept)
        phone = restarted.new_page()
        phone.goto(f"{base}/matches/{match_id}")
        expect(phone.get_by_text("You are Anna on this phone.")).to_be_visible()
        expect(phone.get_by_role("link", name="Invite")).to_be_visible()
        card = phone.get_by_label("Anna", exact=True)
        card.fill("41")
        card.press("Enter")
        expect(phone.get_by_text("Your card is in.")).to_be_visible()
    finally:
        restarted.close()
