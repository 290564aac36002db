"""A few requests of one client address worked on at once, the rest of its requests in
line: one address opening thousands of event streams (issue 42's attack run: 8,300) then
waits behind itself, and another phone's page is served between them.

WSGI middleware around the app: a slot is held while the app works out the answer and
given back before the body is sent; an event stream keeps its slot until its first chunk
is sent (the stream's watch, its first read and the headers are the costly part of
opening one), then gives it back, so an open stream holds none. Nothing is refused, only
kept in line. Under gevent (the server's workers) the lock and semaphores are gevent's,
so a waiting request blocks only its own greenlet. Not a rate limit (Flask-Limiter
refuses with 429 and runs inside the app, after the work it would save): no library
queues by address, so it is written here. A club behind a proxy without ProxyFix sees
one address and raises REQUESTS_PER_ADDRESS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator

STREAM = "text/event-stream"


class ByAddress:
    """At most ``limit`` requests of one client address (``REMOTE_ADDR``) in the app at
    once; an address's slots are dropped once none of its requests is in."""

    def __init__(self, app: Callable, limit: int) -> None:
        self.app, self.limit = app, limit
        self.lock = threading.Lock()
        self.slots: dict[str, tuple[threading.BoundedSemaphore, list[int]]] = {}

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        address = environ.get("REMOTE_ADDR", "")
        slot = self.enter(address)
        slot.acquire()
        streams: list[bool] = []

        def starting(status: str, headers: list, exc_info=None):
            streams.append(
                any(
                    value.startswith(STREAM)
                    for name, value in headers
                    if name.lower() == "content-type"
                )
            )
            return start_response(status, headers, exc_info)

        try:
            body = self.app(environ, starting)
        except BaseException:
            self.leave(address, slot)
            raise
        if not any(streams):
            self.leave(address, slot)
            return body
        return FirstChunk(body, lambda: self.leave(address, slot))

    def enter(self, address: str) -> threading.BoundedSemaphore:
        """The address's slots, counted as used by one more request (waiting or in)."""
        with self.lock:
            slot, users = self.slots.setdefault(
                address, (threading.BoundedSemaphore(self.limit), [0])
            )
            users[0] += 1
            return slot

    def leave(self, address: str, slot: threading.BoundedSemaphore) -> None:
        """A request's slot given back; the address's slots go with its last."""
        slot.release()
        with self.lock:
            _slot, users = self.slots[address]
            users[0] -= 1
            if not users[0]:
                del self.slots[address]


class FirstChunk:
    """An event stream's body that gives its slot back once its first chunk is sent (the
    server asks for the next one then), or when it is closed before."""

    def __init__(self, body: Iterable[bytes], give_back: Callable[[], None]) -> None:
        self.body, self.chunks = body, iter(body)
        self.give_back: Callable[[], None] | None = give_back
        self.started = False  # the first chunk was handed to the server

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if self.started:
            self.release()
        self.started = True
        return next(self.chunks)

    def release(self) -> None:
        """Give the slot back, once."""
        give_back, self.give_back = self.give_back, None
        if give_back:
            give_back()

    def close(self) -> None:
        """The server is done with the body (WSGI): the slot back, the body closed."""
        self.release()
        close = getattr(self.body, "close", None)
        if close:
            close()


def init_app(app) -> None:
    """Put the app's requests in line by address (``REQUESTS_PER_ADDRESS`` at once)."""
    app.wsgi_app = ByAddress(app.wsgi_app, int(app.config["REQUESTS_PER_ADDRESS"]))
