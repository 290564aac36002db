"""The German catalog: complete, placeholders intact, in step with the source, and shown."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_keywords, parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from conftest import make_app
from driver import add_players, enter_round, start_game, start_match

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "companion" / "translations" / "de" / "LC_MESSAGES" / "messages.po"
DE = {"Accept-Language": "de"}

# A %-format placeholder as Python reads it: %(name)d, %(cards)s, %(value)5.1f ...
PLACEHOLDER = re.compile(r"%\((\w+)\)[#0 +-]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")


def load_catalog():
    with CATALOG.open("rb") as file:
        return read_po(file, locale="de")


def placeholders(text: str) -> set[str]:
    """Every %(name)x placeholder in ``text``, conversion included."""
    return {match.group(0) for match in PLACEHOLDER.finditer(text)}


def stray_percent(text: str) -> bool:
    """True if ``text`` has a % that is neither a placeholder nor %% (it breaks ``%``)."""
    return "%" in PLACEHOLDER.sub("", text).replace("%%", "")


def forms(value) -> tuple[str, ...]:
    """A message's id or string as a tuple: one item, or one per plural form."""
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def entries():
    return [message for message in load_catalog() if message.id]


def label(message) -> str:
    return forms(message.id)[0]


# --- (a) the catalog itself -------------------------------------------------


def test_catalog_header_is_german_with_two_plural_forms():
    catalog = load_catalog()
    assert str(catalog.locale) == "de"
    assert catalog.num_plurals == 2
    assert catalog.plural_expr == "(n != 1)"
    assert not catalog.obsolete, f"obsolete entries left: {sorted(catalog.obsolete)}"


def test_every_entry_is_translated_and_not_fuzzy():
    problems = [
        f"untranslated: {label(m)!r}"
        for m in entries()
        if not all(text.strip() for text in forms(m.string))
    ]
    problems += [
        f"fuzzy (check it, then drop the flag): {label(m)!r}" for m in entries() if m.fuzzy
    ]
    assert not problems, "\n".join(problems)


def test_plural_entries_have_both_forms():
    for message in entries():
        if message.pluralizable:
            assert len(forms(message.string)) == 2, label(message)


def test_placeholders_match_the_english():
    """Each msgstr (each plural form) keeps exactly the msgid's %(...)x placeholders."""
    wrong = []
    for message in entries():
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


def test_every_string_in_the_source_is_in_the_german_catalog():
    """A string added without `make messages` and a translation fails here."""
    catalog = load_catalog()
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
        "run `make messages` and translate in "
        "companion/translations/de/LC_MESSAGES/messages.po:\n" + "\n".join(missing)
    )


# --- (c) pages in German ------------------------------------------------------


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    """The catalog compiled as it is now, so a stale .mo cannot hide a change."""
    directory = tmp_path_factory.mktemp("translations")
    target = directory / "de" / "LC_MESSAGES"
    target.mkdir(parents=True)
    with (target / "messages.mo").open("wb") as file:
        write_mo(file, load_catalog())
    return directory


@pytest.fixture
def app(tmp_path, compiled):
    """The app on a fresh database, reading the freshly compiled German catalog."""
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


def english_leftovers(page: Page) -> list[str]:
    """Text on the page that is exactly an English msgid with a different German text."""
    english = {
        message.id
        for message in entries()
        if isinstance(message.id, str)
        and not placeholders(message.id)
        and message.string != message.id
    }
    return [text for text in page.texts if text in english]


PAGES = {
    "/": ["Kein Streit mehr am Tisch", "Partieserien", "Hornochsen", "Wo kommt meine Karte hin?"],
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
        "Neue Partieserie",
        "Hausregeln",
        "Tippe die Spieler in Sitzreihenfolge an",
        "Die Partieserie endet nach der Partie, in der",
        "Partieserie starten",
    ],
    "/patterns": ["Bausteine", "Reihenwahl", "Zu niedrig!", "6. Karte!"],
    "/no-such-page": ["Diese Karte gibt es nicht im Spiel", "Zurück zum Start"],
}
ENGLISH_WORDS = re.compile(r"\b(Players?|Start|Match(es)?|Games?|Rows?|Bulls?|Cards?|Rules)\b")


@pytest.mark.parametrize("path", PAGES)
def test_pages_speak_german(client, path):
    response = client.get(path, headers=DE)
    assert response.status_code == (404 if path == "/no-such-page" else 200)
    html = response.get_data(as_text=True)
    assert '<html lang="de">' in html
    page = Page(html)
    for words in PAGES[path]:
        assert words in page.text, f"{words!r} missing on {path}"
    english = [f"<{tag}> {text}" for tag, text in page.headings if ENGLISH_WORDS.search(text)]
    assert not english, f"English on {path}: {english}"
    assert not english_leftovers(page), f"untranslated on {path}: {english_leftovers(page)}"


def test_the_same_pages_stay_english_without_german(client):
    """The check above can fail: the English page has the words it looks for."""
    page = Page(client.get("/players/", headers={"Accept-Language": "en"}).text)
    assert ("h1", "Players") in page.headings
    assert any(ENGLISH_WORDS.search(text) for _tag, text in page.headings)


def test_a_match_at_the_table_speaks_german(client):
    """Headings, the round's explanations from the rules and a row choice, in German."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    page = Page(client.get(f"/matches/{match_id}", headers=DE).text)
    assert "Partieserie 1" in page.text
    assert "Partie 1" in page.text
    assert "Die vier offenen Startkarten" in page.text
    assert "Die Partieserie endet nach der Partie, in der jemand mehr als 66 Hornochsen hat." in (
        page.text
    )
    assert start_game(client, match_id, [10, 20, 30, 40]).status_code == 303
    # Anna's 3 is too low; Ben's 25 goes to row 2, Cleo's 41 to row 4.
    assert (
        enter_round(client, match_id, dict(zip(ids, [3, 25, 41], strict=True))).status_code == 303
    )
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
