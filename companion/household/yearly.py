"""The year at our table: its figures from plain values, pure (no Flask, no database).

``companion.household.review`` asks the database for the year's sums and firsts (the
derived tables, kept in the write that finishes a game, every match's ratings among
them), and the page shows what ``year_review`` makes of them. The tests compute every figure from a
replay of every game and compare them one by one.

What each figure means:

- matches: the year's matches with at least one finished game (``PlayerMatchStat``),
  ``finished`` those that are over; games: their finished games. A match belongs to the
  year and month in which it was created (the app's timezone).
- evenings: the days on which a match was created, a day running from 06:00 to 06:00,
  so a game night past midnight stays one evening.
- time at the table: the matches' minutes (``companion.derived.timing``, kept with the
  match's statistics).
- wins: finished matches won, shared wins included.
- most improved: the largest rise of Skill (the leaderboard's, ``Rating.skill``) over the
  year, from the Skill before the player's first match of the year (25 for a new player)
  to the one after their last; the ratings run over all matches ever, as the
  leaderboard's (``companion.derived.ratings``).
- cleanest game: the finished game in which the table took the fewest bulls per player
  (for one player: their game with the fewest bulls); the earliest on a tie.
- most bulls in one round: the most a player took in one round (``worst_round``), the
  earliest on a tie (then the lower player id), with the round to replay.
- 55s caught: how often the 55 (7 bulls) was in a row a player took.
- nemesis: the rival who most often filled the rows a player took (the leaderboard's
  nemesis, ``companion.derived.figures``), counted over the year; ties share.
- the costliest card: the card that, played, took the most bulls over the year (the sixth
  card of a row, or a too-low card: ``CardTake``); the lower card on a tie.
- luckiest and unluckiest: the players with the most (the least) luck per game, the bulls
  their cards were expected to take less the bulls they took (``rules.PlayerLuck``), over
  the year's finished card games whose luck is complete
  (``companion.household.match_luck``), among those with at least ``LUCK_GAMES`` of them
  (one lucky game says little); ties share. Shown when the two differ. For one player:
  their own luck per game, from one game on.
- the unluckiest play: of those games' plays that took a row, the one with the lowest
  chance of doing so, more bulls first on a tie, then the earliest.
- the best decision-maker: of the players with at least ``REVIEW_GAMES`` games of the
  year reviewed (``companion.household.choices``: a game's review weighs each play
  against the rest of the hand), the one with the highest accuracy, the share of plays
  graded best or good; the lower choices' cost per game on a tie, then ties share.
  Named when two players or more count. For one player: their own accuracy and cost
  per game, from one reviewed game on.
- the costliest play: of the reviewed games' plays graded worse than best, the one with
  the largest loss (the bulls to the game's end the hand's better card would have
  saved), the earliest on a tie.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

MONTHS = 12
LUCK_GAMES = 3  # games with complete luck a player needs to be the luckiest or unluckiest
REVIEW_GAMES = 3  # reviewed games a player needs to be the best decision-maker
EVENING_STARTS = timedelta(hours=6)  # a night's play after midnight is the same evening


class MatchIn(NamedTuple):
    """One of the year's matches (for one player: one they played): its ``PlayerMatchStat``."""

    match_id: int
    played_at: datetime  # created, local time
    minutes: int
    finished: bool
    games: int  # finished games


class Rounded(NamedTuple):
    """A round to replay: who took how many bulls, in which match, game and round."""

    player_id: int
    bulls: int
    match_id: int
    game: int
    round: int


class Clean(NamedTuple):
    """The cleanest game: where it was, its players and bulls per player."""

    match_id: int
    game: int
    players: int
    bulls: int  # the table's (or the player's) bulls in it


class Unlucky(NamedTuple):
    """A play that took a row: its chance of doing so, its card and bulls, who played
    it, and its round to replay."""

    player_id: int
    card: int
    chance: float
    bulls: int
    match_id: int
    game: int
    round: int


class YearLuck(NamedTuple):
    """The year's luck: the luckiest and unluckiest players with their luck per game
    (positive: fewer bulls than expected), or one player's own (luck per game, games),
    and the unluckiest play."""

    luckiest: tuple[list[int], float] | None
    unluckiest: tuple[list[int], float] | None
    mine: tuple[float, int] | None
    play: Unlucky | None


class Costly(NamedTuple):
    """A costly play: who, the card played, the hand's better card, the loss in bulls to
    the game's end, and where, its round to replay (the game's number in the match, the
    round): ``household.choices.costliest`` finds it."""

    player_id: int
    card: int
    better: int
    loss: float
    match_id: int
    game: int
    round: int


class Decisions(NamedTuple):
    """A player's choices over reviewed games: accuracy (0..1), cost per game, games."""

    accuracy: float
    per_game: float
    games: int


class YearChoices(NamedTuple):
    """The year's choices: the best decision-makers and their figures, or one player's
    own, and the costliest play."""

    best: tuple[list[int], Decisions] | None
    mine: Decisions | None
    play: Costly | None


class Bars(NamedTuple):
    """A bar chart by month: series of 12 values each (stacked), the top of the scale."""

    series: list[tuple[int | None, list[int]]]  # (player id or None, values by month)
    top: int


