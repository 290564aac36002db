"""The review of a finished game as JSON (``review.json``), for tools: each play weighed
against the rest of its player's hand, and each player's game.

The figures are ``companion.rules.review``'s, kept per card by
``companion.derived.game_review`` (the server's background process figures them after
the game's end); this module only reads and arranges them. Only once the game is over:
during a game the review would be a help to cheat.
"""

from __future__ import annotations

from typing import NamedTuple

from flask import abort, jsonify

from companion.derived import game_review
from companion.play.luck_report import replayed_game
from companion.rules import review
from companion.state import MatchState, PlayedGame, current_state

# A game whose review is not kept yet: the background process is on it.
BEING_FIGURED = 202
WHILE_PLAYED = 409


def review_json(match_id: int, game: int):
    """A finished game's review (a JSON 404 for an unknown game or one of typed scores,
    a 409 while it is being played, a 202 saying ``pending`` while its review is being
    worked out)."""
    state = current_state(match_id)
    if game > len(state.games):
        abort(404)
    played = replayed_game(state, state.games[game - 1])
    if not played.finished:
        return jsonify(error="This game is still being played: its review comes at its end."), (
            WHILE_PLAYED
        )
    if played.game.mode != "cards":
        return jsonify(error="Only a game entered card by card has a review."), 404
    reviewed = game_review.read(played)
    if reviewed is None:
        return jsonify(game=game, pending=True), BEING_FIGURED
    return jsonify(review_document(game, reviewed))


def review_document(game: int, reviewed: game_review.Reviewed) -> dict:
    """``review.json``'s document: floats at full precision."""
    return {
        "game": game,
        "samples": review.SAMPLES,
        "rounds": [
            {"round": number, "plays": [play_entry(play) for play in plays]}
            for number, plays in enumerate(reviewed.rounds, 1)
        ],
        "players": [
            {
                "player_id": player.player,
                "bulls": player.bulls,
                "cards_dealt": player.cards_dealt,
                "choices_cost": player.choices_cost,
                "others_cards": player.others_cards,
                "accuracy": player.accuracy,
            }
            for player in reviewed.players
        ],
    }


def play_entry(play: review.PlayReview) -> dict:
    """One play: the card, its loss and noise, what the whole choice cost (card and row)
    and its grade, and every card of the hand."""
    return {
        "player_id": play.player,
        "card": play.card,
        "loss": play.loss,
        "noise": play.noise,
        "cost": play.cost,
        "grade": play.grade,
        "hand": [
            {"card": card.card, "this_round": card.this_round, "to_game_end": card.to_game_end}
            for card in play.hand
        ],
        **too_low_entry(play),
    }


def too_low_entry(play: review.PlayReview) -> dict:
    """A too-low card's row: the row chosen, its loss against the best row and that
    loss's noise, and each of the four rows counted to the game's end (nothing for
    another card)."""
    if not play.rows:
        return {}
    return {
        "row": play.row,
        "row_loss": play.row_loss,
        "row_noise": play.row_noise,
        "rows": [{"row": row.row, "to_game_end": row.to_game_end} for row in play.rows],
    }


class Costly(NamedTuple):
    """One of a player's costliest plays: the round, the card played, the hand's better
    card, the loss in bulls, and the rows as they were before the round. A too-low
    card's row choice: ``chosen``, the row it took, and ``better``, the best row."""

    round: int
    card: int
    better: int
    loss: float
    rows: tuple[tuple[int, ...], ...]
    chosen: int = 0


# A too-low card's row choice is among the costliest plays from this many bulls lost
# against the best row (its rows share their draws: the noise of a difference is small).
ROW_LOSS_SHOWN = 1.0


class ReviewLine(NamedTuple):
    """A player's game in the review's words, and their costliest plays. ``others_cards``:
    the review's rest, named apart from luck on every page and in ``review.json``: a
    household's "luck" is the luck note's figure (``rules.luck``) alone."""

    player_id: int
    name: str
    bulls: int
    cards_dealt: float
    choices_cost: float
    others_cards: float
    costliest: list[Costly]


COSTLIEST = 3  # plays shown per player, one tap away


def review_lines(state: MatchState, game: PlayedGame) -> list[ReviewLine] | None:
    """The game's end in the review's words (a line per player in seat order), or None
    while it is being worked out (the game's end page says so and fills in by push)."""
    played = replayed_game(state, game)
    reviewed = game_review.read(played)
    if reviewed is None:
        return None
    rows = rows_before(played)
    costly: dict[int, list[Costly]] = {}
    for number, plays in enumerate(reviewed.rounds, 1):
        for play in plays:
            if play.grade == review.BEST:  # the whole choice within the noise: no cost
                continue
            if review.grade(play.loss, play.noise) != review.BEST:  # the card, past its noise
                entry = Costly(number, play.card, play.better.card, play.loss, rows[number - 1])
                costly.setdefault(play.player, []).append(entry)
            if play.row_loss >= ROW_LOSS_SHOWN:
                best = min(play.rows, key=lambda row: (row.to_game_end, row.row)).row
                entry = Costly(number, play.card, best, play.row_loss, rows[number - 1], play.row)
                costly.setdefault(play.player, []).append(entry)
    by_player = {player.player: player for player in reviewed.players}
    return [
        ReviewLine(
            player_id,
            state.name(player_id),
            player.bulls,
            player.cards_dealt,
            player.choices_cost,
            player.others_cards,
            sorted(costly.get(player_id, []), key=lambda entry: -entry.loss)[:COSTLIEST],
        )
        for player_id in state.player_ids
        if (player := by_player.get(player_id)) is not None
    ]


def rows_before(game: PlayedGame) -> list[tuple[tuple[int, ...], ...]]:
    """The rows before each placed round of a card game."""
    rows = [tuple((card,) for card in game.game.starting)]
    rows += [tuple(result.rows) for result in game.table.rounds]
    return rows


class GameEndReview(NamedTuple):
    """What a game's end shows of its review: the lines, or None while being worked out."""

    lines: list[ReviewLine] | None

    @property
    def turning_point(self) -> tuple[str, Costly] | None:
        """The game's costliest play and its player's name (the TV's one sentence)."""
        plays = [(line.name, line.costliest[0]) for line in self.lines or [] if line.costliest]
        return max(plays, key=lambda named: named[1].loss, default=None)


def game_end_review(state: MatchState, game: PlayedGame) -> GameEndReview | None:
    """A finished game's review for its end's screen; None for a game of typed scores."""
    if game.game.mode != "cards":
        return None
    return GameEndReview(review_lines(state, game))
