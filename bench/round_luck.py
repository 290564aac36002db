"""Benchmark luck's figures of a round (``companion.rules.luck``, issue 42, item 3).

Run: .venv/bin/python -m bench.round_luck [--games 10] [--players 4 10] [--cpu-share 0.25]
(prints figures; not a test). Target (issue 42): a 10-player round's figures in at most
10 ms of CPU on this machine, with the same precision.

Random games dealt and played by the engine (``bench.game_review.dealt_game``) have their
luck figured as at a game's end (``luck.game_odds`` with whole hands), in a process of its
own (in a cgroup with ``--cpu-share``, as ``bench.push`` holds the server). Per player
count it prints the CPU time per round (median / p95 / max), a fingerprint of every
figure (the same before and after a change that must not move them), and the CPU other
programs on the machine took meanwhile.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import time

from bench.game_review import DECK, dealt_game, in_a_child
from companion.rules import luck


def figure_games(players: int, games: int, results) -> None:
    """In the child process: figure ``games`` games' luck round by round, put each round's
    CPU time on ``results``, then the figures' fingerprint."""
    rng = random.Random(42 + players)
    dealt = [dealt_game(rng, players) for _ in range(games)]
    fingerprint = hashlib.sha256()
    for number, (starting, rounds) in enumerate(dealt, 1):
        for round_number in range(1, len(rounds) + 1):
            cpu = time.process_time()
            odds = luck.game_odds(starting, rounds, DECK, True, (number,), {round_number})
            results.put(time.process_time() - cpu)
            fingerprint.update(repr(odds[round_number - 1]).encode())
    results.put(fingerprint.hexdigest()[:16])
    results.put(None)


def run(players: int, games: int, share: float | None) -> None:
    """Figure the games in a child process (held to ``share`` of a core) and print."""
    found, held, machine = in_a_child(figure_games, (players, games), share)
    *cpu, fingerprint = found
    cpu.sort()
    others = max(machine - sum(cpu), 0.0)
    p95 = cpu[round(0.95 * (len(cpu) - 1))]
    print(f"{players} players, {games} games ({len(cpu)} rounds), {held}:")
    print(
        f"  CPU per round   median {1000 * statistics.median(cpu):6.1f}"
        f"  p95 {1000 * p95:6.1f}  max {1000 * max(cpu):6.1f} ms"
    )
    print(f"  figures' fingerprint {fingerprint}")
    print(f"  other programs took {others:.1f} s of CPU meanwhile ({os.cpu_count()} cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--players", type=int, nargs="+", default=[4, 10])
    parser.add_argument("--cpu-share", type=float, default=None)
    args = parser.parse_args()
    for players in args.players:
        run(players, args.games, args.cpu_share)


if __name__ == "__main__":
    main()