class Review(NamedTuple):
    """Everything the review page shows for a year (and perhaps one player)."""

    year: int
    player_id: int | None
    matches: int
    finished: int
    games: int
    evenings: int
    minutes: int
    wins: dict[int, int]  # by player, most first
    top_winners: list[int]
    improved: tuple[list[int], float] | None
    cleanest: Clean | None
    worst_round: Rounded | None
    fives: dict[int, int]  # by player, most first
    nemeses: dict[int, tuple[list[int], int]]  # player -> (rivals, takes)
    costliest: tuple[int, int] | None  # card, bulls
    games_by_month: Bars
    wins_by_month: Bars

    @property
    def fives_total(self) -> int:
        """55s caught by everyone shown."""
        return sum(self.fives.values())


def year_review(
    year: int,
    player_id: int | None,
    matches: Sequence[MatchIn],
    wins: Sequence[tuple[int, int]],
    ratings: Mapping[int, tuple[float, float]],
    cleanest: Clean | None,
    worst_round: Rounded | None,
    fives: Mapping[int, int],
    nemesis: Iterable[tuple[int, int, int]],
    costliest: tuple[int, int] | None,
) -> Review:
    """The review of ``year`` from what the database found for it (for one player, only
    their matches and their own rows): the matches, (match, winner) of the finished
    ones, each player's Skill before and after the year (players who played a
    rated match in it), the cleanest game, the worst round, 55s caught by player,
    (player, rival, takes) rows and the costliest card with its bulls."""
    counted = Counter(winner for _match, winner in wins)
    top = max(counted.values(), default=0)
    return Review(
        year,
        player_id,
        len(matches),
        sum(match.finished for match in matches),
        sum(match.games for match in matches),
        len({(match.played_at - EVENING_STARTS).date() for match in matches}),
        sum(match.minutes for match in matches),
        dict(sorted(counted.items(), key=lambda item: (-item[1], item[0]))),
        sorted(player for player, count in counted.items() if count == top and top),
        most_improved(ratings),
        cleanest,
        worst_round,
        dict(sorted(fives.items(), key=lambda item: (-item[1], item[0]))),
        nemeses(nemesis),
        costliest,
        by_month([(None, [m.played_at.month for m in matches for _game in range(m.games)])]),
        wins_by_month(matches, wins),
    )


def most_improved(ratings: Mapping[int, tuple[float, float]]) -> tuple[list[int], float] | None:
    """The players whose Skill rose most over the year (None if nobody's rose)."""
    rises = {player: round(after - before, 6) for player, (before, after) in ratings.items()}
    best = max(rises.values(), default=0)
    if best <= 0:
        return None
    return sorted(player for player, rise in rises.items() if rise == best), best


def year_luck(
    player_id: int | None, luck: Mapping[int, tuple[float, int]], play: Unlucky | None
) -> YearLuck:
    """The year's luck from each player's (luck per game, games) and the unluckiest
    play (for one player: theirs)."""
    if player_id is not None:
        return YearLuck(None, None, luck.get(player_id), play)
    counted = {
        player: round(per_game, 6)
        for player, (per_game, games) in luck.items()
        if games >= LUCK_GAMES
    }
    best, worst = max(counted.values(), default=0), min(counted.values(), default=0)
    if best == worst:  # nobody, one player, or all equally lucky
        return YearLuck(None, None, None, play)
    return YearLuck(
        (sorted(p for p, value in counted.items() if value == best), best),
        (sorted(p for p, value in counted.items() if value == worst), worst),
        None,
        play,
    )


def year_choices(
    player_id: int | None, decisions: Mapping[int, Decisions], play: Costly | None
) -> YearChoices:
    """The year's choices from each player's decisions over the reviewed games and the
    costliest play (for one player: theirs)."""
    if player_id is not None:
        return YearChoices(None, decisions.get(player_id), play)
    counted = {
        player: (round(mine.accuracy, 6), -round(mine.per_game, 6))
        for player, mine in decisions.items()
        if mine.games >= REVIEW_GAMES
    }
    if len(counted) < 2:  # the best of one player says nothing
        return YearChoices(None, None, play)
    top = max(counted.values())
    best = sorted(player for player, value in counted.items() if value == top)
    return YearChoices((best, decisions[best[0]]), None, play)


def nemeses(rows: Iterable[tuple[int, int, int]]) -> dict[int, tuple[list[int], int]]:
    """Each player's nemesis over the year: the rivals with the most takes (ties share)."""
    takes: dict[int, Counter] = defaultdict(Counter)
    for player, rival, count in rows:
        takes[player][rival] += count
    found = {}
    for player in sorted(takes):
        top = max(takes[player].values())
        found[player] = (sorted(r for r, count in takes[player].items() if count == top), top)
    return found


def by_month(series: Sequence[tuple[int | None, Sequence[int]]]) -> Bars:
    """Stacked bars by month from each series' list of months (one entry per count)."""
    counted = []
    for key, months in series:
        values = [0] * MONTHS
        for month in months:
            values[month - 1] += 1
        counted.append((key, values))
    top = max((sum(column) for column in zip(*(v for _k, v in counted), strict=True)), default=0)
    return Bars(counted, top)


def wins_by_month(matches: Sequence[MatchIn], wins: Sequence[tuple[int, int]]) -> Bars:
    """Finished matches won by month, a series per winner (shared wins count for each)."""
    month = {match.match_id: match.played_at.month for match in matches}
    months: dict[int, list[int]] = defaultdict(list)
    for match_id, winner in wins:
        months[winner].append(month[match_id])
    return by_month([(winner, months[winner]) for winner in sorted(months)])
