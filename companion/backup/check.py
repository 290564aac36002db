"""Reading a backup: the whole file is checked before anything is written.

Every round is replayed through ``companion.rules`` (the same checks the table applies),
each finished game's bulls derived by the engine. Anything wrong raises ``BackupError``
with a message that says where (match, game, round) and what. The matches are checked
one at a time, as the import iterates them (``parse.Deferred``: a file of 280,000
matches read whole is over a gigabyte); the import writes nothing before the last one.
"""

from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from itertools import chain
from typing import Any, NamedTuple

from companion import rules
from companion.backup.columns import FIELDS, RECORDS, VERSION, object_of, read
from companion.backup.document import FORMAT, OLDEST, identity_digest
from companion.backup.fields import (
    EARLIEST,
    BackupError,
    cards_of,
    latest,
    paused_gc,
    row_of,
    ruled,
    seat_cards,
    seat_of,
    shown,
    time_of,
    value_of,
)
from companion.backup.parse import Deferred, load
from companion.derived import figures
from companion.derived.figures import GameFigures
from companion.models import utcnow
from companion.rules import N_
from companion.rules.names import name_key

# A correction as the import stores it (``models.Correction``, players by seat): its
# columns that are fields of the file, then its old cards, old choices, choices dropped.
CorrectionIn = namedtuple(
    "CorrectionIn", [*RECORDS["correction"]._fields, "cards", "choices", "dropped"]
)


# Slots: a file's games and matches are checked by the ten thousand (a test watches
# that the import keeps none of them: ``weakref_slot``).
@dataclass(slots=True)
class GameIn:
    """One game from the file, checked; ``results`` once it is finished."""

    columns: Any  # its columns that are fields of the file, by name (``columns.read``)
    starting: list[int] = field(default_factory=list)
    rounds: list[tuple[list[int], dict[str, int]]] = field(default_factory=list)
    round_times: list[datetime] = field(default_factory=list)  # when each was entered
    scores: list[int | list[int]] = field(default_factory=list)
    corrections: list[CorrectionIn] = field(default_factory=list)  # rounds corrected
    results: dict[str, int] | None = None
    # The statistics rows of a finished game, with names for players and 0 for ids.
    figures: GameFigures = field(default_factory=lambda: GameFigures([], [], []))

    @property
    def mode(self) -> str:
        """The game's mode: "cards" or "scores"."""
        return self.columns.mode

    @property
    def created_at(self) -> datetime:
        """When the game started."""
        return self.columns.created_at


@dataclass(slots=True, weakref_slot=True)
class MatchIn:
    """One match from the file, checked."""

    columns: Any  # its columns that are fields of the file, by name (``columns.read``)
    end: rules.EndCondition
    seats: list[str]
    games: list[GameIn]
    number: int = 0  # in the file: 1 = the first match
    rematch: int | None = None  # the number of the match its Rematch started

    @property
    def created_at(self) -> datetime:
        """When the match started."""
        return self.columns.created_at

    @property
    def identity(self) -> bytes:
        """The match's identity (``document.match_identity``), as its digest."""
        return identity_digest(self.created_at, self.seats)


@dataclass
class Backup:
    """A checked file: its players, and its matches as they are checked."""

    players: list  # each player's columns, by name (``columns.read``)
    matches: Iterable[MatchIn]  # iterated once; raises BackupError at a wrong match


def read_backup(raw: bytes) -> Backup:
    """Check a whole backup file, every match at once (for tests and benchmarks), or raise."""
    with paused_gc():
        backup = open_backup(raw)
        return Backup(backup.players, list(backup.matches))


def open_backup(raw: bytes) -> Backup:
    """Check the file's JSON, header and players; its matches are checked as they come."""
    data = read_header(raw)
    time_of(data, "exported_at")
    players = read_players(list_of(data, "players"))
    names = {player.name for player in players}
    return Backup(players, read_matches(list_of(data, "matches"), names, data["version"]))


