"""An import's memory stays bounded: the file's matches are read, checked and staged one
at a time, and its JSON is read as ``json.loads`` reads it, messages and places too."""

import json
import random
import re
import tracemalloc
import weakref
from datetime import datetime, timedelta

import pytest
from backups import simulated_game, stamp
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.backup import apart, check, load, parse
from companion.backup.check import read_backup
from companion.backup.document import dump
from companion.backup.fields import BackupError
from companion.backup.parse import load as load_json
from companion.db import db
from companion.models import MAX_MATCHES_HELD, MAX_PLAYERS_HELD

TEXTS = st.text(alphabet=st.sampled_from('ab[]{},:"\\/1 ü€🐮\n'), max_size=6)
VALUES = st.recursive(
    st.one_of(TEXTS, st.integers(-1000, 1000), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXTS, inner, max_size=4)),
    max_leaves=15,
)


def whole(value):
    """A value of ``parse.decode`` with its Deferred lists read, as json.loads gives it."""
    if isinstance(value, parse.Deferred):
        return list(value)
    if isinstance(value, dict):
        return {key: whole(item) for key, item in value.items()}
    return value


def read(text: str):
    """``parse.decode`` of ``text`` (with its lists read), or the JSON error it raises."""
    try:
        return whole(parse.decode(text.encode()))
    except json.JSONDecodeError as error:
        return ("error", error.msg, error.pos, error.lineno, error.colno)


def read_whole(text: str):
    """``json.loads`` of ``text``, or the JSON error it raises."""
    try:
        return json.loads(text.encode().decode("utf-8-sig"))  # as the import decodes it
    except json.JSONDecodeError as error:
        return ("error", error.msg, error.pos, error.lineno, error.colno)


@settings(max_examples=300, deadline=None)
@given(
    value=VALUES,
    indent=st.sampled_from([None, 1]),
    ascii_only=st.booleans(),
    cut=st.integers(0, 400),
    noise=st.sampled_from(["", "]", ",", "}", " x", '"', "[1,]", "\ufeff", "  \n "]),
)
def test_the_lazy_reading_reads_what_json_reads(value, indent, ascii_only, cut, noise):
    """Read value by value (msgspec, and the standard library where msgspec refuses), it
    reads the same values and the same errors, at the same places."""
    # Lists without a shape: "players" and "matches" are read as such (test_backup_shapes).
    document = {"format": "x", "others": [value], "more": [value, {"a": [value]}, 1]}
    for shape in (document, [value, value], value):
        text = json.dumps(shape, indent=indent, ensure_ascii=ascii_only)
        for variant in (text, text[:cut] + noise + text[cut:], text[:cut]):
            assert read(variant) == read_whole(variant)


def test_a_deferred_list_reads_its_elements_from_the_bytes():
    raw = '\ufeff{"others": [ {"name": "Oma 🐮"} ,"Jürgen",[1, "€"]\n]}'.encode()
    data = load_json(raw)
    assert isinstance(data["others"], parse.Deferred)
    assert list(data["others"]) == [{"name": "Oma 🐮"}, "Jürgen", [1, "€"]]


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


# --- issue 30: every shape of file is read in bounded memory ---------------------------

HEAD = '{"format": "6nimmt-companion", "version": 2, "exported_at": "2025-01-01T00:00:00Z", '
ADA = '{"name": "Ada", "archived": false, "created_at": "2025-01-01T00:00:00Z"'
MATCH = (
    '{"created_at": "2025-01-01T00:00:00Z", "end": {"kind": "games", "value": 1}, "pro": false, '
)
PLAYERS = f'"players": [{ADA}}}, {ADA.replace("Ada", "Bo")}}}]'
# Each file of issue 30 (as bench/import_memory.py writes them): the text before a unit,
# the unit repeated up to the size, the separator between, the text after; the message.
HOSTILE = {
    "games [{},{},…]": (
        f'{HEAD}{PLAYERS}, "matches": [{MATCH}"seats": ["Ada", "Bo"], "games": [',
        ("{}", ","),
        "]}]}",
        "an entry of “matches” is larger than 4 MB.",
    ),
    "seats": (
        f'{HEAD}{PLAYERS}, "matches": [{MATCH}"games": [], "seats": [',
        ('"Ada"', ","),
        "]}]}",
        "an entry of “matches” is larger than 4 MB.",
    ),
    "a player holding a list": (
        f'{HEAD}"players": [{ADA}, "friends": [',
        ("[]", ","),
        ']}], "matches": []}',
        "an entry of “players” is larger than 4 MB.",
    ),
    "a name of escaped emoji": (
        f'{HEAD}"players": [{{"name": "',
        ("\\ud83d\\ude00", ""),
        '"}], "matches": []}',
        "an entry of “players” is larger than 4 MB.",
    ),
    "matches [[],[],…]": (
        f'{HEAD}{PLAYERS}, "matches": [',
        ("[]", ","),
        "]}",
        f"“matches” has more than {MAX_MATCHES_HELD:,} entries.",
    ),
    "a list of numbers": ("[", ("0", ","), "]", "a list has more than 1,000 entries."),
    "an unknown object holding a list": (
        f'{HEAD}{PLAYERS}, "matches": [], "extra": {{"a": [',
        ("{}", ","),
        "]}}",
        "a value is larger than 64 KB.",
    ),
    "field after field": (HEAD[:-2], (',"k":0', ""), "}", "the file has more than 16 fields."),
}


