"""Two phones and a watcher on one match, in Chromium: each enters their own card, live."""

import itertools
import re

import pytest
from browsing import (
    add_player,
    fits_the_phone,
    start_game,
    start_match,
)
from conftest import new_phone_context
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

_names = itertools.count(1)


def invite_links(page, live_server) -> tuple[str, str]:
    """The player and watch links from the invite page of the match open in ``page``."""
    page.get_by_role("link", name="Invite").click()
    # The invite page, not the one before, and both links in it (the watch link is the
    # last): all_inner_texts() takes what is there, not what is on its way.
    expect(page.locator(".invite-link")).to_have_count(2)
    links = page.locator(".invite-link").all_inner_texts()
    player = next(link for link in links if "/join/" in link)
    assert not any("127.0.0.1" in link or "localhost" in link for link in links)
    # The QR code carries the LAN address; this test reaches the server on loopback.
    return tuple(re.sub(r"^https?://[^/]+", live_server, link) for link in (player, links[-1]))


def i_am(page, name: str) -> None:
    """Tell the phone whose card it enters."""
    page.get_by_role("button", name=f"I am {name}").click()
    page.get_by_text(f"You are {name} on this phone.").wait_for()


def game_one_of_two(page, live_server) -> tuple[str, str, str]:
    """Two new players, their match started on ``page`` and game 1's starting cards in:
    their names and the match's address."""
    anna, ben = f"Ann{next(_names)}", f"Bo{next(_names)}"
    for name in (anna, ben):
        add_player(page, live_server, name)
    start_match(page, live_server, [anna, ben])
    start_game(page)
    return anna, ben, page.url.split("#")[0]


def test_two_phones_enter_their_own_cards_and_a_watcher_follows(
    browser, page, live_server, artifacts
):
    anna, ben, match_url = game_one_of_two(page, live_server)
    player_link, watch_link = invite_links(page, live_server)

    bens_context = new_phone_context(browser)
    watch_context = new_phone_context(browser)
    try:
        bens_phone = bens_context.new_page()
        bens_phone.goto(player_link)
        watcher = watch_context.new_page()
        watcher.goto(watch_link)

        page.goto(match_url)
        i_am(page, anna)
        i_am(bens_phone, ben)

        # Anna enters hers: Ben's phone shows that Anna is in, not which card.
        bens_phone.get_by_label(ben, exact=True).fill("4")  # typing, not yet sent
        page.get_by_label(anna, exact=True).fill("41")
        page.get_by_role("button", name="Send my card").click()
        bens_phone.locator(".entered .is-in").filter(has_text=anna).wait_for(timeout=5000)
        assert "41" not in bens_phone.locator("#live-table").inner_text()
        assert bens_phone.get_by_label(ben, exact=True).input_value() == "4"  # kept
        fits_the_phone(bens_phone)
        bens_phone.screenshot(path=artifacts / "phones-waiting.png", full_page=True)

        # Ben's card completes the round: it resolves on every screen within 2 s.
        bens_phone.get_by_label(ben, exact=True).fill("42")
        bens_phone.get_by_role("button", name="Send my card").click()
        for screen in (page, bens_phone, watcher):
            screen.locator(".summary-step", has_text=ben).filter(has_text="42").wait_for(
                timeout=5000
            )

        # The watcher has no way to enter anything, and a forged post is refused.
        assert watcher.locator("form.round-form").count() == 0
        assert watcher.get_by_role("link", name="Undo…").count() == 0
        forged = watcher.request.post(
            f"{match_url}/rounds", form={"card-1": "50", "game": "1", "round": "2"}
        )
        assert forged.status == 403
        watcher.screenshot(path=artifacts / "phones-watcher.png", full_page=True)
    finally:
        bens_context.close()
        watch_context.close()


def test_a_browser_restart_keeps_the_phones_seat(browser, page, live_server):
    """A browser closed and opened again keeps only the cookies with an expiry. The
    finding: the player link lived in a session cookie, and after a restart the phone
    only followed the match, which nobody could go on with."""
    anna, _ben, match_url = game_one_of_two(page, live_server)
    i_am(page, anna)
    kept = [cookie for cookie in page.context.cookies() if cookie["expires"] != -1]
    restarted = new_phone_context(browser)
    try:
        restarted.add_cookies(kept)
        phone = restarted.new_page()
        phone.goto(match_url)
        expect(phone.get_by_text(f"You are {anna} on this phone.")).to_be_visible()
        expect(phone.get_by_text("This phone follows the match")).to_have_count(0)
        expect(phone.get_by_role("link", name="Invite")).to_be_visible()
    finally:
        restarted.close()


