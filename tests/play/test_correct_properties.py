"""Properties of corrections and "undo to here", on random games played through the app:
a correction anywhere ends where entering the corrected game from the start ends, and
undoing to a round ends where undoing one entry at a time ends."""

import itertools
import random
import re

from correcting import correct, form_values, inputs_of
from driver import (
    add_players,
    choose,
    deal,
    enter_round,
    pending_of,
    start_game,
    start_match,
    state_of,
    undo,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion import rules
from companion.derived import stored_rows

TABLES = itertools.count()  # every example seats players of its own (names are unique)

SLOW = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def play(client, match_id, ids, starting, rounds_of_plays, rng):
    """Enter a game's starting cards and rounds, choosing rows at random; the inputs."""
    assert start_game(client, match_id, starting).status_code == 303
    for plays in rounds_of_plays:
        assert enter_round(client, match_id, dict(plays)).status_code == 303
        answer(client, match_id, rng)


def answer(client, match_id, rng, rows=None):
    """Make every row choice the game waits for: from ``rows`` {(player, card): row}
    when it has one, else at random."""
    while (pending := pending_of(client, match_id)) is not None:
        row = (rows or {}).get((pending.player, pending.card)) or rng.randint(1, 4)
        assert choose(client, match_id, pending.player, row).status_code == 303


def choices_for(rows, plays, rng) -> dict:
    """Row choices that let a round be placed to the end (random rows)."""
    choices: dict = {}
    while (result := rules.resolve_round(rows, plays, choices)).pending is not None:
        choices[result.pending.player] = rng.randint(1, 4)
    return choices


def figures(client, match_id):
    """What a match shows and counts: its games' rows, bulls, and derived statistics
    (without ids, which differ between two matches)."""
    state = state_of(client, match_id)
    games = [
        (game.table.rows if game.table else None, game.bulls, game.finished) for game in state.games
    ]
    with client.application.app_context():
        rows = stored_rows([match_id])
    drop = {"id", "game_id", "match_id", "played_at"}
    stats = {
        name: sorted(tuple(v for k, v in row._asdict().items() if k not in drop) for row in found)
        for name, found in rows.items()
    }
    return games, state.standing.totals, state.over, stats


@SLOW
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(1, 10), data=st.data())
def test_a_correction_equals_entering_the_corrected_game(client, seed, rounds, data):
    rng = random.Random(seed)
    ids = add_players(client, *(f"P{next(TABLES)}-{n}" for n in range(4)))
    hands, starting = deal(rng, len(ids))
    plays = [[(pid, hands[seat][turn]) for seat, pid in enumerate(ids)] for turn in range(rounds)]
    first = start_match(client, ids, end_kind="games", end_value=1)
    play(client, first, ids, starting, plays, rng)
    number = data.draw(st.integers(1, rounds), label="round corrected")
    _, stored = inputs_of(client, first, 1)
    before = rules.replay_game(starting, stored[: number - 1], ids)
    table = before.rounds[-1].rows if before.rounds else [(card,) for card in starting]
    new = [list(pair) for pair in stored[number - 1][0]]
    if data.draw(st.booleans(), label="swap two cards"):
        a, b = data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=2, unique=True))
        new[a][1], new[b][1] = new[b][1], new[a][1]
    else:
        used = set(starting) | {card for plays_, _ in stored for _, card in plays_}
        free = sorted(set(range(1, 105)) - used)
        new[data.draw(st.integers(0, 3), label="seat")][1] = data.draw(st.sampled_from(free))
    new_plays = [tuple(pair) for pair in new]
    choices = choices_for(table, new_plays, rng)
    values = form_values(client, first, 1, number)
    cards = dict(new_plays)
    clear = {pid: choices.get(pid) for pid in ids}
    response = correct(client, first, 1, number, cards, clear, values=values)
    if sorted(new_plays) == sorted(stored[number - 1][0]) and choices == stored[number - 1][1]:
        assert response.status_code == 422
        return
    assert response.status_code == 303, response.get_data(as_text=True)
    answer(client, first, rng)
    _, corrected = inputs_of(client, first, 1)
    assert rules.settle(starting, corrected, ids).dropped == ()  # no choice left unneeded
    # The same game entered from the start, with the corrected inputs.
    second = start_match(client, ids, end_kind="games", end_value=1)
    rows = {(pid, dict(p)[pid]): row for p, c in corrected for pid, row in c.items()}
    assert start_game(client, second, starting).status_code == 303
    for p, _ in corrected:
        assert enter_round(client, second, dict(p)).status_code == 303
        answer(client, second, rng, rows)
    assert inputs_of(client, second, 1)[1] == corrected
    assert figures(client, first) == figures(client, second)


def undo_to_here(client, match_id, game, number):
    """Confirm and perform "undo to here"; the count the confirmation said."""
    page = client.get(f"/matches/{match_id}/games/{game}/rounds/{number}/undo")
    text = page.get_data(as_text=True)
    version = re.search(r'name="version" value="(\d+)"', text).group(1)
    count = int(re.search(r"(\d+) entr", text).group(1))
    response = client.post(
        f"/matches/{match_id}/games/{game}/rounds/{number}/undo", data={"version": version}
    )
    assert response.status_code == 303
    return count


@SLOW
@given(seed=st.integers(0, 2**32 - 1), rounds=st.integers(2, 10), data=st.data())
def test_undo_to_here_equals_undoing_one_entry_at_a_time(client, seed, rounds, data):
    rng = random.Random(seed)
    ids = add_players(client, *(f"U{next(TABLES)}-{n}" for n in range(3)))
    hands, starting = deal(rng, len(ids))
    plays = [[(pid, hands[seat][turn]) for seat, pid in enumerate(ids)] for turn in range(rounds)]
    one, other = (start_match(client, ids, end_kind="games", end_value=1) for _ in range(2))
    for match_id in (one, other):
        play(client, match_id, ids, starting, plays, random.Random(seed))
    number = data.draw(st.integers(1, rounds - 1), label="undo to round")
    count = undo_to_here(client, one, 1, number)
    undone = 0
    while state_of(client, other).current is None or (len(inputs_of(client, other, 1)[1]) > number):
        assert undo(client, other).status_code == 303
        undone += 1
    assert undone == count
    assert inputs_of(client, one, 1) == inputs_of(client, other, 1)
    assert figures(client, one) == figures(client, other)
