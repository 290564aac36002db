"""A backup file's bytes as JSON, held to the limits a real backup keeps, its long lists
read one element at a time.

Python's JSON reader recurses once per nested list or object and converts integers of
any length, so a hostile file could exhaust the stack (``RecursionError``) or the
integer conversion limit (``ValueError``) before any check runs. Both are refused here
first, with the line and column of the problem, as ``BackupError``; so are NaN and
Infinity, which JSON does not have. The scans run at C speed (``re``, ``bytes``).

Read whole, a 64 MB file of 280,000 matches is over a gigabyte of Python objects, and only
one match is needed at a time. So each element of the top-level object's lists is read by
the standard library's own pieces (its C scanner, ``json.decoder.JSONObject`` and
``JSONArray``), which checks it as ``json.loads`` would (same messages, same places), and
dropped: the list is kept as a ``Deferred``, where each element starts in the file's bytes,
read again when iterated. Twice the reading of the matches, a fraction of the memory. The
bytes are kept, not the text: the caller holds them anyway, and a text with one emoji in a
name takes four bytes a character.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator
from json.decoder import WHITESPACE, JSONArray, JSONDecodeError, JSONObject
from typing import Any

from companion.backup.fields import BackupError
from companion.rules import N_

# A real backup nests 8 deep (file, matches, match, games, game, rounds, round,
# choices); the limit leaves room without letting the reader recurse far.
MAX_DEPTH = 32
# No number in a backup comes near this (card 104, limit 1000, version 1).
MAX_DIGITS = 15

# Strings are skipped whole: brackets and digits inside a name are text, not structure.
# Possessive (*+): the reader keeps no way back into a string, which for one of a million
# escapes took 20 bytes each (a 64 MB name of escaped emoji, 1.4 GB).
IN_STRING = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
STRING = re.compile(IN_STRING)
BRACKET = re.compile(IN_STRING + rb"|[\[{]|[\]}]")
LONG_NUMBER = re.compile(IN_STRING + rb"|-?\d{%d,}" % (MAX_DIGITS + 1))
CONSTANT = re.compile(IN_STRING + rb"|NaN|-?Infinity")
NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'[]{}"\\')
DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"0" * 9)
# A byte that continues a character (UTF-8: 10xxxxxx), and every other byte.
NOT_CONTINUATION = bytes(byte for byte in range(256) if not 0x80 <= byte < 0xC0)
BOM = b"\xef\xbb\xbf"  # the byte order mark: not part of the text
BLOCK = 1024 * 1024  # bytes counted at once


class NotANumber(ValueError):
    """NaN or Infinity: Python's reader takes them, JSON has no such thing."""


class DuplicateKey(ValueError):
    """An object with a key twice: Python's reader keeps the last, a person means one."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """An object's pairs as a dict, refused when a key comes twice (the JSON reader's
    ``object_pairs_hook``, called from its C scanner)."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return data


def load(raw: bytes) -> Any:
    """Parse the file as JSON; refuse deep nesting, long numbers and NaN with the place.

    The top-level object's lists are ``Deferred``: checked, not built.
    """
    # UnicodeDecodeError: the caller says "not UTF-8". The text is made only after the
    # scans below, which copy the file once more while they run.
    if not raw.isascii():
        raw.decode("utf-8-sig")
    if too_deep(raw):
        line, column = place(raw, deepest_at(raw))
        raise refusal(
            N_("lists and objects nest more than %(limit)d deep."), line, column, limit=MAX_DEPTH
        )
    # A run of digits this long is rare even inside texts: only then look closer.
    if has_long_digits(raw) and (offset := first(LONG_NUMBER, raw)) is not None:
        line, column = place(raw, offset)
        raise refusal(
            N_("a number has more than %(limit)d digits."), line, column, limit=MAX_DIGITS
        )
    try:
        text = raw.decode("utf-8-sig")
        decoder = json.JSONDecoder(parse_constant=not_a_number, object_pairs_hook=unique_keys)
        return decode_lazily(raw, text, decoder)
    except NotANumber:
        line, column = place(raw, first(CONSTANT, raw))
        raise refusal(N_("NaN and Infinity are not numbers in JSON."), line, column) from None
    except DuplicateKey as duplicate:
        raise BackupError(
            N_("This is not a backup of the companion: an object has the key “%(key)s” twice."),
            key=duplicate.key[:50],
        ) from None


def refusal(problem: str, line: int, column: int, **params: Any) -> BackupError:
    """The error for a file that breaks a limit, with the place."""
    error = BackupError(problem, **params)
    return error.at(
        N_("This is not a backup of the companion (line %(line)d, column %(column)d)"),
        line=line,
        column=column,
    )


def not_a_number(name: str) -> float:
    """Refuse NaN and Infinity."""
    raise NotANumber(name)


