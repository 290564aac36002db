"""Typing survives a reload (issue 31), in Chromium on the real server at a LAN address:
half a round typed on the phone for everybody is back after a reload, and gone once the
round is sent; a correction being typed is back too."""

import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import tokens
from phones import FormPhone, joined
from playwright.sync_api import expect
from test_browser_push import database_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_what_was_typed_is_back_after_a_reload_until_it_is_sent(browser, served, tmp_path):
    _server, port = served(COMPANION_TRUSTED_HOSTS=LAN_HOST)
    base = f"http://{LAN_HOST}:{port}"
    app = database_app(tmp_path)
    _client, _ids, match_id, _phones = joined(app, f"http://127.0.0.1:{port}", 0, FormPhone)
    context = new_phone_context(browser)
    try:
        phone = context.new_page()
        phone.goto(f"{base}/matches/{match_id}/join/{tokens(app, match_id)[0]}")
        assert phone.evaluate("window.isSecureContext") is False
        anna, ben, cleo = (phone.get_by_label(name, exact=True) for name in ("Anna", "Ben", "Cleo"))
        anna.fill("41")
        ben.press_sequentially("4")  # half a card: a key at a time, as a thumb types
        phone.reload()
        expect(anna).to_have_value("41")
        expect(ben).to_have_value("4")
        expect(cleo).to_have_value("")
        ben.fill("42")
        cleo.fill("43")
        cleo.press("Enter")  # the round is sent and placed
        expect(phone.locator(".summary-step", has_text="Cleo")).to_be_visible()
        phone.reload()
        for field in (anna, ben, cleo):  # round 2's fields: nothing of round 1
            expect(field).to_have_value("")
        assert phone.evaluate("Object.keys(sessionStorage).filter(k => k.includes('typed'))") == []

        phone.goto(f"{base}/matches/{match_id}/games/1/rounds/1/correct")
        field = phone.get_by_label("Cleo", exact=True)
        field.fill("44")
        phone.reload()
        expect(phone.get_by_label("Cleo", exact=True)).to_have_value("44")
    finally:
        context.close()
