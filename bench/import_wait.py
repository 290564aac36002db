"""Benchmark: how long a phone's round waits while a backup is imported (real server).

Run: .venv/bin/python -m bench.import_wait [--matches 5000] [--workers N]
(prints figures; not a test). Target (issue 10): while an import runs, a round sent
from a phone is stored within 2 s, and no write fails.

It generates the history of ``bench/history.py``, exports it to a file, and starts
`python -m companion.serve` on loopback with an empty database. One phone plays a match
there, a write every 0.2 s (starting cards, a round of 4 cards, row choices), while a
second phone imports the file through the backup page. Two runs:

- *forced*: the server is told that nobody plays (``COMPANION_IMPORT_QUIET=0``), so
  the import merges while the phone writes: its longest wait is the figure;
- *as shipped*: the server's own settings; a big import while someone plays waits for
  a quiet moment or is refused with a message.

Every write answered 303 is then looked up in the database: none may be missing.
"""

from __future__ import annotations

import argparse
import html
import random
import re
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from bench.apps import sqlite_app
from bench.history import build
from bench.serving import Answer, Browser, MemoryWatch, free_port, start_server
from companion import rules
from companion.backup.document import dump, export_document

PLAYERS = ("Ada", "Bo", "Cy", "Di")
WRITE_EVERY = 0.2  # seconds between a phone's writes


def export_history(folder: Path, matches: int) -> Path:
    """The generated history as a backup file."""
    app = sqlite_app(folder / "history.sqlite")
    build(app, matches)
    with app.app_context():
        text = dump(export_document())
    path = folder / "backup.json"
    path.write_text(text, encoding="utf-8")
    return path


