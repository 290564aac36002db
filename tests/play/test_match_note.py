"""A match's note ("Oma's 80th"): typed on the new-match form or changed on the match page
by a phone with the player link, shown on the match page and in the history, written in
the match's CSV and in its BG Stats play."""

import csv
import io
import re
from html import unescape

import pytest
from driver import add_players, phone, start_match, table_snapshot, tokens
from test_bgstats import LINK, decoded, play_with_a_tie

from companion.db import db
from companion.models import Match

NOTE = "Oma’s 80th & cake"
TOO_LONG = "x" * 201
# Issue 55: a note refuses what a name refuses: invisible characters, stacked accents.
INVISIBLE = (
    "A note cannot contain invisible characters (such as a zero-width space or a text "
    "direction mark)."
)
STACKED = "A note has at most 3 accents on one letter."
NEW_MATCH = {"end_kind": "more_than", "end_value": "66", "deck": "standard"}


def stored_note(app, match_id: int) -> str | None:
    """The note the database holds for the match."""
    with app.app_context():
        return db.session.get(Match, match_id).note


def shown_note(html: str) -> str | None:
    """The note a page shows (match page or history), or None."""
    found = re.search(r'<p class="note-text">([^<]*)</p>', html)
    return unescape(found.group(1)) if found else None


def field_error(html: str) -> str | None:
    """The message beside the note field, or None."""
    found = re.search(r'<p class="field-error" id="field-note-note">([^<]*)</p>', html)
    return unescape(found.group(1)) if found else None


def new_match_with(client, note: str):
    """Post the new-match form with two players seated and ``note``."""
    anna, ben = add_players(client, "Anna", "Ben")
    return client.post(
        "/matches/", data={**NEW_MATCH, "seat_1": str(anna), "seat_2": str(ben), "note": note}
    )


# --- the new-match form ----------------------------------------------------------------


def test_a_note_typed_on_the_new_match_form_is_stored_and_shown(client, app):
    response = new_match_with(client, f"  {NOTE}  ")
    assert response.status_code == 303
    match_id = int(response.headers["Location"].rsplit("/", 1)[1])
    assert stored_note(app, match_id) == NOTE  # its spaces tidied
    assert shown_note(client.get(f"/matches/{match_id}").text) == NOTE


def test_a_match_without_a_note_has_none(client, app):
    match_id = start_match(client, add_players(client, "Anna", "Ben"))
    assert stored_note(app, match_id) is None
    page = client.get(f"/matches/{match_id}").text
    assert shown_note(page) is None and "Add a note" in page


def test_the_new_match_form_offers_the_note_field(client):
    page = client.get("/matches/new").text
    assert '<input id="field-note" name="note" type="text"' in page


def test_a_too_long_note_on_the_new_match_form_is_refused_beside_the_field(client, app):
    anna, ben = add_players(client, "Anna", "Ben")
    before = table_snapshot(app)
    form = {**NEW_MATCH, "seat_1": str(anna), "seat_2": str(ben), "note": TOO_LONG}
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert field_error(response.text) == "A note has at most 200 characters."
    assert f'value="{TOO_LONG}"' in response.text  # typed back, to shorten
    assert 'aria-invalid="true" aria-describedby="field-note-note"' in response.text
    assert table_snapshot(app) == before


@pytest.mark.parametrize(
    ("note", "message", "language", "said"),
    [
        ("Oma\u202es 80th", INVISIBLE, "de", "Eine Notiz darf keine unsichtbaren Zeichen"),
        ("Oma\ufeff", INVISIBLE, "fr", "Une note ne peut pas contenir de caractères invisibles"),
        ("a" + "\u0301" * 199, STACKED, "de", "Eine Notiz hat höchstens 3 Akzente"),
        ("a" + "\u0301" * 199, STACKED, "fr", "Une note a au plus 3 accents"),
    ],
)
def test_an_unseen_or_stacked_note_on_the_new_match_form_is_refused_beside_the_field(
    client, app, note, message, language, said
):
    anna, ben = add_players(client, "Anna", "Ben")
    before = table_snapshot(app)
    form = {**NEW_MATCH, "seat_1": str(anna), "seat_2": str(ben), "note": note}
    response = client.post("/matches/", data=form)
    assert response.status_code == 422
    assert field_error(response.text) == message
    assert 'aria-invalid="true" aria-describedby="field-note-note"' in response.text
    assert table_snapshot(app) == before
    in_words = client.post("/matches/", data=form, headers={"Accept-Language": language})
    assert in_words.status_code == 422 and said in field_error(in_words.text)
    assert table_snapshot(app) == before


def test_200_characters_are_a_note(client, app):
    response = new_match_with(client, "é" * 200)
    assert response.status_code == 303
    match_id = int(response.headers["Location"].rsplit("/", 1)[1])
    assert stored_note(app, match_id) == "é" * 200


def test_adding_someone_new_keeps_the_note_typed(client):
    """The Add button under "Someone new?" comes back to the form with the note in place."""
    response = client.post(
        "/matches/", data={**NEW_MATCH, "new_player": "Anna", "action": "add", "note": NOTE}
    )
    assert response.status_code == 303
    page = client.get(response.headers["Location"]).text
    assert f'name="note" type="text" value="{NOTE.replace("&", "&amp;")}"' in page


