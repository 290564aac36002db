"""A backup file's bytes as JSON, held to the limits a real backup keeps, read a value
at a time by msgspec.

Python's JSON reader recurses once per nested list or object and converts integers of
any length, so a hostile file could exhaust the stack (``RecursionError``) or the
integer conversion limit (``ValueError``) before any check runs. Both are refused here
first, with the line and column of the problem, as ``BackupError``; so are NaN and
Infinity, which JSON does not have. The scans run at C speed (``re``, ``bytes``).

Read whole, a 64 MB file of 70,000 matches is over a gigabyte of Python objects, and only
one match is needed at a time; a file of one match as large, or of one name, is as much.
So nothing is read whole: msgspec finds where each value ends without building it (a
``msgspec.Raw``; the bytes after it are its error), checking it as JSON on the way, so it
is limited and counted before any of it is built. The top-level object's lists are kept
as ``Deferred``: where each element starts and ends, read by msgspec when iterated.
msgspec reads 2.5 to 5 times faster than the standard library, which still reads what
msgspec refuses (an error, for its message and place; a lone surrogate, which it takes)
and an element where a key may come twice (msgspec keeps the last, silently).

What is read is limited before it is built: an element of a list to MAX_ENTRY bytes, any
other value to MAX_VALUE; a list to as many elements as a household may hold, the object
to MAX_FIELDS fields. So an import holds the file's bytes and one element, whatever the
file.
"""

from __future__ import annotations

import codecs
import json
import re
from array import array
from collections.abc import Iterator
from json.decoder import JSONDecodeError
from typing import Any, NamedTuple

import msgspec

from companion.backup import shapes
from companion.backup.fields import BackupError
from companion.models import MAX_MATCHES_HELD, MAX_PLAYERS_HELD
from companion.rules import N_

# A real backup nests 8 deep (file, matches, match, games, game, rounds, round,
# choices); the limit leaves room without letting the reader recurse far.
MAX_DEPTH = 32
# No number in a backup comes near this (card 104, limit 1000, version 1).
MAX_DIGITS = 15

MEBIBYTE = 1024 * 1024
# The most bytes an element of "players" or "matches" may take in the file. The largest
# match the rules allow is about 2.6 MB: 1,000 games (the most an end after a number of
# games allows; a limit of bulls comes sooner, every game of cards hands some out) of 10
# players whose names are 30 emoji, each round with its time and a row choice, and a
# correction in every game. A household's largest is far smaller: 1,000 games between
# short names are 1.1 MB, an evening's match 5 KB. (Score-only games of 0 bulls each never
# reach a limit: 4 MB are 55,000 of them.) Read, an element takes up to 37 times its
# bytes ("[[[[]]]]" again and again): 4 MB are at most 150 MB, which the import's 400 MB
# leave room for beside the file's own bytes; twice as much would not.
MAX_ENTRY = 4 * MEBIBYTE
# Any other value: a field of the file besides its lists ("format", "version" and
# "exported_at" take 80 bytes), or an element of a file that is a list (no backup).
MAX_VALUE = 64 * 1024
MAX_FIELDS = 16  # a backup's object has 5
# A file holds no more players and matches than a household may: counted as they are
# read, so the offsets of a list's elements (8 bytes each) stay few.
MAX_ENTRIES = {"players": MAX_PLAYERS_HELD, "matches": MAX_MATCHES_HELD}
MAX_OTHER_ENTRIES = 1000  # a list of any other field (refused after) or a list file
# Where msgspec refuses a value, the standard library reads it from a stretch of the
# value's limit and MARGIN characters: an error in the last of them may be the cut's.
MARGIN = 32
BLOCK = MEBIBYTE  # bytes counted or checked as UTF-8 at once

