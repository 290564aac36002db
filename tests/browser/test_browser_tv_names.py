"""Names whole on the TV at 1280x720 (issue 57): the round's summary and the final chart
show a 12-letter name in full, where there is room for it, and the chart's names read
from the sofa; at a home network's address, in EN, DE and FR."""

import itertools

import pytest
from browsing import AtTheLan, match_with_rules, play_cards_game, seat_ids, type_scores
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

_serials = itertools.count(1)
SIZE = (1280, 720)
# A name cut by CSS (an ellipsis): its box holds less than its text.
CUT = "els => els.filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent)"
# Each end label of the chart: its text, its height and place on screen, and whether it
# lies inside the chart's picture.
LABELS = """els => els.map(el => { const box = el.getBoundingClientRect(),
    frame = el.ownerSVGElement.getBoundingClientRect();
    return {text: el.textContent, height: box.height, top: box.top, bottom: box.bottom,
            inside: box.left >= frame.left && box.right <= frame.right + 0.5
                && box.top >= frame.top - 0.5 && box.bottom <= frame.bottom + 0.5}; })"""
PORTRAIT = (768, 1024)  # a tablet on its stand


def twelve_letter_names(count: int) -> list[str]:
    """New players, each name 12 letters long ("Oma Gertr" and three more)."""
    return [f"Oma Gertr{next(_serials):03d}" for _ in range(count)]


def open_tv(browser, match_url: str, lang: str, size: tuple[int, int] = SIZE):
    """The table view at 1280x720 (or ``size``) in this language, at the home network's
    address."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.add_cookies([{"name": "lang", "value": lang, "url": match_url}])
    tv = context.new_page()
    tv.goto(f"{match_url}/table")
    return tv


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_a_twelve_letter_name_is_whole_on_the_tv(browser, page, lan_server, artifacts, lang):
    names = twelve_letter_names(5)
    phone = AtTheLan(page, lan_server)
    match_url = match_with_rules(phone, lan_server, names, "more_than", 66)
    play_cards_game(phone, match_url, 1, seed=5, rounds=6)
    tv = open_tv(browser, match_url, lang)
    try:
        steps = tv.locator(".summary-steps .name")
        expect(steps.first).to_be_visible()
        tv.screenshot(path=artifacts / f"tv-names-round-{lang}.png")
        assert sorted(set(steps.all_inner_texts())) == sorted(names)
        assert tv.eval_on_selector_all(".summary-steps .name", CUT) == []
        # The score's names too: five players leave it the height for two lines each.
        assert tv.eval_on_selector_all("#live-score tbody .name", CUT) == []
        tv.screenshot(path=artifacts / f"tv-names-round-{lang}.png")
    finally:
        tv.context.close()


@pytest.mark.parametrize("size", [SIZE, PORTRAIT], ids=["landscape", "portrait"])
@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_final_chart_names_everyone_whole_and_large(
    browser, page, lan_server, artifacts, lang, size
):
    names = twelve_letter_names(5)
    phone = AtTheLan(page, lan_server)
    match_url = match_with_rules(phone, lan_server, names, "more_than", 66)
    ids = seat_ids(phone, match_url)
    # Totals 70, 25, 20, 10 and 5: two pairs of names 5 bulls apart.
    type_scores(phone, match_url, 1, dict(zip(ids, (20, 15, 10, 5, 0), strict=True)))
    type_scores(phone, match_url, 2, dict(zip(ids, (50, 10, 10, 5, 5), strict=True)))
    tv = open_tv(browser, match_url, lang, size)
    shot = artifacts / f"tv-names-chart-{lang}-{size[0]}x{size[1]}.png"
    try:
        expect(tv.locator(".standings .chart .label")).to_have_count(5)
        tv.screenshot(path=shot)
        labels = tv.eval_on_selector_all(".standings .chart .label", LABELS)
        assert sorted(label["text"] for label in labels) == sorted(names)
        assert all(label["inside"] for label in labels), labels
        assert min(label["height"] for label in labels) >= 13.5, labels  # 9 px before
        # Names at close totals one under the other, not on top of each other.
        boxes = sorted(labels, key=lambda label: label["top"])
        assert all(
            lower["top"] >= upper["bottom"] - 1 for upper, lower in itertools.pairwise(boxes)
        ), boxes
        tv.screenshot(path=shot)
    finally:
        tv.context.close()
