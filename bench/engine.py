"""Benchmark the rules engine: 10-player rounds and complete 4-player games.

Run: .venv/bin/python -m bench.engine   (prints figures; not a test)
Targets (issue 2, 2-core machine, CPython 3.11): a 10-player round under 15 µs
median, and at least 10,000 complete 4-player games per second.
"""

from __future__ import annotations

import random
import statistics
import time

from companion.rules import (
    HAND_SIZE,
    ROWS,
    STANDARD_DECK,
    Table,
    play_round,
    resolve_round,
)

DECK = tuple(range(1, STANDARD_DECK + 1))
PLAYERS_10 = [f"P{i}" for i in range(10)]
PLAYERS_4 = ["Anna", "Ben", "Cleo", "Dan"]


def random_position(rng: random.Random, players: list[str]):
    """Return rows of 1-5 cards and one play per player, all distinct, with choices."""
    cards = rng.sample(range(1, STANDARD_DECK + 1), 20 + len(players))
    rows, start = [], 0
    for _ in range(ROWS):
        length = rng.randint(1, 5)
        rows.append(tuple(sorted(cards[start : start + length])))
        start += length
    plays = list(zip(players, cards[start : start + len(players)], strict=True))
    choices = {player: rng.randint(1, ROWS) for player in players}
    return rows, plays, choices


def needed_choices(rows, plays, choices):
    """Keep only the choices the round needs, by resolving with all of them."""
    result = resolve_round(rows, plays, choices)
    return {step.player: step.row for step in result.steps if step.action == "too_low"}


def time_rounds(resolver, positions, repeat: int = 20) -> list[float]:
    """Return the seconds one round takes, for each position (best of a few batches)."""
    timer = time.perf_counter
    samples = []
    for rows, plays, choices in positions:
        best = float("inf")
        for _ in range(3):
            begin = timer()
            for _ in range(repeat):
                resolver(rows, plays, choices)
            best = min(best, timer() - begin)
        samples.append(best / repeat)
    return samples


def checked_round(rows, plays, choices):
    """Check and resolve a round, as the API does."""
    return play_round(rows, plays, choices)


def simulate_game(rng: random.Random, players: list[str]) -> dict[str, int]:
    """Play one complete game with random legal play and the suggested row choices."""
    count = len(players)
    dealt = rng.sample(DECK, HAND_SIZE * count + ROWS)
    table = Table([(card,) for card in dealt[-ROWS:]])
    bulls = dict.fromkeys(players, 0)
    for turn in range(HAND_SIZE):
        # The deal is random, so playing each hand in dealt order is random legal play.
        plays = [(player, dealt[seat * HAND_SIZE + turn]) for seat, player in enumerate(players)]
        table.start_round(plays)
        choices: dict[str, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
        for step in table.steps:
            bulls[step.player] += step.bulls
    return bulls


def main() -> None:
    """Print the engine's figures."""
    rng = random.Random(6)
    positions = []
    for _ in range(5_000):
        rows, plays, choices = random_position(rng, PLAYERS_10)
        positions.append((rows, plays, needed_choices(rows, plays, choices)))

    for label, resolver in (
        ("resolve_round", resolve_round),
        ("play_round (checked)", checked_round),
    ):
        samples = time_rounds(resolver, positions)
        median = statistics.median(samples)
        p95 = statistics.quantiles(samples, n=20)[-1]
        print(
            f"10-player round, {label:22s} {median * 1e6:6.2f} µs median, "
            f"{p95 * 1e6:6.2f} µs p95 ({1 / statistics.fmean(samples):,.0f} rounds/s)"
        )

    games = 20_000
    rates = []
    for seed in range(5):
        game_rng = random.Random(seed)
        begin = time.perf_counter()
        for _ in range(games):
            simulate_game(game_rng, PLAYERS_4)
        rates.append(games / (time.perf_counter() - begin))
    print(
        f"complete 4-player games (10 rounds):     {statistics.median(rates):,.0f} games/s "
        f"median of 5 x {games:,}"
    )


if __name__ == "__main__":
    main()
