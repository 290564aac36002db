"""One client address's requests in line, a few at a time (issue 42: 8,300 streams from
one address kept a bystander's page waiting behind them): another address's request
goes through meanwhile, nothing is refused, and an open stream holds no slot."""

from __future__ import annotations

import threading

import pytest

from companion.web.by_address import ByAddress

WAIT = 10  # seconds: a bound on each wait, never reached when the test passes


class HeldApp:
    """A WSGI app whose requests from FLOOD stay in until ``let_go``; each says when it
    is in."""

    def __init__(self) -> None:
        self.let_go = threading.Event()
        self.inside: list[str] = []
        self.entered = threading.Semaphore(0)

    def __call__(self, environ, start_response):
        self.inside.append(environ["REMOTE_ADDR"])
        self.entered.release()
        if environ["REMOTE_ADDR"] == "10.0.0.66":
            assert self.let_go.wait(WAIT)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]


def request(app, address: str, answers: list) -> threading.Thread:
    def send() -> None:
        answers.append(b"".join(app({"REMOTE_ADDR": address}, lambda *args: None)))

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_one_address_waits_behind_itself_while_another_goes_through():
    held = HeldApp()
    app = ByAddress(held, limit=2)
    answers: list = []
    flood = [request(app, "10.0.0.66", answers) for _ in range(5)]
    for _ in range(2):
        assert held.entered.acquire(timeout=WAIT)
    bystander = request(app, "10.0.0.7", answers)
    bystander.join(WAIT)
    assert not bystander.is_alive() and answers == [b"ok"]  # past the flood at once
    assert held.inside.count("10.0.0.66") == 2  # the other three wait in line
    held.let_go.set()
    for thread in flood:
        thread.join(WAIT)
    assert len(answers) == 6  # every request answered: none refused
    assert held.inside.count("10.0.0.66") == 5
    assert app.slots == {}  # no address kept once its requests are done


def test_a_slot_is_given_back_before_the_body_of_a_page():
    def page(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"<p>ok</p>"]

    app = ByAddress(page, limit=1)
    body = app({"REMOTE_ADDR": "10.0.0.4"}, lambda *args: None)
    assert app.slots == {}  # before a byte of the body is sent
    assert b"".join(body) == b"<p>ok</p>"


def event_stream(sent: threading.Event):
    """An app whose streams send one event, then stay open until ``sent`` is set."""

    def stream(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/event-stream; charset=utf-8")])

        def events():
            yield b"data: 1\n\n"
            assert sent.wait(WAIT)  # open until the test ends it

        return events()

    return stream


def test_a_stream_holds_its_slot_until_its_first_chunk_is_sent_then_none():
    sent = threading.Event()
    app = ByAddress(event_stream(sent), limit=1)
    open_stream = iter(app({"REMOTE_ADDR": "10.0.0.5"}, lambda *args: None))
    assert next(open_stream) == b"data: 1\n\n"
    slot, _users = app.slots["10.0.0.5"]
    assert not slot.acquire(blocking=False)  # being sent: the stream holds the slot
    waiting = threading.Thread(target=lambda: next(open_stream, None), daemon=True)
    waiting.start()  # the server asks for the next chunk: the first was sent
    second = app({"REMOTE_ADDR": "10.0.0.5"}, lambda *args: None)  # would wait if held
    assert next(iter(second)) == b"data: 1\n\n"
    sent.set()
    waiting.join(WAIT)
    second.close()
    assert app.slots == {}


def test_a_stream_closed_before_its_first_chunk_gives_its_slot_back():
    app = ByAddress(event_stream(threading.Event()), limit=1)
    for _ in range(2):  # the second would wait for good if the first kept its slot
        app({"REMOTE_ADDR": "10.0.0.6"}, lambda *args: None).close()
    assert app.slots == {}


def test_a_request_that_fails_gives_its_slot_back():
    def broken(environ, start_response):
        raise RuntimeError("the app failed")

    app = ByAddress(broken, limit=1)
    for _ in range(2):  # the second would wait for good if the first kept its slot
        with pytest.raises(RuntimeError):
            app({"REMOTE_ADDR": "10.0.0.9"}, lambda *args: None)
    assert app.slots == {}


def test_the_app_puts_every_request_in_line_by_address(app):
    assert isinstance(app.wsgi_app, ByAddress)
    assert app.wsgi_app.limit == app.config["REQUESTS_PER_ADDRESS"] == 4
    assert app.test_client().get("/").status_code == 200
