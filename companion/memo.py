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
The waiting is cachetools' own (``cached(..., condition=...)``, cachetools 6 or later).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from threading import Condition
from typing import Any

from cachetools import Cache, LRUCache, cached
from flask import current_app


class AppValues:
    """One app's values of a memo, and the turns of their makers."""

    def __init__(self, size: int):
        self.values = LRUCache(size)
        self.lock = Condition()
        # cachetools' single flight: while a key's work runs, a second caller of that key
        # waits for it to end (or fail), then runs its own. Its cache keeps nothing (no
        # value fits in size 0): each maker keeps what it made in ``values`` itself.
        self.alone = cached(
            Cache(maxsize=0), key=lambda key, work: key, lock=self.lock, condition=self.lock
        )(lambda key, work: work())


class Memo:
    """A named cache of at most ``size`` values in each app; the least recently used goes
    (``cachetools.LRUCache``). What it adds is ``once``: one maker per key at a time."""

    def __init__(self, name: str, size: int):
        self.name = name
        self.size = size

    def kept(self) -> AppValues:
        """This app's values and turns."""
        kept = current_app.extensions.get(f"memo.{self.name}")
        if kept is None:
            kept = current_app.extensions.setdefault(f"memo.{self.name}", AppValues(self.size))
        return kept

    def values(self) -> LRUCache:
        """This app's values."""
        return self.kept().values

    def get(self, key: Hashable) -> Any | None:
        """The value kept for ``key``, if any (it becomes the most recently used)."""
        kept = self.kept()
        with kept.lock:
            return kept.values.get(key)

    def through(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, made by ``make()`` and kept if there is none."""
        return self.once(key, lambda: self.put(key, make()))

    def once(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, else what ``make()`` returns, made by one thread at
        a time (``alone``). ``make`` keeps what it made itself, under whichever key fits."""
        value = self.get(key)
        if value is None:
            value = self.alone(key, lambda: self.made(key, make))
        return value

    def made(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key`` by the thread waited for, else what ``make()`` returns."""
        value = self.get(key)
        return make() if value is None else value

    def alone(self, key: Hashable, work: Callable[[], Any]) -> Any:
        """What ``work()`` returns, run by one thread of this app at a time per key.

        A thread that comes second waits until the first is done (or failed), then runs
        its own ``work``, which looks again. Values made inside may come from other
        memos, never from this one.
        """
        return self.kept().alone(key, work)

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` for ``key`` (the least recently used goes past ``size``)."""
        kept = self.kept()
        with kept.lock:
            kept.values[key] = value
        return value
