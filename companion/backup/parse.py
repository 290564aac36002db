"""A backup file's bytes as JSON, held to the limits a real backup keeps, read a stretch
at a time.

Python's JSON reader recurses once per nested list or object and converts integers of
any length, so a hostile file could exhaust the stack (``RecursionError``) or the
integer conversion limit (``ValueError``) before any check runs. Both are refused here
first, with the line and column of the problem, as ``BackupError``; so are NaN and
Infinity, which JSON does not have. The scans run at C speed (``re``, ``bytes``).

Read whole, a 64 MB file of 70,000 matches is over a gigabyte of Python objects, and only
one match is needed at a time; a file of one match as large, or of one name, is as much,
and the file's text alone takes up to four times its bytes (one emoji makes every
character take four). So the text is never made whole: a stretch of it at a time
(``Reader``) is read by the standard library's own pieces (its C scanner, ``JSONObject``
and ``JSONArray``, behind a few characters that put them where they were), which check it
as ``json.loads`` would: same messages, same places. Each element of the top-level
object's lists is checked and dropped: the list is kept as a ``Deferred``, where each
element starts in the file's bytes, read again when iterated. Twice the reading of the
matches, a fraction of the memory.

What is read is limited as it is read: an element of a list to MAX_ENTRY bytes, any other
value to MAX_VALUE, refused once that much of it is read and before more of it is built;
a list to as many elements as a household may hold, the object to MAX_FIELDS fields. So an
import holds the file's bytes, a stretch of its text and one element, whatever the file.
"""

from __future__ import annotations

import codecs
import json
import re
from array import array
from collections.abc import Callable, Iterator
from json.decoder import JSONArray, JSONDecodeError, JSONObject
from typing import Any, NamedTuple

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
# The text is made a stretch of WINDOW bytes at a time: a few thousand matches, at most
# 4 MB of text; an element that goes on past a stretch's last MARGIN characters is read
# again in the next (a number's last digits, "true" cut short).
WINDOW = MEBIBYTE
MARGIN = 32
BLOCK = MEBIBYTE  # bytes counted or checked as UTF-8 at once

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
SCAN_BLOCK = MEBIBYTE  # bytes of the file translated at a time (has_long_digits)
# A byte that continues a character (UTF-8: 10xxxxxx), and every other byte.
NOT_CONTINUATION = bytes(byte for byte in range(256) if not 0x80 <= byte < 0xC0)
BOM = b"\xef\xbb\xbf"  # the byte order mark: not part of the text
BLANKS = re.compile(rb"[ \t\n\r]*")  # JSON's whitespace


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
        decoder = json.JSONDecoder(parse_constant=not_a_number, object_pairs_hook=unique_keys)
        return decode_lazily(raw, decoder)
    except NotANumber:
        line, column = place(raw, first(CONSTANT, raw))
        raise refusal(N_("NaN and Infinity are not numbers in JSON."), line, column) from None
    except DuplicateKey as duplicate:
        raise BackupError(
            N_("This is not a backup of the companion: an object has the key “%(key)s” twice."),
            key=duplicate.key[:50],
        ) from None


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


class Placed(JSONDecodeError):
    """A JSON error where ``json.loads`` of the whole text puts it: same message, same
    character offset, line and column (the text itself is never made)."""

    def __init__(self, msg: str, raw: bytes, offset: int) -> None:
        line, column = place(raw, offset)
        start = len(BOM) if raw.startswith(BOM) else 0
        pos = characters(raw, start, offset)
        ValueError.__init__(self, f"{msg}: line {line} column {column} (char {pos})")
        self.msg, self.doc, self.pos, self.lineno, self.colno = msg, "", pos, line, column


class Cut(Exception):
    """The stretch read ends in an element that starts at this index: read on from it."""


class Read(Exception):
    """A value of the top-level object is read (its end, a byte offset): go on from it."""


class LastKey(dict):
    """``JSONObject``'s memo of keys, keeping only the last key read: the one whose value
    the scanner is asked for next."""

    last = ""

    def setdefault(self, key: str, default: Any = None) -> str:
        self.last = key
        return key


