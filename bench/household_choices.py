"""Benchmark the household's choices (issue 45): the leaderboard, a player's page and the
year's review on a household whose every finished card game has its review kept.

Run: .venv/bin/python -m bench.household_choices [--matches 5000]
(prints figures; not a test). The history is ``bench.history``'s (10 players, simulated
legal games inserted in bulk), spread over the year we are in, and every finished card
game gets its ``ReviewCard`` rows as the background keeps them (``game_review.put``): a
row per card each player still held in each round, and each player's sums of the game.
Their figures are drawn at random: what the pages read costs the same whatever the
figures, and reviewing thousands of games for real would take hours of CPU.

Printed first: how long reading every match's sums takes (once per server process, by its
first request that shows the choices). Then for each page, in ms: the first request (the
sums in memory, the page's own figures not), the median of more, and the median

- without the choices (the page as it was before them);
- no memo: each request sums the players' kept sums of each game (``ReviewPlayer``) in
  SQL, without the per-match sums kept in memory;
- the plain way: each request sums every card of every kept review in SQL, by player
  (neither the players' sums nor the memory);

and the first request after one more game's review is stored (its match read again).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from sqlalchemy import Select, func, select, update

from bench.apps import sqlite_app
from bench.history import build
from companion.db import db
from companion.derived import game_review
from companion.derived.tables import ReviewCard, ReviewPlayer
from companion.household import choices, review
from companion.household import statistics as stats
from companion.household.by_match import Kept
from companion.models import Game, GameResult, Match, Play, Round, Seat, utcnow

CHUNK = 100_000  # rows per insert


def review_rows(rng: random.Random, game_id: int, match_id: int, plays) -> list[dict]:
    """A game's rows: each player's hand from each round on, figures drawn at random."""
    hands: dict[int, list[int]] = defaultdict(list)
    for _number, player, card in sorted(plays):
        hands[player].append(card)
    rows = []
    for player, hand in hands.items():
        for number in range(1, len(hand) + 1):
            base = rng.uniform(0, 10)
            for card in hand[number - 1 :]:
                end = base + rng.choice((0.0, 0.0, rng.uniform(0, 8)))
                rows.append(
                    {
                        "game_id": game_id,
                        "match_id": match_id,
                        "round_number": number,
                        "player_id": player,
                        "card": card,
                        "played": card == hand[number - 1],
                        "this_round": rng.uniform(0, end),
                        "to_game_end": end,
                        "noise": 0.2,
                    }
                )
    return rows


def finished_card_plays() -> Select:
    """(game, match, round, player, card) of every play of a finished card game."""
    finished = select(GameResult.game_id).distinct()
    return (
        select(Game.id, Game.match_id, Round.number, Play.player_id, Play.card)
        .join(Round, Round.game_id == Game.id)
        .join(Play, Play.round_id == Round.id)
        .where(Game.mode == "cards", Game.id.in_(finished))
        .order_by(Game.id)
    )


def add_reviews(app, seed: int = 45) -> tuple[int, int]:
    """Every finished card game's review rows; (games, rows)."""
    rng = random.Random(seed)
    with app.app_context():
        query = finished_card_plays()
        games = defaultdict(list)
        where = {}
        for game_id, match_id, number, player, card in db.session.execute(query):
            games[game_id].append((number, player, card))
            where[game_id] = match_id
        pending, total = [], 0
        for game_id, plays in games.items():
            pending += review_rows(rng, game_id, where[game_id], plays)
            if len(pending) >= CHUNK:
                game_review.put(pending)  # the rows and each player's sums, as stored
                total, pending = total + len(pending), []
        if pending:
            game_review.put(pending)
            total += len(pending)
        db.session.commit()
    return len(games), total


def median_ms(client, url: str, repeat: int) -> float:
    """The median of ``repeat`` requests, in ms."""
    samples = []
    for _ in range(repeat):
        begin = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - begin) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(samples)


def first_ms(client, url: str) -> float:
    """One request, in ms."""
    begin = time.perf_counter()
    assert client.get(url).status_code == 200, url
    return (time.perf_counter() - begin) * 1000


@contextmanager
def patched(owner, name: str, value) -> None:
    """``owner.name`` is ``value`` while the block runs."""
    before = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, before)


def plain_sums(since: datetime | None = None, until=None, players=None, held=None) -> dict:
    """Each player's choices summed in SQL over every kept review, in the request: what
    the pages would do without the per-match sums kept in memory."""
    plays = game_review.play_losses().subquery()
    query = (
        select(
            plays.c.player_id,
            func.count(func.distinct(plays.c.game_id)),
            func.sum(plays.c.loss),
            func.sum(plays.c.good),
            func.count(),
        )
        .join(Match, Match.id == plays.c.match_id)
        .group_by(plays.c.player_id)
    )
    if since is not None:
        query = query.where(Match.created_at >= since)
    if until is not None:
        query = query.where(Match.created_at < until)
    if players is not None:
        seated = select(func.count(Seat.id)).where(Seat.match_id == plays.c.match_id)
        query = query.where(seated.scalar_subquery() == players)
    return {
        player: choices.Choices(games, float(cost), int(good), int(count))
        for player, games, cost, good, count in db.session.connection().execute(query)
    }


def summed_sums(since: datetime | None = None, until=None, players=None, held=None) -> dict:
    """Each player's choices from the players' sums of each game (``ReviewPlayer``),
    summed in the request: the kept sums without the per-match sums in memory."""
    summed = ReviewPlayer
    query = (
        select(
            summed.player_id,
            func.count(),
            func.sum(summed.cost),
            func.sum(summed.good),
            func.sum(summed.plays),
        )
        .join(Match, Match.id == summed.match_id)
        .group_by(summed.player_id)
    )
    if since is not None:
        query = query.where(Match.created_at >= since)
    if until is not None:
        query = query.where(Match.created_at < until)
    if players is not None:
        seated = select(func.count(Seat.id)).where(Seat.match_id == summed.match_id)
        query = query.where(seated.scalar_subquery() == players)
    return {
        player: choices.Choices(games, float(cost), int(good), int(count))
        for player, games, cost, good, count in db.session.connection().execute(query)
    }


