"""Hostile backup files: always a message with the place, never a 500, nothing written."""

import copy
import html
import io
import json
import re
from pathlib import Path

import pytest
from backups import export, household, shifted, snapshot, upload
from conftest import make_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import FileStorage
from werkzeug.test import stream_encode_multipart

from companion.backup import parse
from companion.backup.fields import latest
from companion.models import MAX_MATCHES_HELD as MATCHES
from companion.models import MAX_PLAYERS_HELD as PLAYERS

pytestmark = pytest.mark.database  # refused on PostgreSQL as on SQLite, never a 500

HOLE = "@@hole@@"


def with_raw(document: dict, path: tuple, raw: str) -> bytes:
    """The document as JSON with the value at ``path`` replaced by the JSON text ``raw``.

    Raw text, because json.dumps cannot write what these tests need: integers of
    thousands of digits, or lists nested thousands deep.
    """
    document = copy.deepcopy(document)
    *parents, last = path
    container = document
    for key in parents:
        container = container[key]
    container[last] = HOLE
    return json.dumps(document, indent=1).replace(json.dumps(HOLE), raw).encode()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """An installation with a small history, and that history as a file of new matches.

    Shared by the tests of this module: a valid mutation may import, which changes
    nothing the others look at (each compares the database before and after itself).
    """
    app = make_app(tmp_path_factory.mktemp("limits") / "companion.sqlite")
    client = app.test_client()
    household(client)
    return app, client, shifted(export(client))


def refused(app, client, data: bytes) -> str:
    """Upload ``data``; assert a 422 with the message by the field and nothing written."""
    before = snapshot(app)
    response = upload_in_memory(client, data)
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 422, page[:400]
    assert 'aria-invalid="true"' in page
    assert snapshot(app) == before
    return page


def upload_in_memory(client, data: bytes):
    """``upload``, its form encoded in memory: the test client writes a form of more than
    500 KB to a temporary file, and never closes it."""
    form = {"file": FileStorage(io.BytesIO(data), "backup.json")}
    body, _, boundary = stream_encode_multipart(form, use_tempfile=False)
    kind = f"multipart/form-data; boundary={boundary}"
    return client.post("/backup/import", data=body.getvalue(), content_type=kind)


DEEP = "[" * 10_000 + "]" * 10_000
HUGE = "7" * 5_000


def many(*units: str, times: int) -> str:
    """A JSON list of ``units`` again and again, ``times`` in all (the last as given)."""
    return "[" + ",".join([units[0]] * (times - len(units) + 1) + list(units[1:])) + "]"


def place_of(raw: bytes, snippet: str, further: int = 0) -> str:
    """The line and column of ``snippet`` in ``raw`` (the column moved on by ``further``)."""
    offset = raw.index(snippet.encode())
    line, line_start = raw.count(b"\n", 0, offset) + 1, raw.rfind(b"\n", 0, offset) + 1
    return f"line {line}, column {offset - line_start + 1 + further}"


def test_the_place_is_where_the_problem_is(home):
    app, client, document = home
    deep = with_raw(document, ("matches", 0, "games"), DEEP)
    page = refused(app, client, deep)
    # Under the file, the matches and the match, the 30th bracket is the 33rd level.
    assert f"({place_of(deep, '[[[[', 29)}): lists and objects nest" in page
    huge = with_raw(document, ("matches", 1, "end", "value"), HUGE)
    # The whole number, not a few of its digits: those may stand in a timestamp before it.
    assert f"({place_of(huge, HUGE)}): a number has more" in refused(app, client, huge)
    last = '{"name": "one too many"}'
    crowded = with_raw(document, ("players",), many('{"name": "x"}', last, times=PLAYERS + 1))
    too_many = f"({place_of(crowded, last)}): “players” has more than {PLAYERS:,} entries."
    assert too_many in refused(app, client, crowded)


