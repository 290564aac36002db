"""kill -9 in the middle of a burst of writes: every acknowledged write is there.

The real server (gunicorn, 2 workers) on its own database; a dozen tables of three
phones each send their own card, round after round, all at once. Partway through, the
parent and both workers are killed with SIGKILL. Then every card the server answered
303 for must be in the database (in its round, or hidden until the round is complete),
``PRAGMA integrity_check`` must pass and ``flask rebuild --check`` must find nothing
to mend. COMPANION_CRASH_TRIALS sets the number of trials (2 by default); each prints
its figures.
"""

import http.client
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading

import conftest
import pytest
from phones import FormPhone, gone, joined_phones, say_who, start_server, wait_for
from servers import ROOT, children

from companion import create_app
from companion.db import db
from companion.models import Game, PendingCard, Play, Round

TABLES = 12
SEATS = 3
ROUNDS = 10
TRIALS = int(os.environ.get("COMPANION_CRASH_TRIALS", "2"))


class Table:
    """One match and the phones of its three players, each sending its own card."""

    def __init__(self, match_id: int, player_ids: list[int], phones: list[FormPhone]):
        self.match_id = match_id
        self.player_ids = player_ids
        self.phones = phones
        self.between_rounds = threading.Barrier(SEATS, timeout=60)


def card(round_number: int, seat: int) -> int:
    """Rising cards (41, 42, 43, 44, ...): never too low, so no row choice is asked."""
    return 41 + (round_number - 1) * SEATS + seat


def set_up_tables(app, base: str) -> list[Table]:
    """TABLES started games of Anna, Ben and Cleo, each with its own three joined phones."""
    tables, ids = [], None
    for _ in range(TABLES):
        ids, match_id, phones = joined_phones(app, base, SEATS, ids)
        say_who(phones, match_id, ids, lambda i, phones=phones: {"csrf_token": phones[i].csrf})
        tables.append(Table(match_id, ids, phones))
    return tables


def play(table: Table, seat: int, acknowledged: list, refused: list) -> None:
    """One phone: its player's card every round, until the rounds end or the server dies."""
    phone, player_id = table.phones[seat], table.player_ids[seat]
    try:
        for number in range(1, ROUNDS + 1):
            form = {
                f"card-{player_id}": str(card(number, seat)),
                "game": "1",
                "round": str(number),
                "csrf_token": phone.csrf,
            }
            status = phone.request(f"/matches/{table.match_id}/rounds", form)
            if status != 303:
                refused.append((table.match_id, number, status))
                break
            acknowledged.append((table.match_id, player_id, number, card(number, seat)))
            table.between_rounds.wait()
    except (OSError, http.client.HTTPException, threading.BrokenBarrierError):
        pass  # the server is gone: this write is not acknowledged
    table.between_rounds.abort()  # the others of the table stop too


def missing(app, acknowledged) -> list[tuple]:
    """The acknowledged cards that are not in the database."""
    lost = []
    with app.app_context():
        for match_id, player_id, number, value in acknowledged:
            game_id = db.session.scalar(
                db.select(Game.id).where(Game.match_id == match_id, Game.number == 1)
            )
            played = db.session.scalar(
                db.select(Play.id)
                .join(Round)
                .where(
                    Round.game_id == game_id,
                    Round.number == number,
                    Play.player_id == player_id,
                    Play.card == value,
                )
            )
            hidden = db.session.scalar(
                db.select(PendingCard.id).where(
                    PendingCard.game_id == game_id,
                    PendingCard.round_number == number,
                    PendingCard.player_id == player_id,
                    PendingCard.card == value,
                )
            )
            if played is None and hidden is None:
                lost.append((match_id, player_id, number, value))
    return lost


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(1, TRIALS + 1))
def test_kill_9_mid_burst_loses_no_acknowledged_write(tmp_path, trial):
    database = tmp_path / "workers.sqlite"
    server, port = start_server(tmp_path)
    app = create_app(conftest.testing_config(database))
    tables = set_up_tables(app, f"http://127.0.0.1:{port}")
    total = TABLES * SEATS * ROUNDS
    kill_after = random.randint(total // 5, total * 3 // 5)
    acknowledged: list[tuple] = []  # list.append is atomic: the phones share these
    refused: list[tuple] = []
    phones = [
        threading.Thread(target=play, args=(table, seat, acknowledged, refused))
        for table in tables
        for seat in range(SEATS)
    ]
    processes = [server.pid, *children(server.pid)]
    for thread in phones:
        thread.start()
    wait_for(lambda: len(acknowledged) >= kill_after, seconds=120)
    for pid in processes:  # the parent and every worker, mid-burst
        os.kill(pid, signal.SIGKILL)
    server.wait()
    for thread in phones:
        thread.join(timeout=60)
    wait_for(lambda: all(gone(pid) for pid in processes), seconds=10)

    lost = missing(create_app(conftest.testing_config(database)), acknowledged)  # a new start
    print(f"\ntrial {trial}: {len(acknowledged)} of {total} writes acknowledged, {len(lost)} lost")
    assert len(acknowledged) < total  # the kill came mid-burst
    assert refused == []  # every write before the kill was stored
    assert lost == []
    with sqlite3.connect(database) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rebuild = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "companion", "rebuild", "--check"],
        cwd=ROOT,
        env={
            **os.environ,
            "COMPANION_DATABASE_URL": f"sqlite:///{database}",
            "COMPANION_SECRET_KEY": "x",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rebuild.returncode == 0, rebuild.stdout + rebuild.stderr
