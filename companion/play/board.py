"""What the match pages show, from the replayed match: the view data of the round
screen, and the form keys that tell a live poll when a phone's entry form changed."""

from __future__ import annotations

from typing import NamedTuple

from babel.lists import format_list
from flask import url_for
from flask_babel import get_locale
from sqlalchemy import select

from companion import rules
from companion.db import db
from companion.derived.play_luck import round_chances
from companion.derived.timing import match_times
from companion.models import Game, Match
from companion.play.bgstats import bgstats_link
from companion.play.correction_diff import latest
from companion.play.links import table_join
from companion.play.luck_report import luck_view
from companion.play.review_report import game_end_review
from companion.state import MatchState, PlayedGame
from companion.web import present
from companion.web.access import PLAYER, access, me, sent
from companion.web.chart import LABEL_SIZE, Chart, bars, line_chart
from companion.web.i18n import gettext


def match_view(state: MatchState, view: str = "match") -> dict:
    """What the match page shows: the game on the table, the round just placed, the
    row choice it waits for, what to enter next and the score."""
    standing = state.standing
    current = state.current
    finished = state.finished_games
    # The game on the table: the one being played, else the one that just ended.
    game = current or (state.games[-1] if state.games else None)
    # When the match and its games were played: shown between games and at its end.
    times = match_times([state.match.id])[state.match.id] if finished and not current else None
    opening = view == "table" and rematch_opening(state)
    return {
        **entry_view(state),
        "view": view,
        "table_version": state.table_version,
        "standing": standing,
        "running": state.running,
        "end_text": present.end_sentence(state.end),
        "winner_names": ", ".join(state.name(player) for player in standing.winners),
        "game": game,
        "shown": shown_round(game, state.name),
        "seen": current.seen if current else set(),
        "last_game": finished[-1] if finished and not current else None,
        "game_luck": luck_view(state, finished[-1:]) if finished and not current else None,
        "game_review": game_end_review(state, finished[-1]) if finished and not current else None,
        "match_luck": luck_view(state, finished) if state.over else None,
        "corrected": latest(state),
        "bgstats": bgstats_link(state, times) if times else None,
        "times": times,
        **(standings_view(state) if view == "table" and finished and not current else {}),
        # The links are made where the list is rendered: a player's live score, not the
        # news above the rows nor the watchers' and the TV's pages.
        "correctable": correctable(state),
        "correct_links": correct_links,
        "rematch_begun": state.over and rematch_begun(state.match),
        # Before the first game the TV shows phones how to join, from across the room;
        # so does a TV that followed a rematch, for a phone that left.
        "join": table_join(state.match)
        if view == "table" and (not state.games or opening)
        else None,
        "rematch_opening": opening,
    }


def rematch_begun(match: Match) -> bool:
    """Whether the match's rematch has its first game: the TV and the phones, which keep
    the finished match's result until then, follow it (the store raises this match's
    versions)."""
    if match.rematch_id is None:
        return False
    first = select(Game.id).where(Game.match_id == match.rematch_id).limit(1)
    return db.session.scalar(first) is not None


def rematch_opening(state: MatchState) -> bool:
    """Whether the match is a rematch in its first game, no round placed yet: the TV that
    followed it says so, with the code for a phone that left, until that round's place."""
    current = state.current
    if len(state.games) != 1 or current is None or current.rounds_played:
        return False
    origin = select(Match.id).where(Match.rematch_id == state.match.id).limit(1)
    return db.session.scalar(origin) is not None


def correctable(state: MatchState) -> list[tuple[int, int]]:
    """The games whose rounds the match page offers to correct, as (game, rounds
    placed): the game being played and the last finished one, cards games with a placed
    round (a round waiting for its row choice is not placed yet). A finished game
    before the last is read from its stored results, without its table: all its
    rounds are placed."""
    last = state.finished_games[-1] if state.finished_games else None
    games = [game for game in (state.current, last) if game and game.game.mode == "cards"]
    placed = [(game.number, rounds_placed(game)) for game in games]
    return [(number, rounds) for number, rounds in placed if rounds > 0]


class CorrectGame(NamedTuple):
    """A game of the "correct a round" list: its number, and each placed round's number,
    address and label."""

    number: int
    rounds: list[tuple[int, str, str]]


def correct_links(match_id: int, games: list[tuple[int, int]]) -> list[CorrectGame]:
    """The "correct a round" list of these games (``correctable``), its links made here:
    the label translated once and formatted for each round, not a translation and a
    format per link in the template (a quarter of the live regions' render at a table of
    ten with fifteen links; up to nineteen at a game's end; issue 59)."""
    label = gettext("Correct round %(round)d of game %(game)d")
    return [
        CorrectGame(
            game,
            [
                (
                    number,
                    correct_address(match_id, game, number),
                    label % {"round": number, "game": game},
                )
                for number in range(1, placed + 1)
            ],
        )
        for game, placed in games
    ]


def correct_address(match_id: int, game: int, number: int) -> str:
    """Where a round's correction is typed."""
    return url_for("play.correct_form", match_id=match_id, game=game, number=number)


def rounds_placed(game: PlayedGame) -> int:
    """How many of the game's rounds are placed (not one waiting for its row choice)."""
    if game.table is None:
        return rules.HAND_SIZE if game.finished else 0
    return game.rounds_played - (game.pending is not None)


def standings_view(state: MatchState) -> dict:
    """What the table view shows between games: the standings as bars with the limit
    marked and, once the match is over, the chart of the totals game by game."""
    return {
        "bars": bars(state.running.totals, limit_of(state)),
        "chart": totals_chart(state, TV_LABEL_SIZE) if state.over else None,
    }


TV_LABEL_SIZE = 17  # the TV chart's names (tv.css .chart .label), read from the sofa