# Strings are skipped whole: brackets and digits inside a name are text, not structure.
# Possessive (*+): the reader keeps no way back into a string, which for one of a million
# escapes took 20 bytes each (a 64 MB name of escaped emoji, 1.4 GB).
IN_STRING = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
BRACKET = re.compile(IN_STRING + rb"|[\[{]|[\]}]")
LONG_NUMBER = re.compile(IN_STRING + rb"|-?\d{%d,}" % (MAX_DIGITS + 1))
CONSTANT = re.compile(IN_STRING + rb"|NaN|-?Infinity")
DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"0" * 9)
SCAN_BLOCK = MEBIBYTE  # bytes of the file translated at a time (has_long_digits)
# A byte that continues a character (UTF-8: 10xxxxxx), and every other byte.
NOT_CONTINUATION = bytes(byte for byte in range(256) if not 0x80 <= byte < 0xC0)
BOM = b"\xef\xbb\xbf"  # the byte order mark: not part of the text
BLANKS = re.compile(rb"[ \t\n\r]*")  # JSON's whitespace
TRAILING = re.compile(r"trailing characters \(byte (\d+)\)$")  # msgspec's error
SKIP = msgspec.json.Decoder(msgspec.Raw)  # a value's end found, nothing of it built
DECODE = msgspec.json.Decoder().decode
ENCODE = msgspec.json.Encoder().encode
# What msgspec refuses and the standard library reads, made readable by msgspec for a look
# at the shape alone: a lone surrogate (\ud800) becomes a space, 1e999 becomes 1e0.
SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
OUT_OF_RANGE = re.compile(rb"[eE]\+?[0-9]{3,}")
# The lists of the top-level object whose elements have a shape (``shapes``), by key.
SHAPED = {"players": "player", "matches": "match"}


class Limit(NamedTuple):
    """At most ``most`` (elements, or bytes), else ``problem``, which says ``shown``."""

    problem: str
    shown: int | str
    most: int

    def refused(self, raw: bytes, offset: int, **params: Any) -> BackupError:
        """The refusal of what starts at ``offset``, with its place."""
        return refusal(self.problem, *place(raw, offset), limit=self.shown, **params)


