"""Small in-memory caches of this process, for what one version of a match makes.

A match's version rises with every stored input and never goes back, so whatever is
computed from a version (its replay, its rendered live regions) stays true for as long
as it is kept. Every key holds what the database says (a match's version and token,
the leaderboard's fingerprint), never what this process remembers, so the processes
and servers that share one database show the same. Each app has its own database, so
each app has its own caches.

Only one thread of a process makes a missing value at a time: a table's phones ask for
a new version within moments of each other, and in one process their threads would
otherwise each replay and render it, taking turns on one interpreter lock, every one of
them as slow as all of them together. The others wait for the first and take its value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from threading import Lock
from typing import Any

from cachetools import LRUCache
from flask import current_app


class Memo:
    """A named cache of at most ``size`` values in each app; the least recently used goes
    (``cachetools.LRUCache``). What it adds is ``once``: one maker per key at a time."""

    def __init__(self, name: str, size: int):
        self.name = name
        self.size = size
        self.lock = Lock()

    def values(self) -> LRUCache:
        """This app's values."""
        values = current_app.extensions.get(f"memo.{self.name}")
        if values is None:
            values = current_app.extensions.setdefault(f"memo.{self.name}", LRUCache(self.size))
        return values

    def get(self, key: Hashable) -> Any | None:
        """The value kept for ``key``, if any (it becomes the most recently used)."""
        with self.lock:
            return self.values().get(key)

    def through(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, made by ``make()`` and kept if there is none."""
        return self.once(key, lambda: self.put(key, make()))

    def once(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, else what ``make()`` returns, made by one thread at
        a time (``making``). ``make`` keeps what it made itself, under whichever key fits."""
        value = self.get(key)
        if value is None:
            with self.making(key):
                value = self.get(key)  # made meanwhile by the thread waited for
                if value is None:
                    value = make()
        return value

    @contextmanager
    def making(self, key: Hashable) -> Iterator[None]:
        """Make ``key``'s value in here: one thread of this app at a time per key.

        A thread that comes second waits until the first is done (or failed), then
        looks again. Values made inside may come from other memos, never from this one.
        """
        with self.lock:
            makers = current_app.extensions.setdefault(f"memo.{self.name}.making", {})
            turn = makers.setdefault(key, [Lock(), 0])
            turn[1] += 1  # threads that want this key's lock
        try:
            with turn[0]:
                yield
        finally:
            with self.lock:
                turn[1] -= 1
                if not turn[1]:
                    del makers[key]

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` for ``key`` (the least recently used goes past ``size``)."""
        with self.lock:
            self.values()[key] = value
        return value
