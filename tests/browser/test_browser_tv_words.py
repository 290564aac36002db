"""The TV speaks as a screen (issue 57): at 1280x720, at a home network's address, in
English, German and French, losing the companion it says it follows the match again
once it answers. The finding: "Reconnecting… What you typed stays here." on a TV, where
nothing is typed."""

import pytest
from browsing import add_player, fits_the_phone, new_names, start_match
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

TV = (1280, 720)
WORDS = {
    "en": "This screen follows the match again as soon as the companion answers.",
    "de": "Dieser Bildschirm zeigt das Spiel wieder, sobald der Begleiter antwortet.",
    "fr": "Cet écran suit de nouveau la partie dès que le compagnon répond.",
}


@pytest.mark.parametrize("lang", WORDS)
def test_a_tv_that_loses_the_companion_says_it_follows_again(
    browser, page, lan_server, artifacts, lang
):
    names = new_names(2, "Screen")
    for name in names:
        add_player(page, lan_server, name)
    start_match(page, lan_server, names)
    match_url = page.url.split("#")[0]
    width, height = TV
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        context.add_cookies([{"name": "lang", "value": lang, "url": lan_server}])
        tv = context.new_page()
        tv.goto(f"{match_url}/table")
        notice = tv.locator("#offline")
        expect(notice).to_be_hidden()
        tv.route("**/live?*", lambda route: route.abort())
        expect(notice).to_be_visible(timeout=5000)
        expect(notice).to_contain_text(WORDS[lang])
        assert "typed" not in notice.inner_text() and "phone" not in notice.inner_text()
        fits_the_phone(tv, width)
        tv.screenshot(path=artifacts / f"tv-offline-{lang}.png")
        tv.unroute("**/live?*")
        expect(notice).to_be_hidden(timeout=5000)
    finally:
        context.close()
