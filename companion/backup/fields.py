"""Reading a backup's fields: types, dates, names and cards, and the error that says where.

``BackupError`` carries a translatable message and the places it happened (match,
game, round), outermost first, so one message tells a person where to look in the file.
Times are written as ``stamp`` writes them, and read back with ``time_of``.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, NamedTuple

from companion import rules
from companion.models import utcnow
from companion.rules import N_

Gettext = Callable[[str], str]


class Phrase(NamedTuple):
    """A translatable message standing as another's parameter (why a name is no name),
    translated with it: an import's helper process knows no page's language."""

    template: str
    params: dict


class BackupError(ValueError):
    """A file that cannot be imported: what is wrong, and where in the file."""

    def __init__(self, template: str, where: tuple = (), **params: Any) -> None:
        self.template, self.where, self.params = template, where, params
        super().__init__(self.message())

    def __reduce__(self):
        """Pickled whole (an import in a helper process raises it to the server's)."""
        return partial(BackupError, self.template, self.where, **self.params), ()

    def message(self, gettext: Gettext = str) -> str:
        """The message in the language of ``gettext``, prefixed by where it happened."""
        params = {
            key: gettext(value.template) % value.params if isinstance(value, Phrase) else value
            for key, value in self.params.items()
        }
        text = gettext(self.template) % params
        places = [gettext(template) % params for template, params in self.where]
        return ", ".join(places) + ": " + text if places else text

    def at(self, template: str, **params: Any) -> BackupError:
        """The same error, one level further out (a round inside a game, say)."""
        self.where = ((template, params), *self.where)
        self.args = (self.message(),)
        return self


def ruled(check: Callable, *args: Any, at: str | None = None, **options: Any) -> Any:
    """``check(*args, **options)`` of the rules, a RuleError of it as a BackupError in the
    rules' words (placed ``at``, if given)."""
    try:
        return check(*args, **options)
    except rules.RuleError as error:
        refused = BackupError(error.template, **error.params)
        raise (refused.at(at) if at else refused) from None


# What a field must be: one whole message per kind, so each translates as a sentence.
KINDS = {
    int: N_("“%(field)s” must be a whole number."),
    bool: N_("“%(field)s” must be true or false."),
    str: N_("“%(field)s” must be a text."),
    list: N_("“%(field)s” must be a list."),
    dict: N_("“%(field)s” must be an object."),
}


def value_of(data: dict, key: str, kind: type) -> Any:
    """``data[key]``, refused unless it is present and of ``kind``."""
    if key not in data:
        raise BackupError(N_("“%(field)s” is missing."), field=key)
    value = data[key]
    # bool is an int to Python, and an int is no bool: neither may stand for the other.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BackupError(KINDS[kind], field=key)
    if kind is str:
        try:  # a JSON string with a lone surrogate (\ud800) is no UTF-8 text
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise BackupError(
                N_("“%(field)s” holds a character that is not text."), field=key
            ) from None
    return value


def shown(value: Any, limit: int = 40) -> str:
    """A value from the file as a message quotes it: short, printable, no lone surrogates;
    a text as it is, anything else as JSON (no deeper than ``parse.MAX_DEPTH``)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return "".join(char if char.isprintable() else "\ufffd" for char in text[:limit])


def stamp(moment: datetime) -> str:
    """A stored (naive UTC) time as ISO 8601 with microseconds and a Z."""
    return moment.isoformat(timespec="microseconds") + "Z"


def stored_stamp(value: datetime | str) -> str:
    """A time as the database driver returns it, as ``stamp`` writes it. SQLite's driver
    gives the text SQLAlchemy stored ("2026-12-02 09:58:00.123456", always with its
    microseconds), taken as it is; PostgreSQL's gives a datetime."""
    if isinstance(value, str) and len(value) == 26:
        return value.replace(" ", "T") + "Z"
    return stamp(datetime.fromisoformat(value) if isinstance(value, str) else value)


def parse_stamp(text: str) -> datetime:
    """An ISO 8601 time as stored: naive UTC (a time without an offset is read as UTC)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


# The dates a backup may hold. Wider would be no use to a household, and the far ends of
# Python's range overflow when a time zone is taken off (0001-01-01T00:00:00+23:59).
EARLIEST = datetime(1900, 1, 1)
# Nothing was played in the future: the latest date is now, give or take a clock that
# runs ahead (the machine that exported it, a phone): a day.
AHEAD = timedelta(days=1)


def latest() -> datetime:
    """The latest date a backup may hold: now, and a day for a clock that runs ahead."""
    return utcnow() + AHEAD


def time_of(data: dict, key: str) -> datetime:
    """A date and time field (ISO 8601), from 1900 to 2999."""
    text = value_of(data, key, str)
    try:
        moment = parse_stamp(text)
    except ValueError:
        raise BackupError(
            N_("“%(field)s” must be a date and time like 2025-01-31T20:15:00Z."), field=key
        ) from None
    except OverflowError:
        moment = None
    last = latest()
    if moment is None or not EARLIEST <= moment <= last:
        raise BackupError(
            N_("“%(field)s” is %(value)s: dates go from %(earliest)s to %(latest)s."),
            field=key,
            value=shown(text),
            earliest=f"{EARLIEST:%Y-%m-%d}",
            latest=f"{last:%Y-%m-%d}",
        )
    return moment


def name_of(data: dict, key: str) -> str:
    """A player's name: one the rules take, spelled as they keep it (the seats name
    players as the list spells them)."""
    name = value_of(data, key, str)
    try:
        cleaned = rules.player_name(name)
    except rules.RuleError as error:  # translated with the rest, where it is shown
        raise BackupError(
            N_("“%(name)s” is not a usable name: %(reason)s"),
            name=shown(name),
            reason=Phrase(error.template, error.params),
        ) from None
    if " ".join(name.split()) != name:
        raise BackupError(
            N_("“%(name)s” has spaces at its start or end, or two in a row."), name=shown(name)
        )
    if cleaned != name:
        raise BackupError(
            N_("“%(name)s” is not in Unicode's NFKC form: write it “%(cleaned)s”."),
            name=shown(name),
            cleaned=cleaned,
        )
    return name


MODES = {"cards": "cards", "scores": "scores"}


def mode_of(data: dict, key: str) -> str:
    """A game's mode: "cards" or "scores" (ours: not the file's text, kept per game)."""
    if (mode := MODES.get(value_of(data, key, str))) is None:
        raise BackupError(N_("“mode” must be “cards” or “scores”."))
    return mode


def cards_of(values: list, deck: int) -> list[int]:
    """Cards as the file must hold them: whole numbers of the deck (not "41", not 41.0)."""
    for value in values:
        if not isinstance(value, int) or isinstance(value, bool):
            raise BackupError(
                N_("“%(value)s” is not a card: cards are whole numbers from 1 to %(deck)d."),
                value=shown(json.dumps(value), 12),
                deck=deck,
            )
        if not 1 <= value <= deck:
            raise BackupError(
                N_("There is no card %(card)d in this deck: cards go from 1 to %(deck)d."),
                card=value,
                deck=deck,
            )
    return values


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a backup is read or imported (then as before).

    Millions of lists and tuples, freed by reference counting, none in a cycle: the
    collector would walk them again and again (the JSON reader takes twice as long).
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def seat_cards(data: dict, seats: list, deck: int) -> list[int]:
    """A round's "cards" as the file must hold them: one card of the deck per seat."""
    cards = cards_of(value_of(data, "cards", list), deck)
    if len(cards) != len(seats):
        raise BackupError(
            N_("A round has one card per seat: %(expected)d cards, not %(count)d."),
            expected=len(seats),
            count=len(cards),
        )
    return cards


def seat_of(name: Any, seats: list[str]) -> int:
    """A seated player's place (1 = the first), for a row choice."""
    if name not in seats:
        raise BackupError(
            N_("A row choice for “%(name)s”, who has no seat in this match."), name=shown(name)
        )
    return seats.index(name) + 1


def row_of(row: Any, player: str | None = None) -> int:
    """A row 1-4 as the file must hold it (``player``'s row choice, if named)."""
    if isinstance(row, int) and not isinstance(row, bool) and 1 <= row <= rules.ROWS:
        return row
    value = shown(json.dumps(row), 12)
    if player is None:
        raise BackupError(N_("A row choice is %(row)s: rows are 1, 2, 3 or 4."), row=value)
    raise BackupError(
        N_("%(player)s's row choice is %(row)s: rows are 1, 2, 3 or 4."), player=player, row=value
    )
