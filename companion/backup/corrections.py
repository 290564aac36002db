"""A cards game's corrections read from a backup: what each corrected round held before,
and the later row choices it dropped, with players by name as everywhere in the file
(``document.export_corrections`` writes them).

In the database a correction names players by seat (``models.Correction``), so the
file's names become seats on import and nothing needs mapping to player ids.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, NamedTuple

from companion import rules
from companion.backup.fields import BackupError, object_of, seat_cards, shown, time_of, value_of
from companion.models import utcnow
from companion.rules import N_

# A correction as staged for the import: round, time, cards, choices, dropped (stored form).
Staged = tuple[int, Any, str, str, str]


class Game(NamedTuple):
    """What a game's corrections are checked against: its rounds, deck, starting cards
    and the moment it started."""

    rounds: int
    deck: int
    starting: list[int]
    created_at: datetime


def read_corrections(entries: list, seats: list[str], game: Game) -> list[Staged]:
    """A game's corrections from the file, checked against the game, in stored form."""
    staged = []
    for number, entry in enumerate(entries, 1):
        try:
            staged.append(read_correction(entry, seats, game))
        except BackupError as error:
            raise error.at(N_("correction %(number)d"), number=number) from None
    return staged


def read_correction(entry: Any, seats: list[str], game: Game) -> Staged:
    """One correction: the round, when, its old cards (one per seat) and choices. The
    old cards were a round as the rules take one (each card once, none of the starting
    cards), and it was made after its game started and before now."""
    data = object_of(entry, "correction")
    number = value_of(data, "round", int)
    if not 1 <= number <= game.rounds:
        raise BackupError(N_("“round” must be a round of this game, not %(value)s."), value=number)
    cards = seat_cards(data, seats, game.deck)
    choices = value_of(data, "choices", dict) if "choices" in data else {}
    try:
        plays = list(zip(seats, cards, strict=True))
        rules.check_plays([], plays, deck=game.deck, starting=game.starting)
    except rules.RuleError as error:
        raise BackupError(error.template, **error.params).at(N_("its old cards")) from None
    old = [f"{seat_of(name, seats)}:{row_of(row)}" for name, row in choices.items()]
    dropped = []
    for item in value_of(data, "dropped", list) if "dropped" in data else []:
        fields = object_of(item, "dropped")
        later = value_of(fields, "round", int)
        if not number < later <= game.rounds:
            raise BackupError(
                N_("“round” must be a round of this game, not %(value)s."), value=later
            )
        player = seat_of(value_of(fields, "player", str), seats)
        dropped.append(f"{later}:{player}:{row_of(fields['row'])}")
    at = time_of(data, "at")
    if not game.created_at <= at <= utcnow():
        raise BackupError(
            N_(
                "“at” is %(value)s: a correction comes after its game started, and not later "
                "than now."
            ),
            value=data["at"],
        )
    return number, at, ",".join(map(str, cards)), ",".join(old), ",".join(dropped)


def seat_of(name: Any, seats: list[str]) -> int:
    """A seated player's place (1 = the first)."""
    if name not in seats:
        raise BackupError(
            N_("A row choice for “%(name)s”, who has no seat in this match."), name=shown(name)
        )
    return seats.index(name) + 1


def row_of(row: Any) -> int:
    """A row 1-4 as the file must hold it."""
    if not isinstance(row, int) or isinstance(row, bool) or not 1 <= row <= rules.ROWS:
        raise BackupError(
            N_("A row choice is %(row)s: rows are 1, 2, 3 or 4."), row=shown(json.dumps(row), 12)
        )
    return row