class Stretch:
    """A stretch of the file as text, behind a few characters that put the standard
    library's reader in the state it had there (in a list after a comma, say): it reads
    on as it would in the whole text, and its places are the file's (``byte``)."""

    def __init__(self, raw: bytes, head: str, anchor: int, start: int, size: int) -> None:
        stop = min(start + size, len(raw))
        while stop < len(raw) and 0x80 <= raw[stop] < 0xC0:
            stop -= 1  # not inside a character
        window = raw[start:stop]
        self.text = head + window.decode("utf-8")
        self.ends_file = stop == len(raw)
        self.raw, self.head, self.anchor, self.start = raw, len(head), anchor, start
        self.ascii = window.isascii()
        self.char, self.byte_at = self.head, start  # the last offset asked, for the next

    def byte(self, index: int) -> int:
        """The byte offset in the file of the text's character ``index``; the head's
        characters stand for ``anchor`` (the "[" or "," they stand in for)."""
        if index < self.head:
            return self.anchor
        if self.ascii:
            return self.start + index - self.head
        if index < self.char:
            self.char, self.byte_at = self.head, self.start
        self.byte_at += len(self.text[self.char : index].encode("utf-8"))
        self.char = index
        return self.byte_at

    def short(self, index: int) -> bool:
        """True when what ends or fails at ``index`` may go on past the stretch."""
        return not self.ends_file and index > len(self.text) - MARGIN

    def cut(self, error: JSONDecodeError) -> bool:
        """True when ``error`` may be the stretch's end, not the file's."""
        unterminated = error.msg.startswith("Unterminated string")
        return not self.ends_file and (unterminated or error.pos > len(self.text) - MARGIN)

    def placed(self, error: JSONDecodeError) -> Placed:
        """The error where it is in the file."""
        return Placed(error.msg, self.raw, self.byte(error.pos))


def blank(raw: bytes, offset: int) -> int:
    """The offset of the first byte from ``offset`` on that is no JSON whitespace."""
    return BLANKS.match(raw, offset).end()


def decode_lazily(raw: bytes, decoder: json.JSONDecoder) -> Any:
    """``decoder.decode`` of the file's text, but a stretch at a time, each limited, and the
    top-level object's lists are Deferred.

    A top-level list is Deferred too (no backup; each element at most MAX_VALUE, at most
    MAX_OTHER_ENTRIES of them), and a top-level value of another kind is read whole.
    """
    reader = Reader(raw, decoder)
    start = blank(raw, len(BOM) if raw.startswith(BOM) else 0)
    opening = raw[start : start + 1]
    if opening == b"{":
        data, end = reader.object(start)
    elif opening == b"[":
        data, end = reader.entries(start, LIST_LIMIT, VALUE_LIMIT)
    else:
        data, end = reader.value(start)
    end = blank(raw, end)
    if end != len(raw):
        raise Placed("Extra data", raw, end)
    return data


