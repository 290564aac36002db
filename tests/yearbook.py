"""A household's year for the review: six players, 40 matches spread over the year."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from driver import add_players, play_game, score_game, start_match
from kept import kept
from sqlalchemy import select

from companion import store
from companion.db import db
from companion.derived import rebuild
from companion.models import Match

SIX = ["Anna", "Ben", "Cleo", "Dora", "Emil", "Fritz"]
YEAR = 2025
PAUSE = timedelta(minutes=20)  # companion.derived.timing's, counted again by the tests


def kept_household(client, app, shared: Path) -> list[int]:
    """The household of ``build_household`` in the app's database; its players' ids. The
    session's first test that asks builds it (20 to 40 s of entering games through the
    app), the others get a copy (tests/kept.py; ``shared``: conftest.shared_folder)."""
    return kept(app, client, shared, "yearbook", lambda: build_household(client, app))


def build_household(client, app) -> list[int]:
    """Six players, 40 matches of 3 to 6 of them: most played card by card, some typed,
    one left unfinished; then spread over the year (and 3 in the year before)."""
    ids = add_players(client, *SIX)
    rng = random.Random(22)
    with derived_after(app):
        for number in range(40):
            seated = rng.sample(ids, rng.randint(3, 6))
            if number == 39:  # still being played: a game done, 66 bulls not reached
                match_id = start_match(client, seated, end_kind="more_than", end_value=300)
            else:
                match_id = start_match(client, seated, end_kind="games", end_value=1 + number % 2)
            for game in range(1 + (number % 2 and number != 39)):
                if number % 7 == 3 and game == 0:  # typed scores, the first two tied
                    scores = {pid: (4 if seat < 2 else 5 + seat) for seat, pid in enumerate(seated)}
                    assert score_game(client, match_id, scores).status_code == 303
                else:
                    play_game(client, match_id, seated, rng)
    spread(app, rng)  # its rebuild writes the statistics and the ratings
    return ids


@contextmanager
def derived_after(app) -> Iterator[None]:
    """The games entered as a real server's workers enter them, beside its background
    process (``LUCK_APART``: no luck and no statistics in a write), then every match's
    luck figured once, as that process does after an upgrade. Figured round by round
    instead, the luck was two fifths of the build."""
    apart = app.config.get("LUCK_APART")
    app.config["LUCK_APART"] = True
    try:
        yield
    finally:
        app.config["LUCK_APART"] = apart
    with app.app_context():
        store.fill_all_missing_luck()


def spread(app, rng: random.Random) -> None:
    """Move each match to an evening of the year (the first three to the year before):
    games start 20:00 or so, some a second match of that evening, some past midnight;
    rounds 1 to 4 minutes apart, now and then a two-hour pause."""
    with app.app_context():
        matches = db.session.scalars(select(Match).order_by(Match.id)).all()
        for index, match in enumerate(matches):
            year = YEAR - 1 if index < 3 else YEAR
            day = datetime(year, 1 + index % 12, 1 + (index * 7) % 27, 20, rng.randint(0, 59))
            if index % 5 == 1 and year == YEAR:  # a second match on the evening before
                day = matches[index - 1].created_at + timedelta(hours=2)
            if index % 9 == 4:
                day += timedelta(hours=4, minutes=30)  # 00:30 or so: the same evening
            match.created_at = day
            moment = day
            for game in match.games:
                moment += timedelta(minutes=rng.randint(1, 5))
                game.created_at = moment
                for round_ in game.rounds:
                    pause = timedelta(hours=2) if rng.random() < 0.03 else timedelta()
                    moment += timedelta(minutes=rng.randint(1, 4)) + pause
                    round_.created_at = moment
        db.session.commit()
        rebuild(check=False, echo=lambda _line: None)  # played_at follows the matches
        db.session.commit()
