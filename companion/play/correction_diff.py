"""What a correction changes: a game replayed before and after, round by round, and the
new totals; shown before it is stored (the confirmation) and after (every phone).

Everything is the engine's (``rules.settle``, ``rules.compare``); this module only feeds
it the stored inputs and words the differences.
"""

from __future__ import annotations

from typing import NamedTuple

from flask_babel import gettext
from sqlalchemy import delete, select

from companion import rules
from companion.db import db
from companion.models import Correction, Round, RowChoice
from companion.state import MatchState, stored_rounds
from companion.web.present import bull_words

Rounds = list[tuple[list[tuple[int, int]], dict[int, int]]]


class Changes(NamedTuple):
    """A correction's effect on its game and the match, worded for a page."""

    game: int  # the game's number
    round: int  # the round corrected
    rounds: list[tuple[int, list[str]]]  # (round, lines), the rounds that differ
    dropped: list[str]  # the row choices no longer needed
    totals: list[tuple[str, int, int]]  # (name, before, after), every player


def numbers(text: str) -> list[tuple[int, ...]]:
    """The stored items of a correction: "3:2,4:1" as (3, 2), (4, 1)."""
    return [tuple(int(part) for part in item.split(":")) for item in text.split(",") if item]


def record(
    state: MatchState, game_id: int, number: int, old: tuple, dropped, table_version: int
) -> Correction:
    """The stored correction: the round's old cards (in seat order) and choices, and the
    later choices it dropped, players as seats (1 = the first), as a backup keeps them."""
    plays, choices = old
    seat = {player: place for place, player in enumerate(state.player_ids, 1)}
    cards = dict(plays)
    return Correction(
        game_id=game_id,
        round_number=number,
        cards=",".join(str(cards[player]) for player in state.player_ids),
        choices=",".join(
            f"{seat[player]}:{choices[player]}" for player in sorted(choices, key=seat.get)
        ),
        dropped=",".join(f"{item.round}:{seat[item.player]}:{item.row}" for item in dropped),
        table_version=table_version,
    )


def inputs_before(rounds: Rounds, correction, players: list[int]) -> Rounds:
    """A game's inputs as they were before ``correction`` (the current ones after it)."""
    before = [(list(plays), dict(choices)) for plays, choices in rounds]
    cards = [int(card) for card in correction.cards.split(",")]
    choices = {players[seat - 1]: row for seat, row in numbers(correction.choices)}
    before[correction.round_number - 1] = (list(zip(players, cards, strict=True)), choices)
    for number, seat, row in numbers(correction.dropped):
        before[number - 1][1][players[seat - 1]] = row
    return before


def unneeded_after(state: MatchState, game, player: int, row: int) -> list:
    """The DELETEs of later rounds' row choices that the choice ``game`` waits for makes
    unneeded (only a game a correction left waiting has rounds stored after it)."""
    if not game.table.later:
        return []
    rounds = stored_rounds(game.game.id)
    rounds[game.rounds_played - 1][1][player] = row
    settled = rules.settle(game.game.starting, rounds, state.player_ids)
    ids = dict(
        db.session.execute(
            select(Round.number, Round.id).where(Round.game_id == game.game.id)
        ).all()
    )
    return [
        delete(RowChoice).where(
            RowChoice.round_id == ids[item.round], RowChoice.player_id == item.player
        )
        for item in settled.dropped
    ]


def describe(
    state: MatchState, game_number: int, round_number: int, before, after, stored: bool, also=()
) -> Changes:
    """Word the differences between a game's inputs and replay ``before`` (a pair: rounds,
    ``rules.GameState``) and ``after`` (``rules.Settled``); ``stored``: the match's
    totals already have ``after``; ``also``: choices of the corrected round itself that
    it no longer needs (``rules.Dropped``), named first."""
    name = state.name
    old_rounds, before = before
    rounds = changed_rounds(old_rounds, before, after, round_number, name)
    dropped = [
        gettext(
            "Round %(round)d: %(player)s's row choice (row %(row)d) is no longer needed.",
            round=item.round,
            player=name(item.player),
            row=item.row,
        )
        for item in (*also, *after.dropped)
    ]
    running = state.running.totals
    old, new = before.bulls(), after.game.bulls()
    if stored:
        old, new = new, old
    totals = [
        (name(player), running[player], running[player] - old.get(player, 0) + new.get(player, 0))
        for player in state.player_ids
    ]
    if stored:
        totals = [(who, after_, before_) for who, before_, after_ in totals]
    return Changes(game_number, round_number, rounds, dropped, totals)


