"""Three phones at a home network's address (not a secure context), in EN, DE and FR:
a card typed twice is taken on both phones without a word, every phone names the two
players once the last card is in, the one who typed it wrong fixes it over the selected
card, and a player changes their own hidden card with one tap (issue 55)."""

import itertools
import re

import pytest
from browsing import add_player, fits_the_phone, in_view, start_game, start_match
from conftest import new_phone_context
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

_names = itertools.count(1)
BOTH_TYPED = {
    "en": "{0} and {1} both typed 30: check your card.",
    "de": "{0} und {1} haben beide 30 eingetippt: prüft eure Karte.",
    "fr": "{0} et {1} ont tous deux saisi 30\u00a0: vérifiez votre carte.",
}
FIELD_VALUES = "() => [...document.querySelectorAll('#entry input')].map(input => input.value)"
KEPT_TYPING = "() => Object.keys(sessionStorage).filter(key => key.startsWith('companion-typed:'))"
YOUR_CARD = {"en": "Your card: {0}", "de": "Deine Karte: {0}", "fr": "Ta carte\u00a0: {0}"}


def send(phone, name: str, card: int) -> None:
    """Type the card in the player's own field and send it with Enter (the keyboard's Go)."""
    field = phone.get_by_label(name, exact=True)
    expect(field).to_be_visible()
    field.fill(str(card))
    field.press("Enter")


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_a_card_typed_twice_is_fixed_by_its_player_and_a_card_is_changed(
    browser, page, lan_server, artifacts, lang
):
    names = [f"{first}{next(_names)}" for first in ("Anna", "Ben", "Cleo")]
    anna, ben, cleo = names
    for name in names:
        add_player(page, lan_server, name)
    start_match(page, lan_server, names)
    start_game(page)
    page.get_by_role("link", name="Invite").click()
    expect(page.locator(".invite-link")).to_have_count(2)
    link = next(text for text in page.locator(".invite-link").all_inner_texts() if "/join/" in text)
    player_link = re.sub(r"^https?://[^/]+", lan_server, link)
    contexts = [new_phone_context(browser) for _ in range(2)]
    try:
        phones = {anna: page, ben: contexts[0].new_page(), cleo: contexts[1].new_page()}
        for name, phone in phones.items():
            phone.goto(player_link)
            phone.locator(f".lang-switch a[lang={lang}]").click()
            phone.locator(".me-names button", has_text=name).click()
            expect(phone.locator("#entry[data-me]")).to_have_count(1)

        # Anna and Ben both type 30: each phone takes it, and tells nothing of the other.
        send(phones[anna], anna, 30)
        expect(phones[anna].locator(".my-card summary")).to_contain_text(YOUR_CARD[lang].format(30))
        send(phones[ben], ben, 30)
        expect(phones[ben].locator(".my-card summary")).to_contain_text(YOUR_CARD[lang].format(30))
        expect(phones[ben].locator(".field-error, .form-error, .repeated-note")).to_have_count(0)

        # Cleo's card is the last: the round is not placed, and every phone says who.
        send(phones[cleo], cleo, 31)
        note = BOTH_TYPED[lang].format(anna, ben)
        for phone in phones.values():
            expect(phone.locator(".repeated-note")).to_have_text(note)
            assert in_view(phone.locator(".repeated-note"))
        bens_field = phones[ben].get_by_label(ben, exact=True)
        expect(bens_field).to_have_value("30")
        expect(bens_field).to_have_attribute("aria-invalid", "true")
        assert in_view(bens_field) and in_view(
            phones[ben].locator(".round-form button[type=submit]")
        )
        # Cleo's card is fine: her field stays shut, and the others' fields stay folded.
        expect(phones[cleo].get_by_label(cleo, exact=True)).to_have_count(0)
        expect(phones[cleo].locator("details.for-others[open]")).to_have_count(0)
        fits_the_phone(phones[ben])
        phones[ben].screenshot(path=artifacts / f"hidden-typed-twice-{lang}.png")

        # Ben taps his field: the wrong card is selected, so 33 replaces it; Enter.
        bens_field.click()
        phones[ben].keyboard.type("33")
        expect(bens_field).to_have_value("33")
        bens_field.press("Enter")
        for phone in phones.values():
            expect(
                phone.locator(".summary-step", has_text=ben).filter(has_text="33")
            ).to_be_visible()
            expect(phone.locator(".repeated-note")).to_have_count(0)

        # Round 2: Anna changes her hidden card with one tap, no undo; Ben never sees it.
        send(phones[anna], anna, 50)
        summary = phones[anna].locator(".my-card summary")
        expect(summary).to_contain_text(YOUR_CARD[lang].format(50))
        # Sent and stored: nothing typed is kept for a reload to put back (issue 57).
        assert phones[anna].evaluate(KEPT_TYPING) == []
        summary.click()
        mine = phones[anna].locator(".my-card input[name^=card-]")
        expect(mine).to_be_focused()
        phones[anna].keyboard.type("51")  # the card was selected: 51, not 5051
        expect(mine).to_have_value("51")
        mine.press("Enter")
        expect(summary).to_contain_text(YOUR_CARD[lang].format(51))
        assert in_view(summary)
        phones[anna].screenshot(path=artifacts / f"hidden-change-{lang}.png")
        expect(phones[ben].locator(".entered .is-in", has_text=anna)).to_be_visible()
        assert not re.search(r"\b5[01]\b", phones[ben].locator("main").inner_text())

        # Undo on Ben's phone takes the hidden card back: Anna's own field comes back
        # empty on her phone, and no field anywhere holds her card.
        phones[ben].goto(phones[ben].url.split("#")[0] + "/undo")
        phones[ben].locator("#undo button.danger").click()
        expect(phones[ben].locator(".entered .is-in")).to_have_count(0)
        expect(phones[anna].locator(".my-card")).to_have_count(0)
        expect(phones[anna].get_by_label(anna, exact=True)).to_have_value("")
        for phone in phones.values():
            assert not {"50", "51"} & set(phone.evaluate(FIELD_VALUES))
    finally:
        for context in contexts:
            context.close()
