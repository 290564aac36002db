"""The shape of a backup's players and matches as msgspec types: what is an object, a
list or a single value, so that msgspec refuses a wrong shape in C as it reads, before it
builds what is wrong (``[[[[]]]]`` where a game belongs: 37 times its bytes, read).

Only the shape: every single value (a card, a date, a name) may be any JSON value that is
no list or object, and ``check`` refuses a wrong one in its own words (a card "41", a row
5). The objects' fields are ``columns.FIELDS``; a game has the fields of both kinds.

Two readings of each: ``READ`` gives plain dicts and lists (``check`` walks them) and
skips an unknown field unread; ``EXACT`` refuses an unknown field (msgspec Structs with
``forbid_unknown_fields``), for an element where ``READ`` dropped a pair. A refusal says
where, from msgspec's path: ``$.games[0].rounds[3]`` becomes "game 1, round 4".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NotRequired, Required, TypedDict

import msgspec

from companion.backup.columns import FIELDS, Fields
from companion.backup.fields import KINDS, BackupError
from companion.rules import N_

# A single value: what ``check`` reads, and refuses in its own words when it is wrong.
Value = bool | int | float | str | None
LIST = list[Value]
CHOICES = dict[str, Value]
PILES = list[Value | list[Value]]  # a score: bulls, or the cards of the pile

# The fields that are no single value, by object: an object of the file (by its kind in
# FIELDS), a list of them ([kind]), or a type. A game has a cards game's and a scores game's.
CONTAINERS: dict[str, dict[str, Any]] = {
    "player": {},
    "match": {"end": "end", "seats": LIST, "games": ["game"]},
    "end": {},
    "game": {"starting": LIST, "rounds": ["round"], "corrections": ["correction"], "scores": PILES},
    "round": {"cards": LIST, "choices": CHOICES},
    "correction": {"cards": LIST, "choices": CHOICES, "dropped": ["dropped"]},
    "dropped": {},
}
# The field an object cannot be without, the first that ``check`` asks for: msgspec
# refuses an object without it at its end, so a list of {} is refused at its first.
# (A round's "at" is not: version 1 had none.)
FIRST = {"game": "mode", "round": "cards", "correction": "round", "dropped": "round"}
# The places ``check`` names, by list: a game's number, a round's.
PLACES = {
    "games": N_("game %(number)d"),
    "rounds": N_("round %(number)d"),
    "corrections": N_("correction %(number)d"),
}


def fields_of(kind: str) -> Fields:
    """The fields of an object of ``kind``: a game's, those of both kinds of game."""
    if kind == "game":
        cards, scores = FIELDS["cards game"], FIELDS["scores game"]
        return Fields(
            tuple(dict.fromkeys(cards.always + scores.always)), cards.optional + scores.optional
        )
    return FIELDS[kind]


def family(make: Callable[[str, dict[str, Any]], type]) -> dict[str, type]:
    """Every object of the file as a type ``make(kind, {field: type})`` gives."""
    built: dict[str, type] = {}

    def resolved(spec: Any) -> Any:
        if isinstance(spec, str):
            return build(spec)
        if isinstance(spec, list):
            return list[resolved(spec[0])]
        return spec

    def build(kind: str) -> type:
        if kind not in built:
            always, optional = fields_of(kind)
            types = {key: resolved(CONTAINERS[kind].get(key, Value)) for key in always + optional}
            built[kind] = make(kind, types)
        return built[kind]

    for kind in CONTAINERS:
        build(kind)
    return built


def typed_dict(kind: str, types: dict[str, Any]) -> type:
    """An object as a plain dict: its first field required (``FIRST``), the others not
    (``check`` says which is missing), an unknown one skipped unread."""
    first = FIRST.get(kind)
    fields = {key: (Required if key == first else NotRequired)[of] for key, of in types.items()}
    return TypedDict(kind.title(), fields)  # type: ignore[operator]


def struct(kind: str, types: dict[str, Any]) -> type:
    """An object as a msgspec Struct that refuses an unknown field."""
    first = FIRST.get(kind)
    fields = [(key, of) for key, of in types.items() if key == first]
    fields += [
        (key, of | msgspec.UnsetType, msgspec.UNSET) for key, of in types.items() if key != first
    ]
    return msgspec.defstruct(kind.title(), fields, forbid_unknown_fields=True)


READ = {kind: msgspec.json.Decoder(shape).decode for kind, shape in family(typed_dict).items()}
EXACT = {kind: msgspec.json.Decoder(shape).decode for kind, shape in family(struct).items()}

# msgspec's refusal: what is wrong, and where ("$.games[0].rounds[3]", "$.choices[...]").
REFUSAL = re.compile(r"(?P<problem>.*?)(?: - at `\$(?P<path>.*)`)?", re.DOTALL)
STEP = re.compile(r"\.(\w+)|\[(\d+)\]|\[\.\.\.\]")
EXPECTED = re.compile(r"Expected `(?P<expected>[^`]*)`, got `(?P<got>[^`]*)`")
NAMED = re.compile(r"Object (?:missing required|contains unknown) field `(?P<field>.*)`")
KIND_OF = {"object": dict, "array": list, "str": str, "int": int, "bool": bool}
NO_VALUE = N_("“%(field)s” holds a list or an object where a single value belongs.")


def refusal(error: msgspec.ValidationError, kind: str) -> BackupError:
    """The BackupError of msgspec's refusal of an element of ``kind``, placed as ``check``
    places its own: a game's and a round's number."""
    found = REFUSAL.fullmatch(str(error))
    places = []
    holder, key, index = kind, None, None  # the object, its field, the entry of its list
    for step in STEP.finditer(found["path"] or ""):
        name, number = step.groups()
        spec = CONTAINERS[holder].get(key)
        if name is not None:
            if key is not None and isinstance(spec, str):
                holder = spec  # a field of an object within: "end"
            key, index = name, None
        elif isinstance(spec, list) and isinstance(spec[0], str):
            if key in PLACES:
                places.append((PLACES[key], {"number": int(number) + 1}))
            holder, key = spec[0], None  # an object of a list: a game, a round
        else:
            index = int(number or -1)  # a card of a list, a choice of an object
    refused = message(found["problem"], key, index, holder)
    for template, params in reversed(places):
        refused = refused.at(template, **params)
    return refused


def message(problem: str, key: str | None, index: int | None, holder: str) -> BackupError:
    """What msgspec's ``problem`` means, at the field ``key`` (None: the object itself
    is wrong) of an object of ``holder`` (the entry of a list, when ``index``)."""
    if named := NAMED.fullmatch(problem):
        field = named["field"]
        if problem.startswith("Object missing"):
            return BackupError(N_("“%(field)s” is missing."), field=field)
        return BackupError(N_("Unknown field “%(field)s”."), field=field[:40])
    expected = EXPECTED.match(problem)
    wanted = expected and KIND_OF.get(expected["expected"])
    if key is None:
        fields = fields_of("cards game" if holder == "game" else holder).always
        return BackupError(
            N_("Each entry must be an object with the fields %(fields)s."),
            fields=", ".join(fields),
        )
    if wanted is not None and index is None:
        return BackupError(KINDS[wanted], field=key)
    return BackupError(NO_VALUE, field=key)
