"""Benchmark: the peak memory of importing a backup as large as the upload limit (64 MB).

Run: .venv/bin/python -m bench.import_memory [--mib 64] [--shape NAME ...|all] [--refused]
[--postgresql] (prints figures; not a test). Target (issues 20 and 30): the import of any
64 MB file peaks under 400 MB resident, accepted or refused.

The file is written here, a piece at a time, so this process stays small: a child process
counts the peak of the process it was forked from as its own (Linux keeps it across
``exec``). ``--shape`` chooses it (``SHAPES``): by default real matches, round by round,
as many as fill the file; the others are the hostile files of issue 30, each refused.
``--refused`` adds the first match again at the end of a file of matches, so the import
checks the whole file and then refuses it. The import is the command line's, ``flask
--app companion import FILE``, into a fresh database (SQLite, or ``--postgresql``), in a
child process; its peak resident size comes from the kernel when it ends (``wait4``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

from bench.serving import ROOT, machine_cpu_seconds, migrate, postgresql_cluster, server_env
from companion import rules

NAMES = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ida", "Jo"]
START = datetime(2001, 1, 1, 18, 0)
BLOCK = 1024 * 1024  # characters written at once by ``fill``
GAMES = 300  # simulated games per table size, reused by the matches (each its own start)
# Games a match of the default file ends after: an evening's, and 64 MB are then 15,000
# matches, within the 20,000 a household (and a file) may hold.
PLAYED = 5
# companion.backup.parse.MAX_ENTRY, not imported: it would bring SQLAlchemy and 50 MB.
MAX_ENTRY = 4 * 1024 * 1024

Writer = Callable[[Path, int, bool], str]  # (file, bytes, --refused): what it holds


def stamp(moment: datetime) -> str:
    """A time as the export writes it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def line(value) -> str:
    """A value as the export writes it (``document.dump``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def score_only_match(rng: random.Random, number: int) -> dict:
    """A finished one-game match of typed scores, started ``number`` minutes after START."""
    when = START + timedelta(minutes=number)
    seats = rng.sample(NAMES, rng.randint(3, 5))
    game = {
        "mode": "scores",
        "created_at": stamp(when),
        "scores": [rng.randint(0, 30) for _ in seats],
    }
    end = {"kind": "games", "value": 1}
    return {"created_at": stamp(when), "end": end, "pro": False, "seats": seats, "games": [game]}


class CardsMatches:
    """Finished matches of ``PLAYED`` games played card by card, every round with its time
    and row choices, as the export writes them, an hour apart: of ``GAMES`` games
    simulated per table size."""

    def __init__(self, rng: random.Random, names: list[str]) -> None:
        self.names = names
        self.games = {size: [simulated(rng, size) for _ in range(GAMES)] for size in (3, 4, 5)}

    def __call__(self, rng: random.Random, number: int) -> dict:
        when = START + timedelta(hours=number)
        seats = rng.sample(self.names, rng.randint(3, 5))
        games = []
        for played in range(PLAYED):
            starting, rounds = rng.choice(self.games[len(seats)])
            begun = when + timedelta(minutes=11 * played)
            entries = [
                {
                    "at": stamp(begun + timedelta(minutes=turn + 1)),
                    "cards": cards,
                    **({"choices": {seats[p]: row for p, row in chosen.items()}} if chosen else {}),
                }
                for turn, (cards, chosen) in enumerate(rounds)
            ]
            game = {"mode": "cards", "created_at": stamp(begun), "starting": starting}
            games.append({**game, "rounds": entries})
        end = {"kind": "games", "value": PLAYED}
        match = {"created_at": stamp(when), "end": end, "pro": False, "seats": seats}
        return {**match, "games": games}


def simulated(rng: random.Random, size: int) -> tuple[list[int], list]:
    """A legal game of ``size`` seats: its starting cards and rounds (the cards in seat
    order, the row choices by seat); too-low cards take the suggested row, or any."""
    dealt = rng.sample(range(1, rules.STANDARD_DECK + 1), rules.HAND_SIZE * size + 4)
    table = rules.Table([(card,) for card in dealt[-4:]])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        cards = [dealt[seat * rules.HAND_SIZE + turn] for seat in range(size)]
        table.start_round(list(enumerate(cards)))
        choices: dict[int, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested if rng.random() < 0.75 else 1
        rounds.append((cards, choices))
    return dealt[-4:], rounds


def players(names: list[str]) -> list[dict]:
    """The players list of ``names``."""
    return [{"name": name, "archived": False, "created_at": stamp(START)} for name in names]


def head() -> str:
    """The file's first fields, up to and without the closing brace."""
    fields = {"format": "6nimmt-companion", "version": 2, "exported_at": stamp(START)}
    return line(fields)[:-1]


