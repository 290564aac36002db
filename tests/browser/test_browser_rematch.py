"""A rematch keeps the phones (issues 31 and 57), in Chromium on the real server (gevent
workers, pushes) at a LAN address, as at home: the phone that taps Rematch shows the new
match under its own address; the other players' phones and the TV keep the finished
match's result until the rematch's first game starts, then follow by themselves, each
phone still "I am" its player, in its own language; the match's note comes along, and
the TV says the rematch started, with the code for a phone that left. The finished
match, opened afresh, stays its own."""

import re

import pytest
from browsing import fits_the_phone, in_view
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import add_players, score_game, start_match, tokens
from playwright.sync_api import expect
from test_browser_push import database_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NO_POLL = {"COMPANION_LIVE_POLL": "null", "COMPANION_TRUSTED_HOSTS": LAN_HOST}
NOTE = "Oma's 80th"
YOU_ARE = {
    "en": "You are {} on this phone.",
    "de": "Auf diesem Handy bist du {}.",
    "fr": "Sur ce téléphone, tu es {}.",
}
STARTED = {"en": "Rematch started", "de": "Revanche gestartet", "fr": "Revanche lancée"}
FOLLOWS_WITHIN_MS = 3000  # the "a second or two", with room for a loaded machine


def test_a_rematch_takes_every_phone_and_the_tv_along(browser, served, tmp_path, artifacts):
    _server, port = served(**NO_POLL)
    base = f"http://{LAN_HOST}:{port}"
    app = database_app(tmp_path)
    client = app.test_client()
    anna, ben, cleo = add_players(client, "Anna", "Ben", "Cleo")
    old = start_match(client, [anna, ben, cleo], end_kind="games", end_value=1)
    assert client.post(f"/matches/{old}/note", data={"note": NOTE}).status_code == 303
    player_token, watch_token = tokens(app, old)
    contexts = [new_phone_context(browser) for _ in range(4)]
    try:
        annas, bens, cleos, tv = (context.new_page() for context in contexts)
        tv.set_viewport_size({"width": 1280, "height": 720})
        phones = {"Anna": (annas, "en"), "Ben": (bens, "de"), "Cleo": (cleos, "fr")}
        for name, (phone, lang) in phones.items():
            phone.goto(f"{base}/matches/{old}/join/{player_token}")
            phone.get_by_role("button", name=f"I am {name}").click()
            expect(phone.get_by_text(f"You are {name} on this phone.")).to_be_visible()
            phone.locator(f".lang-switch a[lang={lang}]").click()
            expect(phone.get_by_text(YOU_ARE[lang].format(name))).to_be_visible()
        tv.goto(f"{base}/matches/{old}/join/{watch_token}")
        tv.goto(f"{base}/matches/{old}/table")
        assert annas.evaluate("window.isSecureContext") is False  # plain http, as at home
        for page in (annas, bens, cleos, tv):
            expect(page.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
        assert score_game(client, old, {anna: 3, ben: 5, cleo: 4}).status_code == 303

        annas.get_by_role("button", name="Rematch").click()
        expect(annas).to_have_url(re.compile(rf"/matches/(?!{old}\b)\d+$"))
        new = int(annas.url.rsplit("/", 1)[1])
        expect(annas.get_by_text("You are Anna on this phone.")).to_be_visible()
        expect(annas.locator(".note-text")).to_have_text(NOTE)  # the note came along
        # Until its first game the others keep the result, the rematch one tap away.
        for phone in (bens, cleos):
            link = phone.locator("a.rematch")  # "Revanche: Spiel 2", "Revanche : partie 2"
            expect(link).to_contain_text(re.compile(rf"^Revanche\W.*\W{new}$"))
            expect(link).to_be_in_viewport()
        expect(tv.locator(".result-banner .outcome")).to_have_text("Winner: Anna")
        assert (bens.url, tv.url) == (f"{base}/matches/{old}", f"{base}/matches/{old}/table")

        for row, card in enumerate((12, 24, 37, 40), 1):  # Anna starts game 1 of the rematch
            annas.locator(f"#field-row{row}").fill(str(card))
        annas.get_by_role("button", name="Start game 1").click()
        # Every phone and the TV follow by themselves, by the push.
        for name, (phone, lang) in phones.items():
            expect(phone).to_have_url(f"{base}/matches/{new}", timeout=FOLLOWS_WITHIN_MS)
            expect(phone.get_by_text(YOU_ARE[lang].format(name))).to_be_visible()
            mine = phone.get_by_label(name, exact=True)  # their own card's field, a player
            expect(mine).to_be_visible()
            expect(phone.locator(".note-text")).to_have_text(NOTE)
            expect(phone.locator("#stream")).to_have_attribute("data-stream", "open")
            fits_the_phone(phone)
            phone.screenshot(path=artifacts / f"rematch-followed-{lang}.png")
        expect(tv).to_have_url(f"{base}/matches/{new}/table", timeout=FOLLOWS_WITHIN_MS)
        the_rematch_started_on(tv, "en")
        tv.screenshot(path=artifacts / "rematch-tv-en.png")
        for lang in ("de", "fr"):  # the same TV screen in the other languages
            other = new_phone_context(browser, locale=lang)
            try:
                screen = other.new_page()
                screen.set_viewport_size({"width": 1280, "height": 720})
                screen.goto(f"{base}/matches/{new}/table")
                the_rematch_started_on(screen, lang)
                screen.screenshot(path=artifacts / f"rematch-tv-{lang}.png")
            finally:
                other.close()

        # Once its first round is placed, the rematch's TV shows the round, not the code.
        for (name, (phone, _lang)), card in zip(phones.items(), (13, 25, 38), strict=True):
            phone.get_by_label(name, exact=True).fill(str(card))
            phone.get_by_label(name, exact=True).press("Enter")
        expect(tv.locator(".round-summary")).to_be_visible()
        expect(tv.locator(".table-join")).to_have_count(0)

        # The finished match, opened afresh, is its own: the phone and the TV stay there.
        bens.goto(f"{base}/matches/{old}")
        tv.goto(f"{base}/matches/{old}/table")
        for page in (bens, tv):
            expect(page.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
            expect(page.locator("a.rematch[data-follow]")).to_be_attached()
        expect(tv.locator(".result-banner .outcome")).to_have_text("Winner: Anna")
        assert (bens.url, tv.url) == (f"{base}/matches/{old}", f"{base}/matches/{old}/table")
    finally:
        for context in contexts:
            context.close()


def the_rematch_started_on(tv, lang: str) -> None:
    """The TV says the rematch started, with the code for a phone that left, all of it
    on the screen, beside the rematch's rows."""
    join = tv.locator(".table-join")
    expect(join.locator("h2")).to_have_text(STARTED[lang])
    for part in (join.locator("h2"), join.locator(".join-qr"), join.locator(".join-hint")):
        assert in_view(part), part.bounding_box()
    assert in_view(tv.locator(".live-rows .table-rows"))
    fits_the_phone(tv, 1280)