LIMITS = {
    "JSON nested 10,000 deep": (
        lambda d: with_raw(d, ("matches", 0, "games"), DEEP),
        "lists and objects nest more than 32 deep.",
    ),
    "an unclosed nesting 10,000 deep": (
        lambda d: ("[" * 10_000).encode(),
        "(line 1, column 33): lists and objects nest more than 32 deep.",
    ),
    "a 5,000-digit version": (
        lambda d: with_raw(d, ("version",), HUGE),
        "(line 3, column 13): a number has more than 15 digits.",
    ),
    "a 5,000-digit score": (
        lambda d: with_raw(d, ("matches", 0, "games", 1, "scores", 0), "-" + HUGE),
        "a number has more than 15 digits.",
    ),
    "a 16-digit card": (
        lambda d: with_raw(d, ("matches", 0, "games", 0, "starting", 0), "1" * 16),
        "a number has more than 15 digits.",
    ),
    "NaN for a card": (
        lambda d: with_raw(d, ("matches", 0, "games", 0, "starting", 0), "NaN"),
        "NaN and Infinity are not numbers in JSON.",
    ),
    "a start that overflows when its offset is taken off": (
        lambda d: with_raw(d, ("matches", 0, "created_at"), '"0001-01-01T00:00:00+23:59"'),
        "Match 1 (started 0001-01-01): “created_at” is 0001-01-01T00:00:00+23:59: "
        f"dates go from 1900-01-01 to {latest():%Y-%m-%d}.",
    ),
    "the last moment of Python's range, west of Greenwich": (
        lambda d: with_raw(d, ("exported_at",), '"9999-12-31T23:59:59-01:00"'),
        "“exported_at” is 9999-12-31T23:59:59-01:00: dates go from",
    ),
    "a player born before 1900": (
        lambda d: with_raw(d, ("players", 1, "created_at"), '"1899-12-31T23:59:59Z"'),
        "Player 2: “created_at” is 1899-12-31T23:59:59Z: dates go from 1900-01-01",
    ),
    "a name with a lone surrogate": (
        lambda d: with_raw(d, ("players", 0, "name"), r'"Anna\ud800"'),
        "Player 1: “name” holds a character that is not text.",
    ),
    # Python's reader keeps the last of two equal keys: the file says two things at once.
    "a version given twice": (
        lambda d: with_raw(d, ("version",), '1, "version": 2'),
        "an object has the key “version” twice.",
    ),
    "a player's name given twice": (
        lambda d: with_raw(d, ("players", 0, "name"), '"Anna", "name": "Zed"'),
        "an object has the key “name” twice.",
    ),
    "a limit given twice deep in a match": (
        lambda d: with_raw(d, ("matches", 1, "end", "value"), '66, "value": 1000'),
        "an object has the key “value” twice.",
    ),
    # Issue 30: read, these took gigabytes; each is refused having read little of it.
    "a player past the household's cap": (
        lambda d: with_raw(d, ("players",), many('{"name": "x"}', times=PLAYERS + 1)),
        f"“players” has more than {PLAYERS:,} entries.",
    ),
    "a match past the household's cap": (
        lambda d: with_raw(d, ("matches",), many("{}", times=MATCHES + 1)),
        f"“matches” has more than {MATCHES:,} entries.",
    ),
    "a 17th field": (
        lambda d: with_raw(d, ("version",), "2" + "".join(f', "k{n}": 0' for n in range(12))),
        "the file has more than 16 fields.",
    ),
    "an export time of 70 KB": (
        lambda d: with_raw(d, ("exported_at",), raw_json("x" * 70_000)),
        "(line 4, column 17): a value is larger than 64 KB.",
    ),
    "an unknown field holding [{},{},…]": (
        lambda d: with_raw(d, ("version",), '2, "extra": {"a": ' + many("{}", times=30_000) + "}"),
        "a value is larger than 64 KB.",
    ),
    "a list of 1,001 numbers, not an object": (
        lambda d: many("0", times=1_001).encode(),
        "(line 1, column 2002): a list has more than 1,000 entries.",
    ),
    "a match whose games are 4.5 MB of {}": (
        lambda d: with_raw(d, ("matches", 0, "games"), many("{}", times=1_500_000)),
        "an entry of “matches” is larger than 4 MB.",
    ),
    "a seat with control characters": (
        lambda d: with_raw(d, ("matches", 0, "seats", 0), r'"Zed\n\u0000"'),
        "The seat “Zed\ufffd\ufffd” is not a player of the players list.",
    ),
}


@pytest.mark.parametrize("case", LIMITS)
def test_a_file_past_a_limit_is_refused_with_the_place(home, case):
    app, client, document = home
    make, message = LIMITS[case]
    assert message in refused(app, client, make(document))


