"""Each placed play's luck (``PlayLuck``), figured by ``companion.rules.luck``.

A row per player and placed round of a card game: the chance that the card took a row,
the bulls it was expected to take, the bulls it took. While a game runs, a player's own
cards are only the round's card (the later ones are not known yet); once it is over they
are the ten they played, so the game's end figures every round again (``whole``).

Kept in line by the writes (``refresh_luck``, inside the write of ``companion.store``):
the newest round is figured in its own write, at most a few tens of milliseconds even
with ten players. Everything else a write leaves stale (the rounds before at the game's
end, a corrected game, a reopened one) is figured right after it in a second write
(``fill_luck``), which raises the match's versions so that every page shows it. An
import leaves its games to ``companion.store.fill_all_missing_luck``, in a helper process;
``rebuild_luck`` checks and puts right all of it, and pages that read luck never wait for
any of it (``read``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import Select, delete, func, insert, select

from companion import rules
from companion.db import db
from companion.derived.audit import match_problem
from companion.derived.tables import PlayLuck
from companion.models import Game, Match
from companion.state import PlayedGame, played_game


class LuckRow(NamedTuple):
    """A ``PlayLuck`` row's values, for comparing what is stored with what is wanted."""

    game_id: int
    match_id: int
    round_number: int
    player_id: int
    card: int
    chance: float
    expected: float
    bulls: int
    samples: int
    whole: bool


COLUMNS = [getattr(PlayLuck, name) for name in LuckRow._fields]


def placed_rounds(game: PlayedGame) -> list[rules.RoundResult]:
    """A card game's rounds placed to the end (not one that waits for a row choice)."""
    if game.table is None:
        return []
    return [result for result in game.table.rounds if result.resolved]


def figured(game: PlayedGame, deck: int, numbers: Iterable[int] | None = None) -> list[LuckRow]:
    """The rows a card game wants: of its placed rounds, or of the rounds ``numbers``."""
    rounds = placed_rounds(game)
    wanted = None if numbers is None else set(numbers)
    if not rounds or wanted == set():
        return []
    whole = game.finished
    seed = (game.game.id,)
    odds = rules.game_odds(game.game.starting, rounds, deck, whole, seed, wanted)
    return [
        LuckRow(game.game.id, game.game.match_id, number, *play, whole)
        for number, plays in enumerate(odds, 1)
        for play in plays
    ]


def stored(game_ids: Sequence[int]) -> dict[int, dict[int, list[LuckRow]]]:
    """The stored rows of these games: by game id, by round number."""
    found: dict[int, dict[int, list[LuckRow]]] = {}
    query = select(*COLUMNS).where(PlayLuck.game_id.in_(game_ids))
    for values in db.session.execute(query):
        row = LuckRow._make(values)
        found.setdefault(row.game_id, {}).setdefault(row.round_number, []).append(row)
    return found


def stale_rounds(game: PlayedGame, have: dict[int, list[LuckRow]]) -> list[int]:
    """The placed rounds whose stored rows are missing or no longer the round's: other
    cards or bulls, or figured before the game ended (or after, for a reopened game)."""
    stale = []
    for number, result in enumerate(placed_rounds(game), 1):
        rows = have.get(number, [])
        plays = {(step.player, step.card, step.bulls) for step in result.steps}
        if {(row.player_id, row.card, row.bulls) for row in rows} != plays or any(
            row.whole != game.finished for row in rows
        ):
            stale.append(number)
    return stale


def put(game: PlayedGame, numbers: Sequence[int], deck: int) -> None:
    """Replace a game's rows of these rounds by rows figured anew, and delete any of its
    rows past its placed rounds (inside the write)."""
    placed = len(placed_rounds(game))
    going = PlayLuck.round_number.in_(numbers) | (PlayLuck.round_number > placed)
    db.session.execute(delete(PlayLuck).where(PlayLuck.game_id == game.game.id, going))
    rows = figured(game, deck, numbers)
    if rows:
        db.session.execute(insert(PlayLuck), [row._asdict() for row in rows])


def deck_of(match: Match) -> int:
    """The highest card of a match's deck."""
    return rules.deck_size(len(match.seats), match.pro)


def refresh_luck(match_id: int, player_ids: list[int], corrected: Sequence[int] = ()) -> bool:
    """After a write to a match (inside it): its last game's newest placed round figured
    if it is not yet, rows past the placed rounds deleted, a corrected game's rows
    dropped. True when more is stale, for ``fill_luck`` right after the write."""
    match = db.session.get(Match, match_id)
    if match is None:
        return False
    if corrected:
        db.session.execute(delete(PlayLuck).where(PlayLuck.game_id.in_(corrected)))
    last = match.games[-1] if match.games else None
    if last is None or last.mode != "cards":
        return bool(corrected)
    game = played_game(last, player_ids)
    stale = stale_rounds(game, stored([last.id]).get(last.id, {}))
    newest = len(placed_rounds(game))
    put(game, [newest] if newest in stale else [], deck_of(match))
    return bool(corrected) or any(number != newest for number in stale)


