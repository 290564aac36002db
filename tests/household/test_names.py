"""Lookalike names: two players may not look the same. Names are stored in NFKC, invisible
and control characters and stacked accents are refused next to the field (422) wherever a
name is typed, and "already taken" compares names as NFKC_Casefold keys."""

import re
import unicodedata

import pytest
from driver import add_players
from sqlalchemy.exc import IntegrityError

from companion.db import db
from companion.models import Player
from companion.rules.names import name_key

INVISIBLE = "A name cannot contain invisible characters"
STACKED = "A name has at most 3 accents on one letter."
BAD_NAMES = [
    ("Anna\u200b", INVISIBLE),  # zero width space: the finding's "Anna" beside Anna
    ("\u200bBen", INVISIBLE),
    ("\u202eevil", INVISIBLE),  # right-to-left override: shows "live"
    ("An\u2066na", INVISIBLE),  # left-to-right isolate
    ("Anna\u200d", INVISIBLE),  # zero width joiner
    ("Anna\ufeff", INVISIBLE),  # byte order mark
    ("An\u00adna", INVISIBLE),  # soft hyphen
    ("Ann\u061ca", INVISIBLE),  # Arabic letter mark
    ("\u200b", INVISIBLE),
    ("Zalgo" + "\u0301\u0302\u0303\u0304", STACKED),  # 4 accents on the o
    ("Ze\u0301\u0302\u0303\u0304", STACKED),  # é and 3 more: counted decomposed
    ("Z" + "\u0336" * 20 + "oe", STACKED),
    ("a\u0300\u0301\u0302\u0303b", STACKED),
    ("Bad\x07name", "control characters"),
    ("Bad\x7fname", "control characters"),
    ("\ufe0f\ufe0f", "Enter a name."),  # variation selectors: nothing visible
    ("\u3164", "Enter a name."),  # a Hangul filler: a blank name
    ("x" * 29 + "\ufb03", "at most 30"),  # the ffi ligature is 3 letters in NFKC
]
# Issue 41: "Anna" with a Cyrillic A (U+0410) was a new player beside "Anna". Unicode's
# confusable skeletons (UTS #39) make these one name, wherever a name is typed.
LOOKALIKES = ["\u0410nna", "\u0391nna", "\u0410nn\u0430"]  # Cyrillic A, Greek Alpha, Cyrillic a
# Spellings of a player already called "Anna" (or "Straße", "Zoë"): each is taken.
TAKEN = [
    "anna",
    "ANNA",
    "\uff21\uff4e\uff4e\uff41",  # fullwidth: NFKC gives Anna
    "\uff41\uff4e\uff4e\uff41",
    "Anna\ufe0f",  # variation selector 16: drawn as nothing on a letter
    "An\u034fna",  # combining grapheme joiner: drawn as nothing
    "STRASSE",  # casefold: ß is ss
    "strasse",
    "Zoe\u0308",  # decomposed ë: NFKC composes it
    "ZOË",
    "Zoe\u0308\ufe00",
    *LOOKALIKES,
]


def names(app) -> list[str]:
    """Every stored player's name."""
    with app.app_context():
        return sorted(db.session.scalars(db.select(Player.name)))


def field_error(page: str, field: str) -> str:
    """The message shown under the form field ``field`` (empty when there is none)."""
    found = re.search(rf'<p class="field-error" id="field-{field}-note">([^<]*)</p>', page)
    return found.group(1) if found else ""


@pytest.mark.parametrize(("name", "message"), BAD_NAMES)
def test_a_lookalike_name_is_refused_next_to_the_field(client, app, name, message):
    add_players(client, "Anna")
    response = client.post("/players/", data={"name": name})
    assert response.status_code == 422
    assert message in field_error(response.text, "name")
    assert 'aria-invalid="true"' in response.text
    assert names(app) == ["Anna"]


