"""Each placed play's luck (``PlayLuck``), figured by ``companion.rules.luck``.

A row per player and placed round of a card game: the chance that the card took a row,
the bulls it was expected to take, the bulls it took. While a game runs, a player's own
cards are only the round's card (the later ones are not known yet); once it is over they
are the ten they played, so the game's end figures every round again (``whole``).

Never figured inside a round's write, which the table waits for: the write only drops
the rows it made wrong (``drop_stale_luck``: a corrected game's, rounds undone). The
figuring (``stale_luck``) reads the match and places cards outside any transaction, and
each game's rows are then stored in a short write of their own (``put_figured``, by
``companion.store.luck_after``), which raises the match's version so that every page
shows them: a second push after the round's, of one line when the table's live pages
show nothing of them (``seen_at_table``). A server runs it in a process of its own at
the lowest priority (``companion.background``). ``rebuild_luck`` checks and puts right all
of it, and pages that read luck never figure it (``read``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import Select, bindparam, case, delete, func, insert, select

from companion import rules
from companion.db import db
from companion.derived.audit import match_problem
from companion.derived.tables import LuckPlayer, PlayLuck
from companion.models import Game, Match, Play
from companion.state import PlayedGame, played_game
from companion.state import read as read_built


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
WHOLE_ROWS = func.sum(case((PlayLuck.whole, 1), else_=0))  # of a group: figured with whole hands


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


class GameLuck(NamedTuple):
    """A card game's luck figured anew: the rounds whose rows it replaces, how many rounds
    are placed (rows past them go), the rows, and whether the game is over."""

    game_id: int
    numbers: list[int]
    placed: int
    rows: list[LuckRow]
    finished: bool


def seen_at_table(luck: GameLuck) -> bool:
    """Whether storing ``luck`` (inside its write, before ``put_figured``) changes what the
    table's live pages show of luck (``play.board.match_view``): a finished game's (its
    end names the luckiest), else only the chances that the summary of the game's newest
    placed round says beside its improbable takes. A write of luck that changes neither
    keeps the table version (``store.luck_after``), so the phones' next push is one line,
    not every region rendered again the same (issue 59); its rows show on the pages read
    afresh (a round's replay, ``luck.json``, the household's)."""
    if luck.finished:
        return True
    if luck.placed not in luck.numbers:
        return False  # the newest round's rows stay as they are
    newest = PlayLuck.game_id == luck.game_id, PlayLuck.round_number == luck.placed
    kept_rows = select(PlayLuck.card, PlayLuck.chance, PlayLuck.bulls).where(*newest)
    kept = said_chances(db.session.execute(kept_rows))
    return said_chances(row for row in luck.rows if row.round_number == luck.placed) != kept


def said_chances(rows: Iterable) -> frozenset[tuple[int, float]]:
    """The chances a round's summary says of its rows (each with ``card``, ``chance`` and
    ``bulls``): each improbable take's, by card (``web.present.with_chances``)."""
    return frozenset(
        (row.card, row.chance) for row in rows if row.bulls and row.chance <= rules.IMPROBABLE
    )


def put_figured(luck: GameLuck) -> None:
    """Replace a game's rows of the rounds figured by those rows, and delete any of its
    rows past its placed rounds (inside a short write); then its players' sums."""
    going = PlayLuck.round_number.in_(luck.numbers) | (PlayLuck.round_number > luck.placed)
    db.session.execute(delete(PlayLuck).where(PlayLuck.game_id == luck.game_id, going))
    if luck.rows:
        db.session.execute(insert(PlayLuck), [row._asdict() for row in luck.rows])
    sum_players([luck.game_id])


def sum_players(game_ids: Sequence[int]) -> None:
    """These games' players' sums (``LuckPlayer``) anew from their rows, inside the write
    that changed them: a sum only for a game whose luck is complete."""
    db.session.execute(delete(LuckPlayer).where(LuckPlayer.game_id.in_(game_ids)))
    sums = player_sums(PlayLuck.game_id.in_(game_ids))
    db.session.execute(insert(LuckPlayer).from_select(SUMMED, sums))


# What ``LuckPlayer`` keeps of a player's game, in ``player_sums``' order.
SUMMED = ("game_id", "match_id", "player_id", "expected", "bulls", "lowest")


def player_sums(*where) -> Select:
    """(game, match, player, expected, bulls, lowest chance of a play that took a row)
    of each player's complete games among those ``where`` picks. A player's game is
    complete when it has a row for every round, each figured with the whole hands: a
    round's rows are written together, so then every round of the game is figured so."""
    return (
        select(
            PlayLuck.game_id,
            func.max(PlayLuck.match_id),
            PlayLuck.player_id,
            func.sum(PlayLuck.expected),
            func.sum(PlayLuck.bulls),
            func.min(case((PlayLuck.bulls > 0, PlayLuck.chance))),
        )
        .where(*where)
        .group_by(PlayLuck.game_id, PlayLuck.player_id)
        .having(func.count() == rules.HAND_SIZE, WHOLE_ROWS == rules.HAND_SIZE)
    )


