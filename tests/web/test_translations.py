"""The catalogs (German, French): complete, placeholders intact, in step with the source,
and shown."""

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import flask_babel
import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_keywords, parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from conftest import make_app
from driver import add_players, choose, enter_round, start_game, start_match
from flask import url_for

from companion.web import i18n, present

ROOT = Path(__file__).resolve().parents[2]
TRANSLATIONS = ROOT / "companion" / "translations"
# Every language besides English (the msgids), with the plural rule its catalog must have.
PLURALS = {"de": "(n != 1)", "fr": "(n > 1)"}
DE = {"Accept-Language": "de"}
FR = {"Accept-Language": "fr-FR,fr;q=0.9"}
NBSP, NNBSP = "\u00a0", "\u202f"

# A %-format placeholder as Python reads it: %(name)d, %(cards)s, %(value)5.1f ...
PLACEHOLDER = re.compile(r"%\((\w+)\)[#0 +-]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")


def catalog_path(lang: str) -> Path:
    return TRANSLATIONS / lang / "LC_MESSAGES" / "messages.po"


def load_catalog(lang: str = "de"):
    with catalog_path(lang).open("rb") as file:
        return read_po(file, locale=lang)


def placeholders(text: str) -> set[str]:
    """Every %(name)x placeholder in ``text``, conversion included."""
    return {match.group(0) for match in PLACEHOLDER.finditer(text)}


def stray_percent(text: str) -> bool:
    """True if ``text`` has a % that is neither a placeholder nor %% (it breaks ``%``)."""
    return "%" in PLACEHOLDER.sub("", text).replace("%%", "")


def forms(value) -> tuple[str, ...]:
    """A message's id or string as a tuple: one item, or one per plural form."""
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def entries(lang: str = "de"):
    return [message for message in load_catalog(lang) if message.id]


def label(message) -> str:
    return forms(message.id)[0]


# --- (a) the catalog itself -------------------------------------------------


def test_every_language_has_a_catalog():
    """A catalog on disk is a language we test; a language we offer has a catalog."""
    from companion.web.i18n import DEFAULT_LANGUAGE, LANGUAGES

    on_disk = {path.parent.parent.name for path in TRANSLATIONS.glob("*/LC_MESSAGES/*.po")}
    assert on_disk == set(PLURALS)
    assert set(LANGUAGES) == set(PLURALS) | {DEFAULT_LANGUAGE}


@pytest.mark.parametrize(("lang", "plural"), PLURALS.items())
def test_catalog_header_has_the_language_and_two_plural_forms(lang, plural):
    catalog = load_catalog(lang)
    assert str(catalog.locale) == lang
    assert catalog.num_plurals == 2
    assert catalog.plural_expr == plural
    assert not catalog.obsolete, f"obsolete entries left: {sorted(catalog.obsolete)}"


