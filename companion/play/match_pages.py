"""The match at the table (its round screen), the scoreboard and the card grid."""

from __future__ import annotations

from flask import abort, redirect

from companion.derived.timing import match_times
from companion.play.bgstats import bgstats_link
from companion.play.board import match_view, totals_chart
from companion.play.live import page_regions
from companion.play.undo import typed_back
from companion.state import current_state
from companion.web.htmx import render


def show(match_id: int):
    """The match at the table: the rows, the next thing to enter, the score."""
    state = current_state(match_id)
    form = typed_back(state)
    # Cards typed back (an undo) stand in the entry forms only; the live table and score
    # are the ones the table's phones are pushed.
    context = match_view(state)
    live = page_regions(state, context)
    return render("matches/show.html", "match", **context, form=form, errors={}, live=live)


def grid(match_id: int):
    """The card grid's buttons, cards seen in the open game disabled (loaded by htmx)."""
    state = current_state(match_id)
    seen = state.current.seen if state.current else set()
    return render("matches/grid.html", deck=state.deck, seen=seen)


def scoreboard(match_id: int):
    """Totals, every game's bulls, the leader, the distance to the limit and a chart."""
    state = current_state(match_id)
    context = match_view(state)
    context["times"] = context["times"] or match_times([match_id])[match_id]
    return render(
        "matches/scoreboard.html",
        "scoreboard",
        **context,
        leader_names=", ".join(state.name(p) for p in context["running"].leaders),
        chart=totals_chart(state),
    )


def bgstats(match_id: int):
    """The short link the TV's QR code carries: on to the finished match's play in BG
    Stats (404 while the match is played)."""
    state = current_state(match_id)
    if not state.over:
        abort(404)
    return redirect(bgstats_link(state, match_times([match_id])[match_id]).url, 303)
