"""Backup and move: one JSON file out, the same data in, nothing twice, bad files refused."""

import copy
import csv
import errno
import html
import io
import json
import os
import re
import stat
import threading
from pathlib import Path

import pytest
from backups import (
    FORMAT,
    export,
    kept_household,
    shifted,
    snapshot,
    upload,
    without_time,
)
from conftest import make_app
from driver import add_players, start_match

from companion.backup.columns import VERSION


@pytest.fixture
def source(client, app, shared_folder):
    """The household's client, with its history in place."""
    kept_household(client, app, shared_folder)
    return client


@pytest.fixture
def empty(tmp_path):
    """A second installation with an empty database."""
    return make_app(tmp_path / "other.sqlite")


# --- the format ------------------------------------------------------------------------


def test_export_is_one_versioned_file_of_inputs(source):
    response = source.get("/backup/export.json")
    assert response.mimetype == "application/json"
    assert re.fullmatch(
        r'attachment; filename="6nimmt-companion-\d{4}-\d\d-\d\d\.json"',
        response.headers["Content-Disposition"],
    )
    document = json.loads(response.data)
    assert list(document) == ["format", "version", "exported_at", "players", "matches"]
    assert (document["format"], document["version"]) == (FORMAT, VERSION)
    assert [player["name"] for player in document["players"]] == [
        "Anna",
        "Ben",
        "Cleo",
        "Jürgen",
        "Dan",
    ]
    assert [player["archived"] for player in document["players"]] == [False] * 4 + [True]
    first, second = document["matches"]
    assert first["seats"] == ["Anna", "Ben", "Cleo"]
    assert first["end"] == {"kind": "games", "value": 2}
    cards, scores = first["games"]
    assert cards["mode"] == "cards" and len(cards["starting"]) == 4
    assert len(cards["rounds"]) == 10
    assert all(len(entry["cards"]) == 3 for entry in cards["rounds"])
    assert scores == {
        "mode": "scores",
        "created_at": scores["created_at"],
        "scores": [5, [55, 11], 0],
    }
    assert second["pro"] is True and second["seats"] == ["Anna", "Jürgen"]
    (waiting,) = second["games"][1]["rounds"]  # waits for Anna's choice
    assert list(waiting) == ["at", "cards"] and waiting["cards"] == [3, 20]
    # Inputs only: no ids, no bulls, no winners, no link secrets.
    text = response.get_data(as_text=True)
    for derived in ('"id"', "bulls", "winner", "token", "total"):
        assert derived not in text
    assert "Jürgen" in text  # UTF-8, not \u escapes


# --- round trip and identity -----------------------------------------------------------


def test_round_trip_into_an_empty_database_gives_the_same_file(source, empty):
    first = source.get("/backup/export.json").get_data(as_text=True)
    target = empty.test_client()
    response = upload(target, first.encode())
    assert response.status_code == 303
    assert response.headers["Location"] == "/backup"
    page = target.get("/backup").get_data(as_text=True)
    assert "Players added: 5" in page and "Matches added: 2" in page
    assert "Import finished" not in target.get("/backup").get_data(as_text=True)  # once
    again = target.get("/backup/export.json").get_data(as_text=True)
    assert without_time(json.loads(again)) == without_time(json.loads(first))
    drop_time = re.compile(r'"exported_at": "[^"]+"')
    assert drop_time.sub("", again) == drop_time.sub("", first)  # byte for byte


def test_imported_results_and_statistics_are_the_replayed_ones(source, empty):
    target = empty.test_client()
    assert upload(target, export(source)).status_code == 303
    result = empty.test_cli_runner().invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output
    assert "0 found differing" in result.output
    for client in (source, target):  # the same scoreboard on both installations
        page = client.get("/matches/1/scoreboard").get_data(as_text=True)
        assert "Winner" in page or "Shared win" in page
    totals = [
        re.findall(
            r'<td class="num">(\d+)</td>',
            client.get("/matches/1/scoreboard").get_data(as_text=True),
        )
        for client in (source, target)
    ]
    assert totals[0] == totals[1]