ENTRY_LIMIT = Limit(
    N_("an entry of “%(key)s” is larger than %(limit)d MB."), MAX_ENTRY // MEBIBYTE, MAX_ENTRY
)
VALUE_LIMIT = Limit(N_("a value is larger than %(limit)d KB."), MAX_VALUE // 1024, MAX_VALUE)
FIELDS_LIMIT = Limit(N_("the file has more than %(limit)d fields."), MAX_FIELDS, MAX_FIELDS)
LIST_LIMIT = Limit(
    N_("a list has more than %(limit)s entries."), f"{MAX_OTHER_ENTRIES:,}", MAX_OTHER_ENTRIES
)
TOO_MANY_ENTRIES = N_("“%(key)s” has more than %(limit)s entries.")


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
    """Parse the file as JSON; refuse deep nesting, long numbers, NaN and what is too large
    or too many with the place.

    The top-level object's lists are ``Deferred``: checked, not built.
    """
    if not raw.isascii():
        check_text(raw)  # UnicodeDecodeError: the caller says "not UTF-8"
    # A run of digits this long is rare even inside texts: only then look closer.
    if has_long_digits(raw) and (offset := first(LONG_NUMBER, raw)) is not None:
        line, column = place(raw, offset)
        raise refusal(
            N_("a number has more than %(limit)d digits."), line, column, limit=MAX_DIGITS
        )
    try:
        return decode(raw)
    except RecursionError:  # msgspec's, and the standard library's: a thousand deep
        raise too_deep(raw, deepest_at(raw)) from None
    except NotANumber:
        line, column = place(raw, first(CONSTANT, raw))
        raise refusal(N_("NaN and Infinity are not numbers in JSON."), line, column) from None
    except DuplicateKey as duplicate:
        raise twice(duplicate) from None


def too_deep(raw: bytes, offset: int | None) -> BackupError:
    """The refusal of lists and objects nested deeper than MAX_DEPTH at ``offset``."""
    line, column = place(raw, offset)
    return refusal(
        N_("lists and objects nest more than %(limit)d deep."), line, column, limit=MAX_DEPTH
    )


def check_text(raw: bytes) -> None:
    """Raise UnicodeDecodeError unless ``raw`` is UTF-8, a block at a time: the file as one
    text would take up to four times its size (a character of 4 bytes makes every one 4)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    for start in range(0, len(raw), BLOCK):
        decoder.decode(view[start : start + BLOCK])
    decoder.decode(b"", final=True)


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
    a tenth of the time of the same search as a regular expression. A block at a time
    (each reaching MAX_DIGITS bytes into the next, so no run is cut): a copy of the whole
    file translated would take as much memory as the file again.
    """
    run = b"0" * (MAX_DIGITS + 1)
    return any(
        run in raw[start : start + SCAN_BLOCK + MAX_DIGITS].translate(DIGITS_AS_ZEROS)
        for start in range(0, len(raw), SCAN_BLOCK)
    )


def deepest_at(raw: bytes, start: int = 0, end: int | None = None) -> int | None:
    """Where the nesting of ``raw[start:end]`` first passes MAX_DEPTH: a Python loop, up
    to there, run on a value of at most MAX_VALUE bytes, or on the file where msgspec
    found it a thousand deep."""
    depth = 0
    for found in BRACKET.finditer(raw, start, len(raw) if end is None else end):
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


# Reads what msgspec refuses, as ``json.loads`` would (``Reader.scan``, ``element``).
STANDARD = json.JSONDecoder(parse_constant=not_a_number, object_pairs_hook=unique_keys)


class Placed(JSONDecodeError):
    """A JSON error where ``json.loads`` of the whole text puts it: same message, same
    character offset, line and column (the text itself is never made)."""

    def __init__(self, msg: str, raw: bytes, offset: int) -> None:
        line, column = place(raw, offset)
        start = len(BOM) if raw.startswith(BOM) else 0
        pos = characters(raw, start, offset)
        ValueError.__init__(self, f"{msg}: line {line} column {column} (char {pos})")
        self.msg, self.doc, self.pos, self.lineno, self.colno = msg, "", pos, line, column


def blank(raw: bytes, offset: int) -> int:
    """The offset of the first byte from ``offset`` on that is no JSON whitespace."""
    return BLANKS.match(raw, offset).end()


def duplicate_free(raw: bytes, start: int, end: int, value: Any) -> bool:
    """True when msgspec's ``value`` of ``raw[start:end]`` dropped no pair of an object.

    msgspec keeps the last of two equal keys and has no hook to see them. Outside strings
    a ":" follows each key, and msgspec writes one after each key of what it read, and
    every ":" of a string as it is: the same count of ":" unless a pair was dropped. An
    escaped ":" (\\u003a) counts once written, not read: the standard library decides.
    """
    if raw.find(b"\\u003", start, end) != -1:
        return False
    return raw.count(b":", start, end) == ENCODE(value).count(b":")


class Deferred:
    """A list of the file still in its bytes: its elements are read when iterated."""

    def __init__(
        self, raw: bytes, bounds: array, params: dict[str, Any], kind: str | None = None
    ) -> None:
        # Where each element starts and where what follows it starts: byte offsets; the
        # elements' kind of object (``shapes``), if they have one.
        self.raw, self.bounds, self.params, self.kind = raw, bounds, params, kind

    def __len__(self) -> int:
        return len(self.bounds) // 2

    def __iter__(self) -> Iterator[Any]:
        """Each element, read from its own bytes (already known to be JSON); a key twice
        in one is refused as it is read."""
        raw, bounds, kind = self.raw, self.bounds, self.kind
        for index in range(0, len(bounds), 2):
            try:
                yield element(raw, bounds[index], bounds[index + 1], kind)
            except DuplicateKey as duplicate:
                raise twice(duplicate) from None


def element(raw: bytes, start: int, end: int, kind: str | None = None) -> Any:
    """The value of ``raw[start:end]`` (known to be JSON), read by msgspec as an object of
    ``kind`` (``shapes``; a wrong shape is refused as it is read, with its place), or by
    the standard library where msgspec refuses what it takes (a lone surrogate "\\ud800",
    1e999) or where a key may come twice (raises DuplicateKey) or an unknown field was
    skipped: then msgspec looks at the shape first, every field known, so that nothing is
    built of a wrong one. A value without a shape (at most MAX_VALUE bytes) is refused
    nested deeper than MAX_DEPTH; a shape nests less deep."""
    if kind is None and (deep := deepest_at(raw, start, end)) is not None:
        raise too_deep(raw, deep)
    try:
        value = (
            shapes.READ[kind](memoryview(raw)[start:end])
            if kind
            else DECODE(memoryview(raw)[start:end])
        )
        if duplicate_free(raw, start, end, value):
            return value
    except msgspec.ValidationError as error:
        if kind and not str(error).startswith("Number out of range"):
            raise shapes.refusal(error, kind) from None
    except msgspec.DecodeError:
        pass
    if kind:
        readable = OUT_OF_RANGE.sub(b"e0", SURROGATE.sub(rb"\\u0020", raw[start:end]))
        try:
            shapes.EXACT[kind](readable)
        except msgspec.ValidationError as error:
            raise shapes.refusal(error, kind) from None
    return STANDARD.decode(raw[start:end].decode("utf-8"))


def skipped(start: int, error: str) -> int | None:
    """Where what follows a value at ``start`` starts, from msgspec's error for the bytes
    that follow it ("trailing characters (byte N)": N is past the first of them); None
    when the value itself is refused."""
    found = TRAILING.search(error)
    return start + int(found[1]) - 1 if found else None


def twice(duplicate: DuplicateKey) -> BackupError:
    """The refusal of an object with the same key twice."""
    return BackupError(
        N_("This is not a backup of the companion: an object has the key “%(key)s” twice."),
        key=duplicate.key[:50],
    )


def decode(raw: bytes) -> Any:
    """The file's value (``raw`` is UTF-8 and nests at most MAX_DEPTH deep), each part of
    it limited, and the top-level object's lists Deferred.

    A top-level list is Deferred too (no backup; each element at most MAX_VALUE, at most
    MAX_OTHER_ENTRIES of them), and a top-level value of another kind is read whole.
    """
    reader = Reader(raw)
    start = blank(raw, len(BOM) if raw.startswith(BOM) else 0)
    opening = raw[start : start + 1]
    if opening == b"{":
        data, end = reader.object(start)
    elif opening == b"[":
        data, end = reader.entries(start, LIST_LIMIT, VALUE_LIMIT, {})
    else:
        data, end = reader.value(start, VALUE_LIMIT)
    end = blank(raw, end)
    if end != len(raw):
        raise Placed("Extra data", raw, end)
    return data


class Reader:
    """The file read value by value: msgspec finds where each value ends without building
    it (``skip``), so it is limited, and counted, before it is read.

    The top-level object's punctuation is read here, with the standard library's messages;
    where msgspec refuses a value, the standard library reads it (``scan``), so an error
    has the message and place ``json.loads`` gives it. No value is made larger than its
    limit allows, and the file is never made a text.
    """

    def __init__(self, raw: bytes) -> None:
        self.raw, self.view = raw, memoryview(raw)

    def skip(self, start: int, limit: Limit, params: dict[str, Any]) -> int:
        """Where what follows the value at ``start`` starts (a byte offset): the value
        checked as JSON, at most ``limit.most`` bytes, and nothing of it built."""
        raw = self.raw
        try:
            SKIP.decode(self.view[start:])
            end = len(raw)
        except msgspec.DecodeError as error:
            end = skipped(start, str(error))
        if end is None:  # refused by msgspec, maybe past the limit
            return self.scan(start, limit, params)[1]
        # Past the limit, unless what is past it is the blanks after the value.
        if end - start > limit.most and blank(raw, start + limit.most) < end:
            raise limit.refused(raw, start, **params)
        return end

    def scan(self, start: int, limit: Limit, params: dict[str, Any]) -> tuple[Any, int]:
        """The value at ``start`` read by the standard library, and where what follows it
        starts: from a stretch of the file as long as the limit (and a few characters),
        which it must end in."""
        raw = self.raw
        stop = min(start + limit.most + MARGIN, len(raw))
        while stop < len(raw) and 0x80 <= raw[stop] < 0xC0:
            stop -= 1  # not inside a character
        text = raw[start:stop].decode("utf-8")
        cut = stop < len(raw)

        def byte(index: int) -> int:
            return start + len(text[:index].encode("utf-8"))

        try:
            value, end = STANDARD.scan_once(text, 0)
        except StopIteration as stopped:  # where no value starts, maybe deep inside
            if cut and stopped.value > len(text) - MARGIN:
                raise limit.refused(raw, start, **params) from None
            raise Placed("Expecting value", raw, byte(stopped.value)) from None
        except JSONDecodeError as error:
            unterminated = error.msg.startswith("Unterminated string")
            if cut and (unterminated or error.pos > len(text) - MARGIN):
                raise limit.refused(raw, start, **params) from None
            raise Placed(error.msg, raw, byte(error.pos)) from None
        end = byte(end)
        if end - start > limit.most:
            raise limit.refused(raw, start, **params)
        return value, end

    def value(self, start: int, limit: Limit) -> tuple[Any, int]:
        """The value at ``start`` and where what follows it starts: at most ``limit``."""
        end = self.skip(start, limit, {})
        return element(self.raw, start, end), end

    def object(self, start: int) -> tuple[dict, int]:
        """The top-level object at ``start``: its lists Deferred, its other values read."""
        raw, pairs = self.raw, []
        at = blank(raw, start + 1)
        if raw[at : at + 1] == b"}":
            return {}, at + 1
        while True:
            if raw[at : at + 1] != b'"':
                raise Placed("Expecting property name enclosed in double quotes", raw, at)
            key, at = self.value(at, VALUE_LIMIT)
            at = blank(raw, at)
            if raw[at : at + 1] != b":":
                raise Placed("Expecting ':' delimiter", raw, at)
            at = blank(raw, at + 1)
            if len(pairs) == MAX_FIELDS:
                raise FIELDS_LIMIT.refused(raw, at)
            if raw[at : at + 1] == b"[":
                count = MAX_ENTRIES.get(key, MAX_OTHER_ENTRIES)
                most = Limit(TOO_MANY_ENTRIES, f"{count:,}", count)
                params = {"key": key[:50]}
                value, at = self.entries(at, most, ENTRY_LIMIT, params, SHAPED.get(key))
            else:
                value, at = self.value(at, VALUE_LIMIT)
            pairs.append((key, value))
            at = blank(raw, at)
            if raw[at : at + 1] == b"}":
                return unique_keys(pairs), at + 1
            if raw[at : at + 1] != b",":
                raise Placed("Expecting ',' delimiter", raw, at)
            at = blank(raw, at + 1)

    def entries(
        self,
        start: int,
        most: Limit,
        largest: Limit,
        params: dict[str, Any],
        kind: str | None = None,
    ) -> tuple[Deferred, int]:
        """The list at ``start``, checked and counted element by element, none of them
        built: at most ``most.most`` elements of ``largest.most`` bytes (objects of
        ``kind``, if given)."""
        raw, bounds = self.raw, array("q")
        at = blank(raw, start + 1)
        if raw[at : at + 1] == b"]":
            return Deferred(raw, bounds, params, kind), at + 1
        while True:
            end = self.skip(at, largest, params)
            if len(bounds) == 2 * most.most:
                raise most.refused(raw, at, **params)
            bounds.extend((at, end))
            at = blank(raw, end)
            if raw[at : at + 1] == b"]":
                return Deferred(raw, bounds, params, kind), at + 1
            if raw[at : at + 1] != b",":
                raise Placed("Expecting ',' delimiter", raw, at)
            at = blank(raw, at + 1)