def fill(file: TextIO, unit: str, separator: str, limit: int, closing: str) -> None:
    """``unit`` again and again, ``separator`` between, until the file is ``limit`` bytes
    with ``closing`` after it; a block at a time (ASCII units: a character is a byte)."""
    block = separator.join([unit] * (BLOCK // len(unit + separator))) + separator
    room = limit - len(closing) - len(unit)
    while file.tell() + len(block) < room:
        file.write(block)
    while file.tell() + len(unit + separator) < room:
        file.write(unit + separator)
    file.write(unit + closing)


def write_matches(path: Path, limit: int, refused: bool, make, names: list[str]) -> str:
    """A backup of ``make``'s matches, one per line, written until it is ``limit`` bytes."""
    rng, count = random.Random(20), 0
    with path.open("w", encoding="utf-8") as file:
        file.write(f'{head()}, "players": {line(players(names))}, "matches": [\n')
        first = line(make(rng, 0))
        file.write(first)
        while file.tell() < limit - 2 * len(first.encode()) - 10:
            count += 1
            file.write(",\n" + line(make(rng, count)))
        if refused:  # the same match again: refused once every match is checked
            file.write(",\n" + first)
        file.write("\n]}\n")
    return f"{count + 1:,} matches"


def opened(key: str, value: dict) -> tuple[str, str]:
    """The JSON of ``value`` around the elements of its list ``key``: the text before
    them, and the text that closes the list and ``value``."""
    before, after = line({**value, key: ["@"]}).split('"@"')
    return before, after


ONE_MATCH = {
    "created_at": stamp(START),
    "end": {"kind": "games", "value": 1},
    "pro": False,
    "seats": ["Ada", "Bo"],
    "games": [],
}
ADA = {"name": "Ada", "archived": False, "created_at": stamp(START)}
PLAYERS = '"players": ' + line(players(NAMES))
EMOJI = r"\ud83d\ude00"  # 😀 as JSON escapes it: 12 bytes for one character
EMPTY_PLAYER = line(ADA).split('"Ada",', 1)[1]  # the fields after a player's name


def hostile(before: str, unit: str, separator: str, after: str) -> Writer:
    """The writer of a backup whose fields are ``before``, ``unit`` repeated as long as
    the file may be, then ``after``."""

    def write(path: Path, limit: int, _refused: bool) -> str:
        with path.open("w", encoding="utf-8") as file:
            file.write(f"{head()}, {before}")
            fill(file, unit, separator, limit, after + "}\n")
        return "one stretch repeated to the end"

    return write


def in_a_match(key: str, unit: str) -> Writer:
    """A backup of one match whose list ``key`` is ``unit`` repeated."""
    before, after = opened(key, ONE_MATCH)
    return hostile(f'{PLAYERS}, "matches": [{before}', unit, ",", f"{after}]")


def write_largest(path: Path, limit: int, _refused: bool) -> str:
    """Matches each just within the largest a file may hold (``MAX_ENTRY``), their games
    [[[[]]]] again and again: read, the most memory an entry of its size takes."""
    before, after = opened("games", ONE_MATCH)
    count, size = 0, MAX_ENTRY - 1024
    with path.open("w", encoding="utf-8") as file:
        file.write(f'{head()}, {PLAYERS}, "matches": [')
        while file.tell() + size + 10 < limit:
            file.write("," * (count > 0) + before)
            fill(file, "[[[[]]]]", ",", file.tell() + size - len(before + after), after)
            count += 1
        file.write("]}\n")
    return f"{count} matches of {size / 1024 / 1024:.1f} MiB"


def write_numbers(path: Path, limit: int, _refused: bool) -> str:
    """A list of zeros, not an object."""
    with path.open("w", encoding="utf-8") as file:
        file.write("[")
        fill(file, "0", ",", limit, "]\n")
    return "one stretch repeated to the end"


def write_open(path: Path, limit: int, _refused: bool) -> str:
    """Lists opened and never closed: "[" to the end of the file."""
    with path.open("w", encoding="utf-8") as file:
        fill(file, "[", "", limit, "\n")
    return "one stretch repeated to the end"


def write_keys(path: Path, limit: int, _refused: bool) -> str:
    """A backup's first fields, then "k1": 0, "k2": 0, … up to the size."""
    number = 0
    with path.open("w", encoding="utf-8") as file:
        file.write(head())
        while file.tell() < limit - 100_000:
            file.write("".join(f',"k{number + n}":0' for n in range(1, 1001)))
            number += 1000
        file.write("}\n")
    return f"{number:,} fields"


def write_cards(names: list[str]) -> Writer:
    """The writer of a backup of real matches, card by card, between ``names``."""

    def write(path: Path, limit: int, refused: bool) -> str:
        matches = CardsMatches(random.Random(7), names)
        return write_matches(path, limit, refused, matches, names)

    return write


PLAYER_BEFORE, PLAYER_AFTER = opened("friends", ADA)
# Every file, by name: what it is, and its writer. The first is the default.
SHAPES: dict[str, tuple[str, Writer]] = {
    "matches": ("real matches, card by card, a time for each round", write_cards(NAMES)),
    "emoji": (
        "the same, one player's name with an emoji (a text of 4 bytes a character)",
        write_cards([*NAMES[:-1], "Jo 🐮"]),
    ),
    "score-only": (
        "score-only matches, the most a MB holds: more matches than a file may have",
        lambda path, limit, refused: write_matches(path, limit, refused, score_only_match, NAMES),
    ),
    "games": ("one match whose games are [{},{},…]", in_a_match("games", "{}")),
    "seats": ("one match seating “Ada” again and again", in_a_match("seats", '"Ada"')),
    "player-list": (
        "a player holding a list [[],[],…]",
        hostile(f'"players": [{PLAYER_BEFORE}', "[]", ",", f'{PLAYER_AFTER}], "matches": []'),
    ),
    "emoji-name": (
        "a player's name of escaped emoji, \\ud83d\\ude00 again and again",
        hostile('"players": [{"name": "', EMOJI, "", f'", {EMPTY_PLAYER}], "matches": []'),
    ),
    "lists": (
        "matches that are [], as many as the file holds",
        hostile(f'{PLAYERS}, "matches": [', "[]", ",", "]"),
    ),
    "numbers": ("a list of zeros [0,0,…], not an object", write_numbers),
    "extra-object": (
        'an unknown field "extra": {"a": [{},{},…]}',
        hostile(f'{PLAYERS}, "matches": [], "extra": {{"a": [', "{}", ",", "]}"),
    ),
    "keys": ('fields "k1": 0, "k2": 0, … after the backup\'s', write_keys),
    "largest": ("matches as large as a match may be, of [[[[]]]]", write_largest),
    "open": ('"[" again and again: lists opened, never closed', write_open),
}


def child_cpu_and_peak(command: list[str], env: dict) -> tuple[int, float, float, str]:
    """Run ``command``; its exit code, CPU seconds, peak resident MB and output."""
    with tempfile.TemporaryFile("w+") as output:
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().strip()
    return child.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def own_cpu() -> float:
    """CPU seconds this process has used."""
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return mine.ru_utime + mine.ru_stime


def measure(database_url: str, file: Path) -> None:
    """Import ``file`` with the command line in a child process; print what it took."""
    migrate(database_url)
    command = [sys.executable, "-m", "flask", "--app", "companion", "import", str(file)]
    # Nobody plays on it: no wait for a quiet moment.
    quiet = {"COMPANION_AUTO_BACKUP": "false", "COMPANION_IMPORT_QUIET": "0"}
    env = server_env(database_url, quiet)
    floor = [sys.executable, "-m", "flask", "--app", "companion", "export", os.devnull]
    _, _, empty, _ = child_cpu_and_peak(floor, env)  # the same program, no import
    machine, mine, started = machine_cpu_seconds(), own_cpu(), time.monotonic()
    code, cpu, peak, text = child_cpu_and_peak(command, env)
    elapsed = time.monotonic() - started
    others = machine_cpu_seconds() - machine - cpu - (own_cpu() - mine)
    print(f"  import: exit {code} after {elapsed:.1f} s, {cpu:.1f} s of CPU time")
    print(f"  {text.splitlines()[-1][:300] if text else ''}")
    print(
        f"  peak memory of the importing process: {peak:.0f} MB resident "
        f"(target < 400 MB; {empty:.0f} MB for an export of the empty database)"
    )
    print(f"  other programs on the machine meanwhile: {max(others, 0):.1f} s of CPU time")


def main() -> None:
    """Write each file asked for, then import it into a fresh database."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=64, help="the file's size (the upload limit)")
    parser.add_argument(
        "--shape",
        nargs="+",
        choices=[*SHAPES, "all"],
        default=[next(iter(SHAPES))],
        help="the file (default: real matches); all: each in turn",
    )
    parser.add_argument("--refused", action="store_true", help="a file refused at its end")
    parser.add_argument("--postgresql", action="store_true")
    args = parser.parse_args()
    names = list(SHAPES) if "all" in args.shape else args.shape
    for shape in names:
        what, write = SHAPES[shape]
        with tempfile.TemporaryDirectory(prefix="bench-import-memory-") as name:
            folder = Path(name)
            file = folder / "backup.json"
            holds = write(file, int(args.mib * 1024 * 1024), args.refused)
            size = file.stat().st_size / 1024 / 1024
            print(f"{shape}: {what}: {size:.1f} MiB, {holds}")
            with contextlib.ExitStack() as stack:
                if args.postgresql:
                    url, _ = stack.enter_context(postgresql_cluster())
                else:
                    url = f"sqlite:///{folder}/companion.sqlite"
                measure(url, file)


if __name__ == "__main__":
    main()