@pytest.mark.parametrize("lang", PLURALS)
def test_every_entry_is_translated_and_not_fuzzy(lang):
    problems = [
        f"untranslated: {label(m)!r}"
        for m in entries(lang)
        if not all(text.strip() for text in forms(m.string))
    ]
    problems += [
        f"fuzzy (check it, then drop the flag): {label(m)!r}" for m in entries(lang) if m.fuzzy
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", PLURALS)
def test_plural_entries_have_both_forms(lang):
    for message in entries(lang):
        if message.pluralizable:
            assert len(forms(message.string)) == 2, label(message)


@pytest.mark.parametrize("lang", PLURALS)
def test_placeholders_match_the_english(lang):
    """Each msgstr (each plural form) keeps exactly the msgid's %(...)x placeholders."""
    wrong = []
    for message in entries(lang):
        ids = forms(message.id)
        expected = set().union(*(placeholders(text) for text in ids))
        for number, text in enumerate(forms(message.string)):
            if placeholders(text) != expected:
                wrong.append(
                    f"{label(message)!r} [{number}]: {sorted(placeholders(text))} "
                    f"instead of {sorted(expected)}"
                )
            if stray_percent(text) and not any(stray_percent(source) for source in ids):
                wrong.append(f"{label(message)!r} [{number}]: a lone % (write %%)")
    assert not wrong, "\n".join(wrong)


# --- (b) the catalog is in step with the source -----------------------------


def make_keywords() -> dict:
    """The extraction keywords: Babel's defaults plus every -k of `make messages`."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = next(line for line in makefile.splitlines() if "pybabel extract" in line)
    extra = re.findall(r"-k\s+(\S+)", recipe)
    assert extra, "the messages target passes no -k keywords"
    return {**DEFAULT_KEYWORDS, **parse_keywords(extra)}


def test_the_makefile_marks_the_rules_messages():
    keywords = make_keywords()
    assert {"N_", "NP_", "_l"} <= keywords.keys()
    assert keywords["NP_"] == (1, 2)


def extracted() -> dict[str, list[str]]:
    """Every msgid in the source, as `make messages` finds it, with where it is."""
    with (ROOT / "babel.cfg").open() as file:
        method_map, options_map = parse_mapping_cfg(file)
    found: dict = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map, keywords=make_keywords()
    ):
        found.setdefault(message, []).append(f"{filename}:{lineno}")
    return found


@pytest.mark.parametrize("lang", PLURALS)
def test_every_string_in_the_source_is_in_the_catalog(lang):
    """A string added without `make messages` and a translation fails here."""
    catalog = load_catalog(lang)
    found = extracted()
    assert any(where[0].startswith("companion/") for where in found.values())
    assert any(where[0].startswith("templates/") for where in found.values())
    missing = []
    for message, where in sorted(found.items(), key=lambda item: forms(item[0])[0]):
        entry = catalog.get(message)
        if entry is None or forms(entry.id) != forms(message):
            missing.append(f"{message!r} ({', '.join(where)})")
        elif not all(text.strip() for text in forms(entry.string)) or entry.fuzzy:
            missing.append(f"{message!r} ({', '.join(where)}): not translated yet")
    assert not missing, (
        f"run `make messages` and translate in {catalog_path(lang).relative_to(ROOT)}:\n"
        + "\n".join(missing)
    )


# --- (c) pages in German ------------------------------------------------------


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """The catalogs compiled as they are now, so a stale .mo cannot hide a change."""
    directory = tmp_path_factory.mktemp("translations")
    for lang in PLURALS:
        target = directory / lang / "LC_MESSAGES"
        target.mkdir(parents=True)
        with (target / "messages.mo").open("wb") as file:
            write_mo(file, load_catalog(lang))
    return directory


@pytest.fixture
def app(tmp_path, compiled):
    """The app on a fresh database, reading the freshly compiled catalogs."""
    return make_app(tmp_path / "companion.sqlite", BABEL_TRANSLATION_DIRECTORIES=str(compiled))


class Page(HTMLParser):
    """The text of a page: all of it, and per heading-like element."""

    WATCHED = frozenset({"title", "h1", "h2", "h3", "legend", "label", "button", "summary", "th"})

    def __init__(self, html: str):
        super().__init__()
        self.texts: list[str] = []
        self.open: list[list] = []
        self.headings: list[tuple[str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag in self.WATCHED:
            self.open.append([tag, ""])

    def handle_endtag(self, tag):
        if self.open and self.open[-1][0] == tag:
            name, text = self.open.pop()
            self.headings.append((name, " ".join(text.split())))

    def handle_data(self, data):
        if data.strip():
            self.texts.append(" ".join(data.split()))
        for item in self.open:
            item[1] += data

    @property
    def text(self) -> str:
        return " ".join(self.texts)


def english_leftovers(page: Page, lang: str = "de") -> list[str]:
    """Text on the page that is exactly an English msgid with a different translation."""
    english = {
        message.id
        for message in entries(lang)
        if isinstance(message.id, str)
        and not placeholders(message.id)
        and message.string != message.id
    }
    return [text for text in page.texts if text in english]


GERMAN_PAGES = {
    "/": ["Kein Streit mehr am Tisch", "Spiele", "Hornochsen", "Wo kommt meine Karte hin?"],
    "/rules": [
        "Die Regeln in Kürze",
        "Eine Partie",
        "Eine Runde",
        "Die 6. Karte",
        "Zu niedrig",
        "Profivariante",
        "Hornochse",
    ],
    "/resolve": [
        "Wo kommt meine Karte hin?",
        "Die Reihen auf dem Tisch",
        "Karten anlegen",
        "Reihe 1",
        "Spieler 1",
        "Kartensatz",
    ],
    "/players/": ["Spieler", "Neuer Spieler", "Spieler hinzufügen"],
    "/matches/new": [
        "Neues Spiel",
        "Hausregeln",
        "Noch keine Spieler: Gib unten jeden Namen ein",
        "Hinzufügen",
        "Das Spiel endet nach der Partie, in der",
        "Spiel starten",
    ],
    "/patterns": ["Bausteine", "Reihenwahl", "Zu niedrig!", "6. Karte!"],
    "/no-such-page": ["Diese Karte gibt es nicht im Spiel", "Zurück zum Start"],
}

FRENCH_PAGES = {
    "/": [
        "Fini les disputes à table",
        "Lancer une partie",
        "Les têtes de bœuf sur les cartes",
        "Où va ma carte ?",
        "Un compagnon pour 6 qui prend !, sur le téléphone",
    ],
    "/rules": [
        "Les règles en bref",
        "6 qui prend !, de 2 à 10 joueurs : ramasse le moins de têtes de bœuf possible.",
        "55 : 7 têtes de bœuf",
        "Une manche",
        "Un tour",
        "La 6e carte",
        "Trop faible",
        "Variante pro",
        "Essayer l’exemple",
    ],
    "/resolve": [
        "Où va ma carte ?",
        "Les rangées sur la table",
        "Poser les cartes",
        "Rangée 1",
        "Joueur 1",
        "Paquet",
    ],
    "/players/": ["Joueurs", "Nouveau joueur", "Ajouter le joueur"],
    "/matches/new": [
        "Nouvelle partie",
        "Règles maison",
        "Pas encore de joueurs : saisis chaque nom ci-dessous",
        "Ajouter",
        "La partie se termine après la manche où",
        "quelqu’un dépasse … têtes de bœuf",
        "Lancer la partie",
    ],
    "/patterns": ["Composants", "Choix de rangée", "Trop faible !", "6e carte !"],
    "/leaderboard": ["Classement", "Période", "Depuis toujours", "Joueurs à la table"],
    "/history": ["Historique", "Aucune partie n’a encore été jouée."],
    "/backup": ["Sauvegarder et transférer", "Exporter", "Importer", "Fichier de sauvegarde"],
    "/no-such-page": ["Cette carte n’est pas dans le paquet", "Retour à l’accueil"],
}
ENGLISH_WORDS = re.compile(r"\b(Players?|Start|Match(es)?|Games?|Rows?|Bulls?|Cards?|Rules)\b")


SPOKEN = {"de": (DE, GERMAN_PAGES), "fr": (FR, FRENCH_PAGES)}


@pytest.mark.parametrize(
    ("lang", "path"), [(lang, path) for lang, (_, pages) in SPOKEN.items() for path in pages]
)
def test_pages_speak_the_browsers_language(client, lang, path):
    headers, pages = SPOKEN[lang]
    response = client.get(path, headers=headers)
    assert response.status_code == (404 if path == "/no-such-page" else 200)
    html = response.get_data(as_text=True)
    assert f'<html lang="{lang}">' in html
    page = Page(html)  # its text has non-breaking spaces as plain ones
    for words in pages[path]:
        assert words in page.text, f"{words!r} missing on {path}"
    english = [f"<{tag}> {text}" for tag, text in page.headings if ENGLISH_WORDS.search(text)]
    assert not english, f"English on {path}: {english}"
    leftovers = english_leftovers(page, lang)
    assert not leftovers, f"untranslated on {path}: {leftovers}"


def test_the_same_pages_stay_english_without_german(client):
    """The check above can fail: the English page has the words it looks for."""
    page = Page(client.get("/players/", headers={"Accept-Language": "en"}).text)
    assert ("h1", "Players") in page.headings
    assert any(ENGLISH_WORDS.search(text) for _tag, text in page.headings)


def a_match_of_three(client) -> tuple[list[int], int]:
    """Anna, Ben and Cleo seated for a match to more than 66 bulls: their ids, its id."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    return ids, start_match(client, ids)


def play_a_too_low_round(client, match_id: int, ids: list[int]) -> None:
    """Start game 1 on 10 20 30 40; Anna's 3 is too low, Ben's 25 goes to row 2, Cleo's 41
    to row 4."""
    assert start_game(client, match_id, [10, 20, 30, 40]).status_code == 303
    assert (
        enter_round(client, match_id, dict(zip(ids, [3, 25, 41], strict=True))).status_code == 303
    )


def test_a_match_at_the_table_speaks_german(client):
    """Headings, the round's explanations from the rules and a row choice, in German."""
    ids, match_id = a_match_of_three(client)
    page = Page(client.get(f"/matches/{match_id}", headers=DE).text)
    assert "Spiel 1" in page.text
    assert "Partie 1" in page.text
    assert "Die vier offenen Startkarten" in page.text
    assert "Das Spiel endet nach der Partie, in der jemand mehr als 66 Hornochsen hat." in (
        page.text
    )
    play_a_too_low_round(client, match_id, ids)
    page = Page(client.get(f"/matches/{match_id}", headers=DE).text)
    for words in [
        "Partie 1 · Runde",
        "von 10",
        "Zu niedrig!",
        "Anna nimmt eine Reihe",
        "3 ist niedriger als jedes Reihenende",
        "Reihe 1 nehmen",
        "empfohlen",
        "Punktestand",
        "Gesamt",
    ]:
        assert words in page.text, words
    english = [f"<{tag}> {text}" for tag, text in page.headings if ENGLISH_WORDS.search(text)]
    assert not english, english
    assert not english_leftovers(page), english_leftovers(page)
    undo_page = Page(client.get(f"/matches/{match_id}/undo", headers=DE).text)
    assert "Wirklich Runde 1 von Partie 1 (Anna 3, Ben 25, Cleo 41) rückgängig machen?" in (
        undo_page.text
    )


def test_api_errors_and_explanations_in_german(client):
    body = {"rows": [[5], [20], [30], [40]], "plays": [{"player": "Anna", "card": 25}]}
    answer = client.post("/api/resolve", json=body, headers=DE).get_json()
    assert answer["steps"][0]["explanation"] == (
        "25 kommt in Reihe 2: 20 ist das nächste niedrigere Reihenende (Reihe 1 endet mit 5)."
    )
    answer = client.post("/api/resolve", json={**body, "deck": 7}, headers=DE).get_json()
    assert "Profivariante" in answer["error"]


# --- (d) French: 6 qui prend !, its typography, pages and rule explanations ----


def plain(text: str) -> str:
    """French text with its non-breaking spaces as plain ones, to compare with words."""
    return text.replace(NBSP, " ").replace(NNBSP, " ")


def french_strings():
    """Every French msgstr (each plural form), with the msgid it translates."""
    return [(label(m), text) for m in entries("fr") for text in forms(m.string)]


def test_french_punctuation_keeps_its_space_on_the_line():
    """« », ! ? ; : stay on the line of their word: U+202F before ! ? ; and U+00A0
    before : and inside « » (a time like 20:15 has none); no English quotes."""
    wrong = []
    for msgid, text in french_strings():
        for found in re.finditer(r"[!?;:»]", text):
            at, sign = found.start(), found.group()
            before = text[at - 1] if at else ""
            if sign == ":" and before.isdigit() and text[at + 1 : at + 2].isdigit():
                continue
            if before != (NNBSP if sign in "!?;" else NBSP):
                wrong.append(f"{msgid!r}: {sign!r} after {before!r} in {text!r}")
        if re.search(r"«(?!\u00a0)", text) or re.search("[\"“”']", text):
            wrong.append(f"{msgid!r}: quotes or apostrophe in {text!r} (use « » and ’)")
    assert not wrong, "\n".join(wrong)


def test_french_never_elides_before_a_name():
    """ "de Anna" should be "d’Anna", "que Ulla" "qu’Ulla": say par, pour or à a name."""
    before_name = re.compile(r"\b(de|que|le|la|du) %\((name|names|player|other|first|second)\)s")
    wrong = [f"{msgid!r}: {text!r}" for msgid, text in french_strings() if before_name.search(text)]
    assert not wrong, "\n".join(wrong)


# Nouns a number goes with, and that go with a number: "3 têtes", "rangée 2".
COUNTED = r"(?:cartes?|têtes?|manches?|parties?|joueurs?|tours?|rangées?)\b"


def test_french_numbers_stay_with_their_nouns():
    """A line never ends with "3" before "têtes de bœuf", or "rangée" before "2"."""
    apart = re.compile(rf"(?:%\(\w+\)d|\b\d+e?) (?={COUNTED})|\b{COUNTED} (?=%\(\w+\)d|\d)", re.I)
    wrong = [f"{msgid!r}: {text!r}" for msgid, text in french_strings() if apart.search(text)]
    assert not wrong, "\n".join(wrong)


def test_each_language_names_the_game_as_its_edition_does():
    """6 nimmt! in English and German; 6 qui prend ! in French, wherever the name is."""
    assert load_catalog("de").get("6 nimmt!").string == "6 nimmt!"
    french = load_catalog("fr")
    assert french.get("6 nimmt!").string == f"6{NBSP}qui prend{NNBSP}!"
    named = [m for m in french if m.id and "6 nimmt!" in label(m)]
    assert len(named) >= 4  # the brand, the title, the home page, the rules page
    for message in named:
        assert "nimmt" not in message.string and f"6{NBSP}qui prend{NNBSP}!" in message.string


def test_french_is_picked_from_the_browser(client):
    html = client.get("/", headers=FR).text
    assert '<html lang="fr">' in html
    assert f'class="brand" href="/">6{NBSP}qui prend{NNBSP}!</a>' in html
    assert f"<title>Compagnon de 6{NBSP}qui prend{NNBSP}!</title>" in html


@pytest.mark.parametrize(
    ("accept", "lang"),
    [
        ("fr-FR,fr;q=0.9", "fr"),
        ("fr-CA", "fr"),
        ("it-IT,fr;q=0.5,en;q=0.3", "fr"),
        ("en-GB,fr;q=0.5", "en"),  # a regional English still beats an exact French
        ("de-CH,fr;q=0.8", "de"),
        ("fr;q=0,de;q=0.5", "de"),  # q=0: "not French"
        ("*", "en"),
    ],
)
def test_the_browser_order_decides_by_language(client, accept, lang):
    assert f'<html lang="{lang}">' in client.get("/", headers={"Accept-Language": accept}).text


@pytest.mark.parametrize(
    ("count", "words"),
    [(0, "0 tête de bœuf"), (1, "1 tête de bœuf"), (2, "2 têtes de bœuf"), (7, "7 têtes de bœuf")],
)
def test_french_plural_forms(app, count, words):
    """French counts 0 and 1 as singular (plural=(n > 1)); English and German do not."""
    with app.test_request_context(headers=FR):
        assert present.bull_words(count) == words.replace(" ", NBSP, 1)
    with app.test_request_context(headers=DE):
        assert present.bull_words(count).endswith("Hornochse" if count == 1 else "Hornochsen")


def test_a_match_at_the_table_speaks_french(client):
    """A too-low card in French: the prompt, the row buttons, then each explanation."""
    ids, match_id = a_match_of_three(client)
    page = Page(client.get(f"/matches/{match_id}", headers=FR).text)
    assert "Partie 1" in page.text
    assert "Les quatre cartes de départ, face visible" in page.text
    assert (
        "La partie se termine après la manche où quelqu’un dépasse 66 têtes de bœuf." in page.text
    )
    play_a_too_low_round(client, match_id, ids)
    page = Page(client.get(f"/matches/{match_id}", headers=FR).text)
    for words in [
        "Manche 1 · tour",
        "sur 10",
        "Trop faible !",
        "Anna ramasse une rangée",
        "3 est plus petit que toutes les fins de rangée : Anna ramasse la rangée de son "
        "choix (le moins de têtes de bœuf : rangée 1).",
        "Ramasser la rangée 1",
        "conseillée",
        "Score",
        "Total",
    ]:
        assert words in page.text, words
    assert not english_leftovers(page, "fr"), english_leftovers(page, "fr")

    assert choose(client, match_id, ids[0], 1).status_code == 303
    html = client.get(f"/matches/{match_id}", headers=FR).text
    assert "Anna 3 : trop faible, a ramassé la rangée 1, 3 têtes de bœuf" in plain(Page(html).text)
    # Each card's explanation is one tap away, on the round's replay ("Pourquoi ?").
    explain = re.search(r'class="explain" href="([^"#]+)', html).group(1)
    page = Page(client.get(unescape(explain), headers=FR).text)
    for words in [
        "3 est plus petit que toutes les fins de rangée (10, 20, 30, 40) : Anna a choisi "
        "la rangée 1 et ramasse 1 carte, 3 têtes de bœuf.",
        "Anna ramasse 1 carte de la rangée 1 : 3 têtes de bœuf",
        "25 va dans la rangée 2 : 20 est la fin de rangée la plus proche en dessous "
        "(la rangée 1 finit par 3).",
        "41 va dans la rangée 4 : 40 est la fin de rangée la plus proche en dessous "
        "(la rangée 3 finit par 30).",
    ]:
        assert words in page.text, words
    undo_page = Page(client.get(f"/matches/{match_id}/undo", headers=FR).text)
    assert (
        "Annuler la rangée 1 choisie par Anna au tour 1 ? Tout le reste ne change pas."
        in undo_page.text
    )


def test_a_sixth_card_in_french(client):
    """The 6th card's sentence: the taker, the cards and bulls, and why that row."""
    body = {
        "rows": [[5, 12], [20, 24], [30, 37], [31, 32, 33, 34, 40]],
        "plays": [{"player": "Ben", "card": 42}],
    }
    answer = client.post("/api/resolve", json=body, headers=FR).get_json()
    explanation = answer["steps"][0]["explanation"]
    assert plain(explanation) == (
        "42 serait la 6e carte de la rangée 4 : Ben ramasse 5 cartes, 11 têtes de bœuf. "
        "40 est la fin de rangée la plus proche en dessous (la rangée 3 finit par 37)."
    )
    assert f"la 6e{NBSP}carte de la rangée{NBSP}4{NBSP}: Ben ramasse 5{NBSP}cartes" in explanation


def test_api_errors_and_explanations_in_french(client):
    body = {"rows": [[5], [20], [30], [40]], "plays": [{"player": "Anna", "card": 25}]}
    answer = client.post("/api/resolve", json=body, headers=FR).get_json()
    assert plain(answer["steps"][0]["explanation"]) == (
        "25 va dans la rangée 2 : 20 est la fin de rangée la plus proche en dessous "
        "(la rangée 1 finit par 5)."
    )
    low = {**body, "plays": [{"player": "Anna", "card": 3}]}
    answer = client.post("/api/resolve", json=low, headers=FR).get_json()
    assert answer["status"] == "needs_choice"
    assert plain(answer["explanation"]) == (
        "3 est plus petit que toutes les fins de rangée : Anna ramasse la rangée de son "
        "choix (le moins de têtes de bœuf : rangée 1)."
    )
    response = client.post("/api/resolve", json={**body, "deck": 7}, headers=FR)
    assert response.status_code == 400
    assert "variante pro" in response.get_json()["error"]
    twice = {**body, "plays": [{"player": "Anna", "card": 25}, {"player": "Ben", "card": 25}]}
    response = client.post("/api/resolve", json=twice, headers=FR)
    assert response.status_code == 400
    assert response.get_json()["error"] == (
        f"Anna et Ben ont tous deux saisi le 25{NBSP}: chaque carte n’existe qu’une fois."
    )


# --- (e) the language switch -------------------------------------------------


class LanguageSwitch(HTMLParser):
    """The links of a page's language switch: attributes, and the name a reader hears."""

    def __init__(self, html: str):
        super().__init__()
        self.links: list[dict] = []
        self.inside = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "nav" and "lang-switch" in (attrs.get("class") or "").split():
            self.inside = True
        elif tag == "a" and self.inside:
            self.links.append({**attrs, "name": attrs.get("aria-label") or ""})

    def handle_endtag(self, tag):
        if tag == "nav":
            self.inside = False

    def handle_data(self, data):
        if self.inside and self.links and not self.links[-1].get("aria-label"):
            self.links[-1]["name"] += data.strip()


# GET endpoints that are not pages with the site header (files, fragments, redirects).
NOT_PAGES = {
    "static",
    "web.htmx_copy",
    "web.sse_copy",
    "web.healthz",
    "i18n.set_language",
    "play.join",
    "play.poll",
    "play.events",
    "play.grid",
    "play.follow_rematch",
    "play.bgstats",
    "play.luck_json",
    "play.review_json",
    "backup.export_json",
    "backup.match_csv_file",
    "review.this_year",
}


def every_page(app, client) -> dict[str, str]:
    """A URL for every page the app serves, with a match one round in to fill the ids."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    start_game(client, match_id, [10, 20, 30, 40])
    enter_round(client, match_id, dict(zip(ids, [15, 25], strict=True)))
    values = {"player_id": ids[0], "match_id": match_id, "number": 1, "game": 1, "year": 2026}
    urls = {}
    assert {rule.endpoint for rule in app.url_map.iter_rules()} >= NOT_PAGES
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if "GET" in rule.methods and rule.endpoint not in NOT_PAGES:
                urls[rule.endpoint] = url_for(
                    rule.endpoint, **{name: values[name] for name in rule.arguments}
                )
    return urls


@pytest.mark.parametrize(("headers", "lang"), [(FR, "fr"), (DE, "de"), ({}, "en")])
def test_the_language_switch_offers_three_languages_on_every_page(app, client, headers, lang):
    """Every page links to English, Deutsch and Français, marks its own, comes back."""
    pages = every_page(app, client)
    assert len(pages) >= 15
    for endpoint, url in pages.items():
        response = client.get(url, headers=headers)
        assert response.status_code == 200, endpoint
        links = LanguageSwitch(response.text).links
        assert links, f"no language switch on {url}"
        assert [(link["lang"], link["name"]) for link in links] == [
            ("en", "English"),
            ("de", "Deutsch"),
            ("fr", "Français"),
        ], url
        here = url.replace("?", "%3F").replace("=", "%3D").replace("&", "%26")
        assert all(link["href"].endswith(f"?next={here}") for link in links), url
        assert [link["lang"] for link in links if "aria-current" in link] == [lang], url


def test_choosing_french_keeps_the_page(client):
    response = client.get("/lang/fr?next=/rules", headers={"Accept-Language": "de"})
    assert response.status_code == 303
    assert response.headers["Location"] == "/rules"
    assert response.headers["Set-Cookie"].startswith("lang=fr;")
    assert "Les règles en bref" in client.get("/rules", headers={"Accept-Language": "de"}).text


def test_german_says_spiel_for_a_match_and_partie_for_a_game():
    """Issue 57: "Partieserie" is no word German players use. A match is a *Spiel*, a game
    a *Partie* (as the catalog said already), a round a *Runde*; each word one thing."""
    catalog = load_catalog("de")
    texts = [
        text
        for message in catalog
        if message.id
        for text in (message.string if isinstance(message.string, tuple) else [message.string])
    ]
    assert not [text for text in texts if "Partieserie" in text]
    said = {message.id: message.string for message in catalog if isinstance(message.id, str)}
    assert said["Match %(id)d"] == "Spiel %(id)d"
    assert said["Game %(game)d"] == "Partie %(game)d"
    assert (
        said["Game %(game)d · round %(round)d of 10"] == "Partie %(game)d · Runde %(round)d von 10"
    )
    too_many = "The scores add up to %(total)d bulls, but a game of %(players)d players"
    (checked,) = [text for key, text in said.items() if key.startswith(too_many)]
    assert "eine Partie mit" in checked


@pytest.mark.parametrize("lang", ["en", *PLURALS])
def test_the_quick_gettext_says_what_flask_babels_says(app, lang):
    """``i18n.gettext`` and ``ngettext`` find the request's catalogue once (the round's
    explanations ask twenty times a version): they say what Flask-Babel's say."""
    with app.test_request_context(headers={"Accept-Language": lang}):
        for text, variables in (
            ("pro variant", {}),
            ("an %(chance)s chance", {"chance": "8 %"}),
            (
                "%(end)d is the closest lower end (row %(other)d ends in %(other_end)d)",
                {"end": 41, "other": 2, "other_end": 12},
            ),
        ):
            assert i18n.gettext(text, **variables) == flask_babel.gettext(text, **variables)
        for count in (1, 2, 5):
            assert i18n.ngettext("%(num)d bull", "%(num)d bulls", count) == (
                flask_babel.ngettext("%(num)d bull", "%(num)d bulls", count)
            )
        if lang != "en":
            assert i18n.gettext("pro variant") != "pro variant"