class Reader:
    """The file read a stretch at a time by the standard library's own pieces: the
    top-level object by ``JSONObject``, a list by ``JSONArray``, every element by the C
    scanner, which builds it (and checks it as ``json.loads`` would: same messages, same
    places) only as far as the stretch goes.

    A stretch is WINDOW bytes. An element that the stretch cuts short is read again from
    its start, in a stretch twice as long each time it is cut short again, up to its
    limit: an element larger is refused before more of it is built. So no element takes
    more memory than its limit allows, and neither does the text: only a stretch of it is
    ever made.
    """

    def __init__(self, raw: bytes, decoder: json.JSONDecoder) -> None:
        self.raw, self.decoder, self.scan = raw, decoder, decoder.scan_once

    def value(self, start: int) -> tuple[Any, int]:
        """The value at ``start`` (a byte offset, not a blank) and the offset after it: at
        most MAX_VALUE bytes."""
        largest = VALUE_LIMIT.most + 4 * MARGIN
        size = min(WINDOW, largest)
        while True:
            stretch = Stretch(self.raw, "", start, start, size)
            try:
                value, end = self.scan(stretch.text, 0)
                if not stretch.short(end):
                    return value, stretch.byte(end)
            except StopIteration as stop:  # where no value starts, maybe deep inside
                if not stretch.short(stop.value):
                    raise Placed("Expecting value", self.raw, stretch.byte(stop.value)) from None
            except JSONDecodeError as error:
                if not stretch.cut(error):
                    raise stretch.placed(error) from None
            if size == largest:
                raise VALUE_LIMIT.refused(self.raw, start)
            size = min(2 * size, largest)

    def object(self, start: int) -> tuple[Any, int]:
        """The top-level object at ``start``: its lists Deferred, its other values read.

        A stretch is read by ``JSONObject`` behind "{" (the object's start) or '{"":0'
        (after a field's value) up to the next value, which is read from the file's bytes
        (``entries`` or ``value``): the next stretch starts after it.
        """
        raw, pairs, keys = self.raw, [], LastKey()
        head, after = "{", blank(raw, start + 1)
        largest = VALUE_LIMIT.most + 4 * MARGIN
        size = min(WINDOW, largest)

        def field(text: str, at: int) -> tuple[Any, int]:
            """A field's value, read from the file; then the next stretch."""
            if at == 4 and head != "{":
                return None, 5  # the 0 of '{"":0'
            value_at = blank(raw, stretch.byte(at))
            if len(pairs) == MAX_FIELDS:
                raise FIELDS_LIMIT.refused(raw, value_at)
            key = keys.last
            if raw[value_at : value_at + 1] == b"[":
                count = MAX_ENTRIES.get(key, MAX_OTHER_ENTRIES)
                most = Limit(TOO_MANY_ENTRIES, f"{count:,}", count)
                value, end = self.entries(value_at, most, ENTRY_LIMIT, key=key[:50])
            else:
                value, end = self.value(value_at)
            pairs.append((key, value))
            raise Read(end)

        while True:
            stretch = Stretch(raw, head, start, after, size)
            try:
                strict = self.decoder.strict
                end = JSONObject((stretch.text, 1), strict, field, None, ignore, keys)[1]
                break
            except Read as read:
                head, after, size = '{"":0', blank(raw, read.args[0]), min(WINDOW, largest)
                continue
            except Placed:
                raise
            except JSONDecodeError as error:
                if not stretch.cut(error):
                    raise stretch.placed(error) from None
            if size == largest:  # a field's name (or the blanks around it) that long
                name = blank(raw, after + 1) if raw[after : after + 1] == b"," else after
                raise VALUE_LIMIT.refused(raw, name)
            size = min(2 * size, largest)
        hook = self.decoder.object_pairs_hook
        return (hook(pairs) if hook else dict(pairs)), stretch.byte(end)

    def entries(
        self, start: int, most: Limit, largest: Limit, **params: Any
    ) -> tuple[Deferred, int]:
        """The list at ``start``, checked and counted element by element, none of them
        kept: at most ``most.most`` elements of ``largest.most`` bytes.

        A stretch is read by ``JSONArray`` behind "[" (at the list's first element),
        "[0," (at an element after a comma, which the "," stands for) or "[0" (after an
        element).
        """
        raw = self.raw
        elements = Elements(raw, self.scan, most, params)
        state = ("[", start, blank(raw, start + 1))  # head, what the head stands for, start
        size, cap = WINDOW, largest.most + 4 * MARGIN
        while True:
            head, anchor, after = state
            stretch = elements.stretch = Stretch(raw, head, anchor, after, size)
            elements.done = 2 if head == "[0" else None
            try:
                end = JSONArray((stretch.text, 1), elements)[1]
                break
            except Cut as cut:
                at = cut.args[0]
                before = len(stretch.text[:at].rstrip(" \t\n\r")) - 1  # its "[" or ","
                if before >= stretch.head:  # else the head's "[" or ",": the same again
                    head, anchor = "[0,", stretch.byte(before)
                resumed = (head, anchor, blank(raw, stretch.byte(at)))
            except Placed:
                raise
            except JSONDecodeError as error:
                if not stretch.cut(error) or elements.done is None:
                    raise stretch.placed(error) from None
                resumed = ("[0", anchor, blank(raw, stretch.byte(elements.done)))
            if resumed != state:
                state, size = resumed, WINDOW
            elif size < cap:
                size = min(2 * size, cap)
            else:
                raise largest.refused(raw, resumed[2], **params)
        elements.starts.append(stretch.byte(end - 1))  # the "]"
        return Deferred(raw, elements.starts, self.scan), stretch.byte(end)


class Elements:
    """``JSONArray``'s scanner in ``Reader.entries``: each element of the list checked by
    the C scanner and counted, where it starts noted, the rest of it dropped."""

    def __init__(self, raw: bytes, scan: Scan, most: Limit, params: dict[str, Any]) -> None:
        self.raw, self.scan, self.most, self.params = raw, scan, most, params
        self.starts = array("q")  # where each element starts: byte offsets
        self.stretch: Stretch  # the stretch being read (``entries`` sets it)
        self.done: int | None = None  # the offset after the last element read in it

    def __call__(self, text: str, at: int) -> tuple[None, int]:
        """An element checked and counted, its start noted; the rest of it dropped."""
        stretch = self.stretch
        if at == 1 and stretch.head > 1:
            return None, 2  # the 0 of "[0" or "[0,"
        if stretch.short(at):
            raise Cut(at)
        try:
            _, end = self.scan(text, at)
        except StopIteration as stop:  # where no value starts, maybe deep inside
            if stretch.short(stop.value):
                raise Cut(at) from None
            raise
        except JSONDecodeError as error:
            if stretch.cut(error):
                raise Cut(at) from None
            raise stretch.placed(error) from None
        if stretch.short(end):
            raise Cut(at)
        element = stretch.byte(at)
        if len(self.starts) == self.most.most:
            raise self.most.refused(self.raw, element, **self.params)
        self.starts.append(element)
        self.done = end
        return None, end


def ignore(pairs: list) -> None:
    """``JSONObject``'s pairs hook: the pairs are collected by the value hook."""
