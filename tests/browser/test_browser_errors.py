"""Errors a phone can read: six players with long names, every kind of wrong card at once,
at 390x844 in EN, DE and FR. The finding: an error was squeezed into its field's column
("25 was already entere / d by anothe / r player…", "Maximilian / e- / Josephine") and
pushed *Send* below the screen."""

import pytest
from browsing import BROKEN_WORDS, add_player, start_game, start_match
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

NAMES = ("Maximiliane-Josephine", "Bartholomäus", "Ann", "Jo", "Eva", "Li")
GOOD = ("41", "42", "43", "44", "45", "46")
# Each kind of wrong card (one message each): two players with one card, one past the
# deck, not a number, a starting card, one missing; then three missing at once.
WRONG = [
    {0: "25", 1: "25"},
    {2: "105"},
    {3: "x"},
    {4: "12"},
    {5: ""},
    {1: "", 3: "", 5: ""},
]

ERRORS = ".field-error, .form-error"  # every word of every error on one line


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_every_card_error_reads_whole_and_send_stays_in_view(page, live_server, artifacts, lang):
    names = [f"{name}{lang}" for name in NAMES]
    for name in names:
        add_player(page, live_server, name)
    start_match(page, live_server, names)
    start_game(page)
    page.locator(f".lang-switch a[lang={lang}]").click()
    expect(page.locator("html")).to_have_attribute("lang", lang)
    send = page.locator(".round-form button.big")
    for number, wrong in enumerate(WRONG):
        for seat, name in enumerate(names):
            page.get_by_label(name, exact=True).fill(wrong.get(seat, GOOD[seat]))
        shown = page.locator("#match").element_handle()
        send.click()
        # The answer replaces the match: until then the last try's message is still there.
        shown.wait_for_element_state("hidden")
        messages = page.locator("#entry .field-error, #entry .form-error")
        expect(messages).to_have_count(1)  # one message, for one field or for several
        blanks = list(wrong.values()).count("")  # each marked; else the one field that is wrong
        expect(page.locator("#entry [aria-invalid=true]")).to_have_count(blanks or 1)
        expect(messages).to_be_in_viewport()
        expect(send).to_be_in_viewport()
        assert page.eval_on_selector_all(ERRORS, BROKEN_WORDS) == [], number
        form = page.locator("#entry").bounding_box()
        assert messages.bounding_box()["width"] >= form["width"] * 0.55, number
        page.screenshot(path=artifacts / f"card-errors-{lang}-{number}.png")


def test_a_wrong_card_reads_whole_on_a_players_own_phone(page, live_server):
    """On "I am …" the own field stands alone and narrow: its message still takes the
    form's width beside it, and *Send my card* stays on the screen. The wrong card is
    selected: typing the right one replaces it (a "3" typed again does not make "33")."""
    names = [f"{name}own" for name in NAMES]
    for name in names:
        add_player(page, live_server, name)
    start_match(page, live_server, names)
    start_game(page)
    page.locator(".me-names button").first.click()
    expect(page.locator("#entry[data-me]")).to_have_count(1)
    own = page.get_by_label(names[0], exact=True)
    own.fill("12")  # a starting card, lying in row 1
    page.get_by_role("button", name="Send my card").click()
    error = page.locator("#entry .field-error")
    expect(error).to_have_text("12 already lies in row 1.")
    expect(error).to_be_in_viewport()
    expect(page.get_by_role("button", name="Send my card")).to_be_in_viewport()
    expect(own).to_be_focused()
    page.keyboard.type("13")
    expect(own).to_have_value("13")
    assert page.eval_on_selector_all(ERRORS, BROKEN_WORDS) == []
    assert error.bounding_box()["width"] >= page.locator("#entry").bounding_box()["width"] * 0.55
