"""Each play of a finished game weighed against the rest of its player's hand
(``companion.rules.review``), kept as derived data (``ReviewCard``: a row per card the
player still held).

Heavy work (a 10-player game takes about 2 s of CPU): never in a request worker, never
in a round's write. The server's background process figures the review of each card
game that is over (``companion.store.review_after``) with no write open, then stores it
in a short write of its own, checked against the game's inputs as they are then. A write
that may change a game's end (an undo, the last round, a correction) drops the rows it
makes wrong (``drop``), and the background figures them again. Pages and ``review.json``
read what is kept (``read``) and say when a game's review is not there yet.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import NamedTuple

from sqlalchemy import Select, bindparam, case, delete, func, insert, or_, select

from companion.db import db
from companion.derived.audit import match_problem
from companion.derived.play_luck import deck_of, differing_sums, placed_rounds
from companion.derived.tables import ReviewCard, ReviewPlayer
from companion.models import Game, GameResult, Match
from companion.rules import review
from companion.state import PlayedGame, played_game
from companion.state import read as read_built

# A play graded best or good cost under this many bulls, card and row (or within the noise):
# ``review.GRADES``'s good grades come first, the worse after them.
GOOD_BELOW = max(bound for name, bound in review.GRADES if name in review.GOOD_GRADES)

ROW_COLUMNS = (ReviewCard.row_1, ReviewCard.row_2, ReviewCard.row_3, ReviewCard.row_4)
COLUMNS = (
    ReviewCard.round_number,
    ReviewCard.player_id,
    ReviewCard.card,
    ReviewCard.this_round,
    ReviewCard.to_game_end,
    ReviewCard.noise,
    *ROW_COLUMNS,
    ReviewCard.row_loss,
    ReviewCard.row_noise,
)

# A game's kept rows, the statement built once (the game's end reads it on every page).
KEPT = select(*COLUMNS).where(ReviewCard.game_id == bindparam("game_id"))


class Reviewed(NamedTuple):
    """A finished game's review as kept: the plays round by round (in the order the cards
    were placed), and each player's game."""

    rounds: list[list[review.PlayReview]]
    players: list[review.PlayerReview]


def inputs_of(game: PlayedGame) -> tuple:
    """What a game's review is figured from: whether it has one (``reviewable``), its
    starting cards and every placed step."""
    steps = tuple(result.steps for result in placed_rounds(game))
    return (reviewable(game), tuple(game.game.starting), steps)


def reviewable(game: PlayedGame) -> bool:
    """Whether a game has a review: a game entered card by card that is over."""
    return game.game.mode == "cards" and game.finished


def figured(game: PlayedGame, deck: int) -> list[dict]:
    """The rows of a finished card game's review (seeded with the game's id, as its luck
    is: ``this_round`` of a card played is its luck's ``expected``)."""
    return rows_from(game.game.match_id, game.game.id, list(rounds_to_review(game, deck)))


def rounds_to_review(game: PlayedGame, deck: int) -> Iterator[list[review.PlayReview]]:
    """A finished card game's review a round at a time (``figured``'s, in steps)."""
    rounds = placed_rounds(game)
    return review.review_rounds(game.game.starting, rounds, deck, (game.game.id,))


def rows_from(
    match_id: int, game_id: int, reviewed: Sequence[Sequence[review.PlayReview]]
) -> list[dict]:
    """The rows that keep a game's reviewed rounds: a row per card of each hand."""
    return [
        {
            "game_id": game_id,
            "match_id": match_id,
            "round_number": number,
            "player_id": play.player,
            "card": figures.card,
            "played": figures.card == play.card,
            "this_round": figures.this_round,
            "to_game_end": figures.to_game_end,
            "noise": play.noise,
            **rows_of(play if figures.card == play.card else None),
        }
        for number, plays in enumerate(reviewed, 1)
        for play in plays
        for figures in play.hand
    ]


def rows_of(play: review.PlayReview | None) -> dict:
    """The columns of a too-low card's rows, on the row of the card played (else None,
    and a row loss and its noise of 0)."""
    figures = play.rows if play is not None else ()
    by_row = {column.key: None for column in ROW_COLUMNS}
    for column, row in zip(ROW_COLUMNS, figures, strict=False):
        by_row[column.key] = row.to_game_end
    if play is None:
        return {**by_row, "row_loss": 0.0, "row_noise": 0.0}
    return {**by_row, "row_loss": play.row_loss, "row_noise": play.row_noise}


def put(rows: Sequence[dict]) -> None:
    """Store a game's review (inside a short write), and each player's sums of it."""
    if rows:
        db.session.execute(insert(ReviewCard), list(rows))
        sum_players({row["game_id"] for row in rows})


