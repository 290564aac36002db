"""Replay: a game entered card by card, round by round, every step with its explanation.

Answers "why did Anna take row 3 in round 7?": the rows before the round, the cards
revealed, each placement lowest first with the engine's explanation, and the rows
after. Everything comes from replaying the stored inputs through ``companion.rules``.
"""

from __future__ import annotations

from flask import Blueprint, abort, request

from companion.db import db
from companion.models import Game, Match
from companion.rules import whole_number
from companion.state import PlayedGame, played_game
from companion.web import present
from companion.web.access import PLAYER, access
from companion.web.htmx import render

bp = Blueprint("replay", __name__, url_prefix="/matches/<id:match_id>/games/<id:number>")


def get_game(match: Match, number: int) -> Game:
    """The match's game with this number, or 404."""
    game = next((game for game in match.games if game.number == number), None)
    if game is None:
        abort(404)
    return game


def round_number(value: str | None, rounds: int) -> int:
    """The round asked for (1 when none is): 1 to ``rounds``, else 404. 0: no round yet."""
    if value is None:
        return min(1, rounds)
    number = whole_number(value, 1, rounds)
    if number is None:
        abort(404)
    return number


@bp.get("/replay")
def show(match_id: int, number: int):
    """One round of a game on the table: ?round=7 (the first round without it)."""
    match = db.get_or_404(Match, match_id)
    game = get_game(match, number)
    players = [seat.player for seat in match.seats]
    replayed = played_game(game, [player.id for player in players])
    names = {player.id: player.name for player in players}
    if replayed.table is None:
        tally = [(names[pid], replayed.bulls.get(pid, 0)) for pid in names]
        return render(
            "history/replay_scores.html", "replay", match=match, game=replayed, tally_rows=tally
        )
    current = round_number(request.args.get("round"), len(replayed.table.rounds))
    return render(
        "history/replay.html",
        "replay",
        match=match,
        game=replayed,
        **round_view(replayed, current, names),
        corrections=[fix for fix in game.corrections if fix.round_number == current],
        player=access(match) == PLAYER,
        last=game is match.games[-1],
    )


def round_view(replayed: PlayedGame, number: int, names: dict[int, str]) -> dict:
    """What the replay page shows of round ``number`` (0: the starting cards only)."""
    rounds = replayed.table.rounds
    before = rounds[number - 2].rows if number > 1 else [(card,) for card in replayed.game.starting]
    result = rounds[number - 1] if number else None
    # The cards revealed, lowest first: the order they are placed in.
    stored = replayed.game.rounds[number - 1].plays if number else []
    plays = sorted((play.card, names[play.player_id]) for play in stored)
    totals = dict.fromkeys(names, 0)
    for done in rounds[:number]:
        for player, bulls in done.bulls_by_player().items():
            totals[player] += bulls
    return {
        "number": number,
        "rounds": len(rounds),
        "before": before,
        "plays": plays,
        "steps": present.step_views(result.steps, names.__getitem__) if result else [],
        "choice": present.choice_view(result.pending, names.__getitem__)
        if result and result.pending
        else None,
        "after": result.rows if result else before,
        "changed": present.changed_rows(result.steps) if result else (),
        "tally_rows": [(names[pid], totals[pid]) for pid in names],
    }
