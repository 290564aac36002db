"""A rematch keeps the phones (issue 31), in Chromium on the real server (gevent workers,
pushes) at a LAN address, as at home: the phone that taps Rematch shows the new match
under its own address, another player's phone follows with one tap and stays "Ben", and
the TV keeps the finished match's winner until the rematch's first game starts, then
follows by itself (issue 43); the finished match's table view stays its own."""

import re

import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import add_players, score_game, start_match, tokens
from playwright.sync_api import expect
from test_browser_push import database_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NO_POLL = {"COMPANION_LIVE_POLL": "null", "COMPANION_TRUSTED_HOSTS": LAN_HOST}


def test_a_rematch_keeps_both_phones_and_the_tv(browser, served, tmp_path):
    _server, port = served(**NO_POLL)
    base = f"http://{LAN_HOST}:{port}"
    app = database_app(tmp_path)
    client = app.test_client()
    anna, ben = add_players(client, "Anna", "Ben")
    old = start_match(client, [anna, ben], end_kind="games", end_value=1)
    player_token, watch_token = tokens(app, old)
    contexts = [new_phone_context(browser) for _ in range(3)]
    try:
        annas, bens, tv = (context.new_page() for context in contexts)
        tv.set_viewport_size({"width": 1280, "height": 720})
        for phone, name in ((annas, "Anna"), (bens, "Ben")):
            phone.goto(f"{base}/matches/{old}/join/{player_token}")
            phone.get_by_role("button", name=f"I am {name}").click()
            expect(phone.get_by_text(f"You are {name} on this phone.")).to_be_visible()
        tv.goto(f"{base}/matches/{old}/join/{watch_token}")
        tv.goto(f"{base}/matches/{old}/table")
        assert annas.evaluate("window.isSecureContext") is False  # plain http, as at home
        for page in (annas, bens, tv):
            expect(page.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
        assert score_game(client, old, {anna: 3, ben: 5}).status_code == 303  # game 1 ends it

        annas.get_by_role("button", name="Rematch").click()
        expect(annas).to_have_url(re.compile(rf"/matches/(?!{old}\b)\d+$"))
        new = int(annas.url.rsplit("/", 1)[1])
        expect(annas.get_by_text("You are Anna on this phone.")).to_be_visible()
        annas.reload()  # the address is the rematch's: a reload stays there
        expect(annas.get_by_text("You are Anna on this phone.")).to_be_visible()
        assert annas.url.endswith(f"/matches/{new}")

        link = bens.get_by_role("link", name=f"Rematch: match {new}")
        expect(link).to_be_in_viewport()  # pushed into the finished match, one tap away
        # The TV has the rematch's link too, and keeps the winner until its first game.
        expect(tv.locator("a.rematch")).to_have_attribute("href", re.compile(r"view=table"))
        expect(tv.locator(".result-banner .outcome")).to_have_text("Winner: Anna")
        assert tv.url == f"{base}/matches/{old}/table"
        link.click()
        expect(bens).to_have_url(f"{base}/matches/{new}")
        expect(bens.get_by_text("You are Ben on this phone.")).to_be_visible()
        expect(bens.get_by_role("link", name="Invite")).to_be_visible()  # a player again

        for row, card in enumerate((12, 24, 37, 40), 1):  # Anna starts game 1 of the rematch
            annas.locator(f"#field-row{row}").fill(str(card))
        annas.get_by_role("button", name="Start game 1").click()
        expect(tv).to_have_url(f"{base}/matches/{new}/table")  # by itself, by the push
        expect(tv.locator(".now-game")).to_contain_text("Game 1")
        # The finished match's table view, opened again, is its own: it does not follow.
        tv.goto(f"{base}/matches/{old}/table")
        expect(tv.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
        expect(tv.locator(".result-banner .outcome")).to_have_text("Winner: Anna")
        expect(tv.locator("a.rematch[data-follow]")).to_be_attached()
        assert tv.url == f"{base}/matches/{old}/table"
    finally:
        for context in contexts:
            context.close()