@pytest.mark.parametrize(("name", "message"), BAD_NAMES)
def test_a_lookalike_name_is_refused_on_the_new_match_page(client, app, name, message):
    (anna,) = add_players(client, "Anna")
    data = {"seat_1": str(anna), "new_player": name, "end_kind": "more_than", "end_value": "66"}
    response = client.post("/matches/", data=data)
    assert response.status_code == 422
    assert message in field_error(response.text, "new_player")
    assert names(app) == ["Anna"]


@pytest.mark.parametrize(("name", "message"), BAD_NAMES)
def test_a_lookalike_name_is_refused_as_a_new_name(client, app, name, message):
    anna, _ben = add_players(client, "Anna", "Ben")
    response = client.post(f"/players/{anna}/name", data={"name": name})
    assert response.status_code == 422
    assert message in field_error(response.text, "name")
    assert names(app) == ["Anna", "Ben"]


@pytest.mark.parametrize("name", TAKEN)
def test_a_name_equal_after_nfkc_and_casefold_is_taken(client, app, name):
    add_players(client, "Anna", "Straße", "Zoë")
    response = client.post("/players/", data={"name": name})
    assert response.status_code == 422
    assert "There is already a player called" in field_error(response.text, "name")
    assert names(app) == ["Anna", "Straße", "Zoë"]


@pytest.mark.parametrize("name", [*TAKEN[:6], *LOOKALIKES])  # each a spelling of Anna
def test_a_taken_spelling_is_refused_on_the_spot_and_as_a_rename(client, app, name):
    """The message names the player there as spelt there, however it was typed."""
    _anna, ben = add_players(client, "Anna", "Ben")
    data = {"seat_1": str(ben), "new_player": name, "end_kind": "more_than", "end_value": "66"}
    response = client.post("/matches/", data=data)
    assert response.status_code == 422
    assert "already a player called Anna" in field_error(response.text, "new_player")
    response = client.post(f"/players/{ben}/name", data={"name": name})
    assert response.status_code == 422
    assert "already a player called Anna" in field_error(response.text, "name")
    assert names(app) == ["Anna", "Ben"]


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("\uff22\uff45\uff4e", "Ben"),  # fullwidth
        ("\uff71\uff9d\uff85", "\u30a2\u30f3\u30ca"),  # halfwidth katakana
        ("Zoe\u0308", "Zoë"),  # composed
        ("\ufb01ona", "fiona"),  # the fi ligature
        ("Anna\u3000Lena", "Anna Lena"),  # an ideographic space
    ],
)
def test_names_are_stored_in_nfkc(client, app, typed, stored):
    add_players(client, typed)
    assert names(app) == [stored]


@pytest.mark.parametrize(
    "name",
    [
        "Nguyễn Thị Ánh",  # Vietnamese: 2 marks on a letter, decomposed
        "Nguye\u0323\u0302n",
        "\u0e17\u0e35\u0e48",  # Thai: a vowel and a tone mark
        "\u0f66\u0f92\u0fb2\u0f74\u0f56",  # Tibetan: a stack of 3
        "\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f",  # Devanagari conjuncts
        "Анна",
        "أحمد",
        "🐂 Ochse ❤\ufe0f",  # an emoji with its variation selector
    ],
)
def test_real_names_in_many_scripts_are_fine(client, app, name):
    assert client.post("/players/", data={"name": name}).status_code == 303
    assert len(names(app)) == 1


def test_a_rename_may_change_only_the_width(client, app):
    (anna,) = add_players(client, "Anna")
    assert client.post(f"/players/{anna}/name", data={"name": "\uff21nna"}).status_code == 303
    assert names(app) == ["Anna"]


def test_the_refusal_speaks_the_phones_language(client, app):
    response = client.post(
        "/players/", data={"name": "Anna\u200b"}, headers={"Accept-Language": "de"}
    )
    assert response.status_code == 422
    assert "keine unsichtbaren Zeichen" in field_error(response.text, "name")
    response = client.post(
        "/players/", data={"name": "e\u0301\u0301\u0301\u0301"}, headers={"Accept-Language": "fr"}
    )
    assert "au plus 3 accents" in field_error(response.text, "name")


