"""A game's review opened at its end on a 390x844 phone, in English, German and French, at
a home network's address: how to read it (its luck is not the luck note's above it) and
the first player's line are on one screen once it is scrolled to, nothing is wider than
the phone; screenshots to look at."""

import pytest
from browsing import fits_the_phone, in_view
from chromium import LAN_HOST
from conftest import make_app, serving
from driver import tokens
from playwright.sync_api import expect
from test_browser_review_arrives import game_over

from companion import store

pytestmark = pytest.mark.browser

SUMMARY = {
    "en": "Cards or choices? This game's review",
    "de": "Karten oder Entscheidungen? Die Auswertung dieser Partie",
    "fr": "Les cartes ou les choix ? L’analyse de cette manche",
}
READING = {"en": "Cards dealt:", "de": "Ausgeteilte Karten:", "fr": "Cartes distribuées"}


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_review_says_how_to_read_it_beside_the_first_line(page, tmp_path, artifacts, lang):
    app = make_app(tmp_path / "companion.sqlite", TRUSTED_HOSTS=LAN_HOST)
    match_id = game_over(app.test_client())
    with app.app_context():
        store.luck_after(match_id)
        assert store.review_after(match_id) == 1
    page.context.set_extra_http_headers({"Accept-Language": lang})
    with serving(app) as port:
        player_token, _watch = tokens(app, match_id)
        page.goto(f"http://{LAN_HOST}:{port}/matches/{match_id}/join/{player_token}")
        review = page.locator(".game-review")
        review.locator("summary").first.click()
        reading = review.locator(".review-reading")
        expect(reading).to_contain_text(READING[lang])
        expect(review.locator("summary").first).to_have_text(SUMMARY[lang])
        first_line = review.locator(".review-player").first
        expect(first_line).to_be_visible()
        reading.scroll_into_view_if_needed()
        assert in_view(reading), reading.bounding_box()
        assert in_view(first_line), first_line.bounding_box()
        fits_the_phone(page)
        page.screenshot(path=artifacts / f"game-review-{lang}.png")