def sum_players(game_ids: Collection[int]) -> None:
    """Each player's sums of these games' kept reviews (``ReviewPlayer``), in SQL from
    their rows (``player_sums``), inside the write that stored them."""
    sums = player_sums(ReviewCard.game_id.in_(list(game_ids)))
    db.session.execute(insert(ReviewPlayer).from_select(SUMMED, sums))


# What ``ReviewPlayer`` keeps of a player's game, in ``player_sums``' order.
SUMMED = ("game_id", "match_id", "player_id", "cost", "good", "plays", "costliest")


def player_sums(*where) -> Select:
    """(game, match, player, cost, good plays, plays, costliest loss) of the kept
    reviews' plays (``play_losses``): the losses with the rows' added up, and the largest
    loss of a play graded worse than best."""
    plays = play_losses(*where).subquery()
    return select(
        plays.c.game_id,
        func.max(plays.c.match_id),
        plays.c.player_id,
        func.sum(plays.c.loss + plays.c.row_loss),
        func.sum(plays.c.good),
        func.count(),
        func.max(case((plays.c.best == 0, plays.c.loss))),
    ).group_by(plays.c.game_id, plays.c.player_id)


def kept(game_id: int) -> bool:
    """Whether a game's review is stored."""
    query = select(func.count()).select_from(ReviewCard).where(ReviewCard.game_id == game_id)
    return bool(db.session.scalar(query))


def unreviewed(match_id: int) -> list[int]:
    """The match's finished card games with no review kept, the newest first (finished:
    every player has a result)."""
    has_review = select(ReviewCard.game_id).distinct()
    finished = select(GameResult.game_id).distinct()
    query = (
        select(Game.id)
        .where(Game.match_id == match_id, Game.mode == "cards")
        .where(Game.id.in_(finished), Game.id.not_in(has_review))
        .order_by(Game.id.desc())
    )
    return list(db.session.scalars(query))


def unreviewed_match(skip: Collection[int] = ()) -> int | None:
    """The match (not one of ``skip``) of the newest finished card game with no review
    kept (a history's, or one whose review was dropped), or None when there is none."""
    has_review = select(ReviewCard.game_id).distinct()
    finished = select(GameResult.game_id).distinct()
    query = (
        select(Game.match_id)
        .where(Game.mode == "cards", Game.id.in_(finished), Game.id.not_in(has_review))
        .where(Game.match_id.not_in(list(skip)))
        .order_by(Game.id.desc())
        .limit(1)
    )
    return db.session.scalar(query)


def replace(game_id: int, rows: Sequence[dict]) -> None:
    """Put a game's review in place of what is kept of it (inside a short write)."""
    forget([game_id])
    put(rows)


def forget(game_ids: Sequence[int]) -> None:
    """Delete what is kept of these games' reviews: their rows and sums."""
    for model in (ReviewCard, ReviewPlayer):
        db.session.execute(delete(model).where(model.game_id.in_(list(game_ids))))


def drop(match_id: int, game_ids: Sequence[int], last: bool) -> None:
    """Inside a write that may change how games end: drop the review of these games (a
    correction's), and of the match's last game when ``last`` (an undo, its last round)."""
    wanted = list(game_ids)
    if last:
        newest = db.session.scalar(select(func.max(Game.id)).where(Game.match_id == match_id))
        wanted += [newest] if newest is not None else []
    if wanted:
        forget(wanted)


def read(game: PlayedGame) -> Reviewed | None:
    """A finished card game's review as kept, or None while it is not figured."""
    if not game.finished:
        return None
    rows = {(row[0], row[1], row[2]): row for row in read_built(KEPT, game_id=game.game.id)}
    if not rows:
        return None
    rounds = placed_rounds(game)
    hands = review.hands(rounds)
    plays = []
    for number, result in enumerate(rounds, 1):
        round_plays = []
        for step in result.steps:
            hand = hands[step.player][number - 1 :]
            found = [rows.get((number, step.player, card)) for card in hand]
            if None in found:
                return None  # not all of it: being figured again
            round_plays.append(play_of(step.player, step.card, found, step.row))
        plays.append(round_plays)
    return Reviewed(plays, review.player_reviews(plays, game.bulls))


def play_of(player: int, card: int, found: Sequence, row: int = 0) -> review.PlayReview:
    """A play's review from its kept rows (``COLUMNS``; the hand in the order it was
    played, the card played first); ``row``: the row it went on (a too-low card's rows
    say which was chosen)."""
    hand = tuple(review.CardFigures(kept[2], kept[3], kept[4]) for kept in found)
    ends = [figures.to_game_end for figures in hand]
    loss = max(0.0, ends[0] - min(ends))
    noise, row_noise = found[0][5], found[0][11]
    rows = tuple(
        review.RowFigures(number, figure)
        for number, figure in enumerate(found[0][6:10], 1)
        if figure is not None
    )
    chosen = row if rows else 0
    return review.PlayReview(player, card, loss, noise, hand, rows, chosen, row_noise)


