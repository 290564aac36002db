"""A backup's players and matches read by their shape: a wrong one refused by msgspec as it
is read, before it is built, with the place a person looks for."""

import json
import tracemalloc

import pytest

from companion.backup.check import read_backup
from companion.backup.fields import BackupError
from companion.backup.parse import MAX_ENTRY

PLAYERS = [
    {"name": name, "archived": False, "created_at": "2020-01-01T00:00:00Z"}
    for name in ("Anna", "Ben")
]
ROUND = {"at": "2020-01-01T00:01:00Z", "cards": [10, 20]}


def backup(match: dict) -> bytes:
    """A file of the two players and ``match``, started in 2020, ending after a game."""
    whole = {
        "created_at": "2020-01-01T00:00:00Z",
        "end": {"kind": "games", "value": 1},
        "pro": False,
        "seats": ["Anna", "Ben"],
        "games": [],
        **match,
    }
    document = {"format": "6nimmt-companion", "version": 2, "exported_at": "2021-01-01T00:00:00Z"}
    return json.dumps({**document, "players": PLAYERS, "matches": [whole]}).encode()


def cards_game(**fields) -> dict:
    """A cards game's fields (not a legal game: the shape is refused before the rules)."""
    return {
        "mode": "cards",
        "created_at": "2020-01-01T00:00:00Z",
        "starting": [1, 2, 3, 4],
    } | fields


WRONG_SHAPES = {
    "a game that is a list": (
        {"games": [[[[]]]]},
        "Match 1, game 1: Each entry must be an object with the fields mode, created_at, "
        "starting, rounds.",
    ),
    "a card that is a list": (
        {"games": [cards_game(rounds=[ROUND, {**ROUND, "cards": [10, [20]]}])]},
        "Match 1, game 1, round 2: “cards” holds a list or an object where a single value belongs.",
    ),
    "a round without cards": (
        {"games": [cards_game(rounds=[{"at": ROUND["at"]}])]},
        "Match 1, game 1, round 1: “cards” is missing.",
    ),
    "an unknown field in a round": (
        {"games": [cards_game(rounds=[{**ROUND, "colour": [[]]}])]},
        "Match 1, game 1, round 1: Unknown field “colour”.",
    ),
    "a row choice that is an object": (
        {"games": [cards_game(rounds=[{**ROUND, "choices": {"Anna": {}}}])]},
        "Match 1, game 1, round 1: “choices” holds a list or an object",
    ),
    "a dropped choice that is a list": (
        {"games": [cards_game(rounds=[ROUND], corrections=[{"round": 1, "dropped": [[]]}])]},
        "Match 1, game 1, correction 1: Each entry must be an object with the fields round, "
        "player, row.",
    ),
    "an end that is a list": ({"end": []}, "Match 1: “end” must be an object."),
    "games that are an object": ({"games": {}}, "Match 1: “games” must be a list."),
    # Read by the standard library (msgspec refuses the surrogate): its shape looked at first.
    "a lone surrogate in a match of a wrong shape": (
        {"note": "\ud800", "games": [[[[]]]]},
        "Match 1, game 1: Each entry must be an object",
    ),
}


@pytest.mark.parametrize("change, message", WRONG_SHAPES.values(), ids=WRONG_SHAPES)
def test_a_wrong_shape_is_refused_with_its_place(change, message):
    with pytest.raises(BackupError) as refused:
        read_backup(backup(change))
    assert message in str(refused.value)


def test_a_player_of_a_wrong_shape_is_refused_with_its_number():
    raw = backup({}).replace(b'"archived": false', b'"archived": [false]', 1)
    with pytest.raises(BackupError, match="Player 1: “archived” holds a list or an object"):
        read_backup(raw)


def test_a_match_of_lists_where_games_belong_is_refused_before_it_is_built():
    """16 matches of 4 MB of [[[[]]]] peaked at 320 MB: each was built (37 times its
    bytes) before the check found a list where a game belongs."""
    nested = ",".join(["[[[[]]]]"] * ((MAX_ENTRY - 1000) // 9))
    raw = backup({}).replace(b'"games": []', b'"games": [' + nested.encode() + b"]")
    tracemalloc.start()
    try:
        with pytest.raises(BackupError, match="game 1: Each entry must be an object"):
            read_backup(raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The digit scan's blocks (two of 1 MB) are the most it holds; of the match, nothing.
    assert peak < len(raw), f"{peak / 1e6:.1f} MB"


def test_lists_opened_a_hundred_thousand_deep_are_refused_where_they_pass_32():
    raw = b"[" * 100_000
    with pytest.raises(BackupError, match=r"\(line 1, column 33\): lists and objects nest"):
        read_backup(raw)
