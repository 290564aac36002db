"""Phones writing at the same moment, against a real waitress server: one wins, none doubles."""

import threading

import pytest
from conftest import make_app, stop_server
from driver import count, enter_round
from phones import (
    PHONES,
    at_once,
    joined,
    say_who,
)
from waitress import create_server

from companion.models import PendingCard, Play, Round, RowChoice

pytestmark = pytest.mark.database  # the write path on PostgreSQL's row locks too


@pytest.fixture
def server(tmp_path):
    """A waitress server (8 threads) on its own database, and the app to set it up."""
    app = make_app(tmp_path / "race.sqlite")
    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.effective_port}"
    stop_server(server, thread)


@pytest.fixture
def table(server):
    """A started game of Anna, Ben and Cleo, and 20 phones holding the player link."""
    app, base = server
    client, ids, match_id, phones = joined(app, base, PHONES)
    return app, client, ids, match_id, phones


def test_twenty_phones_enter_the_same_round_once(table):
    app, _, (anna, ben, cleo), match_id, phones = table
    form = {
        f"card-{anna}": "41",
        f"card-{ben}": "42",
        f"card-{cleo}": "43",
        "game": "1",
        "round": "1",
    }
    codes = at_once(phones, f"/matches/{match_id}/rounds", lambda _: form)
    assert codes.count(303) == 1
    assert codes.count(422) == PHONES - 1  # told the table moved on
    assert count(app, Round) == 1 and count(app, Play) == 3


def test_two_players_typing_the_same_card_at_once(table):
    """Both are taken (a refusal would tell one phone the other's hidden card); the round
    waits for the typo to be fixed once Cleo's card is in too."""
    app, _, (anna, ben, cleo), match_id, phones = table
    say_who(phones, match_id, [anna, ben, cleo])
    forms = [
        {f"card-{anna}": "50", "game": "1", "round": "1"},
        {f"card-{ben}": "50", "game": "1", "round": "1"},
        {f"card-{cleo}": "51", "game": "1", "round": "1"},
    ]
    codes = at_once(phones[:3], f"/matches/{match_id}/rounds", lambda i: forms[i])
    assert codes == [303, 303, 303]
    assert count(app, PendingCard) == 3 and count(app, Round) == 0


def test_twenty_phones_answer_the_same_row_choice_once(table):
    app, client, (anna, ben, cleo), match_id, phones = table
    assert enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3}).status_code == 303
    form = {"player": str(cleo), "row": "2", "game": "1", "round": "1"}
    codes = at_once(phones, f"/matches/{match_id}/choice", lambda _: form)
    assert codes.count(303) == 1 and codes.count(422) == PHONES - 1
    assert count(app, RowChoice) == 1


def test_every_player_enters_their_own_card_at_once(table):
    app, _, ids, match_id, phones = table
    say_who(phones, match_id, ids)
    forms = [{f"card-{pid}": str(60 + i), "game": "1", "round": "1"} for i, pid in enumerate(ids)]
    codes = at_once(phones[:3], f"/matches/{match_id}/rounds", lambda i: forms[i])
    assert codes == [303, 303, 303]
    assert count(app, Round) == 1 and count(app, Play) == 3 and count(app, PendingCard) == 0
