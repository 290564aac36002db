"""A backup's JSON with its long lists left in the file, read one element at a time.

Read whole, a 64 MB file of 280,000 matches is over a gigabyte of Python objects: each
match a dict of lists, texts and numbers. Only one match is needed at a time: it is
checked, its rows are staged, and it can go. So the lists of the top-level object (the
players and the matches) are not built here: each element is read by the JSON reader
and dropped at once, which checks that the whole file is JSON exactly as
``json.loads`` would (the same messages, the same places), and the list is kept as a
``Deferred``: where each element starts in the file's bytes. Iterating it reads the
elements again, one at a time. Twice the reading of the matches (a few seconds of a
core for 64 MB), a fraction of the memory.

The file's text is needed whole only for that first reading: the bytes are kept
instead, which the caller holds anyway, and which stay one byte per character where
the text would take four for a file with one emoji in a name.

The walk uses the standard library's own pieces: its C scanner for every value, and
``json.decoder.JSONObject`` / ``JSONArray`` for the top level, so nothing about JSON
is written again here.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator
from json.decoder import WHITESPACE, JSONArray, JSONDecodeError, JSONObject
from typing import Any

Scan = Callable[[str, int], tuple[Any, int]]


class Deferred:
    """A list of the file still in its bytes: its elements are read when iterated."""

    def __init__(self, raw: bytes, starts: array, scan: Scan) -> None:
        # Where each element starts, and (last) where the list ends: byte offsets.
        self.raw, self.starts, self.scan = raw, starts, scan

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __iter__(self) -> Iterator[Any]:
        """Each element, read from its own bytes (already known to be JSON)."""
        raw, starts, scan = self.raw, self.starts, self.scan
        for index in range(len(starts) - 1):
            yield scan(raw[starts[index] : starts[index + 1]].decode("utf-8"), 0)[0]


def loads(raw: bytes, text: str, decoder: json.JSONDecoder) -> Any:
    """``decoder.decode(text)``, but the top-level object's lists are Deferred.

    ``text`` is ``raw`` decoded (without a byte order mark). A top-level list is
    Deferred too: no backup, but it may be large.
    """
    scan, place = decoder.scan_once, Offsets(raw, text)

    def value(text: str, index: int) -> tuple[Any, int]:
        """A value of the top-level object: a list is only checked and counted."""
        if text.startswith("[", index):
            return deferred(text, index, scan, place)
        return scan(text, index)

    index = WHITESPACE.match(text, 0).end()
    if text.startswith("{", index):
        pairs = decoder.object_pairs_hook  # the top level's keys are checked as the rest
        data, end = JSONObject((text, index + 1), True, value, None, pairs, {})
    elif text.startswith("[", index):
        data, end = deferred(text, index, scan, place)
    else:
        data, end = decoder.raw_decode(text, index)
    end = WHITESPACE.match(text, end).end()
    if end != len(text):
        raise JSONDecodeError("Extra data", text, end)
    return data


def deferred(text: str, index: int, scan: Scan, place: Offsets) -> tuple[Deferred, int]:
    """The list starting at ``index`` checked element by element, none of them kept."""
    starts = array("q")

    def dropped(text: str, at: int) -> tuple[None, int]:
        _, end = scan(text, at)
        starts.append(place.byte(at))
        return None, end

    _, end = JSONArray((text, index + 1), dropped)
    starts.append(place.byte(end - 1))  # the "]"
    return Deferred(place.raw, starts, scan), end


class Offsets:
    """Byte offsets in ``raw`` of character offsets in its text, asked in order."""

    def __init__(self, raw: bytes, text: str) -> None:
        self.raw, self.text = raw, text
        self.skipped = 3 if raw.startswith(b"\xef\xbb\xbf") else 0  # a byte order mark
        self.ascii = text.isascii()
        self.char = self.byte_at = 0

    def byte(self, char: int) -> int:
        """The byte offset of character ``char`` (never before the one asked last)."""
        if self.ascii:
            return self.skipped + char
        self.byte_at += len(self.text[self.char : char].encode("utf-8"))
        self.char = char
        return self.skipped + self.byte_at
