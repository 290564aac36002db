"""Live pushes in Chromium, on the real server (gunicorn's gevent workers, as `make run`):
a round entered on one phone shows on another and on the TV with the poll turned off, so
the event stream is what brings it; after a server restart nothing is missed; a blocked
stream falls back to polling; a write by another program shows on an open page."""

from contextlib import contextmanager

import conftest
import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import tokens
from phones import FormPhone, joined, stop
from playwright.sync_api import expect
from servers import CSRF

from companion import create_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NO_POLL = {"COMPANION_LIVE_POLL": "null"}  # the page never polls: only pushes arrive
PUSHED_WITHIN_MS = 1000  # the other phone and the TV show a round this soon (typically 50 ms)


def database_app(tmp_path):
    """An app on the server's database (tests/phones.py start_server)."""
    return create_app(conftest.testing_config(tmp_path / "workers.sqlite"))


@contextmanager
def live_pages(browser, base: str, app, match_id: int):
    """A player's phone (Ben's, by the player link) and the TV view, both with their
    stream open; closed after the block."""
    player_token, _watch = tokens(app, match_id)
    phone_context, tv_context = new_phone_context(browser), new_phone_context(browser)
    try:
        phone = phone_context.new_page()
        phone.goto(f"{base}/matches/{match_id}/join/{player_token}")
        tv = tv_context.new_page()
        tv.set_viewport_size({"width": 1280, "height": 720})
        tv.goto(f"{base}/matches/{match_id}/table")
        for page in (phone, tv):
            # A server just started: the worker a stream goes to may still be loading the
            # app (the start waits for one answer, not for every worker), which took over
            # 5 s once in a whole CI run; the stream opens as soon as it is ready.
            stream = page.locator("#stream")
            expect(stream).to_have_attribute("data-stream", "open", timeout=30_000)
        yield phone, tv
    finally:
        phone_context.close()
        tv_context.close()


def enter_round(sender: FormPhone, match_id: int, ids, cards) -> None:
    """One phone sends the whole round through the server."""
    data = {f"card-{pid}": str(card) for pid, card in zip(ids, cards, strict=True)}
    page = sender.page(f"/matches/{match_id}")
    data.update(csrf_token=CSRF.search(page).group(1), game="1", round=str(round_of(page)))
    assert sender.request(f"/matches/{match_id}/rounds", data) == 303


def round_of(page: str) -> int:
    """The round the match page asks for next."""
    return int(page.split('name="round" value="', 1)[1].split('"', 1)[0])


def shows_step(page, name: str, card: int):
    """The round summary's step of ``name``'s ``card``."""
    return page.locator(".summary-step", has_text=name).filter(has_text=str(card))


def test_a_round_sent_on_one_phone_is_pushed_to_another_and_to_the_tv(browser, served, tmp_path):
    _server, port = served(**NO_POLL)
    base = f"http://127.0.0.1:{port}"
    app = database_app(tmp_path)
    _client, ids, match_id, [sender] = joined(app, base, 1, FormPhone)
    with live_pages(browser, base, app, match_id) as (phone, tv):
        enter_round(sender, match_id, ids, [41, 42, 43])
        for page in (phone, tv):  # within a second of the write's answer (issue 18)
            expect(shows_step(page, "Cleo", 43)).to_be_visible(timeout=PUSHED_WITHIN_MS)
        enter_round(sender, match_id, ids, [44, 45, 46])
        for page in (phone, tv):
            expect(shows_step(page, "Cleo", 46)).to_be_visible(timeout=PUSHED_WITHIN_MS)


def test_after_a_server_restart_the_pages_reconnect_and_miss_nothing(browser, served, tmp_path):
    server, port = served(**NO_POLL)
    base = f"http://127.0.0.1:{port}"
    app = database_app(tmp_path)
    client, ids, match_id, [sender] = joined(app, base, 1, FormPhone)
    with live_pages(browser, base, app, match_id) as (phone, tv):
        phone.get_by_label("Anna", exact=True).fill("4")  # typing when the server goes
        stop(server)
        expect(phone.locator("#offline")).to_be_visible()  # "Reconnecting…"
        expect(phone.get_by_label("Anna", exact=True)).to_have_value("4")  # kept
        # A round written while no server runs, by the phone that made the match.
        data = {"card-1": "41", "card-2": "42", "card-3": "43", "game": "1", "round": "1"}
        assert client.post(f"/matches/{match_id}/rounds", data=data).status_code == 303
        served(port=port, **NO_POLL)
        for page in (phone, tv):
            expect(shows_step(page, "Cleo", 43)).to_be_visible()
        expect(phone.locator("#offline")).to_be_hidden()
        enter_round(sender, match_id, ids, [44, 45, 46])  # and the stream goes on
        for page in (phone, tv):
            expect(shows_step(page, "Cleo", 46)).to_be_visible()


def test_a_blocked_stream_falls_back_to_polling(browser, served, tmp_path):
    _server, port = served()  # polling on, as served to phones
    base = f"http://127.0.0.1:{port}"
    app = database_app(tmp_path)
    _client, ids, match_id, [sender] = joined(app, base, 1, FormPhone)
    context = new_phone_context(browser)
    try:
        context.route("**/events?*", lambda route: route.abort())  # a proxy that refuses it
        phone = context.new_page()
        phone.goto(f"{base}/matches/{match_id}/join/{tokens(app, match_id)[0]}")
        expect(phone.locator("#stream")).to_have_attribute("data-stream", "failed")
        enter_round(sender, match_id, ids, [41, 42, 43])
        expect(shows_step(phone, "Cleo", 43)).to_be_visible()
        expect(phone.locator("#offline")).to_be_hidden()  # polling works: nothing to say
    finally:
        context.close()


