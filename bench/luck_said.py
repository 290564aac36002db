"""How often a round's luck shows on the table: the rounds whose summary says a chance.

Run: .venv/bin/python -m bench.luck_said [--players 3 5 10] [--rounds 360] [--seed 59]
(prints figures; not a test). Random deals of whole games (row choices at random), each
round's luck figured as the background process figures an open game's
(``rules.game_odds``, the round's card alone): of rounds 1-9 (round 10 ends the game,
whose luck always shows), how many took a row, and how many had a take with a chance of
``rules.IMPROBABLE`` or less, the one thing an open game's luck changes on the table's
pages. Its write raises the table version then, and each phone is sent the news above the
rows (``play.live.part_for``); every other round's luck keeps it, and each phone gets
one line (``derived.play_luck.seen_at_table``, issue 59). ``bench.push``'s rising cards
say a chance in every round: its luck pushes are this figure's worst case.
"""

from __future__ import annotations

import argparse
import random

from companion import rules
from tests.driver import deal


def played(rng: random.Random, players: int):
    """A random game's starting cards, rounds (plays and row choices) and player ids."""
    ids = list(range(1, players + 1))
    hands, starting = deal(rng, players)
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        plays = {pid: hands[seat][turn] for seat, pid in enumerate(ids)}
        table.start_round(plays.items())
        choices: dict[int, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = rng.randint(1, 4)
        rounds.append((list(plays.items()), choices))
    return starting, rounds, ids


def count(players: int, rounds: int, seed: int) -> tuple[int, int, int]:
    """Rounds 1-9 looked at, those that took a row, those that say a chance."""
    rng = random.Random(seed)
    looked = taken = said = 0
    game = 0
    while looked < rounds:
        game += 1
        starting, entered, ids = played(rng, players)
        placed = list(rules.replay_game(starting, entered, ids).rounds)
        deck = rules.deck_size(players, False)
        for plays in rules.game_odds(starting, placed, deck, False, (game,), None)[:-1]:
            looked += 1
            taken += any(play.bulls for play in plays)
            said += any(play.bulls and play.chance <= rules.IMPROBABLE for play in plays)
    return looked, taken, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 10])
    parser.add_argument("--rounds", type=int, default=360, help="rounds 1-9 per player count")
    parser.add_argument("--seed", type=int, default=59)
    args = parser.parse_args()
    for players in args.players:
        looked, taken, said = count(players, args.rounds, args.seed)
        print(
            f"{players} players: {looked} rounds (1-9 of random games), a row taken in "
            f"{taken} ({100 * taken / looked:.0f} %), a chance said in {said} "
            f"({100 * said / looked:.0f} %): the table version rises for its luck"
        )


if __name__ == "__main__":
    main()
