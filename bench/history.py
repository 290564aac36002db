"""A household history for the benchmarks: 10 players, 5,000 matches, in bulk.

About 50 years of game nights, two matches a week: mostly 3 to 6 players, each match
card by card (60 %) or score-only (typed bulls, now and then the pile's cards), one
match in ten of up to 5 players in the pro variant, a few ending after a number of
games. Games are simulated with the rules engine, so every card and row choice is
legal; the newest match is still being played. Rows are inserted in bulk (one
executemany per table and chunk), not through HTTP, with the derived tables written by
the functions the app uses (``companion.derived.figures``).

Used by ``bench/leaderboard.py`` and ``bench/export.py``.
"""

from __future__ import annotations

import random
from datetime import timedelta

from sqlalchemy import insert, text

from companion import derived, rules
from companion.backup.load import COPIED
from companion.db import db
from companion.derived import GameResult, figures, ratings
from companion.derived.timing import GameTimes, counted, timeline
from companion.models import (
    Game,
    Match,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
    Seat,
    utcnow,
)
from companion.rules.names import name_key

NAMES = ("Anna", "Ben", "Cleo", "Dan", "Eva", "Finn", "Greta", "Hans", "Ida", "Jürgen")
MATCHES = 5_000
SIZES = (2, 3, 4, 5, 6, 7, 8)
SIZE_WEIGHTS = (3, 25, 30, 22, 14, 4, 2)
CHUNK = 250  # matches per bulk insert


def simulate_cards(rng: random.Random, players: list[int], deck: int):
    """A legal game: starting cards, rounds (plays, choices) and the engine's replay."""
    dealt = rng.sample(range(1, deck + 1), rules.HAND_SIZE * len(players) + 4)
    starting = dealt[-4:]
    table = rules.Table([(card,) for card in starting])
    rounds, results = [], []
    for turn in range(rules.HAND_SIZE):
        plays = [(player, dealt[seat * 10 + turn]) for seat, player in enumerate(players)]
        table.start_round(plays)
        choices: dict[int, int] = {}
        while (pending := table.run(choices)) is not None:
            row = pending.suggested if rng.random() < 0.75 else rng.randint(1, 4)
            choices[pending.player] = row
        rounds.append((plays, choices))
        results.append(table.round_result())
    replay = rules.GameState(table.rows, {}, tuple(results))
    bulls = dict.fromkeys(players, 0)
    for result in results:
        for player, count in result.bulls_by_player().items():
            bulls[player] += count
    return starting, rounds, replay, bulls


class History:
    """Rows to insert, with ids handed out here so one executemany per table suffices."""

    TABLES = COPIED  # every table a backup holds, parents first: the import's order

    def __init__(self) -> None:
        self.rows: dict[type, list[dict]] = {model: [] for model in self.TABLES}
        self.next_id = dict.fromkeys(("match", "game", "round"), 1)

    def new_id(self, kind: str) -> int:
        """The next id of a match, game or round."""
        value = self.next_id[kind]
        self.next_id[kind] += 1
        return value

    def add(self, model, **values) -> None:
        """Queue one row of ``model``."""
        self.rows[model].append(values)

    def flush(self) -> None:
        """Insert what was collected, table by table, in one transaction."""
        for model in self.TABLES:
            if self.rows[model]:
                db.session.execute(insert(model), self.rows[model])
            self.rows[model] = []
        db.session.commit()


def add_match(history: History, rng: random.Random, ids: list[int], when, last: bool) -> None:
    """One match: its seats, games until the end condition, and the derived rows."""
    match_id = history.new_id("match")
    players = rng.sample(ids, rng.choices(SIZES, SIZE_WEIGHTS)[0])
    pro = len(players) <= 5 and rng.random() < 0.1
    deck = rules.deck_size(len(players), pro)
    end = (
        rules.EndCondition()
        if rng.random() < 0.85
        else rules.EndCondition(rules.GAMES, rng.randint(3, 6))
    )
    cards_mode = rng.random() < 0.6
    history.add(
        Match, id=match_id, created_at=when, end_kind=end.kind, end_value=end.value, pro=pro
    )
    for position, player in enumerate(players, 1):
        history.add(Seat, match_id=match_id, player_id=player, position=position)
    games, times, finished = [], [], []
    while not rules.standing(players, games, end).over:
        game_id = history.new_id("game")
        starting, rounds, replay, bulls = simulate_cards(rng, players, deck)
        games.append(bulls)
        mode = "cards" if cards_mode or rng.random() < 0.1 else "scores"
        started = when + timedelta(minutes=20 * len(games))
        history.add(
            Game,
            id=game_id,
            match_id=match_id,
            number=len(games),
            mode=mode,
            created_at=started,
            **({f"row{n}": card for n, card in enumerate(starting, 1)} if mode == "cards" else {}),
        )
        stamps = (started,) * len(rounds) if mode == "cards" else ()
        times.append(GameTimes(len(games), mode, started, stamps))
        if mode == "cards":
            add_rounds(history, game_id, rounds, started)
        else:
            add_scores(history, rng, game_id, replay, bulls)
        for player, count in bulls.items():
            history.add(GameResult, game_id=game_id, player_id=player, bulls=count)
        rows, rivals, takes = figures.game_rows(
            game_id, match_id, bulls, replay if mode == "cards" else None
        )
        finished.append(figures.Finished(len(games), bulls, rows))
        for row in rows:
            history.add(derived.PlayerGameStat, **row._asdict())
        for rival in rivals:
            history.add(derived.NemesisCount, **rival._asdict())
        for take in takes:
            history.add(derived.CardTake, **take._asdict())
        if last:
            break  # the newest match is still being played
    minutes = timeline(when, counted(times)).match.minutes
    for row in figures.match_rows(match_id, when, players, end, finished, minutes):
        history.add(derived.PlayerMatchStat, **row._asdict())