def still_right(luck: GameLuck) -> GameLuck | None:
    """Inside a write, once the match moved on since ``luck`` was figured: its rows as they
    are to be stored, if every round they are of is still as it was figured (the same
    cards and bulls, the game still running or over as it was), with the rounds placed
    now; else None."""
    stored_game = db.session.get(Game, luck.game_id)
    if stored_game is None:
        return None
    game = played_game(stored_game, [seat.player_id for seat in stored_game.match.seats])
    placed = len(placed_rounds(game))
    by_round: dict[int, list[LuckRow]] = {}
    for row in luck.rows:
        by_round.setdefault(row.round_number, []).append(row)
    if any(number > placed for number in luck.numbers) or set(luck.numbers) & set(
        stale_rounds(game, by_round)
    ):
        return None
    return luck._replace(placed=placed)


def put(game: PlayedGame, numbers: Sequence[int], deck: int) -> None:
    """Figure a game's rows of these rounds and put them in place (inside the write)."""
    rows = figured(game, deck, numbers)
    placed = len(placed_rounds(game))
    put_figured(GameLuck(game.game.id, list(numbers), placed, rows, game.finished))


def deck_of(match: Match) -> int:
    """The highest card of a match's deck."""
    return rules.deck_size(len(match.seats), match.pro)


def drop_stale_luck(corrected: Sequence[int]) -> None:
    """Inside a write to a match: the corrected games' rows dropped (each is figured anew,
    by ``stale_luck`` after the write: the write itself places no card for luck, so the
    table never waits for it)."""
    for model in (PlayLuck, LuckPlayer):
        db.session.execute(delete(model).where(model.game_id.in_(corrected)))


def plays_cards(match_id: int) -> bool:
    """Inside a write to a match: whether its newest game is a card game, whose luck
    ``stale_luck`` then figures. One small query: the match's ORM object would load its
    seats, players and games here, under the writer lock (bench.round_cpu, issue 59)."""
    newest = select(Game.mode).where(Game.match_id == match_id).order_by(Game.number.desc())
    return db.session.scalar(newest.limit(1)) == "cards"


class StaleLuck(NamedTuple):
    """A match's version as read, its card games' luck figured anew (the newest games
    first), and whether more games wait beyond the ``limit`` asked for."""

    version: int
    games: list[GameLuck]
    more: bool


def stale_luck(match_id: int, limit: int | None = None) -> StaleLuck | None:
    """The luck of the match's card games that is not in line, figured (read only: no
    write is open meanwhile), ``limit`` games at most; None for a match that is gone.
    The newest game first (the round just entered), then the oldest: a table sending
    rounds faster than a look takes leaves no game of its own behind for good."""
    match = db.session.get(Match, match_id)
    if match is None:
        return None
    player_ids = [seat.player_id for seat in match.seats]
    games = [game for game in match.games if game.mode == "cards"]
    whole = whole_games(match_id)
    looked = games[-1:] + [game for game in games[:-1] if game.id not in whole]
    have = stored([game.id for game in looked])
    found = []
    for stored_game in looked:
        game = played_game(stored_game, player_ids)
        kept = have.get(stored_game.id, {})
        stale = stale_rounds(game, kept)
        placed = len(placed_rounds(game))
        if stale or any(number > placed for number in kept):
            if limit is not None and len(found) == limit:
                return StaleLuck(match.version, found, True)
            rows = figured(game, deck_of(match), stale)
            found.append(GameLuck(stored_game.id, stale, placed, rows, game.finished))
    return StaleLuck(match.version, found, False)


def whole_games(match_id: int) -> set[int]:
    """The match's games with a kept row for each of their plays, every one figured with
    the whole hands: finished games whose luck was all figured at their end. A look
    (``stale_luck``) replays the open game and those not among them, so a round's look
    does not grow with the evening (issue 59). Their rows stay the rounds' own: a game
    before the open one changes only by a correction, whose write drops its rows
    (``drop_stale_luck``); ``rebuild_luck`` checks every row of every game."""
    plays = (
        select(Play.game_id, func.count())
        .join(Game, Game.id == Play.game_id)
        .where(Game.match_id == match_id)
        .group_by(Play.game_id)
    )
    rows = (
        select(PlayLuck.game_id, func.count(), WHOLE_ROWS)
        .where(PlayLuck.match_id == match_id)
        .group_by(PlayLuck.game_id)
    )
    played = dict(db.session.execute(plays).all())
    kept = db.session.execute(rows).all()
    return {game_id for game_id, count, figured in kept if figured == count == played.get(game_id)}


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


class KeptLuck(NamedTuple):
    """A card game's luck as kept: its rows in line, and the placed rounds not figured
    yet (the background's next work; a page or ``luck.json`` says so, never figures)."""

    rows: list[LuckRow]
    pending: list[int]


