"""A match's note (issue 44) on a 390x844 phone, in English, German and French: typed on
the new-match form, shown on the match page; changed there, a note too long is told
beside its field, in view, and a shorter one is shown at once (htmx, JavaScript on)."""

import pytest
from conftest import SHARED_BY_THE_SESSION, make_app, serving
from driver import add_players
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 390, 844
START = {"en": "Start the match", "de": "Spiel starten", "fr": "Lancer la partie"}
CHANGE = {"en": "Change the note", "de": "Notiz ändern", "fr": "Modifier la note"}
SAVE = {"en": "Save the note", "de": "Notiz speichern", "fr": "Enregistrer la note"}
TOO_LONG = {
    "en": "A note has at most 200 characters.",
    "de": "Eine Notiz hat höchstens 200 Zeichen.",
    "fr": "Une note a au plus 200 caractères.",
}


@pytest.fixture
def household(tmp_path):
    """A companion with Anna and Ben in its household; its address."""
    app = make_app(tmp_path / "companion.sqlite", **SHARED_BY_THE_SESSION)
    add_players(app.test_client(), "Anna", "Ben")
    with serving(app) as port:
        yield f"http://127.0.0.1:{port}"


def in_view(locator) -> None:
    """The element lies within the phone's screen as it is scrolled now."""
    expect(locator).to_be_in_viewport()
    box = locator.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, box


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_a_note_typed_then_changed_on_the_match_page(page, household, artifacts, lang):
    page.context.add_cookies([{"name": "lang", "value": lang, "url": household}])
    page.goto(f"{household}/matches/new")
    for name in ("Anna", "Ben"):
        page.locator(".seat-pick", has_text=name).click()
        expect(page.locator(".seat-pick.is-seated", has_text=name)).to_be_visible()
    page.locator("#field-note").fill("Oma’s 80th")
    page.locator("#field-note").scroll_into_view_if_needed()
    page.screenshot(path=artifacts / f"note-new-{lang}.png")
    page.get_by_role("button", name=START[lang]).click()
    expect(page).to_have_url(f"{household}/matches/1")
    note = page.locator("#match-note .note-text")
    expect(note).to_have_text("Oma’s 80th")

    page.get_by_text(CHANGE[lang]).click()
    field = page.locator("#field-note")
    expect(field).to_have_value("Oma’s 80th")
    field.fill("x" * 201)
    page.get_by_role("button", name=SAVE[lang]).click()
    error = page.locator("#field-note-note.field-error")
    expect(error).to_have_text(TOO_LONG[lang])
    expect(field).to_have_attribute("aria-invalid", "true")
    in_view(field)
    in_view(error)
    expect(note).to_have_text("Oma’s 80th")  # nothing saved
    page.screenshot(path=artifacts / f"note-error-{lang}.png")

    field.fill("Oma’s 80th, at the lake")
    page.get_by_role("button", name=SAVE[lang]).click()
    expect(note).to_have_text("Oma’s 80th, at the lake")
    expect(page.locator("#field-note-note.field-error")).to_have_count(0)
    expect(page).to_have_url(f"{household}/matches/1")
    in_view(note)
    page.screenshot(path=artifacts / f"note-shown-{lang}.png")