# --- the match page ---------------------------------------------------------------------


@pytest.fixture
def match(client):
    """A match this client started: it holds the player link."""
    return start_match(client, add_players(client, "Anna", "Ben"))


def test_a_player_link_changes_the_note(client, app, match):
    response = client.post(f"/matches/{match}/note", data={"note": NOTE})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/matches/{match}"
    assert stored_note(app, match) == NOTE
    page = client.get(f"/matches/{match}").text
    assert shown_note(page) == NOTE and "Change the note" in page
    # An empty note takes it away.
    assert client.post(f"/matches/{match}/note", data={"note": "  "}).status_code == 303
    assert stored_note(app, match) is None
    assert shown_note(client.get(f"/matches/{match}").text) is None


def test_a_changed_note_reaches_the_other_phones(client, app, match):
    """The write raises the match's version: a watching phone's replay shows the new note."""
    watching = phone(app, match, tokens(app, match)[1])
    assert shown_note(watching.get(f"/matches/{match}").text) is None
    client.post(f"/matches/{match}/note", data={"note": NOTE})
    page = watching.get(f"/matches/{match}").text
    assert shown_note(page) == NOTE
    assert "Add a note" not in page and "Change the note" not in page  # no form to watchers


def test_htmx_gets_the_match_after_a_change(client, match):
    response = client.post(
        f"/matches/{match}/note",
        data={"note": NOTE},
        headers={"HX-Request": "true"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div id="match"')
    assert shown_note(response.text) == NOTE


@pytest.mark.parametrize(
    ("note", "message"),
    [
        (TOO_LONG, "A note has at most 200 characters."),
        ("Oma\x00", "A note cannot contain control characters."),
        *((f"Oma{char}s", INVISIBLE) for char in "\u202e\u200b\ufeff\u2066\u2069"),
        ("a" + "\u0301" * 199, STACKED),
    ],
)
def test_a_bad_note_is_refused_beside_the_field_and_nothing_is_saved(
    client, app, match, note, message
):
    client.post(f"/matches/{match}/note", data={"note": "Before"})
    before = table_snapshot(app)
    response = client.post(f"/matches/{match}/note", data={"note": note})
    assert response.status_code == 422
    assert field_error(response.text) == message
    assert "<details open>" in response.text  # the form stays open, with what was typed
    assert table_snapshot(app) == before and stored_note(app, match) == "Before"
    fragment = client.post(
        f"/matches/{match}/note", data={"note": note}, headers={"HX-Request": "true"}
    )
    assert fragment.status_code == 422
    assert fragment.text.lstrip().startswith('<div id="match"')
    assert fragment.headers["HX-Reswap"] == "outerHTML show:#match-note:top"
    assert field_error(fragment.text) == message


@pytest.mark.parametrize("link", ["watch", "none"])
def test_only_a_player_link_changes_the_note(client, app, match, link):
    other = phone(app, match, tokens(app, match)[1] if link == "watch" else None)
    for note in (NOTE, TOO_LONG):  # refused before the note is even read
        assert other.post(f"/matches/{match}/note", data={"note": note}).status_code == 403
    assert stored_note(app, match) is None


def test_the_note_of_no_match(client):
    assert client.post("/matches/99999/note", data={"note": NOTE}).status_code == 404


def test_a_note_without_the_csrf_token_is_refused(client, app, match):
    app.config["WTF_CSRF_ENABLED"] = True  # on from here: the match was set up without
    page = client.get(f"/matches/{match}").text
    refused = client.post(f"/matches/{match}/note", data={"note": NOTE})
    assert refused.status_code == 422 and "Not saved yet" in refused.text  # send it again
    assert stored_note(app, match) is None
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    response = client.post(f"/matches/{match}/note", data={"note": NOTE, "csrf_token": token})
    assert response.status_code == 303 and stored_note(app, match) == NOTE


# --- the history, the CSV and BG Stats ----------------------------------------------------


def test_the_history_shows_the_note(client, match):
    client.post(f"/matches/{match}/note", data={"note": NOTE})
    assert shown_note(client.get("/history").text) == NOTE


def test_the_csv_ends_with_the_note(client, match):
    rows = csv_rows(client, match)
    assert rows[-1][0] == "Total"
    client.post(f"/matches/{match}/note", data={"note": "=1+1, Oma’s"})
    assert csv_rows(client, match)[-1] == ["Note", "'=1+1, Oma’s"]  # never a formula
    assert csv_rows(client, match, "de")[-1][0] == "Notiz"
    assert csv_rows(client, match, "fr")[-1][0] == "Note"


def csv_rows(client, match_id: int, language: str = "en") -> list[list[str]]:
    """The match's CSV, as a spreadsheet reads it."""
    answer = client.get(f"/matches/{match_id}/export.csv", headers={"Accept-Language": language})
    text = answer.data.decode().lstrip("\ufeff")
    return list(csv.reader(io.StringIO(text)))


def test_the_bgstats_play_carries_the_note_as_its_comments(client):
    _ids, match_id = play_with_a_tie(client, 3, seed=2)
    (link,) = set(LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text))
    assert "comments" not in decoded(link)
    client.post(f"/matches/{match_id}/note", data={"note": NOTE})
    (link,) = set(LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text))
    assert decoded(link)["comments"] == NOTE
