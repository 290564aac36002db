"""A few requests of one client address worked on at once, the rest of its requests in
line: one address opening thousands of event streams (issue 42's attack run: 8,300) then
waits behind itself, and another phone's page is served between them.

WSGI middleware around the app: a slot is held while the app works out the answer (for
an event stream, until its answer starts) and given back before the body is sent, so an
open stream holds none. Nothing is refused, only kept in line. Under gevent (the
server's workers) the lock and semaphores are gevent's, so a waiting request blocks only
its own greenlet. Not a rate limit (Flask-Limiter refuses with 429 and runs inside the
app, after the work it would save): no library queues by address, so it is written here.
A club behind a proxy without ProxyFix sees one address and raises REQUESTS_PER_ADDRESS.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


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
        try:
            with slot:
                return self.app(environ, start_response)
        finally:
            self.leave(address)

    def enter(self, address: str) -> threading.BoundedSemaphore:
        """The address's slots, counted as used by one more request (waiting or in)."""
        with self.lock:
            slot, users = self.slots.setdefault(
                address, (threading.BoundedSemaphore(self.limit), [0])
            )
            users[0] += 1
            return slot

    def leave(self, address: str) -> None:
        """One request fewer; the address's slots go with its last."""
        with self.lock:
            _slot, users = self.slots[address]
            users[0] -= 1
            if not users[0]:
                del self.slots[address]


def init_app(app) -> None:
    """Put the app's requests in line by address (``REQUESTS_PER_ADDRESS`` at once)."""
    app.wsgi_app = ByAddress(app.wsgi_app, int(app.config["REQUESTS_PER_ADDRESS"]))
