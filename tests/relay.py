"""A TCP relay between Chromium and the server that a test can silence, as a sleeping
access point or a half-dead NAT does: the event streams open through it stay open and
pass nothing more, in either direction; new connections pass as before. Or cut, as a
Wi-Fi that drops: every connection closes until it is restored. Playwright's
offline mode cannot do this: it does not touch a stream that is already open."""

from __future__ import annotations

import contextlib
import socket
import threading

# What an event stream's request holds. A connection that carried one carries nothing
# else: the stream never ends (Chromium may send it on a kept-alive connection).
STREAM = b"/events?"


class Pair:
    """A phone's connection and the relay's to the server."""

    def __init__(self, phone: socket.socket, server: socket.socket):
        self.phone, self.server = phone, server
        self.stream = False  # carries an event stream
        self.silent = False

    def close(self) -> None:
        """Close both ends (shut down first: a close alone would not wake a thread
        blocked reading it, and sends nothing while one is)."""
        for end in (self.phone, self.server):
            with contextlib.suppress(OSError):  # closed already
                end.shutdown(socket.SHUT_RDWR)
            end.close()


class Relay:
    """Listens on a loopback port of its own and passes each connection to ``port``."""

    def __init__(self, port: int):
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.pairs: list[Pair] = []
        self.lock = threading.Lock()
        self.down = False  # the Wi-Fi is down: every connection is dropped
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                phone, _ = self.listener.accept()
            except OSError:
                return  # closed
            if self.down:
                phone.close()
                continue
            server = socket.create_connection(("127.0.0.1", self.target))
            pair = Pair(phone, server)
            with self.lock:
                self.pairs.append(pair)
            threading.Thread(target=self.pass_on, args=(pair, phone, server), daemon=True).start()
            threading.Thread(target=self.pass_on, args=(pair, server, phone), daemon=True).start()

    def pass_on(self, pair: Pair, source: socket.socket, target: socket.socket) -> None:
        """Pass what ``source`` sends to ``target`` until either end closes; a silenced
        pair's bytes are dropped, and its sockets stay open."""
        asking = source is pair.phone
        while True:
            try:
                data = source.recv(65536)
                if not data:
                    break
                if asking and STREAM in data:
                    pair.stream = True
                if not pair.silent:
                    target.sendall(data)
            except OSError:
                break
        if not pair.silent:
            pair.close()

    def silence_streams(self) -> int:
        """Silence every event stream open now; how many there were."""
        with self.lock:
            streams = [pair for pair in self.pairs if pair.stream and not pair.silent]
        for pair in streams:
            pair.silent = True
        return len(streams)

    def cut(self) -> None:
        """The Wi-Fi drops: every connection closes, new ones close at once."""
        self.down = True
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            pair.close()

    def restore(self) -> None:
        """The Wi-Fi is back."""
        self.down = False

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            for pair in self.pairs:
                pair.close()
