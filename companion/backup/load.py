"""Writing a checked backup into the database: what is already there is kept, all at once.

Players are the same player when their names are equal ignoring case (the key the app
already keeps unique); matches are the same match when they started at the same moment
with the same seats (``document.match_identity``). New rows get their ids here and are
inserted table by table in one transaction: a history of thousands of matches goes in
as a few bulk inserts, not millions of ORM objects.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from companion import derived, rules
from companion.backup.check import Backup, GameIn, MatchIn
from companion.backup.document import match_identity
from companion.backup.fields import BackupError
from companion.db import db
from companion.models import Game, GameResult, Match, Play, Player, Round, RowChoice, Score, Seat
from companion.players import name_key
from companion.rules import N_


@dataclass
class Report:
    """What an import did."""

    players_added: int = 0
    players_kept: int = 0
    matches_added: int = 0
    matches_kept: int = 0
    in_progress: list[int] = field(default_factory=list)  # ids of added unfinished matches

    def as_dict(self) -> dict[str, int]:
        """The counts by name (for the session and the command line)."""
        return {key: value for key, value in vars(self).items() if isinstance(value, int)}


def import_backup(backup: Backup) -> Report:
    """Add the backup's new players and matches in one transaction; report the counts."""
    try:
        report = write(backup)
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise BackupError(
            N_(
                "The database changed or was busy during the import, so "
                "nothing was imported. Try again."
            )
        ) from None
    except BaseException:
        db.session.rollback()
        raise
    return report


def write(backup: Backup) -> Report:
    """Insert what is new (the caller commits or rolls back)."""
    report = Report()
    player_ids = stored_players()
    new_players = [player for player in backup.players if name_key(player.name) not in player_ids]
    report.players_kept = len(backup.players) - len(new_players)
    report.players_added = len(new_players)
    if new_players:
        db.session.execute(
            insert(Player.__table__),
            [
                {
                    "name": player.name,
                    "name_key": name_key(player.name),
                    "archived": player.archived,
                    "created_at": player.created_at,
                }
                for player in new_players
            ],
        )
        player_ids = stored_players()
    known = stored_identities()
    new_matches = [match for match in backup.matches if match.identity not in known]
    report.matches_kept = len(backup.matches) - len(new_matches)
    report.matches_added = len(new_matches)
    rows = Rows(player_ids)
    for match in new_matches:
        rows.add_match(match)
    rows.insert()
    report.in_progress = rows.in_progress
    return report


def stored_players() -> dict[str, int]:
    """Every player's id by name key."""
    return dict(db.session.execute(select(Player.name_key, Player.id)).all())


def stored_identities() -> set[tuple]:
    """The identity of every match in the database."""
    seats: dict[int, list[str]] = defaultdict(list)
    query = (
        select(Seat.match_id, Player.name)
        .join(Player, Player.id == Seat.player_id)
        .order_by(Seat.match_id, Seat.position)
    )
    for match_id, name in db.session.execute(query):
        seats[match_id].append(name)
    return {
        match_identity(created_at, seats[match_id])
        for match_id, created_at in db.session.execute(select(Match.id, Match.created_at))
    }


def next_id(model) -> int:
    """The first id after every row of ``model`` (the write lock is held)."""
    return (db.session.scalar(select(func.max(model.id))) or 0) + 1