def kept_play(game_id: int, round_number: int, player_id: int) -> review.PlayReview | None:
    """One play's review as kept (the card played first, then the rest of the hand by
    card), or None when none is kept."""
    query = (
        select(*COLUMNS, ReviewCard.played)
        .where(
            ReviewCard.game_id == game_id,
            ReviewCard.round_number == round_number,
            ReviewCard.player_id == player_id,
        )
        .order_by(ReviewCard.played.desc(), ReviewCard.card)
    )
    rows = db.session.execute(query).all()
    if not rows or not rows[0][-1]:
        return None
    return play_of(player_id, rows[0][2], rows)


def play_losses(*where) -> Select:
    """Each kept play's (match, game, round, player, loss, row loss, best, good) in SQL,
    as ``play_of`` makes them from the rows: the card played's ``to_game_end`` less the
    hand's lowest; a too-low card's row loss (else 0); ``best`` 1 when the whole
    choice's cost (the two losses) is within the noise (``review.PlayReview.grade``:
    squared here, the two noises' squares added), ``good`` 1 when graded best or good.
    For the household's sums over many games, which reading each game's review
    (``read``, a replay each) would make slow."""
    card = ReviewCard
    loss = func.max(case((card.played, card.to_game_end))) - func.min(card.to_game_end)
    cost = loss + func.max(card.row_loss)
    noise, row_noise = func.max(card.noise), func.max(card.row_noise)
    within = cost * cost <= review.NOISE_WIDTH**2 * (noise * noise + row_noise * row_noise)
    best = or_(within, cost == 0)
    # Grouped in the order of the rows' unique key, the match a play's alone: SQLite walks
    # that index instead of sorting every row (a third less CPU over 3 million rows).
    return (
        select(
            func.max(card.match_id).label("match_id"),
            card.game_id,
            card.round_number,
            card.player_id,
            loss.label("loss"),
            func.max(card.row_loss).label("row_loss"),
            case((best, 1), else_=0).label("best"),
            case((or_(best, cost < GOOD_BELOW), 1), else_=0).label("good"),
        )
        .where(*where)
        .group_by(card.game_id, card.round_number, card.player_id)
    )


class StaleReview(NamedTuple):
    """A game whose kept review is not what its inputs make (``out_of_line``): its rows
    as figured now (none for a game that has no review), the inputs they were figured
    from, and whether none was kept (not a difference: the background reviews a game
    that ends while it runs, ``flask rebuild`` the rest)."""

    match_id: int
    game_id: int
    number: int
    inputs: tuple
    rows: list[dict]
    missing: bool


class ReviewsRebuilt(NamedTuple):
    """What ``flask rebuild`` found of the reviews: the match of each game whose kept
    review differed, and of each game not reviewed yet."""

    differing: list[int]
    missing: list[int]


def finished_games() -> int:
    """How many card games are over (each has a review, kept or to be figured)."""
    query = select(func.count(func.distinct(GameResult.game_id))).join(
        Game, Game.id == GameResult.game_id
    )
    return db.session.scalar(query.where(Game.mode == "cards")) or 0


def out_of_line(match: Match) -> list[StaleReview]:
    """The match's games whose kept review is not the one their inputs make: each card
    game that is over reviewed again (seconds of CPU a game; read only, no write open),
    rows kept of a game that has no review, and players' sums that are not their rows'.
    A match the rules refuse is ``rebuild``'s to name, and skipped here."""
    if match_problem(match):
        return []
    player_ids = [seat.player_id for seat in match.seats]
    compared = [*COLUMNS, ReviewCard.played]
    query = select(ReviewCard.game_id, *compared).where(ReviewCard.match_id == match.id)
    kept_rows: dict[int, set[tuple]] = {}
    for game_id, *values in db.session.execute(query):
        kept_rows.setdefault(game_id, set()).add(tuple(values))
    wrong_sums = sums_out_of_line(match.id)
    found = []
    for game in match.games:
        played = played_game(game, player_ids)
        rows = figured(played, deck_of(match)) if reviewable(played) else []
        wanted = {tuple(row[column.key] for column in compared) for row in rows}
        have = kept_rows.get(game.id, set())
        if wanted != have or game.id in wrong_sums:
            inputs = inputs_of(played)
            missing = not have and game.id not in wrong_sums
            found.append(StaleReview(match.id, game.id, game.number, inputs, rows, missing))
    return found


def sums_out_of_line(match_id: int) -> set[int]:
    """The match's games whose kept players' sums (``ReviewPlayer``) are not those of
    their kept rows (``player_sums``)."""
    kept = select(*(getattr(ReviewPlayer, name) for name in SUMMED))
    return differing_sums(
        kept.where(ReviewPlayer.match_id == match_id), player_sums(ReviewCard.match_id == match_id)
    )