def test_the_database_refuses_a_second_player_with_the_same_key(app):
    """The unique key on name_key holds even for a write that skips the form."""
    with app.app_context():
        db.session.add(Player(name="Anna", name_key=name_key("Anna")))
        db.session.commit()
        db.session.add(Player(name="Anna\ufe0f", name_key=name_key("Anna\ufe0f")))
        with pytest.raises(IntegrityError):
            db.session.commit()
        db.session.rollback()


@pytest.mark.database  # on PostgreSQL too: its unique key is checked row by row
def test_the_migration_repairs_the_names_already_stored(tmp_path, monkeypatch):
    """Names stored before the rule: each made valid, its key computed again, lookalikes
    kept apart under names of their own (never merged: each keeps its history)."""
    from companion.rules.names import player_name

    old = [  # (name, key) as the old rule stored them: NFKC and casefold only
        "Anna\u200b",  # older than Anna: Anna, whose name is valid, keeps hers
        "Anna",
        "\u202eevil",
        "\uff22\uff25\uff2e",
        "Zo" + "e\u0301\u0302\u0303\u0304\u0305",
        "\u200b\u200c",
        "Cleo\ufe0f",
        "cleo",
        "Player 9",
    ]
    stored = upgraded_names(tmp_path, monkeypatch, "5b1e7c2d9a10", old)
    assert [name for name, _ in stored] == [
        "Anna (1)",
        "Anna",
        "evil",
        "BEN",
        "Zo\u00e9\u0302\u0303",
        "Player 6",
        "Cleo\ufe0f",
        "cleo (8)",
        "Player 9",
    ]
    for name, key in stored:
        assert player_name(name) == name and key == name_key(name)
    assert len({key for _, key in stored}) == len(stored)


def test_names_in_other_scripts_that_look_different_are_players_of_their_own(client, app):
    """The skeleton folds only what looks alike: "Anna" in Cyrillic (its En, U+041D, is no N) and
    "Jürgen" beside "Jurgen" are other players."""
    add_players(client, "Anna", "Jurgen")
    for name in ("\u0410\u043d\u043d\u0430", "Jürgen", "Ann"):
        assert client.post("/players/", data={"name": name}).status_code == 303, name
    assert len(names(app)) == 5


@pytest.mark.database  # on PostgreSQL too: its unique key is checked row by row
def test_the_migration_keeps_lookalikes_apart_under_names_of_their_own(tmp_path, monkeypatch):
    """Lookalikes stored before confusables counted ("Anna" and "Anna" with a Cyrillic A): the
    older keeps its name, the other gets its id beside it; every key is computed again."""
    names = ("Anna", "\u0410nna", "Ben", "\u0392en")  # a Cyrillic A, a Greek Beta
    stored = upgraded_names(tmp_path, monkeypatch, "b4e81f0c2d57", names)
    assert [name for name, _ in stored] == ["Anna", "\u0410nna (2)", "Ben", "\u0392en (4)"]
    assert all(key == name_key(name) for name, key in stored)


def upgraded_names(tmp_path, monkeypatch, revision: str, names) -> list[tuple[str, str]]:
    """Players stored at ``revision`` with keys as NFKC and casefold only, in this order;
    their (name, key) once the database is upgraded to the newest revision."""
    import logging.config

    import conftest
    from flask_migrate import upgrade

    from companion import create_app

    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)
    url = conftest.database_url(tmp_path / "old.sqlite", empty=True)
    app = create_app(
        {**conftest.testing_config(tmp_path / "old.sqlite"), "SQLALCHEMY_DATABASE_URI": url}
    )
    with app.app_context():
        upgrade(revision=revision)
        for name in names:
            db.session.execute(
                db.text(
                    "INSERT INTO player (name, name_key, archived, created_at) "
                    "VALUES (:name, :key, false, '2026-01-01')"
                ),
                {"name": name, "key": unicodedata.normalize("NFKC", name).casefold()},
            )
        db.session.commit()
        upgrade()
        rows = db.session.execute(db.text("SELECT name, name_key FROM player ORDER BY id"))
        return [(row.name, row.name_key) for row in rows]
