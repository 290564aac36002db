"""Benchmark the review of a finished game (``companion.rules.review``, issue 45).

Run: .venv/bin/python -m bench.game_review [--games 5] [--players 4 10] [--cpu-share 0.25]
(prints figures; not a test). Targets (issue 45): a 10-player game's review in at most
3 s of CPU on this machine, and at most 15 s at a Raspberry Pi's share of a core (the
work in a cgroup held to 25 % of one core, as ``bench.push`` holds the server). Without
``--cpu-share`` it runs at full speed, then at a Pi's share (``PI_SHARE``).

Random games dealt and played by the engine (every too-low card on the advised row) are
reviewed in a process of their own (in the cgroup with ``--cpu-share``); per player
count it prints the review's CPU time and wall time per game (median / max), the
sampling noise of the losses (one standard error, median / max, in bulls) and how the
plays were graded, with the CPU other programs on the machine took meanwhile.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import time

from bench.push import cpu_share
from bench.serving import machine_cpu_seconds
from companion import rules
from companion.rules import review

DECK = 104
PI_SHARE = 0.25  # a Raspberry Pi's share of one of this machine's cores


def dealt_game(rng: random.Random, players: int):
    """A whole game dealt and played by the engine: its starting cards and rounds."""
    cards = rng.sample(range(1, DECK + 1), rules.HAND_SIZE * players + 4)
    starting = cards[:4]
    hands = [cards[4 + 10 * seat : 14 + 10 * seat] for seat in range(players)]
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        table.start_round([(seat + 1, hands[seat][turn]) for seat in range(players)])
        choices = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
        rounds.append(table.round_result())
    return starting, rounds


def review_games(players: int, games: int, results) -> None:
    """In the child process: review ``games`` games, put the figures on ``results``."""
    rng = random.Random(45 + players)
    dealt = [dealt_game(rng, players) for _ in range(games)]
    for number, (starting, rounds) in enumerate(dealt, 1):
        cpu, wall = time.process_time(), time.perf_counter()
        reviewed = review.review_game(starting, rounds, DECK, (number,))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        plays = [play for round_plays in reviewed for play in round_plays]
        noise = [play.noise for play in plays if len(play.hand) > 1]
        grades = [play.grade for play in plays]
        results.put((cpu, wall, noise, grades))
    results.put(None)


def in_a_child(target, args: tuple, share: float | None) -> tuple[list, str, float]:
    """Run ``target(*args, results)`` in a forked child process held to ``share`` of a
    core: what it put on ``results`` before None, the cgroup's description, and the CPU
    seconds the whole machine took meanwhile."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=target, args=(*args, results))
    machine = machine_cpu_seconds()
    child.start()
    with cpu_share(share, child.pid) as held:
        found = list(iter(results.get, None))
        child.join()
    return found, held, machine_cpu_seconds() - machine


def run(players: int, games: int, share: float | None) -> None:
    """Review the games in a child process (held to ``share`` of a core) and print."""
    found, held, machine = in_a_child(review_games, (players, games), share)
    others = max(machine - sum(cpu for cpu, *_ in found), 0.0)
    cpu = [figure[0] for figure in found]
    wall = [figure[1] for figure in found]
    noise = [value for figure in found for value in figure[2]]
    grades = [grade for figure in found for grade in figure[3]]
    counted = {name: grades.count(name) for name in dict.fromkeys(grades)}
    print(f"{players} players, {games} games, {held}:")
    print(f"  CPU per game    median {statistics.median(cpu):6.2f}  max {max(cpu):6.2f} s")
    print(f"  wall per game   median {statistics.median(wall):6.2f}  max {max(wall):6.2f} s")
    print(
        f"  noise of a loss median {statistics.median(noise):6.2f}  max {max(noise):6.2f} bulls"
        f" ({review.SAMPLES} playouts; 'best' within {review.NOISE_WIDTH:g} of them)"
    )
    print(f"  grades: {counted}")
    print(f"  other programs took {others:.1f} s of CPU meanwhile ({os.cpu_count()} cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--players", type=int, nargs="+", default=[4, 10])
    parser.add_argument("--cpu-share", type=float, default=None)
    args = parser.parse_args()
    shares = [None, PI_SHARE] if args.cpu_share is None else [args.cpu_share]
    for share in shares:
        for players in args.players:
            run(players, args.games, share)


if __name__ == "__main__":
    main()
