"""What matters most at the table, in WebKit (Safari's engine on the iPhones) and Firefox
as in Chromium (tests/browser): on the real server (gevent workers, pushes), phones join
by the player link and say "I am", type their card and press Enter, the others' phones
and the TV get it through their event streams, the chooser taps a row on their own
phone, a card typed while the server is down goes by itself once it is back, and the TV
follows a rematch by itself. The drivers: tests/engines/webdrivers.py.

The phones open the companion as a household's phones do: at this machine's own address
on its network (http://192.168.x.y:PORT), which is no secure context (no
crypto.randomUUID, service worker, Wake Lock or clipboard), where 127.0.0.1 would be one."""

import ipaddress
import re
from pathlib import Path

import conftest
import pytest
from conftest import require
from driver import add_players, score_game, start_match, tokens
from phones import joined_phones, say_who, stop
from sqlalchemy import select
from webdrivers import (
    FIREFOX,
    MINIBROWSER,
    PHONE,
    TV,
    WEBKIT_DRIVER,
    XVFB,
    Bidi,
    FirefoxPhone,
    WebKitPhone,
    Xvfb,
    xpath_button,
)

from companion import create_app
from companion.db import db
from companion.models import PendingCard
from companion.web.network import lan_address

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NO_POLL = {"COMPANION_LIVE_POLL": "null"}  # the page never polls: only pushes arrive


class Engine:
    """An engine's phones for the session: WebKit's sessions are kept and lent again
    (one takes seconds to start), Firefox gives each phone a user context."""

    def __init__(self, name: str):
        self.name = name
        self.idle: list = []
        if name == "webkit":
            for path in (WEBKIT_DRIVER, MINIBROWSER, XVFB):
                require(Path(path).exists(), f"{path} not found (Debian: webkit2gtk-driver, xvfb)")
            self.xvfb = Xvfb()
        else:
            require(Path(FIREFOX).exists(), f"{FIREFOX} not found (Debian: firefox-esr)")
            self.bidi = Bidi()

    def phones(self, count: int) -> list:
        if self.name == "firefox":
            return [FirefoxPhone(self.bidi) for _ in range(count)]
        while len(self.idle) < count:
            self.idle.append(WebKitPhone(self.xvfb.display))
        lent, self.idle = self.idle[:count], self.idle[count:]
        return lent

    def give_back(self, phones: list) -> None:
        for phone in phones:
            if self.name == "firefox":
                phone.close()
            else:
                phone.forget()
                self.idle.append(phone)

    def close(self) -> None:
        if self.name == "firefox":
            self.bidi.close()
            return
        for phone in self.idle:
            phone.quit()
        self.xvfb.stop()


@pytest.fixture(scope="session", params=["webkit", "firefox"])
def engine(request):
    """WebKit or Firefox, started once per test process."""
    started = Engine(request.param)
    yield started
    started.close()


@pytest.fixture(scope="session")
def lan() -> str:
    """This machine's IPv4 address on its network, the one the app answers to as its own
    (``lan_address``): the servers listen there and the phones open it. None but loopback
    fails the tests (never a skip): on loopback the pages would be in a secure context."""
    address = lan_address()
    if ipaddress.ip_address(address).is_loopback:
        pytest.fail(
            f"this machine has no IPv4 address but loopback ({address}): the engine tests "
            "open the companion at its network address, as phones at home do",
            pytrace=False,
        )
    return address


@pytest.fixture
def phones(engine):
    """``phones(count)``: fresh phones of the engine, at phone size, without cookies."""
    lent: list = []

    def take(count: int) -> list:
        taken = engine.phones(count)
        lent.extend(taken)
        return taken

    yield take
    engine.give_back(lent)


def database_app(tmp_path):
    """An app on the server's database (tests/phones.py start_server)."""
    return create_app(conftest.testing_config(tmp_path / "workers.sqlite"))


def i_am(phone, link: str, name: str, log: Path) -> None:
    """The phone opens the player link and says it is ``name``; its stream opens (else
    the failure ends with the server's ``log``)."""
    phone.open(link)
    secure = phone.run("return window.isSecureContext")
    assert secure is False, f"{phone.engine}: {link} is a secure context, no phone's at home"
    phone.tap(xpath_button(f"I am {name}"))
    phone.shows(".me-form", f"You are {name} on this phone.")
    # A phone's width, and the match page fits it: nothing wider than the screen (less
    # Firefox's scroll bar).
    width, page, shown = phone.run(
        "const html = document.documentElement;"
        "return [innerWidth, html.scrollWidth, html.clientWidth]"
    )
    assert width == PHONE[0] and page <= shown, f"{phone.engine}: {width}, {page} > {shown}"
    phone.stream_open(log)


