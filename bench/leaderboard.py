"""Benchmark the statistics pages on a household history of 10 players and 5,000 matches.

Run: .venv/bin/python bench/leaderboard.py   (prints figures; not a test)
Target (issue 5): under 150 ms server time each for /leaderboard, a player page and
/players/<id>/stats, on this 2-core machine.

The history is about 50 years of game nights, two matches a week: mostly 3 to 6
players, each match card by card (60 %) or score-only, games simulated with the rules
engine so every card and row choice is legal. It is inserted in bulk, not through
HTTP; the derived tables are written by the same functions the app uses
(``companion.figures``). Server times are the median of several
requests through the Flask test client, after one cold request (printed too: it reads
the tables and rates every match, which later requests take from the in-memory cache).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from driver import score_game, start_match  # noqa: E402
from sqlalchemy import insert  # noqa: E402

from companion import create_app, derived, figures, rules  # noqa: E402
from companion.db import db  # noqa: E402
from companion.models import (  # noqa: E402
    Game,
    GameResult,
    Match,
    Play,
    Player,
    Round,
    RowChoice,
    Score,
    Seat,
    utcnow,
)

PLAYERS = 10
MATCHES = 5_000
SIZES = (2, 3, 4, 5, 6, 7, 8)
SIZE_WEIGHTS = (3, 25, 30, 22, 14, 4, 2)
CHUNK = 250  # matches per bulk insert


def simulate_cards(rng: random.Random, players: list[int]):
    """A legal game: starting cards, rounds (plays, choices) and the engine's replay."""
    dealt = rng.sample(range(1, rules.STANDARD_DECK + 1), rules.HAND_SIZE * len(players) + 4)
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

    TABLES = (
        Match,
        Seat,
        Game,
        Round,
        Play,
        RowChoice,
        Score,
        GameResult,
        derived.PlayerGameStat,
        derived.NemesisCount,
        derived.PlayerMatchStat,
    )

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
    end = (
        rules.EndCondition()
        if rng.random() < 0.85
        else rules.EndCondition(rules.GAMES, rng.randint(3, 6))
    )
    cards_mode = rng.random() < 0.6
    history.add(Match, id=match_id, created_at=when, end_kind=end.kind, end_value=end.value)
    for position, player in enumerate(players, 1):
        history.add(Seat, match_id=match_id, player_id=player, position=position)
    games = []
    while not rules.standing(players, games, end).over:
        game_id = history.new_id("game")
        starting, rounds, replay, bulls = simulate_cards(rng, players)
        games.append(bulls)
        mode = "cards" if cards_mode or rng.random() < 0.1 else "scores"
        history.add(
            Game,
            id=game_id,
            match_id=match_id,
            number=len(games),
            mode=mode,
            created_at=when,
            **({f"row{n}": card for n, card in enumerate(starting, 1)} if mode == "cards" else {}),
        )
        if mode == "cards":
            add_rounds(history, game_id, rounds, when)
        else:
            for player, count in bulls.items():
                history.add(Score, game_id=game_id, player_id=player, bulls=count)
        for player, count in bulls.items():
            history.add(GameResult, game_id=game_id, player_id=player, bulls=count)
        rows, rivals = figures.game_rows(
            game_id, match_id, bulls, replay if mode == "cards" else None
        )
        for row in rows:
            history.add(derived.PlayerGameStat, **row._asdict())
        for rival in rivals:
            history.add(derived.NemesisCount, **rival._asdict())
        if last:
            break  # the newest match is still being played
    for row in figures.match_rows(match_id, when, players, end, games):
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


def build(app) -> list[int]:
    """Insert the players and the 5,000 matches; return the player ids."""
    rng = random.Random(50)
    with app.app_context():
        db.session.execute(
            insert(Player),
            [
                {
                    "id": number,
                    "name": f"Player {number}",
                    "name_key": f"player {number}",
                    "archived": number == PLAYERS,
                }
                for number in range(1, PLAYERS + 1)
            ],
        )
        ids = list(range(1, PLAYERS + 1))
        history = History()
        first = utcnow() - timedelta(days=3.5 * MATCHES)
        for index in range(MATCHES):
            when = first + timedelta(days=3.5 * index)
            add_match(history, rng, ids, when, last=index == MATCHES - 1)
            if index % CHUNK == CHUNK - 1:
                history.flush()
        history.flush()
        counts = {model.__tablename__: db.session.query(model).count() for model in History.TABLES}
    print("rows: " + ", ".join(f"{name} {count:,}" for name, count in counts.items()))
    return ids


def timed(client, url: str, repeat: int = 15) -> tuple[float, float]:
    """Milliseconds for one cold request, then the median of ``repeat`` more."""
    begin = time.perf_counter()
    response = client.get(url)
    cold = time.perf_counter() - begin
    assert response.status_code == 200, (url, response.status_code)
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        client.get(url)
        samples.append(time.perf_counter() - begin)
    return cold * 1000, statistics.median(samples) * 1000


def main() -> None:
    """Build the history and print the server times."""
    with tempfile.TemporaryDirectory() as folder:
        app = create_app(
            {
                "SQLALCHEMY_DATABASE_URI": f"sqlite:///{folder}/bench.sqlite",
                "SECRET_KEY": "bench",
                "WTF_CSRF_ENABLED": False,
            }
        )
        with app.app_context():
            db.create_all()
        begin = time.perf_counter()
        ids = build(app)
        print(f"history built and inserted in {time.perf_counter() - begin:.1f} s")
        client = app.test_client()
        client.get("/players/")  # the app's own first-request costs, not the statistics'
        pages = [
            ("/leaderboard", "/leaderboard"),
            ("/leaderboard?period=year", "/leaderboard?period=year"),
            ("/leaderboard?players=4", "/leaderboard?players=4"),
            ("player page /players/1", f"/players/{ids[0]}"),
            ("/players/1/stats", f"/players/{ids[0]}/stats"),
            ("/players/1/stats?page=50", f"/players/{ids[0]}/stats?page=50"),
            (
                "/leaderboard/head-to-head",
                f"/leaderboard/head-to-head?first={ids[0]}&second={ids[1]}",
            ),
            ("match history /history", "/history"),
            ("match history /history?page=100", "/history?page=100"),
        ]
        for label, url in pages:
            cold, warm = timed(client, url)
            print(f"{label:32s} {warm:7.1f} ms median   (first request {cold:7.1f} ms)")
        # A match finishes at the table: the next leaderboard rates only that match.
        match_id = start_match(client, ids[:3], end_kind="games", end_value=1)
        assert (
            score_game(client, match_id, dict(zip(ids[:3], (5, 9, 12), strict=True))).status_code
            == 303
        )
        cold, warm = timed(client, "/leaderboard")
        print(
            f"{'/leaderboard after a new match':32s} {warm:7.1f} ms median   "
            f"(first request {cold:7.1f} ms)"
        )


if __name__ == "__main__":
    main()
