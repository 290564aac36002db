"""Small in-memory caches of this process, for what one version of a match makes.

A match's version rises with every stored input and never goes back, so whatever is
computed from a version (its replay, its rendered live regions) stays true for as long
as it is kept. Every key holds what the database says (a match's version and token,
the leaderboard's fingerprint), never what this process remembers, so the processes
and servers that share one database show the same. Each app has its own database, so
each app has its own caches.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Any

from flask import current_app


class Memo:
    """A named cache of at most ``size`` values in each app; the least recently used goes."""

    def __init__(self, name: str, size: int):
        self.name = name
        self.size = size
        self.lock = Lock()

    def values(self) -> OrderedDict[Hashable, Any]:
        """This app's values."""
        return current_app.extensions.setdefault(f"memo.{self.name}", OrderedDict())

    def get(self, key: Hashable) -> Any | None:
        """The value kept for ``key``, if any."""
        with self.lock:
            values = self.values()
            value = values.get(key)
            if value is not None:
                values.move_to_end(key)
            return value

    def through(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, made by ``make()`` and kept if there is none."""
        value = self.get(key)
        return self.put(key, make()) if value is None else value

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep ``value`` for ``key``; return it."""
        with self.lock:
            values = self.values()
            values[key] = value
            values.move_to_end(key)
            while len(values) > self.size:
                values.popitem(last=False)
        return value