def test_importing_the_same_file_again_adds_nothing(source, app):
    document = export(source)
    before = snapshot(app)
    assert upload(source, document).status_code == 303
    page = source.get("/backup").get_data(as_text=True)
    assert "Players added: 0" in page and "Players already here: 5" in page
    assert "Matches added: 0" in page and "Matches already here (left as they are): 2" in page
    assert snapshot(app) == before


def test_import_adds_only_what_is_missing(source, empty):
    document = export(source)
    partial = copy.deepcopy(document)
    partial["players"] = [p for p in partial["players"] if p["name"] in ("Anna", "Ben", "Cleo")]
    partial["matches"] = partial["matches"][:1]
    target = empty.test_client()
    assert upload(target, partial).status_code == 303
    target.get("/backup")
    assert upload(target, document).status_code == 303
    page = target.get("/backup").get_data(as_text=True)
    assert "Players added: 2" in page and "Players already here: 3" in page
    assert "Matches added: 1" in page and "Matches already here (left as they are): 1" in page
    assert without_time(export(target)) == without_time(document)


def test_players_are_the_same_player_whatever_the_case(source, empty):
    target = empty.test_client()
    add_players(target, "anna")
    assert upload(target, export(source)).status_code == 303
    page = target.get("/backup").get_data(as_text=True)
    assert "Players added: 4" in page and "Players already here: 1" in page
    # The seats point at the player who was already here, under the name they have here.
    assert export(target)["matches"][0]["seats"] == ["anna", "Ben", "Cleo"]


# --- bad files -------------------------------------------------------------------------


def first_round(document: dict) -> dict:
    return document["matches"][0]["games"][0]["rounds"][0]


def too_low_round(document: dict) -> tuple[int, dict]:
    """The first round of match 1, game 1 that holds a row choice."""
    rounds = document["matches"][0]["games"][0]["rounds"]
    return next((n, r) for n, r in enumerate(rounds, 1) if "choices" in r)


def break_choice(document: dict, value) -> str:
    number, entry = too_low_round(document)
    player = next(iter(entry["choices"]))
    entry["choices"][player] = value
    return f"game 1, round {number}: {player}'s row choice is {json.dumps(value)}"


def drop_choice(document: dict) -> str:
    number, entry = too_low_round(document)
    player = next(iter(entry["choices"]))
    del entry["choices"]
    return f"game 1, round {number + 1}: {player}'s"


def duplicate_card(document: dict) -> str:
    entry = first_round(document)
    entry["cards"][1] = entry["cards"][0]
    return f"round 1: Anna and Ben both entered {entry['cards'][0]}: each card exists once."


def set_card(document: dict, value) -> None:
    first_round(document)["cards"][0] = value


def needless_choice(document: dict) -> str:
    """A row choice in a round where no card was too low."""
    rounds = document["matches"][0]["games"][0]["rounds"]
    number, entry = next((n, r) for n, r in enumerate(rounds, 1) if "choices" not in r)
    entry["choices"] = {"Ben": 1}
    return f"round {number}: Ben's {entry['cards'][1]} is not too low, so Ben has no row to choose."


