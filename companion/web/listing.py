"""A match as a list shows it: its players, finished games, standing, winners or
leaders and house rules. The history lists every match this way, the home page the
newest ones (``companion.household.history``, ``companion.play.home``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from sqlalchemy import select

from companion import rules
from companion.db import db
from companion.models import Game, GameResult, Match
from companion.web import present


class Entry(NamedTuple):
    """One match as a list shows it."""

    match: Match
    names: list[str]
    games: int  # finished games
    standing: rules.Standing
    winners: str  # names, once the match is over
    leaders: str  # names, while it is played
    house_rules: str


def entries(matches: Sequence[Match]) -> list[Entry]:
    """The matches with their finished games' totals and winners (one query for all)."""
    results: dict[int, dict[int, dict[int, int]]] = defaultdict(dict)
    query = (
        select(Game.match_id, Game.id, GameResult.player_id, GameResult.bulls)
        .join(GameResult, GameResult.game_id == Game.id)
        .where(Game.match_id.in_([match.id for match in matches]))
        .order_by(Game.match_id, Game.number)
    )
    for match_id, game_id, player_id, bulls in db.session.execute(query):
        results[match_id].setdefault(game_id, {})[player_id] = bulls
    return [entry(match, list(results[match.id].values())) for match in matches]


def entry(match: Match, games: list[dict[int, int]]) -> Entry:
    """One match's line in a list."""
    names = {seat.player_id: seat.player.name for seat in match.seats}
    end = rules.EndCondition(match.end_kind, match.end_value)
    standing = rules.standing(list(names), games, end)
    house_rules = present.house_rules(end, match.pro)
    return Entry(
        match,
        list(names.values()),
        len(games),
        standing,
        ", ".join(names[player] for player in standing.winners),
        ", ".join(names[player] for player in standing.leaders),
        house_rules,
    )