def test_a_write_by_another_program_shows_on_an_open_page(browser, served, tmp_path):
    """The command line (or any program on the database) writes without the server: the
    server's watcher sees the database change and pushes it to the match's pages."""
    _server, port = served(**NO_POLL)
    base = f"http://127.0.0.1:{port}"
    app = database_app(tmp_path)
    client, _ids, match_id, _phones = joined(app, base, 1, FormPhone)
    with live_pages(browser, base, app, match_id) as (phone, tv):
        data = {"card-1": "41", "card-2": "42", "card-3": "43", "game": "1", "round": "1"}
        assert client.post(f"/matches/{match_id}/rounds", data=data).status_code == 303
        for page in (phone, tv):
            expect(shows_step(page, "Cleo", 43)).to_be_visible()


def test_your_turn_comes_in_the_same_push_with_a_short_vibration(browser, served, tmp_path):
    """Anna's phone ("I am Anna") gets her too-low choice with the push that placed the
    round's cards, and buzzes once; the TV says who is choosing."""
    _server, port = served(**NO_POLL)
    base = f"http://127.0.0.1:{port}"
    app = database_app(tmp_path)
    _client, ids, match_id, [sender] = joined(app, base, 1, FormPhone)
    with live_pages(browser, base, app, match_id) as (phone, tv):
        phone.get_by_role("button", name="I am Anna").click()
        expect(phone.get_by_text("You are Anna on this phone.")).to_be_visible()
        phone.evaluate(
            "() => { navigator.vibrate = (pattern) => {"
            " (window.buzzes ||= []).push(pattern); return true; }; }"
        )
        expect(phone.locator("#stream")).to_have_attribute("data-stream", "open")
        phone.evaluate("window.stillThisPage = true")
        enter_round(sender, match_id, ids, [5, 42, 43])  # Anna's 5 is lower than every row
        expect(phone.locator(".row-choice-live[data-chooser]")).to_be_visible()
        expect(phone.locator("#row-1")).to_be_visible()  # her row buttons
        assert phone.evaluate("window.buzzes") == [200]
        assert phone.evaluate("window.stillThisPage === true")  # pushed, not reloaded
        expect(tv.locator(".choosing")).to_contain_text("Anna")


def test_a_rounds_improbable_take_gets_its_chance_in_a_push_of_the_news_alone(
    browser, served, tmp_path
):
    """Issue 59: the luck of an open game's round shows only as the chance said in its
    summary, and the stream sends that part alone, swapped out of band into the phone's
    and the TV's live table: Ben's 17 took row 1 because the one card between (16) came,
    about a 2 % chance. The rows the round's push brought stay the same element. The
    phone and the TV at a home network's address (no secure context); the sender posts
    on loopback."""
    _server, port = served(COMPANION_TRUSTED_HOSTS=LAN_HOST, **NO_POLL)
    app = database_app(tmp_path)
    _client, ids, match_id, [sender] = joined(app, f"http://127.0.0.1:{port}", 1, FormPhone)
    with live_pages(browser, f"http://{LAN_HOST}:{port}", app, match_id) as (phone, tv):
        assert phone.evaluate("isSecureContext") is False
        for cards in ([13, 25, 41], [14, 26, 42], [15, 27, 43]):  # no row taken
            enter_round(sender, match_id, ids, cards)
            for page in (phone, tv):
                expect(shows_step(page, "Cleo", cards[2])).to_be_visible()
        enter_round(sender, match_id, ids, [16, 17, 44])
        for page in (phone, tv):
            expect(shows_step(page, "Ben", 17)).to_be_visible()
            page.locator(".live-rows").evaluate("rows => rows.dataset.pushed = 'round'")
        for page in (phone, tv):
            expect(shows_step(page, "Ben", 17).locator(".summary-chance")).to_contain_text("2")
            expect(page.locator(".live-rows")).to_have_attribute("data-pushed", "round")


# An EventSource whose open event never reaches the page (as WebKit's once did: open,
# readyState 1, no open event 30 s on): handlers set with onopen are dropped.
NO_OPEN_EVENT = """
const Real = window.EventSource;
window.EventSource = class extends Real {
  set onopen(handler) {}
  get onopen() { return null; }
};
"""


def test_a_stream_whose_open_event_never_comes_is_open_at_its_first_event(
    browser, served, tmp_path
):
    _server, port = served(
        COMPANION_LIVE_HEARTBEAT="1", COMPANION_TRUSTED_HOSTS=LAN_HOST, **NO_POLL
    )
    app = database_app(tmp_path)
    # The sender posts on loopback; the phone is at a home network's address (Chromium
    # maps the name to loopback), no secure context, as phones at the table are.
    _client, ids, match_id, [sender] = joined(app, f"http://127.0.0.1:{port}", 1, FormPhone)
    context = new_phone_context(browser)
    try:
        context.add_init_script(NO_OPEN_EVENT)
        phone = context.new_page()
        phone.goto(f"http://{LAN_HOST}:{port}/matches/{match_id}/join/{tokens(app, match_id)[0]}")
        assert phone.evaluate("isSecureContext") is False
        # Its first "alive" (every second here) says it is open; pushes then come.
        expect(phone.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
        enter_round(sender, match_id, ids, [41, 42, 43])
        expect(shows_step(phone, "Cleo", 43)).to_be_visible()
    finally:
        context.close()