def hostile(shape: str, size: int) -> bytes:
    """The file ``shape`` of ``size`` bytes or a little less."""
    before, (unit, separator), after, _ = HOSTILE[shape]
    times = (size - len(before) - len(after)) // len(unit + separator)
    return (before + separator.join([unit] * times) + after).encode()


@pytest.mark.parametrize("shape", HOSTILE)
def test_a_hostile_file_is_refused_having_read_little_of_it(shape, monkeypatch):
    """A file of 16 MB that the whole reading built into gigabytes is refused with its
    place, and the reading holds a fraction of the file at its peak: nothing of an entry
    past its limit is built (made 64 KB here; 4 MB build up to 150 MB, which
    bench/import_memory.py measures). The old reading made the file's text (16 MB) and
    its objects (up to 600 MB) first."""
    monkeypatch.setattr(parse, "ENTRY_LIMIT", parse.ENTRY_LIMIT._replace(most=64 * 1024))
    raw = hostile(shape, 16 * 1024 * 1024)
    with pytest.raises(BackupError) as refused:
        load_json(raw)
    message = HOSTILE[shape][3]
    assert re.fullmatch(rf".*\(line 1, column \d+\): {re.escape(message)}", str(refused.value))
    tracemalloc.start()
    try:
        with pytest.raises(BackupError):
            parse.decode(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(raw) / 6, f"{peak / 1e6:.1f} MB"


def test_a_list_may_hold_as_many_players_and_matches_as_a_household():
    most = (MAX_PLAYERS_HELD, MAX_MATCHES_HELD)
    players, matches = many("{}", most[0]), many("[]", most[1])
    data = load_json(f'{HEAD}"players": {players}, "matches": {matches}}}'.encode())
    assert (len(data["players"]), len(data["matches"])) == most
    with pytest.raises(BackupError, match=f"“players” has more than {most[0]:,} entries"):
        load_json(f'{HEAD}"players": {many("{}", most[0] + 1)}, "matches": []}}'.encode())


def many(unit: str, times: int) -> str:
    """A JSON list of ``unit`` ``times`` times."""
    return "[" + ",".join([unit] * times) + "]"


def test_the_largest_match_the_rules_allow_is_read_and_checked():
    """1,000 games (an end after 1,000 games, the most there is) between 10 players named
    with 30 characters of 4 bytes, each round with its time: far below MAX_ENTRY."""
    names = ["🐮" * 29 + letter for letter in "ABCDEFGHIJ"]
    rng, start = random.Random(30), datetime(2025, 1, 1)
    games = []
    for number in range(1000):
        game = simulated_game(rng, names, start + timedelta(hours=number))
        for turn, entry in enumerate(game["rounds"], 1):
            entry["at"] = stamp(start + timedelta(hours=number, minutes=turn))
        games.append(game)
    match = {
        "created_at": stamp(start),
        "end": {"kind": "games", "value": 1000},
        "pro": False,
        "seats": names,
        "games": games,
    }
    players = [{"name": name, "archived": False, "created_at": stamp(start)} for name in names]
    document = {"format": "6nimmt-companion", "version": 2, "exported_at": stamp(start)}
    raw = dump({**document, "players": players, "matches": [match]}).encode()
    assert 1_000_000 < len(raw) < parse.MAX_ENTRY / 1.5
    backup = read_backup(raw)
    assert len(backup.matches[0].games) == 1000


@pytest.mark.parametrize(
    "after, message",
    [
        # No scan of the whole file's nesting any more: the long text is refused first.
        ("[" * 40 + "]" * 40, "a value is larger than 64 KB."),
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