def totals_chart(state: MatchState, label_size: float = LABEL_SIZE) -> Chart:
    """The chart of each player's total after each complete game, its names at
    ``label_size`` (the TV's are larger)."""
    history = state.running_totals()
    series = [[totals[player_id] for totals in history] for player_id in state.player_ids]
    names = [player.name for player in state.players]
    return line_chart(names, series, limit_of(state), label_size)


def limit_of(state: MatchState) -> int | None:
    """The match's bulls limit, or None when it ends after a number of games."""
    return None if state.end.kind == rules.GAMES else state.end.value


def entry_view(state: MatchState) -> dict:
    """What the entry forms show (a live poll renders them alone, for each phone): this
    phone's access and player, the game and round to enter, and the row choice."""
    current = state.current
    level, mine = access(state.match), me(state.match.id)
    return {
        "match_id": state.match.id,
        "version": state.version,
        "level": level,
        "me": mine,
        "form_key": form_key(state, level, mine),
        "state": state,
        "current": current,
        # The round on screen: the one waiting for a row choice, else the next to enter.
        "round_number": current.rounds_played + (current.pending is None) if current else 0,
        "choice": present.choice_view(current.pending, state.name)
        if current and current.pending
        else None,
        "others_choice": others_choice(state, mine),
        # Just started: the invite stands above the starting cards, on the first screen.
        "invite_first": level == PLAYER and not state.games and not state.over,
        **round_entry_view(state, mine),
    }


def round_entry_view(state: MatchState, mine: int | None) -> dict:
    """The round's form on this phone (player ``mine``, if it said): the seats whose field
    is open (no card in yet, or a card typed twice), this phone's own first, what each
    card typed twice is told, and the cards this phone sent that still wait hidden
    ("Your card: 3 · Change"), which no other phone is shown. Worked out here, not in
    the template: every phone of a table renders its own form after each round."""
    current = state.current
    if current is None or current.table is None:
        return {
            "my_seats": [],
            "other_seats": [],
            "changing_seats": [],
            "long_names": False,
            "repeated": {},
            "sent": {},
            "repeated_fields": {},
            "sent_fields": {},
        }
    repeated = repeated_notes(state)
    kept = sent(state.match.id, current.number, current.rounds_played + 1)
    # What this phone sent, while it is what waits (another phone may have changed it).
    kept = {seat: card for seat, card in kept.items() if current.entered.get(seat) == card}
    open_seats = [
        player
        for player in state.players
        if player.id not in current.entered or player.id in repeated
    ]
    return {
        "my_seats": [player for player in open_seats if player.id == mine],
        "other_seats": [player for player in open_seats if player.id != mine],
        # Seats whose card is in but open again (typed twice): the form changes them.
        "changing_seats": [player.id for player in open_seats if player.id in current.entered],
        # Long names get wider fields (three a line on a phone), so they stand in full.
        "long_names": max(len(player.name) for player in state.players) > 8,
        "repeated": repeated,
        "sent": kept,
        "repeated_fields": {f"card-{seat}": note for seat, note in repeated.items()},
        "sent_fields": {f"card-{seat}": str(kept[seat]) for seat in repeated if seat in kept},
    }


def repeated_notes(state: MatchState) -> dict[int, str]:
    """Once every card is in, what each player who typed the same card as another is
    told, by player id: "Anna and Ben both typed 3: check your card." """
    notes = {}
    for card, seats in state.repeated:
        names = format_list([state.name(seat) for seat in seats], locale=get_locale())
        if len(seats) == 2:
            note = gettext(
                "%(players)s both typed %(card)d: check your card.", players=names, card=card
            )
        else:
            note = gettext(
                "%(players)s all typed %(card)d: check your card.", players=names, card=card
            )
        notes.update(dict.fromkeys(seats, note))
    return notes


def others_choice(state: MatchState, mine: int | None) -> bool:
    """Whether the row choice the round waits for is another player's than the one this
    phone is ("I am Anna"): its buttons then wait behind "Choose for …", so that a tap
    meant for this phone's own screen takes nobody's row. The phone for everybody (no
    "I am") and the chooser's own phone show them."""
    pending = state.current.pending if state.current else None
    return pending is not None and mine is not None and pending.player != mine


def shown_round(game: PlayedGame | None, name) -> present.RoundView | None:
    """The round the page shows as just placed: the game's last, unless it waits for a
    row choice (its too-low card is always the round's first, so nothing is placed yet)."""
    if game is None or game.pending is not None or game.last_round is None:
        return None
    steps = present.step_views(game.last_round.steps, name, explained=False)
    chances = round_chances(game.game.id, game.rounds_played)
    return present.round_view(game.rounds_played, present.with_chances(steps, chances))


def form_key(state: MatchState, level: str | None, mine: int | None) -> str:
    """What decides this phone's entry forms: when it changes, polling replaces them."""
    current = state.current
    return phone_form_key(
        table_key(state),
        level,
        mine,
        current.entered if current else {},
        frozenset(seat for _card, seats in state.repeated for seat in seats),
    )


def table_key(state: MatchState) -> str:
    """The part of the form key that is the same for every phone: game, round, choice."""
    current = state.current
    if current is None:
        return f"{len(state.games)}:{state.over}"
    return f"{current.number}:{current.rounds_played}:{current.pending is not None}"


def phone_form_key(
    table: str, level: str | None, mine: int | None, entered, repeated: frozenset[int]
) -> str:
    """One phone's form key. Not the others' entries: a card being typed must survive
    them (a card typed for a player who got in meanwhile is refused with a message). The
    players who typed the same card, once every card is in: their fields open again."""
    return f"{table}:{level}:{mine}:{mine in entered}:{','.join(map(str, sorted(repeated)))}"
