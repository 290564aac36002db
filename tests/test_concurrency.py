"""Phones writing at the same moment, against a real waitress server: one wins, none doubles."""

import threading
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import pytest
from conftest import make_app, stop_server
from driver import add_players, enter_round, start_game, start_match
from waitress import create_server

from companion.db import db
from companion.models import Match, PendingCard, Play, Round, RowChoice

pytestmark = pytest.mark.database  # the write path on PostgreSQL's row locks too

PHONES = 20


@pytest.fixture
def server(tmp_path):
    """A waitress server (8 threads) on its own database, and the app to set it up."""
    app = make_app(tmp_path / "race.sqlite")
    server = create_server(app, host="127.0.0.1", port=0, threads=8)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.effective_port}"
    stop_server(server, thread)


class Phone:
    """A phone: its own cookies (session with the player link), no redirects followed."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()), NoRedirect()
        )

    def request(self, path: str, data: dict | None = None) -> int:
        """GET or POST (form) ``path``; return the status code."""
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        try:
            with self.opener.open(self.base + path, data=body, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report 303 as it is, so each phone sees whether its own write was stored."""

    def redirect_request(self, *args, **kwargs):
        return None


def at_once(phones, path, data_for) -> list[int]:
    """Let every phone post at the same moment; return their status codes."""
    barrier = threading.Barrier(len(phones))
    codes = [0] * len(phones)

    def post(index):
        barrier.wait()
        codes[index] = phones[index].request(path, data_for(index))

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(phones))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes


@pytest.fixture
def table(server):
    """A started game of Anna, Ben and Cleo, and 20 phones holding the player link."""
    app, base = server
    client, ids, match_id, phones = joined(app, base, PHONES)
    return app, client, ids, match_id, phones


def joined(app, base: str, count: int, make_phone=Phone, ids=None):
    """Anna, Ben and Cleo's started game, and ``count`` phones that joined it by the player
    link (the server at ``base`` serves ``app``'s database). Pass ``ids`` for another
    match of players already added."""
    client = app.test_client()
    ids = ids or add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    with app.app_context():
        token = db.session.get(Match, match_id).player_token
    phones = [make_phone(base) for _ in range(count)]
    for phone in phones:
        assert phone.request(f"/matches/{match_id}/join/{token}") == 303
    return client, ids, match_id, phones


def say_who(phones, match_id: int, ids, extra=lambda index: {}) -> None:
    """Phone i says it is player ids[i] ("I am Anna"): it then enters only its own card."""
    for index, player_id in enumerate(ids):
        form = {"player": str(player_id), **extra(index)}
        assert phones[index].request(f"/matches/{match_id}/me", form) == 303


def count(app, model):
    """Rows of a model."""
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(model))


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
    app, _, (anna, ben, _cleo), match_id, phones = table
    say_who(phones, match_id, [anna, ben])
    forms = [
        {f"card-{anna}": "50", "game": "1", "round": "1"},
        {f"card-{ben}": "50", "game": "1", "round": "1"},
    ]
    codes = at_once(phones[:2], f"/matches/{match_id}/rounds", lambda i: forms[i])
    assert sorted(codes) == [303, 422]
    assert count(app, PendingCard) == 1


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
