"""The companion in French (6 qui prend !) on a 390x844 phone: every main page fits.

French words run longer than English ones ("têtes de bœuf" for "bulls"); each page is
checked for sideways scrolling and for text spilling out of its button or tag, and
saved as tests/.artifacts/fr-*.png to look at.
"""

import itertools
import re

import pytest
from backups import backup_file
from browsing import explained_steps, fits_the_phone
from chromium import route_cdn
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

FRENCH = {"Accept-Language": "fr-FR,fr;q=0.9"}
NBSP, NNBSP = "\u00a0", "\u202f"
_runs = itertools.count(1)

# Buttons, tags and cards whose text is wider or taller than their box.
SPILLING = """() => [...document.querySelectorAll('button, .button, .tag, .card, .lang-switch a')]
    .filter(el => el.offsetParent !== null)
    .filter(el => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
    .map(el => el.outerHTML.slice(0, 160))"""


def plain(text: str) -> str:
    """Text with its non-breaking spaces as plain ones, to compare with what we type."""
    return text.replace(NBSP, " ").replace(NNBSP, " ")


def looks_right(page, artifacts, name: str, width: int = 390, full_page: bool = True) -> None:
    """The page is French, scrolls only down, nothing spills out; save fr-<name>.png."""
    assert page.locator("html").get_attribute("lang") == "fr"
    fits_the_phone(page, width)
    assert page.evaluate(SPILLING) == [], name
    page.screenshot(path=artifacts / f"fr-{name}.png", full_page=full_page)


@pytest.fixture
def french(page):
    """The phone page, its browser set to French."""
    page.context.set_extra_http_headers(FRENCH)
    return page


def test_an_evening_at_the_table_in_french(french, browser, live_server, artifacts):
    """Home, players, a new match, a round, a too-low card, undo and the TV view, in French."""
    page = french
    page.goto(f"{live_server}/")
    assert page.locator(".brand").inner_text() == f"6{NBSP}qui prend{NNBSP}!"
    assert page.title() == f"Compagnon de 6{NBSP}qui prend{NNBSP}!"
    assert page.get_by_role("heading", name="Fini les disputes à table").is_visible()
    looks_right(page, artifacts, "home")

    run = next(_runs)
    names = [f"Émilie {run}", f"Benoît {run}", f"Chloé {run}"]
    chloe = names[2]
    for name in names:
        page.goto(f"{live_server}/players/")
        page.get_by_label("Nouveau joueur").fill(name)
        page.get_by_role("button", name="Ajouter le joueur").click()
        page.get_by_role("link", name=name, exact=True).wait_for()
    looks_right(page, artifacts, "players")

    page.goto(f"{live_server}/matches/new")
    for seat, name in enumerate(names, 1):
        page.get_by_role("button", name=name, exact=True).click()
        seated = page.get_by_role("button", name=name, pressed=True)
        expect(seated.locator(".seat-number")).to_have_text(str(seat))
    looks_right(page, artifacts, "new-match")
    page.get_by_role("button", name="Lancer la partie").click()
    page.get_by_role("heading", name=re.compile(r"^Partie \d+")).wait_for()
    match_url = page.url

    for row, card in enumerate([12, 24, 37, 40], 1):
        page.get_by_label(f"Rang {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Commencer la manche 1").click()
    page.get_by_role("heading", name="Manche 1 · tour 1 sur 10").wait_for()
    for name, card in zip(names, [41, 42, 43], strict=True):
        page.get_by_label(name, exact=True).fill(str(card))
    page.get_by_role("button", name="Poser les cartes").click()
    page.get_by_role("heading", name="Manche 1 · tour 2 sur 10").wait_for()
    assert "43 va dans la rangée 4" in plain(explained_steps(page)[2])
    looks_right(page, artifacts, "match-round")

    for name, card in zip(names, [39, 44, 3], strict=True):
        page.get_by_label(name, exact=True).fill(str(card))
    page.get_by_role("button", name="Poser les cartes").click()
    choice = page.locator(".row-choice")
    choice.wait_for()
    text = plain(choice.inner_text())
    assert f"{chloe} ramasse une rangée" in text
    assert "3 est plus petit que toutes les fins de rangée" in text
    looks_right(page, artifacts, "match-choice")

    page.get_by_role("button", name=re.compile(r"^Ramasser la rangée 1\b")).click()
    page.get_by_role("heading", name="Manche 1 · tour 3 sur 10").wait_for()
    first = plain(explained_steps(page)[0])
    assert f"{chloe} a choisi la rangée 1 et ramasse 1 carte, 1 tête de bœuf" in first
    looks_right(page, artifacts, "match-taken")

    page.get_by_role("link", name="Annuler…").click()
    page.get_by_role("button", name="Oui, annuler").wait_for()
    assert f"la rangée 1 choisie par {chloe} au tour 2" in plain(page.locator("main").inner_text())
    looks_right(page, artifacts, "undo")
    page.get_by_role("link", name="Ne rien changer").click()
    page.get_by_role("heading", name="Manche 1 · tour 3 sur 10").wait_for()

    page.get_by_role("link", name="Feuille de score complète").click()
    page.get_by_role("heading", name=re.compile(r"^Feuille de score")).wait_for()
    looks_right(page, artifacts, "scoreboard")
    board = page.locator("main").inner_text()
    assert all(name in board for name in names)
    assert "Avant la limite" in board

    tv_context = browser.new_context(
        viewport={"width": 1280, "height": 720}, extra_http_headers=FRENCH
    )
    route_cdn(tv_context)
    try:
        tv = tv_context.new_page()
        tv.goto(f"{match_url}/table")
        tv.locator(".tv .table-rows").wait_for()
        assert "Rangée 1" in plain(tv.locator(".tv").inner_text())
        looks_right(tv, artifacts, "table-view", width=1280, full_page=False)
    finally:
        tv_context.close()


