"""A stored match, replayed: its games' tables, piles and bulls, its score and what comes next.

Two doors read a match, each named for what it gives:

- ``current_state``: the match replayed at its current version, shared by every request
  that asks for that version (pages, the checks of a write, the live regions);
- ``match_stamp``: its versions and link tokens alone, one small query, which polls
  and streams compare to tell whether anything changed.

Behind them, ``match_state`` replays a match's ORM objects in this session: the store,
the derived tables' refresh and rebuild, and the backup's check use it inside a write.
A page about the match itself rather than its play (its links, a rematch, a history
entry) reads the row alone, with Flask-SQLAlchemy's ``db.get_or_404(Match, match_id)``.
The rules engine does all the placing and counting; this module only feeds it the
stored inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from flask import abort
from sqlalchemy import bindparam, select

from companion import rules
from companion.db import db
from companion.memo import Memo
from companion.models import (
    Correction,
    Game,
    GameResult,
    Match,
    PendingCard,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
)
from companion.storage.feed import MATCH_STAMP  # a match's stamp, read once


@dataclass
class PlayedGame:
    """One game of a match, replayed."""

    game: Game
    table: rules.GameState | None  # cards mode only
    bulls: dict[int, int]  # by player id: so far, or final once finished
    finished: bool
    # Cards entered for the coming round, by player id; hidden until all are in.
    entered: dict[int, int] = field(default_factory=dict)

    @property
    def number(self) -> int:
        """The game's number in its match, from 1."""
        return self.game.number

    @property
    def pending(self) -> rules.ChoiceNeeded | None:
        """The row choice this game waits for, if any."""
        return self.table.pending if self.table else None

    @property
    def rounds_played(self) -> int:
        """How many rounds have been entered (the last may wait for a choice)."""
        return len(self.table.rounds) if self.table else 0

    @property
    def last_round(self) -> rules.RoundResult | None:
        """The most recent round's steps, if any."""
        return self.table.rounds[-1] if self.table and self.table.rounds else None

    @property
    def seen(self) -> set[int]:
        """Cards seen in this game: the starting cards and every card played."""
        if not self.table:
            return set()
        return set(self.game.starting) | set(self.table.played)


@dataclass
class MatchState:
    """A match replayed from its inputs."""

    match: Match
    players: list[Player]
    end: rules.EndCondition
    deck: int
    games: list[PlayedGame] = field(default_factory=list)
    version: int = 0  # the match version this state shows (``match.version`` at replay)
    # ... and its table and input versions: a replay taken on at a later table version
    # (``replayed_table``) shows that one, whatever its ``match`` row says.
    table_version: int = 0
    input_version: int = 0
    # The newest correction while nothing was entered after it (a plain row): every
    # phone shows what it changed until the table moves on.
    correction: object = None

    @property
    def player_ids(self) -> list[int]:
        """The players' ids in seating order."""
        return [player.id for player in self.players]

    @property
    def finished_games(self) -> list[PlayedGame]:
        """The complete games, oldest first."""
        return [game for game in self.games if game.finished]

    @property
    def current(self) -> PlayedGame | None:
        """The game being played, if one is open."""
        if self.games and not self.games[-1].finished:
            return self.games[-1]
        return None

    @property
    def standing(self) -> rules.Standing:
        """Totals, whether the match is over, and its winners."""
        return rules.standing(
            self.player_ids, [game.bulls for game in self.finished_games], self.end
        )

    @property
    def running(self) -> rules.Running:
        """The score as the players watch it: complete games plus the open game so far."""
        current = self.current
        return rules.running(
            self.player_ids,
            [game.bulls for game in self.finished_games],
            current.bulls if current else {},
            self.end,
        )

    @property
    def over(self) -> bool:
        """True once a complete game met the end condition."""
        return self.standing.over

    @property
    def repeated(self) -> list[tuple[int, list[int]]]:
        """The cards two players or more typed for the coming round, once every card is
        in: a typo (each card exists once) that keeps the round from being placed until
        they fix their own. None while cards are still to come: until then nothing may
        depend on the hidden cards."""
        current = self.current
        if current is None or len(current.entered) < len(self.players):
            return []
        return rules.repeated_cards({seat: current.entered[seat] for seat in self.player_ids})

    def name(self, player_id: int) -> str:
        """The name of a player of this match."""
        return next(player.name for player in self.players if player.id == player_id)

    def running_totals(self) -> list[dict[int, int]]:
        """Each player's total after each complete game, for the chart."""
        totals = dict.fromkeys(self.player_ids, 0)
        history = []
        for game in self.finished_games:
            for player_id, count in game.bulls.items():
                totals[player_id] += count
            history.append(dict(totals))
        return history