def plain_costliest(since=None, until=None, player_id=None, held=None):
    """The costliest play found in SQL over every kept review, in the request."""
    plays = game_review.play_losses().subquery()
    query = (
        select(plays.c.game_id, plays.c.round_number, plays.c.player_id, plays.c.loss)
        .join(Match, Match.id == plays.c.match_id)
        .where(plays.c.best == 0)
        .order_by(plays.c.loss.desc(), Match.created_at, plays.c.game_id, plays.c.round_number)
    )
    if since is not None:
        query = query.where(Match.created_at >= since)
    if until is not None:
        query = query.where(Match.created_at < until)
    if player_id is not None:
        query = query.where(plays.c.player_id == player_id)
    found = db.session.connection().execute(query.limit(1)).first()
    if found is None:
        return None
    game_id, number, player, loss = found
    play = game_review.kept_play(game_id, number, player)
    game = db.session.get(Game, game_id)
    return choices.Costly(
        player, play.card, play.better.card, loss, game.match_id, game.number, number
    )


def nothing(*_args, **_kwargs) -> dict:
    """No choices at all."""
    return {}


def variants() -> dict[str, Callable]:
    """How each variant is put in place: a context manager each."""
    empty = Kept({}, {})
    return {
        "without choices": lambda: stacked(
            patched(choices, "choices_by_player", nothing),
            patched(choices, "costliest", lambda *args, **kwargs: None),
            patched(choices, "kept", lambda: empty),
        ),
        "sums, not in memory": lambda: stacked(
            patched(choices, "choices_by_player", summed_sums),
            patched(choices, "costliest", plain_costliest),
            patched(choices, "kept", lambda: empty),
        ),
        "plain SQL": lambda: stacked(
            patched(choices, "choices_by_player", plain_sums),
            patched(choices, "costliest", plain_costliest),
            patched(choices, "kept", lambda: empty),
        ),
    }


@contextmanager
def stacked(*managers):
    """Several context managers as one."""
    for manager in managers:
        manager.__enter__()
    try:
        yield
    finally:
        for manager in reversed(managers):
            manager.__exit__(None, None, None)


def one_more_review(app) -> None:
    """As the background stores a game's review: its rows replaced, its match's version up."""
    with app.app_context():
        game_id, match_id = db.session.execute(
            select(ReviewCard.game_id, ReviewCard.match_id).limit(1)
        ).one()
        rows = [
            dict(row._mapping)
            for row in db.session.execute(
                select(*[c for c in ReviewCard.__table__.columns if c.key != "id"]).where(
                    ReviewCard.game_id == game_id
                )
            )
        ]
        game_review.replace(game_id, rows)
        db.session.execute(
            update(Match).where(Match.id == match_id).values(version=Match.version + 1)
        )
        db.session.commit()


def main() -> None:
    """Build the household, keep its reviews, and print the pages' times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        app = sqlite_app(Path(folder) / "bench.sqlite", WTF_CSRF_ENABLED=False)
        now = utcnow()
        first = datetime(now.year, 1, 1, 19)
        days = max((now - first).days - 1, 1)
        begin = time.perf_counter()
        ids = build(app, args.matches, first=first, days_apart=days / args.matches)
        games, rows = add_reviews(app)
        print(
            f"{args.matches:,} matches of {now.year}, {games:,} reviewed card games "
            f"({rows:,} review rows) built in {time.perf_counter() - begin:.0f} s"
        )
        with app.app_context():  # what the first page to read the choices waits for
            begin, cpu = time.perf_counter(), time.process_time()
            kept = choices.kept()
            cold = (time.perf_counter() - begin) * 1000
            cpu = (time.process_time() - cpu) * 1000
        summed = sum(len(bucket) for bucket in kept.buckets.values())
        print(
            f"every match's sums read once (the first request after a start): {cold:.0f} ms, "
            f"{cpu:.0f} ms of CPU"
        )
        print(f"  ({summed:,} matches kept in memory)")
        client = app.test_client()
        client.get("/review/2000")  # the app's own first-request costs
        pages = [
            ("/leaderboard", "/leaderboard"),
            ("/leaderboard?period=year", "/leaderboard?period=year"),
            ("/leaderboard?players=4", "/leaderboard?players=4"),
            ("a player's statistics", f"/players/{ids[0]}/stats"),
            ("the year's review", f"/review/{now.year}"),
            ("a player's year", f"/review/{now.year}?player={ids[0]}"),
        ]
        print(
            f"  {'page':26s} {'first':>8} {'median':>8} {'without':>8} {'no memo':>8} "
            f"{'plain SQL':>10}"
        )
        for label, url in pages:
            cold = first_ms(client, url)
            warm = median_ms(client, url, args.repeat)
            others = []
            for _name, put in variants().items():
                with put():
                    others.append(median_ms(client, url, args.repeat))
            print(
                f"  {label:26s} {cold:8.1f} {warm:8.1f} {others[0]:8.1f} {others[1]:8.1f} "
                f"{others[2]:10.1f}"
            )
        one_more_review(app)
        after = first_ms(client, "/leaderboard")
        print(f"  /leaderboard after one more game's review: {after:.1f} ms (first request)")
        with app.app_context():
            check = stats.choices()
            assert check, "no choices summed"
            assert review.choices_of(now.year, None).play is not None


if __name__ == "__main__":
    main()