def list_of(data: dict, key: str) -> Iterable:
    """A list of the file's top-level object (read an element at a time: ``parse.Deferred``)."""
    value = data.get(key)
    return value if isinstance(value, Deferred) else value_of(data, key, list)


def read_matches(entries: Iterable, names: set[str], version: int = VERSION) -> Iterator[MatchIn]:
    """The matches, each checked as it is read; the same match twice is refused, and
    so is a rematch that is no later match of the file, or the rematch of two."""
    first: dict[bytes, int] = {}
    rematches: dict[int, Origin] = {}  # a rematch's number: the match it is the rematch of
    number = 0
    for number, entry in enumerate(placed(entries, N_("Match %(number)d")), 1):
        try:
            match = read_match(entry, names, version)
            match.number = number
            check_rematch(match, rematches)
            check_started_after(match, rematches.get(number))
        except BackupError as error:
            started = entry.get("created_at") if isinstance(entry, dict) else None
            if isinstance(started, str) and started[:10]:
                place = N_("Match %(number)d (started %(date)s)")
                raise error.at(place, number=number, date=shown(started, 10)) from None
            raise error.at(N_("Match %(number)d"), number=number) from None
        if (earlier := first.setdefault(match.identity, number)) != number:
            raise BackupError(
                N_(
                    "Matches %(first)d and %(second)d are the same match (same "
                    "start time and players)."
                ),
                first=earlier,
                second=number,
            )
        yield match
    if rematches and (beyond := max(rematches)) > number:
        raise BackupError(
            N_("Match %(number)d's rematch is match %(rematch)d, but the file has %(count)d."),
            number=rematches[beyond].number,
            rematch=beyond,
            count=number,
        )


def placed(entries: Iterable, template: str) -> Iterator:
    """Each of ``entries``; a BackupError in reading one (``parse.Deferred``: a wrong
    shape) placed at ``template`` with its number (1 = the first)."""
    iterator, number = iter(entries), 0
    while True:
        number += 1
        try:
            entry = next(iterator)
        except StopIteration:
            return
        except BackupError as error:
            raise error.at(template, number=number) from None
        yield entry


class Origin(NamedTuple):
    """The match a rematch of the file was started from: its number and start (a match's
    games stay out of it, so a file of many rematches is read in little memory)."""

    number: int
    created_at: datetime


def check_rematch(match: MatchIn, rematches: dict[int, Origin]) -> None:
    """A match's rematch is a later match of the file, the rematch of no other."""
    if match.rematch is None:
        return
    if match.rematch <= match.number:
        raise BackupError(
            N_("Its rematch must be a later match of the file, not match %(rematch)d."),
            rematch=match.rematch,
        )
    origin = Origin(match.number, match.created_at)
    if (other := rematches.setdefault(match.rematch, origin)) != origin:
        raise BackupError(
            N_("Match %(rematch)d is already the rematch of match %(other)d."),
            rematch=match.rematch,
            other=other.number,
        )


def check_started_after(rematch: MatchIn, match: Origin | None) -> None:
    """A rematch starts once its match is over: never before that match started."""
    if match is not None and rematch.created_at < match.created_at:
        raise BackupError(
            N_("It started before the match it is the rematch of (match %(number)d)."),
            number=match.number,
        )