def match_state(match: Match, replay_all: bool = False) -> MatchState:
    """Replay a stored match.

    Only the last game can still change, so earlier games are read from their derived
    results unless ``replay_all`` asks to replay every game (``rebuild`` does).
    Inputs are read as plain rows, not ORM objects: the match page is read far more
    often than it is written.
    """
    players = [seat.player for seat in match.seats]
    end = rules.EndCondition(match.end_kind, match.end_value)
    deck = rules.deck_size(len(players), match.pro)
    versions = {"table_version": match.table_version, "input_version": match.input_version}
    state = MatchState(match, players, end, deck, version=match.version, **versions)
    state.correction = latest_correction(match.id, match.table_version)
    ids = [player.id for player in players]
    results = {} if replay_all else stored_results(match.id)
    last = len(match.games) - 1
    state.games = [
        PlayedGame(game, None, results[game.id], finished=True)
        if index != last and game.id in results
        else played_game(game, ids)
        for index, game in enumerate(match.games)
    ]
    return state


REPLAYS = Memo("replays", 256)  # versions kept: more than the tables a house plays at once
TABLE_REPLAYS = Memo("table_replays", 256)  # the replay behind each table_version
INPUT_REPLAYS = Memo("input_replays", 256)  # ... and behind each input_version
Stamp = tuple[int, int, str, str]  # version, table version, player token, watch token


def match_stamp(match_id: int) -> Stamp | None:
    """The match's version, table version and link tokens (what a poll or a stream
    compares with what a phone shows), or None when there is no such match."""
    return read(MATCH_STAMP, match_id=match_id).first()


def current_state(match_id: int, stamp: Stamp | None = None) -> MatchState:
    """The match at its current version (or at ``stamp``, read already), replayed once
    and shared, for reading; 404 if there is no such match. See ``shared_replay``."""
    stamp = stamp or match_stamp(match_id)
    if stamp is None:
        abort(404)
    version, table_version, token, _watch_token = stamp
    return shared_replay(match_id, version, table_version, token)


def shared_replay(match_id: int, version: int, table_version: int, token: str) -> MatchState:
    """The match at ``version`` (read in this transaction), replayed once and shared.

    Every phone of a table asks for the same version within seconds of each other: the
    first request replays it, the others (and the next write's check) read the same
    state. A version never changes once written, so the replay stays true. The shared
    state is detached from any session and only read: everything a page or a check
    reads was loaded by the replay. Writes that change ORM objects (undo) replay their
    own with ``match_state``.

    The versions are read from the database, so every server process, and every server
    sharing one PostgreSQL, shows the same. They count per match, and a match's id can
    come back after the match was deleted (SQLite hands out the largest id again; an
    import counts on from the largest): the player link's ``token``, new for every
    match, tells the two apart. On PostgreSQL each statement of the replay reads the
    latest commit, so a replay may hold a newer entry than its version says, never an
    older one; a write's version check still decides (``companion.store``).

    Every write but hidden cards (and derived rows the table's live pages do not show)
    raises ``table_version`` too. So a version whose table_version was replayed before
    differs from that replay only by the cards waiting to be revealed (derived rows are
    read apart): it is that replay with this version's hidden cards, one
    small query instead of a replay (a table's six phones send their cards one by one).
    And a table version whose input_version was replayed before differs from it only by
    derived rows, which pages read apart (a round's luck, a game's review): that replay
    is taken on, with its versions, its correction and its hidden cards read anew
    (``replayed_table``).
    """
    # The table's other phones wait for this replay rather than make it again.
    return REPLAYS.once(
        (match_id, token, version),
        lambda: replay_version(match_id, version, table_version, token),
    )


