"""The texts the players type about a match are declared once (``models.MATCH_TEXTS``, on
their columns) and every door and page reads them from there: each declared text is on
the new-match form, has its own form and route on the match page, shows on the match
page and in the history, ends the CSV, rides in its BG Stats field and moves with a
backup. A new text declared on its column passes these tests with no other file changed
but its rule and its backup line (docs/development.md, "A text about a match")."""

import csv
import io
import re
from html import unescape
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from driver import add_players, start_match, table_snapshot
from test_bgstats import LINK, decoded, play_with_a_tie

from companion import rules
from companion.backup.columns import BACKED_UP, FILE
from companion.backup.fields import BackupError
from companion.db import db
from companion.models import MATCH_TEXTS, Match

TEXT = "Oma’s 80th & cake"
NEW_MATCH = {"end_kind": "more_than", "end_value": "66", "deck": "standard"}
CATALOGS = Path(__file__).parents[2] / "companion" / "translations"

pytestmark = pytest.mark.parametrize("name", list(MATCH_TEXTS))


def shown(html: str, name: str) -> str | None:
    """The text a page shows (match page or history), or None."""
    found = re.search(rf'<p class="{name}-text">([^<]*)</p>', html)
    return unescape(found.group(1)) if found else None


def stored(app, match_id: int, name: str) -> str | None:
    """The text the database holds for the match."""
    with app.app_context():
        return getattr(db.session.get(Match, match_id), name)


def refusal(name: str, value: str) -> str:
    """The rule's message for ``value``, in English, as the form shows it."""
    with pytest.raises(rules.RuleError) as refused:
        MATCH_TEXTS[name].check(value)
    return refused.value.message()


def test_the_column_bounds_the_rule(name):
    """The column's length is the rule's: the longest text is stored, one more refused."""
    typed = MATCH_TEXTS[name]
    assert typed.most == Match.__table__.c[name].type.length > 0
    assert typed.check("é" * typed.most) == "é" * typed.most
    assert refusal(name, "é" * (typed.most + 1))


def test_its_name_is_no_other_route_of_a_match(app, name):
    """``POST /matches/<id>/<name>`` changes it: no other route of a match is so named."""
    others = {
        rule.rule.split("/")[3]
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/matches/<id:match_id>/") and rule.endpoint != "play.change_text"
    }
    assert others and name not in others


def test_its_words_are_in_every_catalog(name):
    typed = MATCH_TEXTS[name]
    words = [typed.label, typed.optional, typed.hint, typed.add, typed.change, typed.save]
    for language in ("de", "fr"):
        with open(CATALOGS / language / "LC_MESSAGES" / "messages.po", "rb") as po:
            catalog = read_po(po)
        for word in words:
            assert catalog.get(word) is not None and catalog.get(word).string, (language, word)


def test_the_new_match_form_stores_it_and_every_page_and_export_shows_it(client, app, name):
    typed = MATCH_TEXTS[name]
    form = client.get("/matches/new").text
    assert f'<input id="field-{name}" name="{name}" type="text"' in form
    assert f'maxlength="{2 * typed.most}"' in form and typed.optional in form
    anna, ben = add_players(client, "Anna", "Ben")
    seats = {"seat_1": str(anna), "seat_2": str(ben)}
    response = client.post("/matches/", data={**NEW_MATCH, **seats, name: f" {TEXT} "})
    match_id = int(response.headers["Location"].rsplit("/", 1)[1])
    assert stored(app, match_id, name) == TEXT
    page = client.get(f"/matches/{match_id}").text
    assert shown(page, name) == TEXT and typed.change in page
    assert shown(client.get("/history").text, name) == TEXT
    rows = client.get(f"/matches/{match_id}/export.csv").data.decode().lstrip("\ufeff")
    assert [typed.label, TEXT] in list(csv.reader(io.StringIO(rows)))


def test_the_match_page_changes_it_or_refuses_it_beside_its_field(client, app, name):
    typed = MATCH_TEXTS[name]
    match_id = start_match(client, add_players(client, "Anna", "Ben"))
    assert typed.add in client.get(f"/matches/{match_id}").text
    assert client.post(f"/matches/{match_id}/{name}", data={name: TEXT}).status_code == 303
    assert stored(app, match_id, name) == TEXT
    before = table_snapshot(app)
    too_long = "x" * (typed.most + 1)
    response = client.post(
        f"/matches/{match_id}/{name}", data={name: too_long}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert response.headers["HX-Reswap"] == f"outerHTML show:#match-{name}:top"
    error = re.search(rf'<p class="field-error" id="field-{name}-note">([^<]*)</p>', response.text)
    assert unescape(error.group(1)) == refusal(name, too_long)
    assert table_snapshot(app) == before


def test_the_bgstats_play_carries_it_in_its_field(client, name):
    typed = MATCH_TEXTS[name]
    _ids, match_id = play_with_a_tie(client, 3, seed=2)
    client.post(f"/matches/{match_id}/{name}", data={name: TEXT})
    (link,) = set(LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text))
    play = decoded(link)
    assert not typed.bgstats or play[typed.bgstats] == TEXT


def test_a_backup_holds_it_as_a_field_of_the_match_checked_by_its_rule(name):
    how = BACKED_UP[Match][name]
    assert (how.kind, how.holder, how.key, how.optional) == (FILE, "match", name, True)
    too_long = "x" * (MATCH_TEXTS[name].most + 1)
    with pytest.raises(BackupError, match=re.escape(refusal(name, too_long))):
        how.read({name: too_long}, name)