def fill_luck(match_id: int) -> bool:
    """Figure every stale round of a match's card games (inside a write); True when any
    row changed."""
    match = db.session.get(Match, match_id)
    if match is None:
        return False
    player_ids = [seat.player_id for seat in match.seats]
    games = [game for game in match.games if game.mode == "cards"]
    have = stored([game.id for game in games])
    changed = False
    for stored_game in games:
        game = played_game(stored_game, player_ids)
        stale = stale_rounds(game, have.get(stored_game.id, {}))
        placed = len(placed_rounds(game))
        if stale or any(number > placed for number in have.get(stored_game.id, {})):
            put(game, stale, deck_of(match))
            changed = True
    return changed


def missing_matches(after: int = 0, limit: int = 100) -> list[int]:
    """Matches past id ``after`` with a card round and no luck rows at all (imported, or
    played before luck was kept), in the order of their ids."""
    has_luck = select(PlayLuck.match_id).distinct()
    query = (
        select(Game.match_id)
        .where(Game.mode == "cards", Game.match_id > after, Game.match_id.not_in(has_luck))
        .where(Game.rounds.any())
        .distinct()
        .order_by(Game.match_id)
        .limit(limit)
    )
    return list(db.session.scalars(query))


def read(game: PlayedGame, deck: int) -> list[LuckRow]:
    """A card game's rows for a page or ``luck.json``, round by round and lowest card
    first: as stored where they are in line, figured here (and not stored) where they are
    not yet (an import's games, before the background fills them)."""
    have = stored([game.game.id]).get(game.game.id, {})
    stale = stale_rounds(game, have)
    placed = len(placed_rounds(game))
    kept = [
        row
        for number, rows in have.items()
        if number <= placed and number not in stale
        for row in rows
    ]
    fresh = figured(game, deck, stale) if stale else []
    return sorted(kept + fresh, key=lambda row: (row.round_number, row.card))


class LuckRebuilt(NamedTuple):
    """What ``rebuild_luck`` found: the match of each game whose kept luck differed, and of
    each game with none kept yet (an import's or an upgrade's, which the background
    figures: not a difference)."""

    differing: list[int]
    missing: list[int]


def rebuild_luck(check: bool, echo=print) -> LuckRebuilt:
    """Every card game's luck figured anew from its inputs and compared with what is
    kept; unless ``check``, put right and filled in (the caller commits). Matches the
    rules refuse are ``rebuild``'s to name, and skipped here."""
    found = LuckRebuilt([], [])
    for match in db.session.scalars(select(Match).order_by(Match.id)):
        if match_problem(match):
            continue
        player_ids = [seat.player_id for seat in match.seats]
        games = [game for game in match.games if game.mode == "cards"]
        have = stored([game.id for game in games])
        for stored_game in games:
            game = played_game(stored_game, player_ids)
            wanted = set(figured(game, deck_of(match)))
            kept = {row for rows in have.get(stored_game.id, {}).values() for row in rows}
            if wanted == kept:
                continue
            if kept:
                found.differing.append(match.id)
                echo(f"match {match.id} game {stored_game.number}: luck differs")
            else:
                found.missing.append(match.id)
            if not check:
                put(game, range(1, len(placed_rounds(game)) + 1), deck_of(match))
    return found


def round_chances(game_id: int, number: int) -> dict[int, float]:
    """A placed round's chance of taking a row, by card, as stored ({} when not yet)."""
    query = select(PlayLuck.card, PlayLuck.chance).where(
        PlayLuck.game_id == game_id, PlayLuck.round_number == number
    )
    return dict(db.session.execute(query).all())


def complete_games(among) -> Select:
    """The ids of the games, of those ``among`` picks, whose every round is figured with
    the whole hands: finished games whose luck is all there (a statement to select in)."""
    return (
        select(PlayLuck.game_id)
        .where(among, PlayLuck.whole)
        .group_by(PlayLuck.game_id)
        .having(func.count(func.distinct(PlayLuck.round_number)) == rules.HAND_SIZE)
    )


def finished_luck(game_ids: Sequence[int]) -> dict[int, rules.PlayerLuck]:
    """Each player's expected bulls and bulls taken over these finished card games, as
    stored, by player id; only games whose every round is figured with whole hands (a game
    an import brought counts once the background has figured it)."""
    complete = complete_games(PlayLuck.game_id.in_(game_ids))
    query = (
        select(PlayLuck.player_id, func.sum(PlayLuck.expected), func.sum(PlayLuck.bulls))
        .where(PlayLuck.game_id.in_(complete))
        .group_by(PlayLuck.player_id)
    )
    return {
        player_id: rules.PlayerLuck(player_id, float(expected), int(bulls))
        for player_id, expected, bulls in db.session.execute(query)
    }