def replay_version(match_id: int, version: int, table_version: int, token: str) -> MatchState:
    """Replay the match (or read a table version's hidden cards) and keep the result
    under the version it shows: on PostgreSQL that may be newer than the one asked for
    (see ``shared_replay``), which is why it uses ``Memo.once``, not ``Memo.through``."""
    table = TABLE_REPLAYS.get((match_id, token, table_version))
    if table is not None and table.current is not None:
        state = with_hidden_cards(table, version)
    else:
        state = replayed_table(match_id, token)
        TABLE_REPLAYS.put(replay_key(state, state.table_version), state)
    REPLAYS.put(replay_key(state, state.version), state)
    return state


def replayed_table(match_id: int, token: str) -> MatchState:
    """The match at its current table version: the replay of its input_version if this
    process made one (a write of derived rows alone came since, a round's luck), with
    what such a write moves read anew; else replayed from its rows and kept."""
    now = read(VERSIONS, match_id=match_id).first()
    earlier = None if now is None else INPUT_REPLAYS.get((match_id, token, now.input_version))
    if earlier is not None and now.player_token == token:
        return at_versions(earlier, now)
    state = match_state(db.get_or_404(Match, match_id))
    detach(state)
    INPUT_REPLAYS.put(replay_key(state, state.input_version), state)
    return state


def at_versions(earlier: MatchState, now) -> MatchState:
    """``earlier`` at the versions ``now`` holds, of the same input_version: the newest
    correction as it stands at that table version (carried on by a derived write,
    ``store.carry_correction``) and the open game's hidden cards read anew."""
    if earlier.current is not None:
        earlier = with_hidden_cards(earlier, now.version)
    return replace(
        earlier,
        version=now.version,
        table_version=now.table_version,
        correction=latest_correction(now.id, now.table_version),
    )


def after_write(before: MatchState, hidden: bool) -> MatchState:
    """Inside a write that raised the match's versions from ``before``'s and added to its
    open game alone (a round, a row choice, hidden cards: ``store.adds_to_the_open_game``):
    the match as the write leaves it, the open game replayed from what the transaction
    holds, everything else taken from ``before``. A replay reads the last game's rows
    even once it ended (``match_state``), and its stored results only for the games
    before it: round 10 is kept too. Kept once committed (``keep_written``), the table's
    phones, pushed the new version at once, read it rather than replay the match.
    The correction it shows needs no read: a correction is stored at the table version
    its own write makes (carried on only by writes of derived rows), so a round moves the
    table on from it, and hidden cards keep it."""
    game = played_game(before.current.game, before.player_ids)
    raised = int(not hidden)
    return with_open_game(
        before,
        game,
        version=before.version + 1,
        table_version=before.table_version + raised,
        input_version=before.input_version + raised,
        correction=before.correction if hidden else None,
    )


def keep_written(state: MatchState) -> None:
    """Keep a write's replay of the version it stored (``after_write``), once committed."""
    REPLAYS.put(replay_key(state, state.version), state)
    TABLE_REPLAYS.put(replay_key(state, state.table_version), state)
    INPUT_REPLAYS.put(replay_key(state, state.input_version), state)


def replay_key(state: MatchState, version: int) -> tuple[int, str, int]:
    """Where a replay is kept: its match, the match's token and a version of it."""
    return state.match.id, state.match.player_token, version


def with_hidden_cards(table: MatchState, version: int) -> MatchState:
    """``table`` at another version of the same table_version: its hidden cards read anew."""
    current = table.current
    return with_open_game(
        table, replace(current, entered=entered(current.game.id)), version=version
    )


def with_open_game(state: MatchState, game: PlayedGame, **changes) -> MatchState:
    """``state`` with ``game`` in place of its last game, and ``changes``."""
    return replace(state, games=[*state.games[:-1], game], **changes)


def latest_correction(match_id: int, table_version: int):
    """The newest correction made at this table version of the match, if any."""
    return read(LATEST_CORRECTION, match_id=match_id, table_version=table_version).first()


