"""A match's event stream as a phone holds it, on a raw gevent socket: thousands at once.

Not a benchmark itself: ``load.py`` gives every phone one, and holds idle ones beside.
A stream records when each change event arrived and the version it brought (the first
word of the event's id, ``companion.play.push``); a dropped stream comes back with
Last-Event-ID, as EventSource does, and the drop is counted.
"""

from __future__ import annotations

import time
import urllib.parse
from bisect import bisect_left

import gevent
from gevent import socket
from gevent.pool import Pool

from bench.serving import Browser

READ_TIMEOUT = 40  # seconds: the server sends a comment every 15 s on a quiet stream


class EventStream:
    """One phone's open stream to ``path`` on ``host`` (http://127.0.0.1:port)."""

    def __init__(self, host: str, path: str, cookie: str = "", source: str = "", retry=1.0):
        self.address = urllib.parse.urlsplit(host)
        self.source = (source, 0) if source else None  # the client address, if not the default
        self.retry = retry  # seconds before a dropped stream opens again
        self.path = path
        self.cookie = cookie
        self.last_id = ""
        self.versions: list[int] = []  # of each change event, in order of arrival
        self.arrived: list[float] = []  # time.perf_counter() of each
        self.failures: list[str] = []
        self.open_seconds: list[float] = []  # from connect to the answer's headers
        self.lines = None
        self.greenlet: gevent.Greenlet | None = None
        self.held = False  # open when stopped

    @property
    def is_open(self) -> bool:
        """Whether the stream is open now."""
        return self.lines is not None

    def open(self) -> None:
        """Connect and read the answer's headers; anything but 200 is a failure."""
        started = time.perf_counter()
        connection = socket.create_connection(
            (self.address.hostname, self.address.port), timeout=30, source_address=self.source
        )
        connection.settimeout(READ_TIMEOUT)
        headers = [f"GET {self.path} HTTP/1.0", f"Host: {self.address.netloc}"]
        headers += ["Accept: text/event-stream", "Cache-Control: no-cache"]
        if self.cookie:
            headers.append(f"Cookie: {self.cookie}")
        if self.last_id:
            headers.append(f"Last-Event-ID: {self.last_id}")
        # HTTP/1.0: the server writes the events as they come, unchunked, and closes at the end.
        connection.sendall(("\r\n".join(headers) + "\r\n\r\n").encode())
        lines = connection.makefile("rb")
        connection.close()  # the file keeps the socket open until it is closed itself
        status = lines.readline().decode()
        while lines.readline() not in (b"\r\n", b"\n", b""):
            pass
        if status.split()[1:2] != ["200"]:
            lines.close()
            raise OSError(f"stream answered {status.strip()!r}")
        self.open_seconds.append(time.perf_counter() - started)
        self.lines = lines

    def start(self) -> None:
        """Open the stream and read it in a greenlet of its own."""
        self.open()
        self.greenlet = gevent.spawn(self.run)

    def begin(self) -> None:
        """``start``, but a stream that cannot open now counts a failure and tries again."""
        try:
            self.open()
        except OSError as error:
            self.failures.append(f"stream not opened: {error!r}")
        self.greenlet = gevent.spawn(self.run)

    def run(self) -> None:
        """Read events until killed; open the stream again when it drops."""
        while True:
            try:
                if self.lines is None:
                    self.open()
                self.read()
                self.failures.append("stream ended")
            except OSError as error:
                self.failures.append(f"stream dropped: {error!r}")
            self.close()
            gevent.sleep(self.retry)  # EventSource's: push.RETRY_MS

    def read(self) -> None:
        """Record each change event as its blank line arrives, until the stream ends."""
        event_id = None
        for raw in self.lines:
            line = raw.decode().rstrip("\r\n")
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("retry: ") and line[7:].isdigit():
                self.retry = int(line[7:]) / 1000  # as EventSource takes it
            elif not line and event_id is not None:
                self.arrived.append(time.perf_counter())
                self.versions.append(int(event_id.split(" ", 1)[0]))
                self.last_id, event_id = event_id, None

    def first_arrival(self, version: int) -> float | None:
        """When the first event of ``version`` or later arrived, if one did."""
        at = bisect_left(self.versions, version)
        return self.arrived[at] if at < len(self.versions) else None

    def close(self) -> None:
        """Close the connection, if open."""
        if self.lines is not None:
            self.lines.close()
            self.lines = None

    def stop(self) -> None:
        """Stop reading and close; ``held`` says whether it was open till then."""
        if self.greenlet is not None:  # the first stop says
            self.held = self.is_open
            self.greenlet.kill()
            self.greenlet = None
        self.close()


def hold_idle_streams(matches: list[tuple[str, int, str]], count: int) -> list[EventStream]:
    """``count`` open streams of phones that joined these matches and then only watch.

    ``matches`` are (host, match id, player link token); each match's phones share one
    session cookie, got by its player link. They open 50 at a time.
    """
    per_match = -(-count // len(matches))
    streams = []
    for host, match_id, token in matches:
        joined = Browser(host).send(f"/matches/{match_id}/join/{token}")
        cookie = joined.headers["Set-Cookie"].split(";", 1)[0]
        path = f"/matches/{match_id}/events?view=match"
        streams += [EventStream(host, path, cookie) for _ in range(per_match)]
    streams = streams[:count]
    Pool(50).map(EventStream.start, streams)
    return streams


def flood(host: str, match_id: int, count: int, source: str) -> list[EventStream]:
    """``count`` streams of one match from one other client address (``source``, e.g.
    127.0.0.2: loopback answers from all of 127/8), opened 50 at a time; each opens
    again a second after the server ends it, as EventSource would."""
    path = f"/matches/{match_id}/events?view=match"
    streams = [EventStream(host, path, source=source) for _ in range(count)]
    Pool(50).map(EventStream.begin, streams)
    return streams