def has_long_digits(raw: bytes) -> bool:
    """True when the file has a run of more than MAX_DIGITS digits, in a text or not.

    Every digit becomes a 0 and a run of zeros is looked for: two C-speed passes,
    a tenth of the time of the same search as a regular expression.
    """
    return b"0" * (MAX_DIGITS + 1) in raw.translate(DIGITS_AS_ZEROS)


def structure(raw: bytes) -> bytes:
    """The file's brackets outside strings, in order.

    The quick way keeps only brackets, quotes and backslashes, then drops every pair
    of quotes with nothing between them: a text without brackets or escapes. When no
    quote is left, what is left is the brackets outside strings (a real backup's names
    and dates hold none). Otherwise the strings are cut out with a regular expression.
    """
    shape = raw.translate(None, NOT_STRUCTURE)
    if b"\\" not in shape:
        shape = shape.replace(b'""', b"")
        if b'"' not in shape:
            return shape
    return STRING.sub(b"", raw).translate(None, NOT_BRACKETS)


def too_deep(raw: bytes) -> bool:
    """True when lists and objects nest deeper than MAX_DEPTH (cheap: C-speed passes).

    Only the brackets outside strings are kept; each pass removes the innermost pairs,
    so a file within the limit is empty after at most MAX_DEPTH passes. Anything else
    (deeper, or brackets that do not pair) is counted bracket by bracket.
    """
    shape = structure(raw)
    for _ in range(MAX_DEPTH):
        shape, before = shape.replace(b"[]", b"").replace(b"{}", b""), len(shape)
        if not shape:
            return False
        if len(shape) == before:
            break  # brackets that do not pair: count them one by one
    return deepest_at(raw) is not None


def deepest_at(raw: bytes) -> int | None:
    """Where the nesting first passes MAX_DEPTH (only run when it does: slow)."""
    depth = 0
    for found in BRACKET.finditer(raw):
        token = found.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                return found.start()
        elif token in (b"]", b"}"):
            depth -= 1
    return None


def first(pattern: re.Pattern, raw: bytes) -> int | None:
    """Where the first match of ``pattern`` outside a string starts, if anywhere."""
    for found in pattern.finditer(raw):
        if not found.group().startswith(b'"'):
            return found.start()
    return None


def place(raw: bytes, offset: int | None) -> tuple[int, int]:
    """Line and column (1-based, in characters) of a byte offset (``raw`` is UTF-8)."""
    offset = offset or 0
    start = raw.rfind(b"\n", 0, offset) + 1
    if start == 0 and raw.startswith(BOM):
        start = min(len(BOM), offset)  # the byte order mark is no character of the text
    return raw.count(b"\n", 0, offset) + 1, characters(raw, start, offset) + 1


def characters(raw: bytes, start: int, end: int) -> int:
    """How many characters ``raw[start:end]`` holds: its bytes that start one (UTF-8), a
    block at a time."""
    count = end - start
    for block in range(start, end, BLOCK):
        count -= len(raw[block : min(block + BLOCK, end)].translate(None, NOT_CONTINUATION))
    return count


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


def decode_lazily(raw: bytes, text: str, decoder: json.JSONDecoder) -> Any:
    """``decoder.decode(text)``, but the top-level object's lists are Deferred.

    ``text`` is ``raw`` decoded (without a byte order mark). A top-level list is
    Deferred too: no backup, but it may be large.
    """
    scan, offsets = decoder.scan_once, Offsets(raw, text)

    def value(text: str, index: int) -> tuple[Any, int]:
        """A value of the top-level object: a list is only checked and counted."""
        if text.startswith("[", index):
            return deferred(text, index, scan, offsets)
        return scan(text, index)

    index = WHITESPACE.match(text, 0).end()
    if text.startswith("{", index):
        pairs = decoder.object_pairs_hook  # the top level's keys are checked as the rest
        data, end = JSONObject((text, index + 1), True, value, None, pairs, {})
    elif text.startswith("[", index):
        data, end = deferred(text, index, scan, offsets)
    else:
        data, end = decoder.raw_decode(text, index)
    end = WHITESPACE.match(text, end).end()
    if end != len(text):
        raise JSONDecodeError("Extra data", text, end)
    return data


def deferred(text: str, index: int, scan: Scan, offsets: Offsets) -> tuple[Deferred, int]:
    """The list starting at ``index`` checked element by element, none of them kept."""
    starts = array("q")

    def dropped(text: str, at: int) -> tuple[None, int]:
        _, end = scan(text, at)
        starts.append(offsets.byte(at))
        return None, end

    _, end = JSONArray((text, index + 1), dropped)
    starts.append(offsets.byte(end - 1))  # the "]"
    return Deferred(offsets.raw, starts, scan), end


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