def detach(state: MatchState) -> None:
    """Take a replay's objects out of the session, as they will be in later requests."""
    db.session.expunge(state.match)  # with its seats, games and their loaded rows
    for player in state.players:
        if player in db.session:
            db.session.expunge(player)


def stored_results(match_id: int) -> dict[int, dict[int, int]]:
    """The results of a match's finished games as stored: bulls by player, by game id
    (a replay reads them; so do ``companion.derived``'s refresh and rebuild)."""
    results: dict[int, dict[int, int]] = {}
    for game_id, player_id, bulls in read(STORED_RESULTS, match_id=match_id):
        results.setdefault(game_id, {})[player_id] = bulls
    return results


def played_game(game: Game, player_ids: Sequence[int]) -> PlayedGame:
    """Replay one game: its rounds through the engine, or its typed scores."""
    if game.mode == "scores":
        bulls = {score.player_id: score_bulls(score) for score in game.scores}
        return PlayedGame(game, None, bulls, finished=True)
    table = rules.replay_game(game.starting, stored_rounds(game.id), player_ids)
    finished = table.finished
    return PlayedGame(game, table, table.bulls(), finished, {} if finished else entered(game.id))


def entered(game_id: int) -> dict[int, int]:
    """The hidden cards entered so far for a game's coming round, by player id."""
    return dict(read(HIDDEN, game_id=game_id).all())


def stored_rounds(game_id: int) -> list[tuple[list[tuple[int, int]], dict[int, int]]]:
    """A game's rounds in order: each round's (player, card) plays and row choices."""
    plays = read(PLAYS, game_id=game_id)
    choices = read(CHOICES, game_id=game_id)
    rounds: dict[int, tuple[list[tuple[int, int]], dict[int, int]]] = {}
    for number, player_id, card in plays:
        rounds.setdefault(number, ([], {}))[0].append((player_id, card))
    for number, player_id, row in choices:
        rounds[number][1][player_id] = row
    return [rounds[number] for number in sorted(rounds)]


# The replay's inputs, read as plain rows: statements built once (SQLAlchemy then skips
# building and keying them for every read) and run on the session's connection.
LATEST_CORRECTION = (
    select(
        Correction.game_id,
        Correction.round_number,
        Correction.cards,
        Correction.choices,
        Correction.dropped,
    )
    .join(Game)
    .where(Game.match_id == bindparam("match_id"))
    .where(Correction.table_version == bindparam("table_version"))
    .order_by(Correction.id.desc())
    .limit(1)
)
# Finished games' results as stored (kept by ``companion.derived``'s refresh).
STORED_RESULTS = (
    select(GameResult.game_id, GameResult.player_id, GameResult.bulls)
    .join(Game, Game.id == GameResult.game_id)
    .where(Game.match_id == bindparam("match_id"))
)
VERSIONS = select(
    Match.id, Match.version, Match.table_version, Match.input_version, Match.player_token
).where(Match.id == bindparam("match_id"))
HIDDEN = select(PendingCard.player_id, PendingCard.card).where(
    PendingCard.game_id == bindparam("game_id")
)
PLAYS = (
    select(Round.number, Play.player_id, Play.card)
    .join(Play, Play.round_id == Round.id)
    .where(Round.game_id == bindparam("game_id"))
    .order_by(Round.number)
)
CHOICES = (
    select(Round.number, RowChoice.player_id, RowChoice.row)
    .join(RowChoice, RowChoice.round_id == Round.id)
    .where(Round.game_id == bindparam("game_id"))
    .order_by(RowChoice.id)
)


def read(statement, **values):
    """Run one of the statements above (or another built once, ``companion.derived``'s)
    in this request's transaction."""
    return db.session.connection().execute(statement, values)


def score_bulls(score: Score) -> int:
    """The bulls of a score-only entry: typed, or counted from the typed pile."""
    if score.cards is not None:
        return rules.pile_bulls(parse_pile_text(score.cards))
    return score.bulls or 0


def parse_pile_text(text: str) -> list[int]:
    """Split a stored pile ("5,22,47") into cards."""
    return [int(card) for card in text.split(",") if card]
