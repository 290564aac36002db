"""Where a round's CPU goes on its way to the phones (issue 59): a profile of one round.

Run: .venv/bin/python -m bench.round_cpu [--players 10] [--games 2] [--top 15] [--postgresql]
[--top 0: no profile, the figures as they are without its cost]
(prints figures; not a test). Through the Flask test client, in this one process, with the
settings the real server's workers have beside the background process (``LUCK_APART``:
no luck and no statistics on the write path), a phone for everybody enters ``--games``
games of ``--players`` while every player's phone ("I am ...") and the TV follow the
match. Per round it takes the CPU time (``time.process_time``) of:

- the write: the round's form posted (``POST /matches/<id>/rounds``, its 303);
- the page after it: the sending phone's htmx request that follows the 303
  (``GET /matches/<id>``, ``HX-Request``);
- each other phone's update: what the push renders for it (``play.live.regions``, the
  same for a stream's event and for a poll), asked here as the poll
  (``GET /matches/<id>/live?since=..&table=..&form=..``), the players' phones and the TV.

It prints each one's median / p95 / max in ms, their sum per round, the top functions
of each (cProfile over every round; by own time and by cumulative time), and the CPU the
other programs on the machine took meanwhile. The background process's luck is not
here (``bench.round_luck``); ``bench.push`` times the real server.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import statistics
import time

from bench.serving import HTMX, bench_database, machine_cpu_seconds, migrate, own_cpu_seconds
from companion.app import create_app
from companion.db import db
from companion.models import Match
from tests.driver import add_players, start_game, start_match

POLLER = re.compile(r'id="poll"[^>]*hx-get="([^"]+)"')


class Timed:
    """One kind of request: the CPU ms of each, and its profile over all of them."""

    def __init__(self, name: str, profiled: bool = True) -> None:
        self.name, self.ms = name, []
        self.profile = cProfile.Profile() if profiled else None

    def run(self, call):
        """``call()`` profiled (if asked) and its CPU time noted: its answer."""
        cpu = time.process_time()
        if self.profile:
            self.profile.enable()
        try:
            answer = call()
        finally:
            if self.profile:
                self.profile.disable()
        self.ms.append((time.process_time() - cpu) * 1000)
        return answer


class Phone:
    """A test client that follows the match as its page would: its poll's URL."""

    def __init__(self, client, poll: str, view: str = "match") -> None:
        self.client, self.poll, self.view = client, poll, view

    def update(self) -> None:
        """What the push brings this phone: the regions since what it shows."""
        response = self.client.get(self.poll)
        assert response.status_code in (200, 204), response.status_code
        found = POLLER.search(response.get_data(as_text=True))
        if found:
            self.poll = found.group(1).replace("&amp;", "&")


def poll_of(client, url: str) -> str:
    """The poll URL of the page ``url`` as ``client`` sees it."""
    html = client.get(url).get_data(as_text=True)
    return POLLER.search(html).group(1).replace("&amp;", "&")


def setup(app, players: int):
    """A match of ``players``: the phone for everybody, each player's phone, the TV."""
    entering = app.test_client()
    ids = add_players(entering, *(f"Player {n}" for n in range(1, players + 1)))
    match_id = start_match(entering, ids, end_kind="games", end_value=100)
    with app.app_context():
        match = db.session.get(Match, match_id)
        player_token, watch_token = match.player_token, match.watch_token
    phones = []
    for pid in ids[1:]:
        client = app.test_client()
        assert client.get(f"/matches/{match_id}/join/{player_token}").status_code == 303
        client.post(f"/matches/{match_id}/me", data={"player": str(pid)})
        phones.append(Phone(client, poll_of(client, f"/matches/{match_id}")))
    tv = app.test_client()
    assert tv.get(f"/matches/{match_id}/join/{watch_token}").status_code == 303
    phones.append(Phone(tv, poll_of(tv, f"/matches/{match_id}/table"), "table"))
    return entering, match_id, ids, phones


def play(app, players: int, games: int, profiled: bool) -> dict[str, Timed]:
    """``games`` games entered round by round, each round's CPU noted."""
    names = ("write", "page after", "phone", "TV")
    timed = {name: Timed(name, profiled) for name in names}
    entering, match_id, ids, phones = setup(app, players)
    for game in range(1, games + 1):
        assert start_game(entering, match_id, [1, 2, 3, 4], game).status_code == 303
        for phone in phones:
            phone.update()
        for number in range(1, 11):
            cards = {
                f"card-{pid}": str(5 + (number - 1) * players + seat)
                for seat, pid in enumerate(ids)
            }
            form = {"game": str(game), "round": str(number), **cards}
            answer = timed["write"].run(
                lambda form=form: entering.post(f"/matches/{match_id}/rounds", data=form)
            )
            assert answer.status_code == 303, answer.get_data(as_text=True)[:300]
            timed["page after"].run(lambda: entering.get(f"/matches/{match_id}", headers=HTMX))
            for phone in phones:
                timed["TV" if phone.view == "table" else "phone"].run(phone.update)
    return timed


def spread(values: list[float]) -> str:
    """Median, p95 and max of ``values`` (ms)."""
    ordered = sorted(values)
    p95 = ordered[round(0.95 * (len(ordered) - 1))]
    return (
        f"median {statistics.median(ordered):6.2f}  p95 {p95:6.2f}  "
        f"max {ordered[-1]:6.2f} ms  (n={len(ordered)})"
    )


def top(profile: cProfile.Profile, key: str, count: int) -> str:
    """The profile's ``count`` top functions by ``key``, as pstats prints them."""
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).strip_dirs().sort_stats(key)
    stats.print_stats(count)
    text = out.getvalue()
    return text[text.find("   ncalls") :]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--postgresql", action="store_true")
    args = parser.parse_args()
    with bench_database(args.postgresql) as (url, _pid):
        # As the workers beside the background process: no luck, no statistics here.
        migrate(url)
        settings = {"SQLALCHEMY_DATABASE_URI": url, "SECRET_KEY": "bench", "LUCK_APART": True}
        app = create_app({**settings, "WTF_CSRF_ENABLED": False})
        machine, mine, wall = machine_cpu_seconds(), own_cpu_seconds(os.getpid()), time.time()
        timed = play(app, args.players, args.games, args.top > 0)
        elapsed = time.time() - wall
        others = machine_cpu_seconds() - machine - (own_cpu_seconds(os.getpid()) - mine)
    phones = args.players - 1
    print(f"{args.players} players, {args.games} games; CPU per request:")
    for each in timed.values():
        print(f"  {each.name:12s} {spread(each.ms)}")
    rounds = len(timed["write"].ms)
    per_round = [
        timed["write"].ms[n]
        + timed["page after"].ms[n]
        + sum(timed["phone"].ms[n * phones : (n + 1) * phones])
        + timed["TV"].ms[n]
        for n in range(rounds)
    ]
    print(f"  a round, all together ({phones} phones and the TV): {spread(per_round)}")
    print(
        f"other programs on the machine took {max(others, 0):.1f} s of CPU in {elapsed:.1f} s "
        f"({os.cpu_count()} cores)"
    )
    for each in timed.values() if args.top else ():
        for key in ("tottime", "cumulative"):
            print(f"\n== {each.name}: top {args.top} by {key} ==")
            print(top(each.profile, key, args.top))


if __name__ == "__main__":
    main()
