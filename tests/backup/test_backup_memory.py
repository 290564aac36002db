"""An import's memory stays bounded: the file's matches are read, checked and staged one
at a time, and its JSON is read as ``json.loads`` reads it, messages and places too."""

import json
import re
import tracemalloc
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.backup import apart, check, load, parse
from companion.backup.fields import BackupError
from companion.backup.parse import load as load_json
from companion.db import db

TEXTS = st.text(alphabet=st.sampled_from('ab[]{},:"\\/1 ü€🐮\n'), max_size=6)
VALUES = st.recursive(
    st.one_of(TEXTS, st.integers(-1000, 1000), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXTS, inner, max_size=4)),
    max_leaves=15,
)


def whole(value):
    """A value of ``parse.decode_lazily`` with its Deferred lists read, as json.loads gives it."""
    if isinstance(value, parse.Deferred):
        return list(value)
    if isinstance(value, dict):
        return {key: whole(item) for key, item in value.items()}
    return value


def read(text: str):
    """``parse.decode_lazily`` of ``text`` (with its lists read), or the JSON error it raises."""
    raw = text.encode()
    try:
        return whole(parse.decode_lazily(raw, raw.decode("utf-8-sig"), json.JSONDecoder()))
    except json.JSONDecodeError as error:
        return ("error", error.msg, error.pos)


def read_whole(text: str):
    """``json.loads`` of ``text``, or the JSON error it raises."""
    try:
        return json.loads(text.encode().decode("utf-8-sig"))  # as the import decodes it
    except json.JSONDecodeError as error:
        return ("error", error.msg, error.pos)


@settings(max_examples=300, deadline=None)
@given(
    value=VALUES,
    indent=st.sampled_from([None, 1]),
    ascii_only=st.booleans(),
    cut=st.integers(0, 400),
    noise=st.sampled_from(["", "]", ",", "}", " x", '"', "[1,]", "\ufeff"]),
)
def test_the_lazy_reading_reads_what_json_reads(value, indent, ascii_only, cut, noise):
    document = {"format": "x", "players": [value], "matches": [value, {"a": [value]}, 1]}
    for shape in (document, [value, value], value):
        text = json.dumps(shape, indent=indent, ensure_ascii=ascii_only)
        for variant in (text, text[:cut] + noise + text[cut:], text[:cut]):
            assert read(variant) == read_whole(variant)


def test_a_deferred_list_reads_its_elements_from_the_bytes():
    raw = '\ufeff{"matches": [ {"name": "Oma 🐮"} ,"Jürgen",[1, "€"]\n]}'.encode()
    data = load_json(raw)
    assert isinstance(data["matches"], parse.Deferred)
    assert list(data["matches"]) == [{"name": "Oma 🐮"}, "Jürgen", [1, "€"]]


def score_only(number: int) -> dict:
    """A one-game match of typed scores, started ``number`` microseconds after 2020."""
    return {
        "created_at": f"2020-01-01T00:00:00.{number:06d}Z",
        "end": {"kind": "games", "value": 1},
        "pro": False,
        "seats": ["Anna", "Ben"],
        "games": [
            {"mode": "scores", "created_at": "2020-01-01T00:00:00Z", "scores": [number % 20, 3]}
        ],
    }


@pytest.mark.database
def test_an_import_holds_one_match_at_a_time(app, monkeypatch):
    players = [
        {"name": name, "archived": False, "created_at": "2020-01-01T00:00:00Z"}
        for name in ("Anna", "Ben")
    ]
    matches = [score_only(number) for number in range(1200)]
    document = {
        "format": "6nimmt-companion",
        "version": 1,
        "exported_at": "2025-01-01T00:00:00Z",
        "players": players,
        "matches": matches,
    }
    read_match, add_match = check.read_match, load.Rows.add_match
    checked, alive = [], []

    def noting(*args):
        match = read_match(*args)
        checked.append(weakref.ref(match))
        return match

    def staging(rows, match):
        alive.append(sum(1 for match in checked if match() is not None))
        return add_match(rows, match)

    monkeypatch.setattr(check, "read_match", noting)
    monkeypatch.setattr(load.Rows, "add_match", staging)
    with app.app_context(), apart.import_turn():
        report = load.check_and_import(json.dumps(document).encode())
    assert report.matches_added == 1200
    assert max(alive) == 1  # the one being staged: the others are gone
    with app.app_context():
        assert db.session.scalar(db.text("SELECT count(*) FROM match")) == 1200


@pytest.mark.parametrize(
    "after, message",
    [
        ("[" * 40 + "]" * 40, "lists and objects nest more than 32 deep."),
        ("12345678901234567", "a number has more than 15 digits."),
    ],
)
def test_the_scans_skip_a_long_text_of_escapes_without_keeping_a_way_back(after, message):
    """Skipping a string of a million escapes took 20 bytes each (a name of 64 MB of
    escaped emoji: 1.4 GB) before the deep nesting or the long number after it was found."""
    escapes = r"\ud83d\ude00" * 1_400_000  # 😀 again and again
    raw = f'{{"a": "{escapes}", "b": {after}}}'.encode()
    tracemalloc.start()
    try:
        with pytest.raises(BackupError, match=re.escape(message)):
            load_json(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.2 * len(raw), f"{peak / 1e6:.1f} MB"