def test_table_view_in_landscape(browser, live_server, artifacts):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        tv = context.new_page()
        name_a, name_b = f"Tv{next(_names)}", f"Tw{next(_names)}"
        for name in (name_a, name_b):
            add_player(tv, live_server, name)
        start_match(tv, live_server, [name_a, name_b])
        start_game(tv)
        tv.get_by_role("link", name="Table view").click()
        tv.locator(".tv .table-rows").wait_for()
        fits_the_phone(tv, 1280)
        tv.screenshot(path=artifacts / "table-view.png")
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_enter_sends_my_card_from_my_own_phone(page, live_server, lang):
    """On "I am Anna", Anna types her card and presses Enter (the keyboard's Go): it is sent,
    though the closed fields for players without a phone follow hers in the form."""
    anna, ben, cleo = f"Ann{next(_names)}", f"Bo{next(_names)}", f"Cy{next(_names)}"
    for name in (anna, ben, cleo):
        add_player(page, live_server, name)
    start_match(page, live_server, [anna, ben, cleo])
    start_game(page)
    page.locator(f".lang-switch a[lang={lang}]").click()
    expect(page.locator("html")).to_have_attribute("lang", lang)
    page.locator(".me-names button").first.click()  # "I am Anna", in any language
    mine = page.get_by_label(anna, exact=True)
    expect(mine).to_be_focused()
    mine.fill("41")
    mine.press("Enter")
    expect(page.locator(".entered .is-in").filter(has_text=anna)).to_be_visible()
    expect(page.get_by_label(anna, exact=True)).to_have_count(0)  # sent: her field is gone


CUT_SHORT = """() => [...document.querySelectorAll('.card-inputs label')]
    .filter(label => label.scrollWidth > label.clientWidth + 1)
    .map(label => label.textContent + ' ' + label.scrollWidth + '>' + label.clientWidth)"""


@pytest.mark.parametrize(
    ("lang", "rows"),
    [
        ("en", ["Row 1", "Row 2", "Row 3", "Row 4"]),
        ("de", ["Reihe 1", "Reihe 2", "Reihe 3", "Reihe 4"]),
        ("fr", ["Rang 1", "Rang 2", "Rang 3", "Rang 4"]),
    ],
)
def test_card_fields_say_whose_they_are_in_full(page, live_server, artifacts, lang, rows):
    """The four starting fields read "Row 1…4" apart in every language, and six players'
    names, long ones too, stand in full above their card fields on a phone."""
    serial = next(_names)
    names = [f"{stem}{serial}" for stem in ("Maximilian", "Bartholomäus", "Ann", "Jo", "Eva", "Li")]
    for name in names:
        add_player(page, live_server, name)
    start_match(page, live_server, names)
    page.locator(f".lang-switch a[lang={lang}]").click()
    expect(page.locator("html")).to_have_attribute("lang", lang)
    labels = page.locator(".card-inputs label")
    expect(labels).to_have_text(rows)
    assert page.evaluate(CUT_SHORT) == []
    for row, card in zip(rows, [12, 24, 37, 40], strict=True):
        page.get_by_label(row, exact=True).fill(str(card))
    page.locator("#entry > form.stack button.big").click()  # "Start game 1"
    expect(labels).to_have_text(names)
    assert page.evaluate(CUT_SHORT) == []
    fits_the_phone(page)
    page.screenshot(path=artifacts / f"card-fields-{lang}.png")


def test_a_card_sent_from_its_own_phone_leaves_the_others_forms(
    browser, page, live_server, artifacts
):
    """Ben sends from his phone: his phone waits with nothing to send by mistake and says
    who is missing; the phone entering for everybody drops Ben's field at once, and what
    was typed there for Anna stays."""
    anna, ben, cleo = f"Ann{next(_names)}", f"Bo{next(_names)}", f"Cy{next(_names)}"
    for name in (anna, ben, cleo):
        add_player(page, live_server, name)
    start_match(page, live_server, [anna, ben, cleo])
    start_game(page)
    match_url = page.url.split("#")[0]
    player_link, _ = invite_links(page, live_server)
    bens_context = new_phone_context(browser)
    try:
        bens_phone = bens_context.new_page()
        bens_phone.goto(player_link)
        i_am(bens_phone, ben)
        page.goto(match_url)  # the phone for everybody
        page.get_by_label(anna, exact=True).fill("41")

        bens_phone.get_by_label(ben, exact=True).fill("42")
        bens_phone.get_by_label(ben, exact=True).press("Enter")
        expect(bens_phone.locator(".my-card-form .notice")).to_be_visible()
        expect(bens_phone.locator("#entered")).to_be_in_viewport()
        expect(bens_phone.locator("#entered .tag:not(.is-in)")).to_have_count(2)  # missing
        expect(bens_phone.get_by_role("button", name="Place the cards")).to_be_hidden()
        expect(bens_phone.get_by_role("button", name="Send my card")).to_have_count(0)
        bens_phone.screenshot(path=artifacts / "phones-card-in.png")

        expect(page.get_by_label(ben, exact=True)).to_be_hidden()
        expect(page.get_by_label(anna, exact=True)).to_have_value("41")
        page.screenshot(path=artifacts / "phones-everybody-one-in.png")
        page.get_by_label(cleo, exact=True).fill("43")
        page.get_by_role("button", name="Place the cards").click()
        expect(page.locator(".round-summary")).to_contain_text("Round 1")
        expect(page.locator(".form-error, .field-error")).to_have_count(0)
    finally:
        bens_context.close()