def read(game: PlayedGame) -> KeptLuck:
    """A card game's kept rows for a page or ``luck.json``, round by round and lowest card
    first, and the placed rounds whose rows are not in line yet. Figuring them here would
    hold up every request of the server process (0.2 s a game of ten players)."""
    have = stored([game.game.id]).get(game.game.id, {})
    stale = stale_rounds(game, have)
    placed = len(placed_rounds(game))
    kept = [
        row
        for number, rows in have.items()
        if number <= placed and number not in stale
        for row in rows
    ]
    return KeptLuck(sorted(kept, key=lambda row: (row.round_number, row.card)), stale)


class LuckRebuilt(NamedTuple):
    """What ``rebuild_luck`` found: the match of each game whose kept luck differed, and of
    each game with rounds not figured yet (an import's, an upgrade's, or the newest rounds
    the background had not reached when the server stopped: not a difference)."""

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
        wrong_sums = sums_out_of_line(match.id)
        for stored_game in games:
            game = played_game(stored_game, player_ids)
            kept = have.get(stored_game.id, {})
            pending = pending_rounds(game, kept)
            wanted = {
                row for row in figured(game, deck_of(match)) if row.round_number not in pending
            }
            in_line = {
                row for number, rows in kept.items() if number not in pending for row in rows
            }
            if wanted != in_line or stored_game.id in wrong_sums:
                found.differing.append(match.id)
                echo(f"match {match.id} game {stored_game.number}: luck differs")
            elif pending:
                found.missing.append(match.id)
            else:
                continue
            if not check:
                put(game, range(1, len(placed_rounds(game)) + 1), deck_of(match))
    return found


def pending_rounds(game: PlayedGame, kept: dict[int, list[LuckRow]]) -> set[int]:
    """The rounds whose kept rows are the background's work still: placed rounds not
    figured, or figured before the game ended, and rows past the placed rounds."""
    placed = len(placed_rounds(game))
    return set(stale_rounds(game, kept)) | {number for number in kept if number > placed}


# What the match pages read of the luck, statements built once: a page's render reads
# them, and SQLAlchemy then skips building and keying them (issue 59).
ROUND_CHANCES = select(PlayLuck.card, PlayLuck.chance).where(
    PlayLuck.game_id == bindparam("game_id"), PlayLuck.round_number == bindparam("number")
)
FINISHED_LUCK = (
    select(LuckPlayer.player_id, func.sum(LuckPlayer.expected), func.sum(LuckPlayer.bulls))
    .where(LuckPlayer.game_id.in_(bindparam("game_ids", expanding=True)))
    .group_by(LuckPlayer.player_id)
)


def round_chances(game_id: int, number: int) -> dict[int, float]:
    """A placed round's chance of taking a row, by card, as stored ({} when not yet)."""
    return dict(read_built(ROUND_CHANCES, game_id=game_id, number=number).all())


def complete_games(among) -> Select:
    """The ids of the games, of those ``among`` picks (a condition on ``LuckPlayer``),
    whose every round is figured with the whole hands: finished games whose luck is all
    there (a statement to select in)."""
    return select(LuckPlayer.game_id).where(among).distinct()


def finished_luck(game_ids: Sequence[int]) -> dict[int, rules.PlayerLuck]:
    """Each player's expected bulls and bulls taken over these finished card games, as
    stored, by player id; only games whose every round is figured with whole hands (a game
    an import brought counts once the background has figured it)."""
    return {
        player_id: rules.PlayerLuck(player_id, float(expected), int(bulls))
        for player_id, expected, bulls in read_built(FINISHED_LUCK, game_ids=list(game_ids))
    }


def sums_out_of_line(match_id: int) -> set[int]:
    """The match's games whose kept players' sums (``LuckPlayer``) are not those of their
    kept rows (``player_sums``)."""
    kept = select(*(getattr(LuckPlayer, name) for name in SUMMED))
    return differing_sums(
        kept.where(LuckPlayer.match_id == match_id), player_sums(PlayLuck.match_id == match_id)
    )


def differing_sums(kept: Select, summed: Select) -> set[int]:
    """The games whose players' sums as kept (rows of game, match, player and figures) are
    not as summed from their rows (to a rounding: a sum's order may differ from one
    database to another)."""
    found: dict[tuple[int, int], list] = {}
    for side, query in enumerate((kept, summed)):
        for row in db.session.execute(query):
            found.setdefault((row[0], row[2]), [None, None])[side] = tuple(row[3:])
    return {game_id for (game_id, _), (a, b) in found.items() if not same_sums(a, b)}


def same_sums(kept: tuple | None, summed: tuple | None) -> bool:
    """Whether a player's kept sums are their rows' (to a rounding)."""
    if kept is None or summed is None:
        return kept is summed
    return all(
        a == b if a is None or b is None else math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
        for a, b in zip(kept, summed, strict=True)
    )