def card_field(player_id: int) -> str:
    return f'form.round-form input[name="card-{player_id}"]'


def test_a_round_at_the_table_with_a_row_choice(phones, served, lan, tmp_path):
    _server, port = served(host=lan, **NO_POLL)
    base = f"http://{lan}:{port}"
    app = database_app(tmp_path)
    (anna, ben, cleo), match_id, [cleos] = joined_phones(app, base, 1)
    player_link, watch_link = (f"{base}/matches/{match_id}/join/{t}" for t in tokens(app, match_id))
    annas, bens, tv = phones(3)
    i_am(annas, player_link, "Anna", tmp_path / "server.log")
    i_am(bens, player_link, "Ben", tmp_path / "server.log")
    tv.resize(TV)
    tv.open(watch_link)
    tv.open(f"{base}/matches/{match_id}/table")
    tv.stream_open()

    annas.type(card_field(anna), "41")
    annas.shows("#entry .notice", "Your card is in.")
    bens.shows("#entered", "Anna")  # pushed to the other phone
    tv.shows("#entered", "Anna")
    say_who([cleos], match_id, [cleo], lambda _: {"csrf_token": cleos.csrf})
    form = {f"card-{cleo}": "43", "game": "1", "round": "1", "csrf_token": cleos.csrf}
    assert cleos.request(f"/matches/{match_id}/rounds", form) == 303
    bens.type(card_field(ben), "5")  # lower than every row: Ben chooses
    annas.shows(".choosing", "Ben chooses a row")  # pushed; the buttons are Ben's
    bens.tap(xpath_button("Take row 2"))
    for phone in (annas, bens, tv):  # the round placed on every screen, row 2 Ben's
        phone.shows(".summary-step", "Ben 5: too low, took row 2")
        phone.shows(".summary-step", "Cleo 43 → row 4")


def test_a_card_typed_while_the_server_is_down_goes_once_it_is_back(phones, served, lan, tmp_path):
    server, port = served(host=lan, **NO_POLL)
    base = f"http://{lan}:{port}"
    app = database_app(tmp_path)
    (anna, _ben, _cleo), match_id, _others = joined_phones(app, base, 0)
    [annas] = phones(1)
    link = f"{base}/matches/{match_id}/join/{tokens(app, match_id)[0]}"
    i_am(annas, link, "Anna", tmp_path / "server.log")
    stop(server)
    annas.type(card_field(anna), "41")
    annas.shows(".not-sent", "Not sent yet")
    assert annas.run("return document.querySelector(arguments[0]).value", card_field(anna)) == "41"
    served(port=port, host=lan, **NO_POLL)
    annas.shows("#entry .notice", "Your card is in.")  # no second tap
    annas.wait_until("!document.querySelector('.not-sent')", "the not-sent notice gone")
    with app.app_context():
        cards = db.session.scalars(select(PendingCard.card).where(PendingCard.player_id == anna))
        assert list(cards) == [41]  # stored once


def test_the_tv_follows_a_rematch_by_itself(phones, served, lan, tmp_path):
    _server, port = served(host=lan, **NO_POLL)
    base = f"http://{lan}:{port}"
    app = database_app(tmp_path)
    client = app.test_client()
    anna, ben = add_players(client, "Anna", "Ben")
    old = start_match(client, [anna, ben], end_kind="games", end_value=1)
    player_token, watch_token = tokens(app, old)
    annas, tv = phones(2)
    i_am(annas, f"{base}/matches/{old}/join/{player_token}", "Anna", tmp_path / "server.log")
    tv.resize(TV)
    tv.open(f"{base}/matches/{old}/join/{watch_token}")
    tv.open(f"{base}/matches/{old}/table")
    tv.stream_open()
    assert score_game(client, old, {anna: 3, ben: 5}).status_code == 303  # game 1 ends it
    tv.shows(".result-banner .outcome", "Winner: Anna")

    annas.tap(xpath_button("Rematch"))
    page = annas.wait_until(  # the rematch's own address
        "location.pathname !== arguments[0] && location.pathname", "the rematch", f"/matches/{old}"
    )
    new = int(re.fullmatch(r"/matches/(\d+)", page).group(1))
    annas.shows(".me-form", "You are Anna on this phone.")  # the seat comes along
    for row, card in enumerate((12, 24, 37, 40), 1):
        annas.type(f"#field-row{row}", str(card), enter=False)
    annas.tap(xpath_button("Start game 1"))
    tv.wait_until(  # by itself, by the push
        "location.pathname === arguments[0]", "the TV on the rematch", f"/matches/{new}/table"
    )
    tv.shows(".now-game", "Game 1")
