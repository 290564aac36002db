"""A finished game's review, round by round (``/matches/<id>/games/<n>/review``): each
play's grade and, when it was not the best, the better card and what it would have saved.

One round per screen (``?round=``, the first without it), and ``?player=`` to follow one
player with their whole hand in view. Read only: the review is the one kept by
``companion.derived.game_review`` (the background figures it after the game's end; until
then the page says so), the rows before each round the game's replay.
"""

from __future__ import annotations

from typing import NamedTuple

from flask import abort, request

from companion.derived import game_review
from companion.play.luck_report import replayed_game
from companion.play.review_report import rows_before
from companion.rules import review, whole_number
from companion.state import current_state
from companion.web.htmx import render

KEY_MOMENTS = 3  # the table's costliest plays, linked to their rounds


class PlayView(NamedTuple):
    """A play as the page shows it: who, the card, the grade of the whole choice, the
    hand's better card and what it would have saved (None when the card was the best),
    a too-low card's row and the best row with what it would have saved, and the hand."""

    player_id: int
    name: str
    card: int
    grade: str
    better: int | None
    saved: float
    row: int
    best_row: int
    row_saved: float
    hand: tuple[review.CardFigures, ...]


class Moment(NamedTuple):
    """One of the game's costliest plays: its round, its player and what it cost."""

    round: int
    name: str
    card: int
    cost: float


def review_page(match_id: int, game: int):
    """One round of a finished card game's review (a fragment for htmx)."""
    state = current_state(match_id)
    if game > len(state.games):
        abort(404)
    played = replayed_game(state, state.games[game - 1])
    if played.game.mode != "cards":
        abort(404)
    if not played.finished:  # its review comes at its end: the page says so
        page = {"match": state.match, "game": played, "number": 1, "rounds": 0}
        return render("matches/review.html", "review_round", **page, pending=True, playing=True)
    rounds = len(played.table.rounds)
    number = asked_number(request.args.get("round"), 1, rounds)
    follow = asked_number(request.args.get("player"), None, None, state.player_ids)
    page = {"match": state.match, "game": played, "number": number, "rounds": rounds}
    reviewed = game_review.read(played)
    if reviewed is None:
        return render("matches/review.html", "review_round", **page, pending=True)
    plays = [play_view(play, state.name(play.player)) for play in reviewed.rounds[number - 1]]
    return render(
        "matches/review.html",
        "review_round",
        **page,
        pending=False,
        follow=follow,
        plays=[play for play in plays if follow in (None, play.player_id)],
        before=rows_before(played)[number - 1],
        players=[(state.name(line.player), line) for line in reviewed.players],
        moments=key_moments(reviewed, state.name),
    )


def asked_number(value: str | None, default, high: int | None, known=()) -> int | None:
    """A round (1 to ``high``) or a player (one of ``known``) asked for in the query,
    ``default`` when none is; else 404: an address that names nothing."""
    if value is None:
        return default
    number = whole_number(value, 1, high or 2**31)
    if number is None or (known and number not in known):
        abort(404)
    return number


def play_view(play: review.PlayReview, name: str) -> PlayView:
    """A play in the page's terms (``review.json``'s figures, arranged)."""
    better = play.better.card if play.grade != review.BEST and play.loss > 0 else None
    best_row = min(play.rows, key=lambda row: (row.to_game_end, row.row)).row if play.rows else 0
    return PlayView(
        play.player,
        name,
        play.card,
        play.grade,
        better if better != play.card else None,
        play.loss,
        play.row,
        best_row,
        play.row_loss,
        tuple(sorted(play.hand)),
    )


def key_moments(reviewed: game_review.Reviewed, name) -> list[Moment]:
    """The table's costliest plays (not graded best), the costliest first."""
    plays = [
        Moment(number, name(play.player), play.card, play.cost)
        for number, plays in enumerate(reviewed.rounds, 1)
        for play in plays
        if play.grade != review.BEST
    ]
    return sorted(plays, key=lambda moment: (-moment.cost, moment.round))[:KEY_MOMENTS]