BAD = {
    "not JSON": (lambda d: b"6 nimmt! forever", "it is not JSON (line 1, column 3)"),
    "not UTF-8": (lambda d: b"\xff\xfe{}", "it is not text (UTF-8)"),
    "a list": (lambda d: [], "its “format” is not “6nimmt-companion”"),
    "wrong format": (lambda d: {**d, "format": "7nimmt"}, "its “format” is not “6nimmt-"),
    "future version": (
        lambda d: {**d, "version": VERSION + 1},
        f"format version {VERSION + 1}, from a newer companion; this one reads version {VERSION}",
    ),
    "version 0": (lambda d: {**d, "version": 0}, "Unknown backup format version 0."),
    "version as text": (lambda d: {**d, "version": "1"}, "“version” must be a whole number."),
    "unknown field": (lambda d: {**d, "extra": 1}, "Unknown field “extra”."),
    "duplicate card in a round": (duplicate_card, None),
    "row choice 5": (lambda d: break_choice(d, 5), None),
    "row choice as text": (lambda d: break_choice(d, "2"), None),
    "card 105": (
        lambda d: set_card(d, 105),
        "round 1: There is no card 105 in this deck: cards go from 1 to 104.",
    ),
    "card as text": (lambda d: set_card(d, "41"), 'round 1: “"41"” is not a card'),
    "card already on the table": (
        lambda d: set_card(d, d["matches"][0]["games"][0]["starting"][0]),
        "round 1: " + "%d already lies in row 1.",
    ),
    "missing player reference": (
        lambda d: d["matches"][0]["seats"].__setitem__(2, "Zed"),
        "The seat “Zed” is not a player of the players list.",
    ),
    "missing card in a round": (
        lambda d: first_round(d)["cards"].pop(),
        "round 1: A round has one card per seat: 3 cards, not 2.",
    ),
    "missing row choice": (drop_choice, None),
    "choice for a card that is not too low": (lambda d: needless_choice(d), None),
    "choice for someone without a seat": (
        lambda d: first_round(d).update(choices={"Jürgen": 1}),
        "A row choice for “Jürgen”, who has no seat in this match.",
    ),
    "a game after the end": (
        lambda d: d["matches"][0]["games"].append(d["matches"][0]["games"][1]),
        "game 3: The match ended after game 2; nothing can follow it.",
    ),
    "eleven seats": (
        lambda d: d["matches"][0]["seats"].extend(["Jürgen"] * 8),
        "A match seats 2 to 10 players, not 11.",
    ),
    "pro deck": (
        lambda d: d["matches"][1]["games"][0]["rounds"][0]["cards"].__setitem__(0, 25),
        "There is no card 25 in this deck: cards go from 1 to 24.",
    ),
    "unknown end": (
        lambda d: d["matches"][0]["end"].update(kind="sometimes"),
        "Unknown end condition.",
    ),
    "typed bulls 200": (
        lambda d: d["matches"][0]["games"][1]["scores"].__setitem__(0, 200),
        "game 2: Bulls are a whole number from 0 to 171.",
    ),
    "pile card twice": (
        lambda d: d["matches"][0]["games"][1]["scores"].__setitem__(0, [55]),
        "game 2: 55 is entered twice.",
    ),
    "an invisible character in a name": (
        lambda d: d["players"].append({**d["players"][0], "name": "Anna\u200b"}),
        "Player 6: “Anna\ufffd” is not a usable name: A name cannot contain invisible",
    ),
    "a name not in NFKC": (
        lambda d: d["players"].append({**d["players"][0], "name": "\uff3a\uff45\uff44"}),
        "Player 6: “\uff3a\uff45\uff44” is not in Unicode's NFKC form: write it “Zed”.",
    ),
    "a lookalike of a player": (
        lambda d: d["players"].append({**d["players"][0], "name": "Anna\ufe0f"}),
        "Player 6: “Anna\ufe0f” is already in the list as “Anna”.",
    ),
    "same player twice": (
        lambda d: d["players"].append({**d["players"][0], "name": "ANNA"}),
        "Player 6: “ANNA” is already in the list as “Anna”.",
    ),
    "bad date": (
        lambda d: d["matches"][0].update(created_at="yesterday"),
        "“created_at” must be a date and time",
    ),
    "same match twice": (
        lambda d: d["matches"].append(d["matches"][0]),
        "Matches 1 and 3 are the same match",
    ),
    "a round without its time": (
        lambda d: first_round(d).pop("at") and None,
        "game 1, round 1: “at” is missing.",
    ),
    "a round at no time": (
        lambda d: first_round(d).update(at="after dinner"),
        "round 1: “at” must be a date and time like 2025-01-31T20:15:00Z.",
    ),
    "a round before 1900": (
        lambda d: first_round(d).update(at="1899-12-31T23:59:59.000000Z"),
        "round 1: “at” is 1899-12-31T23:59:59.000000Z: dates go from 1900-01-01 to",
    ),
    "a match its own rematch": (
        lambda d: d["matches"][0].update(rematch=1),
        "Its rematch must be a later match of the file, not match 1.",
    ),
    "a rematch that is not in the file": (
        lambda d: d["matches"][0].update(rematch=3),
        "Match 1's rematch is match 3, but the file has 2.",
    ),
    "a rematch as text": (
        lambda d: d["matches"][0].update(rematch="2"),
        "“rematch” must be a whole number.",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_file_is_refused_with_a_message_and_changes_nothing(source, app, case):
    mutate, message = BAD[case]
    document = shifted(export(source))
    changed = mutate(document)  # a new file, its own message, or None (changed in place)
    if isinstance(changed, str):
        message = changed
    data = changed if isinstance(changed, bytes | list | dict) else document
    if "%d" in message:
        message = message % document["matches"][0]["games"][0]["starting"][0]
    before = snapshot(app)
    response = upload(source, data)
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert message in html.unescape(page)
    assert 'aria-invalid="true"' in page
    assert snapshot(app) == before


def test_a_missing_player_reference_names_the_seat(source):
    document = export(source)
    document["matches"][0]["seats"][2] = "Zed"
    page = upload(source, document).get_data(as_text=True)
    assert "Match 1 (started 20" in page
    assert "The seat “Zed” is not a player of the players list." in page


def test_the_pro_variant_is_for_six_at_most(source):
    document = export(source)
    document["players"] += [
        {"name": name, "archived": False, "created_at": "2025-01-01T00:00:00Z"} for name in "VWXYZ"
    ]
    document["matches"][1]["seats"] += list("VWXYZ")
    page = upload(source, document).get_data(as_text=True)
    assert "Match 2 (started" in page and "The pro variant is for 2 to 6 players." in page


def test_no_file_chosen(client):
    response = client.post("/backup/import", data={}, content_type="multipart/form-data")
    assert response.status_code == 422
    assert "Choose a backup file to import." in response.get_data(as_text=True)


@pytest.mark.app_config(BACKUP_MAX_UPLOAD=2000)
def test_a_file_over_the_limit_is_refused(source, app):
    before = snapshot(app)
    response = upload(source, shifted(export(source)))
    assert response.status_code == 422
    assert "The file is larger than 0 MB." in response.get_data(as_text=True)
    assert snapshot(app) == before


def big_backup(matches: int) -> dict:
    """A valid backup of many short score-only matches (bigger than a form may be)."""
    players = [
        {"name": name, "archived": False, "created_at": "2020-01-01T00:00:00.000000Z"}
        for name in ("Anna", "Ben")
    ]
    return {
        "format": FORMAT,
        "version": 1,
        "exported_at": "2025-01-01T00:00:00.000000Z",
        "players": players,
        "matches": [
            {
                "created_at": f"2020-01-01T00:00:00.{number:06d}Z",
                "end": {"kind": "games", "value": 1},
                "pro": False,
                "seats": ["Anna", "Ben"],
                "games": [
                    {
                        "mode": "scores",
                        "created_at": "2020-01-01T00:00:00.000000Z",
                        "scores": [number % 20, [55, 11, 22, 33]],
                    }
                ],
            }
            for number in range(matches)
        ],
    }


def test_a_backup_larger_than_a_form_imports(client):
    data = json.dumps(big_backup(800)).encode()
    assert len(data) > 64 * 1024  # the app's limit for every other request
    assert upload(client, data).status_code == 303
    assert "Matches added: 800" in client.get("/backup").get_data(as_text=True)


@pytest.mark.app_config(WTF_CSRF_ENABLED=True)
def test_import_needs_the_csrf_token(client, app):
    data = json.dumps(big_backup(3)).encode()
    assert upload(client, data).status_code == 422  # nothing imported: choose the file again
    page = client.get("/backup").get_data(as_text=True)
    (action,) = set(re.findall(r'action="(/backup/import\?csrf_token=[^"]+)"', page))
    response = client.post(html.unescape(action), data={"file": (io.BytesIO(data), "b.json")})
    assert response.status_code == 303


# --- the pages -------------------------------------------------------------------------


def test_backup_page_full_and_as_fragment(source):
    page = source.get("/backup").get_data(as_text=True)
    assert "<html" in page and "5 players and 2 matches" in page
    assert 'enctype="multipart/form-data"' in page
    fragment = source.get("/backup", headers={"HX-Request": "true"})
    assert "<html" not in fragment.get_data(as_text=True)
    assert 'id="backup"' in fragment.get_data(as_text=True)
    assert "HX-Request" in fragment.headers["Vary"]


def test_a_refused_import_as_fragment(source):
    response = source.post(
        "/backup/import",
        headers={"HX-Request": "true"},
        data={"file": (io.BytesIO(b"nope"), "b.json")},
    )
    assert response.status_code == 422
    assert "<html" not in response.get_data(as_text=True)
    assert "it is not JSON" in response.get_data(as_text=True)


# --- CSV -------------------------------------------------------------------------------


def test_match_as_csv_for_a_spreadsheet(source):
    response = source.get("/matches/1/export.csv")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert re.fullmatch(
        r'attachment; filename="6nimmt-match-1-\d{4}-\d\d-\d\d\.csv"',
        response.headers["Content-Disposition"],
    )
    text = response.data.decode("utf-8")
    assert text.startswith("\ufeff")  # so spreadsheets read the names as UTF-8
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    assert rows[0] == ["Game", "Anna", "Ben", "Cleo", "Played at", "Minutes"]
    assert [row[0] for row in rows[1:]] == ["1", "2", "Total"]
    assert rows[2][1:4] == ["5", "12", "0"]  # the typed game: 5, the pile 55 + 11, 0
    totals = [sum(int(row[column]) for row in rows[1:3]) for column in (1, 2, 3)]
    assert [int(value) for value in rows[3][1:4]] == totals
    # When each game and the match were played (UTC: the app's timezone) and for how long.
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row[4]) for row in rows[1:])
    assert rows[3][4] == rows[1][4]  # the match starts with its first game
    assert all(row[5].isdigit() for row in rows[1:])


