"""A match's note moves with the household: the backup writes it, the import checks and
keeps it, and a file of the version before notes still imports."""

import html

import pytest
from backups import export, kept_household, snapshot, upload, without_time
from conftest import make_app

from companion.backup.columns import VERSION
from companion.db import db
from companion.models import Match

NOTE = "Oma’s 80th; „Kuchen“ & 🎂"


@pytest.fixture
def source(client, app, shared_folder):
    """The household's client, its first match with a note, the second without."""
    kept_household(client, app, shared_folder)
    assert client.post("/matches/1/note", data={"note": NOTE}).status_code == 303
    return client


@pytest.fixture
def empty(tmp_path):
    """A second installation with an empty database."""
    return make_app(tmp_path / "other.sqlite")


def notes(app) -> list[str | None]:
    """Every match's note, by id."""
    with app.app_context():
        return list(db.session.scalars(db.select(Match.note).order_by(Match.id)))


def test_the_backup_writes_the_note_and_leaves_it_out_when_there_is_none(source):
    document = export(source)
    assert VERSION == 3 and document["version"] == VERSION  # the note came in version 3
    first, second = document["matches"]
    assert first["note"] == NOTE and list(first)[-1] == "note"
    assert "note" not in second


def test_a_move_keeps_the_note(source, empty):
    document = export(source)
    target = empty.test_client()
    assert upload(target, document).status_code == 303
    assert notes(empty) == [NOTE, None]
    assert without_time(export(target)) == without_time(document)
    assert NOTE in html.unescape(target.get("/history").text)


def test_a_backup_of_the_version_before_notes_still_imports(source, empty):
    document = export(source)
    document["version"] = 2
    for match in document["matches"]:
        match.pop("note", None)
    target = empty.test_client()
    assert upload(target, document).status_code == 303
    assert notes(empty) == [None, None]
    assert export(target)["matches"][0]["seats"] == document["matches"][0]["seats"]


@pytest.mark.parametrize(
    ("note", "message"),
    [
        ("x" * 201, "A note has at most 200 characters."),
        ("Oma\u0007", "A note cannot contain control characters."),
        (80, "“note” must be a text."),
        # Issue 55: what a name refuses, a note refuses.
        ("Oma\u202es", "A note cannot contain invisible characters"),
        ("Oma\u2068s", "A note cannot contain invisible characters"),
        ("a" + "\u0301" * 199, "A note has at most 3 accents on one letter."),
    ],
)
def test_a_file_with_a_bad_note_is_refused_by_the_rule_and_changes_nothing(
    source, app, note, message
):
    document = export(source)
    document["matches"][0]["note"] = note
    before = snapshot(app)
    response = upload(source, document)
    assert response.status_code == 422
    started = document["matches"][0]["created_at"][:10]
    assert f"Match 1 (started {started}): {message}" in html.unescape(response.text)
    assert snapshot(app) == before
