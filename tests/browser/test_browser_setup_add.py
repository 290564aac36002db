"""A new household seats its players where it starts a match (issue 43): on a 390x844
phone, in English, German and French, with JavaScript on and off, Enter in "Someone
new?" adds the person and seats them next; a taken name is said beside the field."""

import re

import pytest
from conftest import SHARED_BY_THE_SESSION, make_app, serving
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 390, 844
START = {"en": "Start the match", "de": "Spiel starten", "fr": "Lancer la partie"}
ADD = {"en": "Add", "de": "Hinzufügen", "fr": "Ajouter"}
TAKEN = {
    "en": "There is already a player called Anna.",
    "de": "Es gibt schon einen Spieler namens Anna.",
    "fr": "Il y a déjà un joueur qui s’appelle Anna.",
}


@pytest.fixture
def new_household(tmp_path):
    """A companion with nobody in its household yet (live_server is shared by every
    browser test, so it has players)."""
    app = make_app(tmp_path / "companion.sqlite", **SHARED_BY_THE_SESSION)
    with serving(app) as port:
        yield f"http://127.0.0.1:{port}"


def on_the_screen(locator) -> dict:
    """The element's box, asserted to lie within the phone's first screen."""
    box = locator.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT, box
    return box


def seated(page):
    """The seat buttons of seated players."""
    return page.locator(".seat-pick.is-seated")


def enter_a_name(page, name: str) -> None:
    """Type a name into "Someone new?" and press Enter, as a phone's keyboard does."""
    field = page.locator("#field-new_player")
    field.fill(name)
    field.press("Enter")


def the_field_comes_first_with_its_button(page, lang: str) -> None:
    """Nobody yet: the name field is on the first screen, focused, its Add button beside."""
    field = page.locator("#field-new_player")
    expect(field).to_be_focused()
    box = on_the_screen(field)
    button = page.get_by_role("button", name=ADD[lang], exact=True)
    beside = on_the_screen(button)
    assert abs(beside["y"] + beside["height"] / 2 - (box["y"] + box["height"] / 2)) < 4
    assert beside["x"] >= box["x"] + box["width"]


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_enter_in_someone_new_seats_them(page, new_household, artifacts, lang):
    page.context.add_cookies([{"name": "lang", "value": lang, "url": new_household}])
    page.goto(f"{new_household}/matches/new")
    the_field_comes_first_with_its_button(page, lang)
    page.screenshot(path=artifacts / f"setup-add-empty-{lang}.png")

    enter_a_name(page, "Anna")
    expect(seated(page)).to_have_count(1)
    expect(page.get_by_role("status").filter(has_text="Anna")).to_be_visible()
    field = page.locator("#field-new_player")
    expect(field).to_have_value("")
    expect(field).to_be_focused()  # ready for the next name
    enter_a_name(page, "Ben")
    expect(seated(page)).to_have_count(2)
    expect(seated(page).nth(1)).to_contain_text("Ben")
    expect(page).to_have_url(re.compile(r"/matches/new\?.*seat_2="))
    on_the_screen(page.locator("#field-new_player"))
    page.screenshot(path=artifacts / f"setup-add-two-{lang}.png")

    # A name taken (any spelling) is said beside the field; the seats stay.
    enter_a_name(page, "anna")
    error = page.locator("#field-new_player-note")
    expect(error).to_contain_text(TAKEN[lang])
    on_the_screen(error)
    expect(page.locator("#field-new_player")).to_have_attribute("aria-invalid", "true")
    expect(seated(page)).to_have_count(2)
    page.screenshot(path=artifacts / f"setup-add-taken-{lang}.png")

    page.locator("#field-new_player").fill("")
    page.get_by_role("button", name=START[lang]).click()
    expect(page).to_have_url(re.compile(r"/matches/\d+$"))


def test_enter_seats_them_without_javascript(page_nojs, new_household, artifacts):
    page = page_nojs
    page.goto(f"{new_household}/matches/new")
    field = page.locator("#field-new_player")
    expect(field).to_be_focused()
    enter_a_name(page, "Anna")
    expect(seated(page)).to_have_count(1)
    enter_a_name(page, "Ben")
    expect(seated(page)).to_have_count(2)
    page.screenshot(path=artifacts / "setup-add-nojs.png")
    page.get_by_role("button", name="Add", exact=True).click()  # nothing typed
    expect(page.locator("#field-new_player-note")).to_have_text("Enter a name.")
    page.get_by_role("button", name="Start the match").click()
    expect(page).to_have_url(re.compile(r"/matches/\d+$"))
