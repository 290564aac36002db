"""Small things a household met in its first minutes, in Chromium at 390x844: the invite
on the first screen after *Start the match*, and buttons whose words stay whole."""

import pytest
from browsing import BROKEN_WORDS, add_player, start_game, start_match
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

INVITE = {"en": "Invite", "de": "Einladen", "fr": "Inviter"}


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_invite_is_on_the_first_screen_of_a_new_match(page, live_server, lang):
    """It sat about 890 px down, below the score; the other phones join right now."""
    names = [f"Inv{lang}{n}" for n in range(1, 7)]
    for name in names:
        add_player(page, live_server, name)
    start_match(page, live_server, names)
    page.locator(f".lang-switch a[lang={lang}]").click()
    expect(page.locator("html")).to_have_attribute("lang", lang)
    invite = page.locator(".invite-first a")
    expect(invite).to_have_text(INVITE[lang])
    expect(invite).to_be_in_viewport()
    expect(page.locator("a.button", has_text=INVITE[lang])).to_have_count(1)
    page.locator(".lang-switch a[lang=en]").click()
    start_game(page)  # once game 1 is on, the invite is beside the score again
    expect(page.locator("#live-score a", has_text="Invite")).to_have_count(1)
    expect(page.locator(".invite-first")).to_have_count(0)


def test_the_german_review_keeps_its_button_whole(page, live_server):
    """The year's "Anzeigen" stood as "Anzeige/n" beside a long name in the list."""
    add_player(page, live_server, "Maximiliane-Josephine Rev")
    page.goto(f"{live_server}/review")
    page.locator(".lang-switch a[lang=de]").click()
    expect(page.get_by_role("button", name="Anzeigen")).to_be_visible()
    broken = page.eval_on_selector_all("button, .button", BROKEN_WORDS)
    assert broken == []