def add_rounds(history: History, game_id: int, rounds, when) -> None:
    """A card-by-card game's rounds, plays and row choices."""
    for number, (plays, choices) in enumerate(rounds, 1):
        round_id = history.new_id("round")
        history.add(Round, id=round_id, game_id=game_id, number=number, created_at=when)
        for player, card in plays:
            history.add(Play, round_id=round_id, game_id=game_id, player_id=player, card=card)
        for player, row in choices.items():
            history.add(RowChoice, round_id=round_id, player_id=player, row=row)


def add_scores(history: History, rng: random.Random, game_id: int, replay, bulls) -> None:
    """A score-only game: the simulated bulls typed, one player in five typing the pile.

    The pile is the cards the engine gave that player, so it counts the same bulls.
    """
    piles: dict[int, list[int]] = {player: [] for player in bulls}
    for result in replay.rounds:
        for step in result.steps:
            piles[step.player].extend(step.taken)
    for player, count in bulls.items():
        if piles[player] and rng.random() < 0.2:
            cards = ",".join(map(str, piles[player]))
            history.add(Score, game_id=game_id, player_id=player, cards=cards)
        else:
            history.add(Score, game_id=game_id, player_id=player, bulls=count)


def build(
    app,
    matches: int = MATCHES,
    seed: int = 50,
    first=None,
    days_apart: float = 3.5,
    players: int = len(NAMES),
) -> list[int]:
    """Insert the players and the matches; return the player ids.

    The matches are ``days_apart`` apart, the first at ``first`` (default: as many days
    ago as they take); bench/review.py puts 5,000 into one year. ``players`` beyond the
    ten names are "Player 11" and on (bench/household_cap.py: a household at its caps).
    """
    rng = random.Random(seed)
    names = NAMES + tuple(f"Player {number}" for number in range(len(NAMES) + 1, players + 1))
    with app.app_context():
        first = first or utcnow() - timedelta(days=days_apart * matches)
        db.session.execute(
            insert(Player),
            [
                {
                    "id": number,
                    "name": name,
                    "name_key": name_key(name),
                    "archived": number == len(NAMES),
                    "created_at": first - timedelta(days=1, seconds=number),
                }
                for number, name in enumerate(names, 1)
            ],
        )
        ids = list(range(1, len(names) + 1))
        history = History()
        for index in range(matches):
            when = first + timedelta(days=days_apart * index, microseconds=rng.randint(0, 999_999))
            add_match(history, rng, ids, when, last=index == matches - 1)
            if index % CHUNK == CHUNK - 1:
                history.flush()
        history.flush()
        connection = db.session.connection()  # every match rated, as the writes would have
        ratings.write_ratings(connection, ratings.all_rated(connection))
        if connection.dialect.name == "postgresql":  # the ids were given: move past them
            for table in ("match", "game", "round"):
                sequence = f"pg_get_serial_sequence('{table}', 'id')"
                connection.execute(text(f'SELECT setval({sequence}, max(id)) FROM "{table}"'))
        db.session.commit()
        if connection.dialect.name == "postgresql":
            # Statistics for the planner, as autovacuum makes them within a minute of a
            # bulk insert: without them it takes 5,000 matches for a handful.
            with db.engine.connect() as analyzing:
                analyzing.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("ANALYZE")
        counts = {model.__tablename__: db.session.query(model).count() for model in History.TABLES}
    print("rows: " + ", ".join(f"{name} {count:,}" for name, count in counts.items()))
    return ids