def changed_rounds(old_rounds, before, after, round_number: int, name) -> list:
    """(round, lines) of every round that reads otherwise: the corrected one first says
    whose card was typed otherwise (it is named even when cards swapped between two
    players place alike), then each card placed otherwise and the bulls."""
    index = round_number - 1
    # The cards the correction swapped out or in: played in one version only.
    swapped = {card for _, card in old_rounds[index][0]} ^ {
        card for _, card in after.rounds[index][0]
    }
    typed = cards_typed_otherwise(old_rounds[index][0], after.rounds[index][0])
    changes = list(rules.compare(before, after.game))
    if typed and round_number not in [change.number for change in changes]:
        changes.append(rules.RoundChange(round_number, (), {}, False))
    return [
        (change.number, lines)
        for change in sorted(changes, key=lambda change: change.number)
        if (
            lines := round_lines(
                change, name, swapped, typed if change.number == round_number else None
            )
        )
    ]


def cards_typed_otherwise(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> dict:
    """The corrected round's cards that changed, player → (card before, card now), in
    seat order: what the players check against their hands."""
    now = dict(after)
    return {player: (card, now[player]) for player, card in before if now.get(player) != card}


def round_lines(
    change: rules.RoundChange, name, swapped: set[int], typed: dict | None = None
) -> list[str]:
    """One round's differences: each card typed otherwise (``typed``, the corrected
    round's: player → (before, now)), each other card placed otherwise, then the bulls."""
    typed = typed or {}
    lines = card_lines(typed, change.placements, name)
    covered = {card for pair in typed.values() for card in pair}
    lines += [
        line
        for item in change.placements
        if item.card not in covered and (line := placement_line(item, name, swapped))
    ]
    if change.bulls:
        lines.append(
            gettext("Bulls this round:")
            + " "
            + ", ".join(
                f"{name(player)} {old} → {new}"
                for player, (old, new) in sorted(change.bulls.items())
            )
        )
    if change.waits:
        lines.append(gettext("This round now waits for a row choice."))
    return lines


def card_lines(typed: dict, placements, name) -> list[str]:
    """ "Anna: 4 → 2", one line a player whose card changed; where the card went and
    where the new one goes follow when they read otherwise ("row 3 → row 1")."""
    went = {item.card: item.before for item in placements}
    goes = {item.card: item.after for item in placements}
    lines = []
    for player, (old, new) in typed.items():
        before, after = placement(went.get(old), False), placement(goes.get(new), False)
        if old not in went or new not in goes or before == after:
            lines.append(
                gettext(
                    "%(player)s: %(before)d → %(after)d", player=name(player), before=old, after=new
                )
            )
        else:
            lines.append(
                gettext(
                    "%(player)s: %(before)d → %(after)d, %(went)s → %(goes)s",
                    player=name(player),
                    before=old,
                    after=new,
                    went=before,
                    goes=after,
                )
            )
    return lines


def placement_line(item: rules.Placement, name, swapped: set[int]) -> str | None:
    """A card placed otherwise, before → after; None when the two read the same (the
    same row and bulls, only other cards in the row taken)."""
    before = placement(item.before, item.card in swapped)
    after = placement(item.after, item.card in swapped)
    if before == after:
        return None
    return gettext(
        "%(player)s %(card)d: %(before)s → %(after)s",
        player=name(item.player),
        card=item.card,
        before=before,
        after=after,
    )


def placement(step: rules.Step | None, swapped: bool) -> str:
    """Where a card went, in a few words; ``swapped``: a card the correction changed."""
    if step is None:
        return gettext("not played") if swapped else gettext("not placed yet")
    if step.action == rules.SIXTH:
        return gettext(
            "6th card, took row %(row)d (%(bulls)s)", row=step.row, bulls=bull_words(step.bulls)
        )
    if step.action == rules.TOO_LOW:
        return gettext(
            "too low, took row %(row)d (%(bulls)s)", row=step.row, bulls=bull_words(step.bulls)
        )
    return gettext("row %(num)d", num=step.row)


def latest(state: MatchState) -> Changes | None:
    """What the match's newest correction changed, while nothing was entered after it."""
    found = state.correction
    if found is None:
        return None
    game = next(game for game in state.games if game.game.id == found.game_id)
    rounds = stored_rounds(game.game.id)
    starting, ids = game.game.starting, state.player_ids
    old = inputs_before(rounds, found, ids)
    before = (old, rules.replay_game(starting, old, ids))
    after = rules.Settled(rounds, dropped_of(found, ids), rules.replay_game(starting, rounds, ids))
    return describe(state, game.number, found.round_number, before, after, stored=True)


def dropped_of(correction, players: list[int]) -> tuple[rules.Dropped, ...]:
    """The choices a stored correction dropped."""
    return tuple(
        rules.Dropped(number, players[seat - 1], row)
        for number, seat, row in numbers(correction.dropped)
    )