def read_header(raw: bytes) -> dict:
    """The file as JSON, if it is a backup of a format version this companion reads."""
    try:
        data = load(raw)
    except UnicodeDecodeError:
        raise BackupError(
            N_("This is not a backup of the companion: it is not text (UTF-8).")
        ) from None
    except json.JSONDecodeError as error:
        raise BackupError(
            N_(
                "This is not a backup of the companion: it is not JSON "
                "(line %(line)d, column %(column)d)."
            ),
            line=error.lineno,
            column=error.colno,
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BackupError(
            N_("This is not a backup of the companion: its “format” is not “%(format)s”."),
            format=FORMAT,
        )
    version = value_of(data, "version", int)
    if version > VERSION:
        raise BackupError(
            N_(
                "This backup has format version %(version)d, from a newer "
                "companion; this one reads version %(supported)d. Update the "
                "companion first."
            ),
            version=version,
            supported=VERSION,
        )
    if version < OLDEST:
        raise BackupError(N_("Unknown backup format version %(version)d."), version=version)
    return object_of(data, "backup")


def read_players(entries: list) -> list:
    """The players list: usable names, each player once (names compared ignoring case)."""
    return each(N_("Player %(number)d"), entries, read_player, {})


def read_player(entry: Any, keys: dict[str, str]) -> tuple:
    """One player's columns; the name is none of ``keys`` (the names so far, by
    ``name_key``), as the list spells them (the seats name players so)."""
    player = read("player", object_of(entry, "player"))
    if (key := name_key(name := player.name)) in keys:
        raise BackupError(
            N_("“%(name)s” is already in the list as “%(other)s”."), name=name, other=keys[key]
        )
    keys[key] = name
    return player


def each(template: str, entries: Iterable, read: Callable, *args) -> list:
    """``read(entry, *args)`` of every entry, a BackupError placed at ``template`` with the
    entry's number (1 = the first)."""
    found = []
    try:
        for entry in entries:
            found.append(read(entry, *args))
    except BackupError as error:
        raise error.at(template, number=len(found) + 1) from None
    return found


def read_match(entry: Any, names: set[str], version: int = VERSION) -> MatchIn:
    """One match: its seats, house rules and games, each game replayed."""
    data = object_of(entry, "match")
    columns = read("match", data)
    end = ruled(rules.EndCondition, columns.end_kind, columns.end_value)
    seats = read_seats(value_of(data, "seats", list), names, columns.pro)
    deck = rules.deck_size(len(seats), columns.pro)
    games: list[GameIn] = []
    totals = dict.fromkeys(seats, 0)  # the finished games' bulls so far
    for number, game_data in enumerate(value_of(data, "games", list), 1):
        try:
            check_can_follow(games, totals, end)
            game = read_game(game_data, seats, deck, version)
        except BackupError as error:
            raise error.at(N_("game %(number)d"), number=number) from None
        games.append(game)
        for player, bulls in (game.results or {}).items():
            totals[player] += bulls
    match = MatchIn(columns, end, seats, games)
    if "rematch" in data:
        match.rematch = value_of(data, "rematch", int)
        finished = games and games[-1].results is not None
        if not (finished and end.is_met(totals, len(games))):
            raise BackupError(N_("Only a finished match has a rematch: this one is not over."))
    return match


def read_seats(seats: list, names: set[str], pro: bool) -> list[str]:
    """The seated players in order: 2-10 (2-6 in the pro variant), each from the list."""
    if not rules.MIN_PLAYERS <= len(seats) <= rules.MAX_PLAYERS:
        raise BackupError(N_("A match seats 2 to 10 players, not %(count)d."), count=len(seats))
    if pro and len(seats) > rules.PRO_MAX_PLAYERS:
        raise BackupError(N_("The pro variant is for 2 to 6 players."))
    for seat in seats:
        if not isinstance(seat, str) or seat not in names:
            raise BackupError(
                N_("The seat “%(name)s” is not a player of the players list."), name=shown(seat)
            )
    if len(set(seats)) != len(seats):
        raise BackupError(N_("A player has two seats."))
    return seats


def check_can_follow(games: list[GameIn], totals: dict[str, int], end: rules.EndCondition) -> None:
    """Refuse a game after an unfinished one, or after the match has ended (``totals``:
    the bulls of the games so far, which ``rules.standing`` would sum again)."""
    if games and games[-1].results is None:
        raise BackupError(
            N_("Game %(number)d is not finished, so no game can follow it."), number=len(games)
        )
    if end.is_met(totals, len(games)):
        raise BackupError(
            N_("The match ended after game %(number)d; nothing can follow it."), number=len(games)
        )


def read_game(entry: Any, seats: list[str], deck: int, version: int = VERSION) -> GameIn:
    """One game: starting cards and rounds, or typed scores."""
    if isinstance(entry, dict) and entry.get("mode") == "scores":
        data = object_of(entry, "scores game")
        game = GameIn(read("game", data))
        return read_scores(game, value_of(data, "scores", list), seats, deck)
    data = object_of(entry, "cards game")
    game = GameIn(read("game", data))  # its mode: "cards", since it is not "scores"
    game.starting = cards_of(value_of(data, "starting", list), deck)
    ruled(rules.check_starting_cards, game.starting, deck, at=N_("starting cards"))
    rounds = value_of(data, "rounds", list)
    if "corrections" in data:
        entries, place = value_of(data, "corrections", list), N_("correction %(number)d")
        game.corrections = each(place, entries, read_correction, seats, game, deck, len(rounds))
    read_rounds(game, rounds, seats, deck)
    game.round_times = round_times(game, rounds, version)
    return game


def read_correction(
    entry: Any, seats: list[str], game: GameIn, deck: int, rounds: int
) -> CorrectionIn:
    """One correction of a game of ``rounds``, in stored form (``models.Correction``,
    players by seat): the round, when (after its game started, not after now), its old
    cards (a round as the rules take one) and choices, the later choices it dropped."""
    data = object_of(entry, "correction")
    columns = read("correction", data)
    number, at = columns.round_number, columns.created_at
    if not 1 <= number <= rounds:
        raise BackupError(N_("“round” must be a round of this game, not %(value)s."), value=number)
    cards = seat_cards(data, seats, deck)
    choices = value_of(data, "choices", dict) if "choices" in data else {}
    plays = list(zip(seats, cards, strict=True))
    ruled(rules.check_plays, [], plays, deck=deck, starting=game.starting, at=N_("its old cards"))
    old = [f"{seat_of(name, seats)}:{row_of(row)}" for name, row in choices.items()]
    dropped = []
    for item in value_of(data, "dropped", list) if "dropped" in data else []:
        fields = object_of(item, "dropped")
        later = value_of(fields, "round", int)
        if not number < later <= rounds:
            raise BackupError(
                N_("“round” must be a round of this game, not %(value)s."), value=later
            )
        player = seat_of(value_of(fields, "player", str), seats)
        dropped.append(f"{later}:{player}:{row_of(value_of(fields, 'row', object))}")
    if not game.created_at <= at <= utcnow():
        raise BackupError(
            N_(
                "“at” is %(value)s: a correction comes after its game started, and not later "
                "than now."
            ),
            value=data["at"],
        )
    return CorrectionIn(*columns, ",".join(map(str, cards)), ",".join(old), ",".join(dropped))


def round_times(game: GameIn, entries: list, version: int) -> list[datetime]:
    """When each round was entered: its "at" (from version 2 on), else its game's start
    (version 1 kept no round times)."""
    if version > 1 and (times := quick_times(entries)) is not None:
        return times

    def time(entry: dict) -> datetime:
        return time_of(entry, "at") if version > 1 or "at" in entry else game.created_at

    return each(ROUND, entries, time)


def quick_times(entries: list) -> list[datetime] | None:
    """The rounds' times as the export writes them (UTC, with a Z), read at C speed; None
    for anything else, which ``time_of`` then reads, or refuses in its own words."""
    try:
        texts = [entry["at"] for entry in entries]  # every entry is an object by now
        if set(map(type, texts)) - {str} or any(text[-1:] != "Z" for text in texts):
            return None
        times = [datetime.fromisoformat(text[:-1]) for text in texts]
    except (KeyError, ValueError):
        return None
    if any(moment.tzinfo is not None for moment in times):  # "…+01:00Z"
        return None
    if times and (min(times) < EARLIEST or max(times) > latest()):
        return None
    return times


def read_rounds(game: GameIn, entries: list, seats: list[str], deck: int) -> GameIn:
    """Replay the rounds with the rules' own checks (``rules.check_game``)."""
    rounds = quick_shapes(entries, seats)
    if rounds is None:  # the file's shape or types are wrong somewhere: say where
        rounds = each(ROUND, entries, read_round, seats, deck)
    try:
        state = rules.check_game(game.starting, rounds, seats, deck, bool(game.corrections))
    except rules.RoundRefused as error:
        refused = BackupError(error.template, **error.params)
        raise refused.at(ROUND, number=error.number) from None
    except rules.RuleError as error:  # more than ten rounds
        raise BackupError(error.template, **error.params) from None
    game.rounds = rounds
    if state.finished:
        bulls = {player: rules.pile_bulls(pile) for player, pile in state.piles.items()}
        finish(game, bulls, state)
    return game


def quick_shapes(entries: list, seats: list[str]) -> list[tuple[list, dict]] | None:
    """Each round's cards and choices when every round is plainly an object of them,
    every card a whole number and every choice a seat's row 1-4 (``check_game`` checks
    the rest, but takes "41" for a card as a form may send it); else None."""
    rounds = []
    for entry in entries:
        if type(entry) is not dict or not entry.keys() <= ROUND_FIELDS:
            return None
        cards, choices = entry.get("cards"), entry.get("choices", {})
        if type(cards) is not list or len(cards) != len(seats) or type(choices) is not dict:
            return None
        for player, row in choices.items():  # in most rounds none
            if player not in seats or type(row) is not int or not 1 <= row <= rules.ROWS:
                return None
        rounds.append((cards, choices))
    # type(), not isinstance(): True is no card. One whole-game call, at C speed.
    if set(map(type, chain.from_iterable(cards for cards, _ in rounds))) - {int}:
        return None
    return rounds


ROUND_FIELDS = set(chain(*FIELDS["round"]))
ROUND = N_("round %(number)d")


def finish(game: GameIn, bulls: dict[str, int], table: rules.GameState | None) -> None:
    """A finished game's bulls and statistics (by name, for now: ids come on import)."""
    game.results = bulls
    game.figures = figures.game_rows(0, 0, bulls, table)


def read_round(entry: Any, seats: list[str], deck: int) -> tuple[list[int], dict[str, int]]:
    """A round's cards (one per seat, in seat order) and its row choices."""
    data = object_of(entry, "round")
    cards = seat_cards(data, seats, deck)
    choices = value_of(data, "choices", dict) if "choices" in data else {}
    for player, row in choices.items():
        seat_of(player, seats)
        row_of(row, player)
    return cards, choices


def read_scores(game: GameIn, entries: list, seats: list[str], deck: int) -> GameIn:
    """A score-only game: per seat, the bulls or the cards of the pile (no card twice)."""
    if len(entries) != len(seats):
        raise BackupError(
            N_("A score-only game has one score per seat: %(expected)d, not %(count)d."),
            expected=len(seats),
            count=len(entries),
        )
    seen: set[int] = set()
    results = {}
    for player, entry in zip(seats, entries, strict=True):
        if isinstance(entry, list):
            if not entry:
                raise BackupError(
                    N_("%(player)s's pile is empty: write 0 bulls instead."), player=player
                )
            for card in cards_of(entry, deck):
                if card in seen:
                    raise BackupError(N_("%(card)d is entered twice."), card=card)
                seen.add(card)
            results[player] = rules.pile_bulls(entry)
        elif not isinstance(entry, int) or isinstance(entry, bool):
            raise BackupError(
                N_("%(player)s's score must be a number of bulls or a list of cards."),
                player=player,
            )
        elif 0 <= entry <= most_bulls(deck):
            results[player] = entry  # as parse_bulls takes it, without the text round trip
        else:
            ruled(rules.parse_bulls, entry, deck)  # refuses it, in its own words
        game.scores.append(entry)
    ruled(rules.check_game_bulls, list(results.values()), deck)
    finish(game, results, None)
    return game


@cache
def most_bulls(deck: int) -> int:
    """The bulls of a whole deck: the most one player can take in a game."""
    return rules.pile_bulls(range(1, deck + 1))
