"""Every table reads on a phone (issue 57): at 390x844, at a home network's address, in
English, German and French, with eight players of long names, each header's and each
cell's text lies inside its cell and on the screen, or the table sits in a box that says
in the page's language that it scrolls sideways. The findings: the leaderboard's Luck
column cut off in English, "Moy. têtes" and Luck off the screen in French, the
scoreboard's "Bulls per game" hiding a player and the Time with no word that it scrolls,
"Hornochsen" running into "Stapel" at a game's end in German."""

import re

import pytest
from browsing import (
    AtTheLan,
    fits_the_phone,
    match_with_rules,
    play_cards_game,
    seat_ids,
    type_scores,
)
from conftest import new_phone_context
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

NAMES = (
    "Oma Gertrud",
    "Maximiliane",
    "Bartholomäus",
    "Jacqueline",
    "Friederike",
    "Konstantin",
    "Opa Heinrich",
    "Ann",
)
SCROLLS = {
    "en": "Swipe sideways to see every column.",
    "de": "Zur Seite wischen, um jede Spalte zu sehen.",
    "fr": "Faites glisser de côté pour voir chaque colonne.",
}

# Each visible text of a table whose box leaves its cell (or a box that clips it, as a
# shortened name's), or, outside a box that scrolls, the screen's width.
CUT_TEXT = """() => { const out = [];
  for (const table of document.querySelectorAll('table')) {
    if (!table.checkVisibility()) continue;
    const scrolls = table.closest('.table-scroll');
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const cell = node.parentElement.closest('th, td');
      if (!node.data.trim() || !cell || node.parentElement.closest('.visually-hidden')) continue;
      const range = document.createRange(); range.selectNodeContents(node);
      const boxes = [...range.getClientRects()].filter(r => r.width);
      const walls = [cell.getBoundingClientRect()];
      for (let el = node.parentElement; el !== cell; el = el.parentElement)
        if (getComputedStyle(el).overflowX !== 'visible') walls.push(el.getBoundingClientRect());
      if (!scrolls) walls.push({left: 0, right: innerWidth});
      for (const r of boxes)
        if (walls.some(w => r.left < w.left - 1 || r.right > w.right + 1))
          out.push(`${table.className}: ${cell.tagName} "${node.data.trim()}"`
            + ` ${Math.round(r.left)}-${Math.round(r.right)}`);
    }
  }
  return out; }"""


def in_view_across(locator) -> bool:
    """True when the element lies within the screen's width."""
    box = locator.bounding_box()
    return box["x"] >= 0 and box["x"] + box["width"] <= 390


def assert_the_tables_read(phone, lang: str) -> None:
    """Every table's text whole in its cell and the screen; a table that scrolls says so."""
    phone.wait_for_load_state("load")
    assert phone.locator("table").count(), phone.url
    assert phone.evaluate(CUT_TEXT) == [], phone.url
    for box in phone.locator(".table-scroll").all():
        hint = phone.locator("#" + box.get_attribute("aria-describedby"))
        expect(hint).to_have_text(SCROLLS[lang])
        assert in_view_across(hint)
    fits_the_phone(phone)


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_every_table_fits_a_phone_with_eight_long_names(browser, page, lan_server, artifacts, lang):
    names = [f"{name} {lang}" for name in NAMES]
    page = AtTheLan(page, lan_server)
    match_url = match_with_rules(page, lan_server, names, "more_than", 66)
    play_cards_game(page, match_url, 1, seed=5)
    phone = new_phone_context(browser).new_page()
    phone.context.add_cookies([{"name": "lang", "value": lang, "url": lan_server}])
    try:
        phone.goto(match_url)  # game 1 is over: its bulls, expected, piles
        assert_the_tables_read(phone, lang)
        phone.screenshot(path=artifacts / f"tables-game-end-cards-{lang}.png", full_page=True)
        ids = seat_ids(page, match_url)
        type_scores(page, match_url, 2, {pid: seat for seat, pid in enumerate(ids)})
        phone.goto(match_url)  # a typed game: bulls, "typed" for the piles
        expect(phone.locator(".game-end h3")).to_contain_text("2")
        duel = f"first={ids[0]}&second={ids[1]}"
        for shot, url in [
            ("game-end-typed", match_url),
            ("scoreboard", f"{match_url}/scoreboard"),
            ("leaderboard", f"{lan_server}/leaderboard?period=all"),
            ("head-to-head", f"{lan_server}/leaderboard/head-to-head?{duel}"),
            ("player", f"{lan_server}/players/{ids[0]}/stats"),
            ("backup", f"{lan_server}/backup"),
        ]:
            phone.goto(url)
            phone.locator("details:has(table) > summary").evaluate_all(
                "els => els.forEach(el => el.click())"
            )
            phone.screenshot(path=artifacts / f"tables-{shot}-{lang}.png", full_page=True)
            if shot != "backup":  # copies are made by the server's start, not the tests'
                assert_the_tables_read(phone, lang)
            else:
                fits_the_phone(phone)
        # The match's end: the final totals in the result banner.
        last = dict.fromkeys(ids, 0)
        last[ids[-1]] = 67
        type_scores(page, match_url, 3, last)
        phone.goto(match_url)
        expect(phone.locator(".final-totals")).to_be_visible()
        assert_the_tables_read(phone, lang)
        phone.screenshot(path=artifacts / f"tables-match-end-{lang}.png", full_page=True)
        phone.goto(f"{match_url}/scoreboard")
        assert re.search(r"/matches/\d+/scoreboard$", phone.url)
        assert_the_tables_read(phone, lang)
    finally:
        phone.context.close()