def test_the_rules_and_the_resolver_in_french(french, console_errors, live_server, artifacts):
    """The rules page in French, then its example worked out in French sentences."""
    page = french
    page.goto(f"{live_server}/rules")
    assert page.locator("h1").inner_text() == "Les règles en bref"
    lead = page.locator(".lead").inner_text()
    assert lead.startswith(f"6{NBSP}qui prend{NNBSP}!, de 2 à 10{NBSP}joueurs{NBSP}:")
    looks_right(page, artifacts, "rules")
    assert console_errors == []

    page.get_by_role("link", name="Essayer l’exemple").click()
    page.get_by_role("button", name="Poser les cartes").click()
    page.locator(".row-choice").wait_for()
    text = plain(page.locator(".row-choice").inner_text())
    assert "3 est plus petit que toutes les fins de rangée : Cleo ramasse la rangée" in text
    looks_right(page, artifacts, "resolve-choice")

    page.get_by_role("button", name=re.compile(r"^Ramasser la rangée 1\b")).click()
    page.locator(".step").first.wait_for()
    text = plain(page.locator("main").inner_text())
    assert "Cleo a choisi la rangée 1 et ramasse 2 cartes, 3 têtes de bœuf." in text
    assert "42 serait la 6e carte de la rangée 4 : Ben ramasse 5 cartes, 11 têtes de bœuf." in text
    looks_right(page, artifacts, "resolve")


def test_the_household_pages_in_french(french, live_server, artifacts):
    """Backup import, the history, a replay, the leaderboard and a player's figures."""
    page = french
    page.goto(f"{live_server}/backup")
    page.get_by_label("Fichier de sauvegarde").set_input_files(
        files=[{"name": "sauvegarde.json", "mimeType": "application/json", "buffer": backup_file()}]
    )
    page.get_by_role("button", name="Importer").click()
    page.get_by_role("heading", name="Import terminé").wait_for()
    looks_right(page, artifacts, "backup")

    page.goto(f"{live_server}/history")  # by address: the header's links may sit in a menu
    page.get_by_role("heading", name="Historique", exact=True).wait_for()
    looks_right(page, artifacts, "history")
    page.locator(".history-entry", has_text="Wiebke").first.get_by_role("link").click()
    page.get_by_role("heading", name=re.compile(r"^Feuille de score")).wait_for()
    page.get_by_role("link", name="Manche 1", exact=True).click()
    page.get_by_role("heading", name="Tour 1 sur 10").wait_for()
    page.get_by_role("link", name="Tour 2 →").first.click()
    page.get_by_role("heading", name="Tour 2 sur 10").wait_for()
    looks_right(page, artifacts, "replay")

    page.goto(f"{live_server}/leaderboard")
    page.locator("table.leaderboard").wait_for()
    looks_right(page, artifacts, "leaderboard")
    page.locator("table.leaderboard").get_by_role("link", name="Wiebke").click()
    page.get_by_role("heading", name="Carte par carte").wait_for()
    looks_right(page, artifacts, "player")


@pytest.mark.parametrize("lang", ["en", "de", "fr"])
def test_the_language_switch_fits_the_phone_header(page, live_server, artifacts, lang):
    """Three languages fit beside the brand on one 390px line, each a 44px target."""
    page.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
    page.goto(f"{live_server}/")
    links = page.locator(".lang-switch a")
    names = "els => els.map(el => el.getAttribute('aria-label') || el.textContent.trim())"
    assert links.evaluate_all(names) == ["English", "Deutsch", "Français"]
    brand = page.locator(".brand").bounding_box()
    for box in (links.nth(index).bounding_box() for index in range(3)):
        assert box["width"] >= 44 and box["height"] >= 44, box
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        assert box["y"] == brand["y"], "the switch wrapped under the brand"
    assert page.locator(".lang-switch a[aria-current]").get_attribute("lang") == lang
    fits_the_phone(page)
    page.locator(".site-header").screenshot(path=artifacts / f"header-{lang}.png")