@pytest.mark.parametrize("case", LIMITS)
def test_the_command_line_refuses_it_in_one_line_with_exit_code_1(home, tmp_path, case):
    app, _client, document = home
    make, message = LIMITS[case]
    path = tmp_path / "bad.json"
    path.write_bytes(make(document))
    before = snapshot(app)
    result = app.test_cli_runner().invoke(args=["import", str(path)])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert result.output.count("\n") == 1 and message in result.output
    assert snapshot(app) == before


# --- any mutation of a valid file ------------------------------------------------------


def paths(value, prefix: tuple = ()) -> list[tuple]:
    """The path of every value inside a document (not the document itself)."""
    found = []
    children = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in children:
        found.append((*prefix, key))
        if isinstance(child, dict | list):
            found += paths(child, (*prefix, key))
    return found


ODD_DATES = [
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59-23:59",
    "2025-02-30T20:00:00Z",
    "2025-01-01T24:00:00Z",
    "2025-01-01",
    "20250101T200000Z",
    "2025-01-01T20:00:00.1234567Z",
    "",
    "yesterday",
]


def raw_json(text: str) -> str:
    """A JSON string literal."""
    return json.dumps(text)


# JSON texts that stand in for one value of a valid file.
REPLACEMENTS = st.one_of(
    st.sampled_from(['"x"', "[]", "{}", "null", "true", "false", "1.5", "-1", "0", "1e400"]),
    st.integers(-(10**20), 10**20).map(str),
    st.integers(14, 6_000).map(lambda digits: "9" * digits),
    st.integers(20, 12_000).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(20, 3_000).map(lambda depth: '{"a":' * depth + "1" + "}" * depth),
    st.sampled_from(ODD_DATES).map(raw_json),
    st.datetimes().map(lambda moment: raw_json(moment.isoformat() + "+23:59")),
    st.text(max_size=50).map(raw_json),
    st.lists(st.integers(-5, 200), max_size=12).map(json.dumps),
)


@st.composite
def mutated(draw, document: dict) -> bytes:
    """A valid backup with one value replaced by something a hostile file might hold."""
    path = draw(st.sampled_from(paths(document)))
    return with_raw(document, path, draw(REPLACEMENTS))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(data=st.data())
def test_a_mutated_backup_is_imported_or_refused_never_a_500(home, data):
    app, client, document = home
    raw = data.draw(mutated(document))
    before = snapshot(app)
    response = upload(client, raw)
    assert response.status_code in (303, 422), response.get_data(as_text=True)[:400]
    if response.status_code == 422:
        assert 'aria-invalid="true"' in response.get_data(as_text=True)
        assert snapshot(app) == before


def test_the_fixture_file_itself_imports(home, tmp_path):
    """The mutations start from a file that is valid as it is."""
    _app, _client, document = home
    other = make_app(Path(tmp_path) / "other.sqlite").test_client()
    assert upload(other, document).status_code == 303


# --- the quick scans agree with the regular expressions they stand in for -----------

JSON_TEXT = st.text(alphabet=st.sampled_from('ab[]{}"\\/1 ü'), max_size=8)
JSON_VALUES = st.recursive(
    st.one_of(JSON_TEXT, st.integers(-(10**20), 10**20), st.booleans()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(JSON_TEXT, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, ascii_only=st.booleans(), tail=st.sampled_from(["", '"', "]", '\\"[']))
def test_the_quick_scans_find_what_the_careful_ones_find(value, ascii_only, tail):
    raw = (json.dumps(value, ensure_ascii=ascii_only) + tail).encode()
    assert parse.has_long_digits(raw) == bool(re.search(rb"\d{%d}" % (parse.MAX_DIGITS + 1), raw))


@pytest.mark.parametrize("shift", [-parse.MAX_DIGITS - 1, -8, 0, 1])
def test_a_long_number_across_two_blocks_of_the_digit_scan_is_found(shift):
    """The scan translates a block at a time (a copy of a 64 MB file made whole took
    60 MB more); a run of digits that starts in one block and ends in the next is found,
    and so is one of 15 digits (the most a number may have) not taken for more."""
    at = parse.SCAN_BLOCK + shift
    long_run = b" " * at + b"1" * (parse.MAX_DIGITS + 1) + b" " * 100
    allowed = b" " * at + b"1" * parse.MAX_DIGITS + b" " * 100
    assert parse.has_long_digits(long_run)
    assert not parse.has_long_digits(allowed)