def test_csv_names_never_run_as_formulas(client):
    ids = add_players(client, "=SUM(A1)", "@Ben")
    match_id = start_match(client, ids)
    header = client.get(f"/matches/{match_id}/export.csv").data.decode().lstrip("\ufeff")
    assert header.splitlines()[0] == "Game,'=SUM(A1),'@Ben,Played at,Minutes"
    assert client.get("/matches/99/export.csv").status_code == 404


# What a spreadsheet runs as a formula when a cell starts with it (after spaces, quotes).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Names a player may have that hold a spreadsheet's separator, then a formula.
SPLIT_NAMES = ["a;=cmd|' /C calc'!A0", "Ben,-1+1", 'Cleo; "@SUM(1)"']


def test_csv_names_never_run_as_formulas_in_a_german_or_french_spreadsheet(client):
    """The finding: "a;=cmd|' /C calc'!A0" was written unquoted, and a spreadsheet that
    splits on ";" (German, French) found a cell "=cmd|' /C calc'!A0" and ran it."""
    match_id = start_match(client, add_players(client, *SPLIT_NAMES))
    text = client.get(f"/matches/{match_id}/export.csv").data.decode().lstrip("\ufeff")
    header = text.splitlines()[0]
    assert "\"a;'=cmd|' /C calc'!A0\"" in header  # quoted: its ";" splits no cell
    naive = [cell for line in text.splitlines() for cell in line.split(";")]
    parsed = [
        cell
        for delimiter in (";", ",")
        for row in csv.reader(io.StringIO(text), delimiter=delimiter)
        for cell in row
    ]
    for cell in naive + parsed:
        assert not cell.lstrip(' "').startswith(FORMULA_START), cell
    # Read as it was written, each name is one cell, the apostrophe before each formula.
    assert next(csv.reader(io.StringIO(text)))[1:4] == [
        "a;'=cmd|' /C calc'!A0",
        "Ben,'-1+1",
        'Cleo;\' "@SUM(1)"',
    ]


