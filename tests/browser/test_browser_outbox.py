"""A card sent during a Wi-Fi drop arrives (issue 31), in Chromium on the real server at
a LAN address, through a relay the test cuts (tests/relay.py): the card shows as not sent
yet, and goes by itself once the connection is back, stored once."""

import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import tokens
from phones import FormPhone, joined
from playwright.sync_api import expect
from relay import Relay
from sqlalchemy import select
from test_browser_push import database_app

from companion.db import db
from companion.models import PendingCard

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_card_sent_while_cut_off_arrives_without_another_tap(browser, served, tmp_path):
    _server, port = served(COMPANION_LIVE_POLL="null", COMPANION_TRUSTED_HOSTS=LAN_HOST)
    relay = Relay(port)
    app = database_app(tmp_path)
    _client, ids, match_id, _none = joined(app, f"http://127.0.0.1:{port}", 0, FormPhone)
    player_link = f"/matches/{match_id}/join/{tokens(app, match_id)[0]}"
    annas_context, bens_context = new_phone_context(browser), new_phone_context(browser)
    try:
        annas, bens = annas_context.new_page(), bens_context.new_page()
        annas.goto(f"http://{LAN_HOST}:{relay.port}{player_link}")  # through the Wi-Fi
        bens.goto(f"http://127.0.0.1:{port}{player_link}")
        for phone, name in ((annas, "Anna"), (bens, "Ben")):
            phone.get_by_role("button", name=f"I am {name}").click()
            expect(phone.get_by_text(f"You are {name} on this phone.")).to_be_visible()
            expect(phone.locator("#stream")).to_have_attribute(
                "data-stream", "open", timeout=30_000
            )
        relay.cut()
        card = annas.get_by_label("Anna", exact=True)
        card.fill("41")
        card.press("Enter")
        expect(annas.locator(".not-sent")).to_be_visible()  # as long as the Wi-Fi is down
        expect(annas.locator(".not-sent")).to_contain_text("Not sent yet")
        expect(annas.locator(".not-sent")).to_be_in_viewport()
        expect(card).to_have_value("41")
        expect(bens.locator(".entered")).not_to_contain_text("Anna")
        relay.restore()
        expect(bens.locator(".entered")).to_contain_text("Anna")  # no second tap
        expect(annas.locator(".not-sent")).to_have_count(0)
        expect(annas.get_by_text("Your card is in.")).to_be_visible()
        with app.app_context():
            cards = db.session.scalars(
                select(PendingCard.card).where(PendingCard.player_id == ids[0])
            )
            assert list(cards) == [41]  # stored once
    finally:
        annas_context.close()
        bens_context.close()
        relay.close()
