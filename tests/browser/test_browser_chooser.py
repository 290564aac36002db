"""A too-low card at a home table, in Chromium at 390x844 and at a LAN address (no secure
context): the chooser's phone shows the big row buttons in view, another player's phone
says who chooses and keeps the buttons one tap away, in EN, DE and FR."""

import pytest
from browsing import add_player, start_game, start_match
from conftest import new_phone_context
from playwright.sync_api import expect
from test_browser_phones import i_am, invite_links

pytestmark = pytest.mark.browser

CHOOSES = {"en": "chooses a row", "de": "wählt eine Reihe", "fr": "choisit une rangée"}
CHOOSE_FOR = {"en": "Choose for", "de": "Für", "fr": "Choisir pour"}


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_only_the_chooser_gets_the_row_buttons(browser, page, lan_server, artifacts, lang):
    anna, ben = f"Ana{lang}", f"Ben{lang}"
    for name in (anna, ben):  # through the page: the name resolves in Chromium alone
        add_player(page, lan_server, name)
    start_match(page, lan_server, [anna, ben])
    assert page.evaluate("window.isSecureContext") is False  # as at home, over plain http
    start_game(page)
    player_link, _ = invite_links(page, lan_server)
    bens = new_phone_context(browser)
    try:
        bens_phone = bens.new_page()
        bens_phone.goto(player_link)
        for phone, name in ((page, anna), (bens_phone, ben)):
            phone.goto(player_link.split("/join/")[0])
            i_am(phone, name)
            phone.locator(f".lang-switch a[lang={lang}]").click()
            expect(phone.locator("html")).to_have_attribute("lang", lang)
        page.get_by_label(anna, exact=True).fill("39")
        page.get_by_label(anna, exact=True).press("Enter")
        bens_phone.get_by_label(ben, exact=True).fill("3")  # lower than every row
        bens_phone.get_by_label(ben, exact=True).press("Enter")

        # Ben's phone: the four rows as buttons, the suggested one in view.
        buttons = bens_phone.locator(".row-choice button.choice")
        expect(buttons).to_have_count(4)
        expect(bens_phone.locator(".row-choice button.is-suggested")).to_be_in_viewport()
        # Anna's phone: who chooses, in view; no button until "Choose for Ben".
        expect(page.locator(".choosing")).to_contain_text(f"{ben} {CHOOSES[lang]}")
        expect(page.locator(".choosing")).to_be_in_viewport()
        expect(page.locator(".choose-for summary")).to_have_text(
            f"{CHOOSE_FOR[lang]} {ben}" if lang != "de" else f"Für {ben} wählen"
        )
        expect(page.locator(".choose-for summary")).to_be_in_viewport()
        expect(page.locator(".row-choice button.choice").first).to_be_hidden()
        page.screenshot(path=artifacts / f"choice-other-{lang}.png")
        bens_phone.screenshot(path=artifacts / f"choice-chooser-{lang}.png")
        page.locator(".choose-for summary").click()
        expect(page.locator(".row-choice button.choice")).to_have_count(4)
        expect(page.locator(".row-choice button.choice").first).to_be_visible()

        bens_phone.locator(".row-choice button.choice").nth(1).click()  # row 2
        expect(page.locator(".choose-for")).to_have_count(0)
        expect(bens_phone.locator(".row-choice")).to_have_count(0)
    finally:
        bens.close()