# --- the command line ------------------------------------------------------------------


def test_cli_export_and_import(source, app, empty, tmp_path):
    backup = tmp_path / "backup.json"
    result = app.test_cli_runner().invoke(args=["export", str(backup)])
    assert result.exit_code == 0, result.output
    assert "Exported 5 players and 2 matches" in result.output
    stdout = app.test_cli_runner().invoke(args=["export"])
    assert without_time(json.loads(stdout.output)) == without_time(json.loads(backup.read_text()))
    runner = empty.test_cli_runner()
    result = runner.invoke(args=["import", str(backup)])
    assert result.exit_code == 0, result.output
    assert "Players: 5 added, 0 already here. Matches: 2 added" in result.output
    result = runner.invoke(args=["import", str(backup)])
    assert "Players: 0 added, 5 already here. Matches: 0 added, 2 already here" in result.output


def test_cli_export_to_a_pipe_or_device_writes_through_it(source, app, tmp_path):
    """`flask export /dev/stdout` (or a pipe) writes into it: only a plain file is
    replaced whole through a partial copy, which would put a file where /dev/null was."""
    pipe = tmp_path / "backup.pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text()))
    reader.start()
    result = app.test_cli_runner().invoke(args=["export", str(pipe)])
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(pipe.stat().st_mode)  # still the pipe, not a file put in its place
    assert len(json.loads(received[0])["matches"]) == 2
    assert not (tmp_path / "backup.pipe.partial").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"<html>", "it is not JSON"),
        (json.dumps({"format": FORMAT, "version": 9}).encode(), "format version 9"),
    ],
)
def test_cli_refuses_a_bad_file_with_exit_code_1(empty, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    before = snapshot(empty)
    result = empty.test_cli_runner().invoke(args=["import", str(path)])
    assert result.exit_code == 1
    assert message in result.output
    assert snapshot(empty) == before


def test_cli_import_keeps_the_pages_size_limit(runner, app):
    """The finding (issue 55): `flask import /dev/zero` read without end (1.25 GB, then
    MemoryError). The command reads at most the page's limit, and says so."""
    before = snapshot(app)
    result = runner.invoke(args=["import", "/dev/zero"])
    assert result.exit_code == 1
    assert result.output == "Error: The file is larger than 64 MB.\n"
    assert snapshot(app) == before


@pytest.mark.app_config(BACKUP_MAX_UPLOAD=2 * 1024 * 1024)
def test_cli_import_from_standard_input_keeps_the_configured_limit(runner, app):
    before = snapshot(app)
    result = runner.invoke(args=["import", "-"], input=b" " * (2 * 1024 * 1024 + 1))
    assert result.exit_code == 1
    assert result.output == "Error: The file is larger than 2 MB.\n"
    assert snapshot(app) == before


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("folder", "Is a directory"),
        ("missing/backup.json", "No such file or directory"),
        ("/dev/full", "No space left on device"),
    ],
)
def test_cli_export_that_cannot_write_says_so_in_one_line(source, runner, tmp_path, target, reason):
    """The finding (issue 55): `flask export` to a folder, into a missing folder or to
    /dev/full ended in a traceback. One line, exit code 1, and no partial file left."""
    out = tmp_path / "out"
    (out / "folder").mkdir(parents=True)
    path = out / target if not target.startswith("/") else target
    result = runner.invoke(args=["export", str(path)])
    assert result.exit_code == 1
    assert result.output == f"Error: Cannot write {path}: {reason}.\n"
    assert list(out.rglob("*")) == [out / "folder"]


def test_cli_export_that_fails_midway_leaves_no_partial_file(source, runner, tmp_path, monkeypatch):
    """A disk that fills up as the backup is written: the half-written file goes too."""
    backup = tmp_path / "out" / "backup.json"
    backup.parent.mkdir()

    def disk_full(self, text, encoding):
        with open(self, "w", encoding=encoding) as half:
            half.write(text[: len(text) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", disk_full)
    result = runner.invoke(args=["export", str(backup)])
    assert result.output == f"Error: Cannot write {backup}: No space left on device.\n"
    assert result.exit_code == 1 and list(backup.parent.iterdir()) == []


def test_cli_import_of_a_missing_file(empty, tmp_path):
    result = empty.test_cli_runner().invoke(args=["import", str(tmp_path / "nope.json")])
    assert result.exit_code == 1
    assert "Cannot read" in result.output
