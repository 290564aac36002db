"""A tie for the fewest bulls has no leader (issue 57), on a 390x844 phone and on the TV
at 1280x720, in English, German and French. The finding: three "leads" at 0-0-0."""

import pytest
from browsing import fits_the_phone, match_with_rules, new_names, seat_ids, type_scores
from playwright.sync_api import expect
from test_browser_tv import open_tv

pytestmark = pytest.mark.browser

NOBODY = {"en": "nobody leads", "de": "niemand vorne", "fr": "personne en tête"}


@pytest.mark.parametrize("lang", NOBODY)
def test_nobody_leads_a_tie_on_the_phone_the_tv_and_the_home_page(
    browser, page, live_server, artifacts, lang
):
    names = new_names(3, "Tie")
    match_url = match_with_rules(page, live_server, names, "more_than", 200)
    ids = seat_ids(page, match_url)
    type_scores(page, match_url, 1, dict(zip(ids, [0, 0, 0], strict=True)))
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.goto(match_url)
    expect(page.locator("#live-score tbody tr")).to_have_count(3)
    expect(page.locator("#live-score .tag")).to_have_count(0)
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"tie-phone-{lang}.png", full_page=True)
    tv = open_tv(browser, match_url, (1280, 720), lang)
    try:
        expect(tv.locator(".standings-table tbody tr")).to_have_count(3)
        expect(tv.locator(".standings-table .tag")).to_have_count(0)
        tv.screenshot(path=artifacts / f"tie-tv-{lang}.png")
    finally:
        tv.context.close()
    page.goto(f"{live_server}/")
    line = page.locator(".match-line", has_text=names[0])
    expect(line).to_contain_text(NOBODY[lang])
    fits_the_phone(page)
    line.screenshot(path=artifacts / f"tie-home-{lang}.png")