class Writes:
    """Every write the phone sent: when, how long it took, the answer."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, float, float, int]] = []  # kind, start, seconds, status

    def note(self, kind: str, answer: Answer) -> int:
        """Note one answered write; its status."""
        begin = time.monotonic() - answer.seconds
        self.sent.append((kind, begin, answer.seconds, answer.status))
        return answer.status


def join(port: int, database: Path) -> tuple[Browser, int, list[int]]:
    """A phone that adds the players and starts a match (it holds the player link)."""
    phone = Browser(f"http://127.0.0.1:{port}")
    phone.send("/players/")
    for name in PLAYERS:
        status = phone.form("/players/", {"name": name}).status
        assert status == 303, status
    with sqlite3.connect(database) as connection:
        ids = [
            connection.execute("SELECT id FROM player WHERE name = ?", (name,)).fetchone()[0]
            for name in PLAYERS
        ]
    form = {f"seat_{n}": pid for n, pid in enumerate(ids, 1)}
    form.update(end_kind="games", end_value=1000, deck="standard")
    answer = phone.form("/matches/", form)
    assert answer.status == 303, answer.status
    match_id = int(re.search(r"/matches/(\d+)", answer.headers["location"]).group(1))
    return phone, match_id, ids


def play(
    port: int, database: Path, writes: Writes, started: threading.Event, stop: threading.Event
) -> tuple[int, int]:
    """Play games on one phone until told to stop; return the match id and rounds stored."""
    phone, match_id, ids = join(port, database)
    started.set()
    rng = random.Random(10)
    stored = 0
    game = 0

    def post(kind: str, path: str, form: dict) -> int:
        time.sleep(WRITE_EVERY)
        return writes.note(kind, phone.form(f"/matches/{match_id}{path}", form))

    while not stop.is_set():
        game += 1
        cards = rng.sample(range(1, 105), 10 * len(ids) + 4)
        starting, hands = cards[-4:], [cards[i * 10 : i * 10 + 10] for i in range(len(ids))]
        form = {f"row{n}": card for n, card in enumerate(starting, 1)}
        assert post("start", "/games", {**form, "game": game}) == 303
        table = rules.Table([(card,) for card in starting])
        for turn in range(rules.HAND_SIZE):
            plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(ids)]
            base = {"game": game, "round": turn + 1}
            form = {f"card-{pid}": card for pid, card in plays}
            stored += post("round", "/rounds", {**base, **form}) == 303
            table.start_round(plays)
            choices: dict[int, int] = {}
            while (pending := table.run(choices)) is not None:
                choices[pending.player] = pending.suggested
                form = {**base, "player": pending.player, "row": pending.suggested}
                post("choice", "/choice", form)
    return match_id, stored


IMPORT_FORM = re.compile(r'action="(/backup/import\?csrf_token=[^"]+)"')


def import_file(port: int, path: Path) -> tuple[float, float, int, str]:
    """Import the file through the backup page, as its form sends it (the CSRF token in
    the form's address); its start, seconds, status and message."""
    phone = Browser(f"http://127.0.0.1:{port}")
    address = html.unescape(IMPORT_FORM.search(phone.send("/backup").text).group(1))
    begin = time.monotonic()
    answer = phone.upload(address, path.name, path.read_bytes())
    found = re.search(r'class="field-error"[^>]*>([^<]+)<', answer.text)
    return begin, answer.seconds, answer.status, html.unescape(found.group(1)) if found else ""


def run(file: Path, folder: Path, workers: int | None, forced: bool) -> None:
    """One server, one playing phone, one import; print what happened."""
    database = folder / f"server-{'forced' if forced else 'shipped'}.sqlite"
    port = free_port()
    extra = {"COMPANION_IMPORT_QUIET": "0"} if forced else {}
    server = start_server(f"sqlite:///{database}", port, workers, extra)
    memory = MemoryWatch(server.pid)
    memory.start()
    writes, started, stop = Writes(), threading.Event(), threading.Event()
    outcome: dict = {}

    def phone() -> None:
        outcome["match"], outcome["stored"] = play(port, database, writes, started, stop)

    player = threading.Thread(target=phone)
    try:
        player.start()
        started.wait(60)
        time.sleep(2)  # the table is playing
        begin, seconds, status, message = import_file(port, file)
        time.sleep(2)
        stop.set()
        player.join(60)
        memory.stop()
    finally:
        server.terminate()
        server.wait(timeout=30)
    report(forced, writes, begin, seconds, status, message, memory)
    check_stored(database, outcome["match"], outcome["stored"])


def report(forced, writes: Writes, begin, seconds, status, message, memory) -> None:
    """Print the import's answer and the waits of the phone's writes."""
    end = begin + seconds
    during = [entry for entry in writes.sent if entry[1] < end and entry[1] + entry[2] > begin]
    before = [entry[2] for entry in writes.sent if entry[1] + entry[2] <= begin]
    failed = [entry for entry in writes.sent if entry[3] != 303]
    title = "forced (the server is told nobody plays)" if forced else "as shipped"
    print(
        f"{title}: import answered {status} after {seconds:.2f} s"
        + (f": {message}" if message else "")
    )
    if before:
        print(f"  phone writes before the import: {len(before)}, longest {max(before):.2f} s")
    if during:
        longest = max(during, key=lambda entry: entry[2])
        print(
            f"  phone writes during the import: {len(during)}, longest wait {longest[2]:.2f} s "
            f"({longest[0]}; target < 2 s)"
        )
    print(f"  writes that failed: {len(failed)}" + (f" {failed[:3]}" if failed else ""))
    print(f"  server peak memory: {memory.peak_pss:.0f} MB (PSS of {memory.processes} processes)")


def check_stored(database: Path, match_id: int, stored: int) -> None:
    """Every round the phone was told is stored is in the database."""
    with sqlite3.connect(database) as connection:
        found = connection.execute(
            "SELECT count(*) FROM round JOIN game ON game.id = round.game_id "
            "WHERE game.match_id = ?",
            (match_id,),
        ).fetchone()[0]
    verdict = "none lost" if found >= stored else "SOME LOST"
    print(f"  rounds acknowledged {stored}, stored {found}: {verdict}")


def main() -> None:
    """Export the history, then the two runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        file = export_history(folder, args.matches)
        print(f"backup of {args.matches} matches: {file.stat().st_size / 1e6:.1f} MB")
        for forced in (True, False):
            run(file, folder, args.workers, forced)


if __name__ == "__main__":
    main()