class Rows:
    """The new rows of every table, with ids given here so children can point at them."""

    TABLES = (Match, Seat, Game, Round, Play, RowChoice, Score, GameResult)

    def __init__(self, player_ids: dict[str, int]) -> None:
        self.player_ids = player_ids
        self.rows: dict[type, list[dict]] = {model: [] for model in self.TABLES}
        # The statistics tables (companion.derived), computed by its own functions.
        self.stats: tuple[list, list, list] = ([], [], [])
        self.in_progress: list[int] = []
        self.next_match, self.next_game, self.next_round = (
            next_id(Match),
            next_id(Game),
            next_id(Round),
        )

    def player(self, name: str) -> int:
        """The database id of a player named in the file."""
        return self.player_ids[name_key(name)]

    def add_match(self, match: MatchIn) -> None:
        """A match, its seats and its games."""
        match_id, self.next_match = self.next_match, self.next_match + 1
        self.rows[Match].append(
            {
                "id": match_id,
                "created_at": match.created_at,
                "end_kind": match.end.kind,
                "end_value": match.end.value,
                "pro": match.pro,
                "version": 0,
            }
        )
        seats = [self.player(name) for name in match.seats]
        self.rows[Seat].extend(
            {"match_id": match_id, "player_id": pid, "position": position}
            for position, pid in enumerate(seats, 1)
        )
        finished = [
            bulls
            for number, game in enumerate(match.games, 1)
            if (bulls := self.add_game(match_id, number, game, seats)) is not None
        ]
        self.stats[2].extend(
            derived.match_rows(match_id, match.created_at, seats, match.end, finished)
        )
        over = rules.standing(seats, finished, match.end).over
        if len(finished) < len(match.games) or not over:
            self.in_progress.append(match_id)

    def add_game(
        self, match_id: int, number: int, game: GameIn, seats: list[int]
    ) -> dict[int, int] | None:
        """A game with its rounds or scores; its bulls by player id once finished."""
        game_id, self.next_game = self.next_game, self.next_game + 1
        starting = game.starting or [None] * 4
        self.rows[Game].append(
            {
                "id": game_id,
                "match_id": match_id,
                "number": number,
                "mode": game.mode,
                "row1": starting[0],
                "row2": starting[1],
                "row3": starting[2],
                "row4": starting[3],
                "created_at": game.created_at,
            }
        )
        self.add_rounds(game_id, game, seats)
        self.rows[Score].extend(
            {
                "game_id": game_id,
                "player_id": pid,
                "bulls": None if isinstance(score, list) else score,
                "cards": ",".join(map(str, score)) if isinstance(score, list) else None,
            }
            for pid, score in zip(seats, game.scores, strict=False)  # none in a cards game
        )
        if game.results is None:
            return None
        # Derived: the engine's bulls, worked out while the file was checked.
        bulls = {self.player(name): count for name, count in game.results.items()}
        self.rows[GameResult].extend(
            {"game_id": game_id, "player_id": pid, "bulls": count} for pid, count in bulls.items()
        )
        self.add_game_stats(game_id, match_id, game, seats, bulls)
        return bulls

    def add_game_stats(
        self, game_id: int, match_id: int, game, seats: list[int], bulls: dict[int, int]
    ) -> None:
        """A finished game's statistics rows, from its rounds replayed by the engine."""
        table = None
        if game.mode == "cards":
            table = rules.replay_game(
                game.starting,
                [
                    (
                        list(zip(seats, cards, strict=True)),
                        {self.player(name): row for name, row in choices.items()},
                    )
                    for cards, choices in game.rounds
                ],
                seats,
            )
        games, rivals = derived.game_rows(game_id, match_id, bulls, table)
        self.stats[0].extend(games)
        self.stats[1].extend(rivals)

    def add_rounds(self, game_id: int, game, seats: list[int]) -> None:
        """A cards game's rounds, plays and row choices (choices in the file's order)."""
        for number, (cards, choices) in enumerate(game.rounds, 1):
            round_id, self.next_round = self.next_round, self.next_round + 1
            self.rows[Round].append(
                {
                    "id": round_id,
                    "game_id": game_id,
                    "number": number,
                    "created_at": game.created_at,
                }
            )
            self.rows[Play].extend(
                {"round_id": round_id, "game_id": game_id, "player_id": pid, "card": card}
                for pid, card in zip(seats, cards, strict=True)
            )
            self.rows[RowChoice].extend(
                {"round_id": round_id, "player_id": self.player(name), "row": row}
                for name, row in choices.items()
            )

    def insert(self) -> None:
        """Bulk-insert every table, parents first."""
        for model in self.TABLES:
            if not self.rows[model]:
                continue
            if model in PLAIN_TABLES:
                driver_insert(model.__table__, self.rows[model])
            else:
                db.session.execute(insert(model.__table__), self.rows[model])
        derived.write_rows(*self.stats)


# Tables of plain numbers and texts without defaults: the driver can take their rows as
# they are. Match (link tokens), Game and Round (times) go through SQLAlchemy.
PLAIN_TABLES = (Seat, Play, RowChoice, Score, GameResult)


def driver_insert(table, rows: list[dict]) -> None:
    """Insert rows that all have the same keys with the driver's own executemany.

    A history of thousands of matches has about a million plays; SQLAlchemy prepares
    each row's parameters in Python, which takes as long again as the inserts.
    """
    connection = db.session.connection()
    compiled = insert(table).compile(connection, column_keys=list(rows[0]))
    order = compiled.positiontup
    cursor = connection.connection.cursor()
    try:
        cursor.executemany(str(compiled), [tuple(row[key] for key in order) for row in rows])
    finally:
        cursor.close()
