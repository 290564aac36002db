"""At the table: start a game, enter rounds and row choices, type scores.

Every view here checks its input against the replayed match, stores only what the
players entered in one transaction, and answers 303 to the match page, or 422 with
the form, the user's values and a message next to the field.
"""

from __future__ import annotations

import re

from babel.lists import format_list
from flask import redirect, request, url_for
from flask_babel import get_locale, gettext
from sqlalchemy import delete, select

from companion import rules
from companion.db import db
from companion.models import Game, PendingCard, Round, RowChoice, Score
from companion.play.board import match_view
from companion.play.correction_diff import unneeded_after
from companion.state import MatchState, PlayedGame, current_state, score_bulls
from companion.store import RACED, Change, NewRound, write_match
from companion.web.access import keep_sent, me, require_player
from companion.web.htmx import render
from companion.web.present import field_for
from companion.web.stale import shows_again

Errors = dict[str, str]
SEAT_FIELD = re.compile(r"card-([0-9]{1,9})", re.ASCII)  # a seat's card field of a round
CARD_TYPED = re.compile(r"[0-9]{1,3}", re.ASCII)  # what such a field holds once taken
# A field that is wrong for the reason the form's own message gives (_form.html).
SEE_FORM = ""


class Rejected(Exception):
    """Input the match cannot take; carries messages by form field."""

    def __init__(self, errors: Errors):
        super().__init__(errors)
        self.errors = errors


def translate(error: rules.RuleError) -> str:
    """A rules message in the player's language."""
    return error.message(gettext)


def start_game(match_id: int):
    """Start a game card by card: the four face-up starting cards, one per row."""
    return write(match_id, add_cards_game)


def score_game(match_id: int):
    """Record a whole game as each player's bulls, typed or counted from their pile."""
    return write(match_id, add_score_game)


def enter_round(match_id: int):
    """Store the cards everyone revealed this round; the engine places them. This phone
    remembers the cards it sent, to show them while they wait hidden."""
    answer = write(match_id, add_round)
    if getattr(answer, "status_code", None) == 303:
        keep_sent(match_id, *sent_in(request.form))
    return answer


def sent_in(form) -> tuple[int, int, dict[int, int]]:
    """The game, round and cards by player of a round's form that was stored (checked:
    every card field of a seat held a card; any other field is left out)."""
    typed = (SEAT_FIELD.fullmatch(name) for name in form)
    cards = {
        int(field[1]): int(form[field[0]])
        for field in typed
        if field and CARD_TYPED.fullmatch(form[field[0]].strip())
    }
    return int(form["game"]), int(form["round"]), cards


def choose_row(match_id: int):
    """Store the row a too-low card's player takes."""
    return write(match_id, add_choice)


def write(match_id: int, add):
    """Check one entry with ``add(state, form)`` and store it, all or nothing, through the
    one write path (``companion.store``): 303 to the match page, or 422 with the form."""

    def check(state: MatchState) -> Change:
        require_player(state.match)
        if state.over:
            raise Rejected({"form": gettext("This match has ended. Only an undo can change it.")})
        return add(state, request.form)

    try:
        stored = write_match(match_id, check)
    except Rejected as rejected:
        return show_with_errors(match_id, rejected.errors)
    if stored == RACED:
        return show_with_errors(match_id, {"form": race_message()})
    return redirect(url_for("play.show", match_id=match_id), 303)


def race_message() -> str:
    """What a phone is told when another phone stored the same entry a moment earlier."""
    return gettext(
        "Someone entered this at the same moment on another phone. Here is the table now."
    )


@shows_again("play.start_game", "play.score_game", "play.enter_round", "play.choose_row")
def show_stale(message: str, match_id: int):
    """A form whose CSRF token no longer fits: the table now, with what was typed, 422."""
    return show_with_errors(match_id, {"form": message})


def show_with_errors(match_id: int, errors: Errors):
    """The match page again with the user's values and the messages, status 422."""
    state = current_state(match_id)
    page = render(
        "matches/show.html", "match", **match_view(state), form=request.form, errors=errors
    )
    # htmx shows the form at the top of the screen: its message, its fields, and the
    # button under them in view (the match page itself swaps in scrolled to its top).
    return page, 422, {"HX-Reswap": "outerHTML show:#entry:top"}


def check_turn(state: MatchState, form, game_number: int, round_number: int | None) -> None:
    """Refuse a form filled in for an earlier moment (another phone, the back button)."""
    if form.get("game") != str(game_number) or (
        round_number is not None and form.get("round") != str(round_number)
    ):
        raise Rejected(
            {
                "form": gettext(
                    "The table has moved on since this form was shown (another phone?). "
                    "Here it is now; check and enter again."
                )
            }
        )


def add_cards_game(state: MatchState, form) -> Change:
    """Add a cards-mode game with its four starting cards."""
    next_number = len(state.games) + 1
    if state.current is not None:
        raise Rejected({"form": gettext("Finish the current game first.")})
    check_turn(state, form, next_number, None)
    values = [form.get(f"row{row}", "") for row in range(1, rules.ROWS + 1)]
    cards, errors = [], {}
    for row, value in enumerate(values, 1):
        try:
            cards.append(rules.parse_card(value, state.deck))
        except rules.RuleError as error:
            errors[f"row{row}"] = translate(error)
    if not errors:
        try:
            rules.check_starting_cards(cards, state.deck)
        except rules.RuleError as error:
            errors[f"row{error.subject[1]}"] = translate(error)
    if errors:
        raise Rejected(errors)
    return Change(
        [
            Game(
                match_id=state.match.id,
                number=next_number,
                mode="cards",
                row1=cards[0],
                row2=cards[1],
                row3=cards[2],
                row4=cards[3],
            )
        ]
    )


def add_round(state: MatchState, form) -> Change:
    """Add revealed cards for the coming round, from one phone or several.

    Cards wait hidden (PendingCard) until every player's card is in; the last one
    turns them into the round, which the engine then places for everyone at once. A
    card is never checked against the hidden ones (the answer would tell this phone
    another's card): two equal cards are a typo, shown to every phone once the last
    card is in, and the round waits until the players who typed it fix their own.
    """
    game = game_for_round(state, form)
    changing = changed_seats(form, game.entered)
    entries = typed_entries(state, form, game.entered, changing)
    cards = check_entries(state, game, entries)
    number = game.rounds_played + 1
    hand = {**game.entered, **dict(cards)}
    if len(hand) < len(state.player_ids) or rules.repeated_cards(hand):
        return keep_hidden(game, number, cards, changing)
    return complete_round(game, number, hand)


def changed_seats(form, entered: dict[int, int]) -> set[int]:
    """The players whose hidden card the form replaces ("Your card: 3 · Change", or a
    card typed twice): named in its ``change`` fields, and with a card in."""
    return {seat for seat in entered if str(seat) in form.getlist("change")}


def game_for_round(state: MatchState, form) -> PlayedGame:
    """The game whose coming round the form is for; refused when no game is on, when the
    form is for an earlier moment, or while a row choice comes first."""
    game = state.current
    if game is None or game.table is None:
        raise Rejected({"form": gettext("Start a game with its four starting cards first.")})
    check_turn(state, form, game.number, game.rounds_played + 1)
    if game.pending is not None:
        raise Rejected(
            {
                "form": gettext(
                    "First %(player)s chooses a row for %(card)d.",
                    player=state.name(game.pending.player),
                    card=game.pending.card,
                )
            }
        )
    return game


def typed_entries(
    state: MatchState, form, entered: dict[int, int], changing: set[int]
) -> list[tuple[int, str]]:
    """The cards typed in the form, by player (at least one); refused when a player's
    card is already in and the form does not change it (a form older than that entry),
    or when the one phone at the table left a seat blank."""
    typed = [
        (player_id, form.get(f"card-{player_id}", "").strip()) for player_id in state.player_ids
    ]
    for player_id, card in typed:
        if card and player_id in entered and player_id not in changing:
            raise Rejected(
                {"form": gettext("%(player)s's card is already in.", player=state.name(player_id))}
            )
    if me(state.match.id) is None:
        check_complete(state, typed, entered)
    entries = [(player_id, card) for player_id, card in typed if card]
    if not entries:
        raise Rejected({"form": gettext("Enter at least one card.")})
    return entries


def keep_hidden(
    game: PlayedGame, number: int, cards: list[tuple[int, int]], changing: set[int]
) -> Change:
    """The change that keeps new cards hidden until every player's card is in (or until
    no two of them are equal), replacing the hidden cards of the players in ``changing``."""
    replaced = [seat for seat, _card in cards if seat in changing]
    deletes = [
        delete(PendingCard).where(
            PendingCard.game_id == game.game.id, PendingCard.player_id.in_(replaced)
        )
    ]
    return Change(
        [
            PendingCard(game_id=game.game.id, round_number=number, player_id=player_id, card=card)
            for player_id, card in cards
        ],
        deletes=deletes if replaced else [],
        hidden=True,
    )


def complete_round(game: PlayedGame, number: int, hand: dict[int, int]) -> Change:
    """The change that stores the round: every player's card, placed."""
    return Change(
        round=NewRound(game.game.id, number, hand),
        clear_hidden=game.game.id,
        results=number == rules.HAND_SIZE,
    )


def check_complete(state: MatchState, typed, entered) -> None:
    """One phone entering for everybody sends every open seat's card, or nothing.

    Keeping some cards hidden until the rest arrive is for phones that said whose card
    they enter; from the one phone at the table, a blank field is a card forgotten.
    """
    missing = [player_id for player_id, card in typed if not card and player_id not in entered]
    if len(missing) == 1:
        (player_id,) = missing
        name = state.name(player_id)
        raise Rejected({f"card-{player_id}": gettext("%(player)s's card is missing.", player=name)})
    if missing:  # one sentence above the fields, not a line of its own for each of them
        names = format_list([state.name(player_id) for player_id in missing], locale=get_locale())
        raise Rejected(
            {
                "form": gettext("Cards missing: %(players)s.", players=names),
                **{f"card-{player_id}": SEE_FORM for player_id in missing},
            }
        )


def check_entries(state: MatchState, game, entries) -> list[tuple[int, int]]:
    """Check new cards against the game: the cards seen, the deck, and each other (this
    phone's own typing). Never against the hidden cards: see ``add_round``."""
    try:
        rules.check_plays(
            game.table.rows,
            entries,
            deck=state.deck,
            played=game.table.played,
            starting=game.game.starting,
            name=state.name,
        )
    except rules.RuleError as error:
        raise Rejected({field_for(error, card="card-{}"): translate(error)}) from error
    return [(player_id, rules.parse_card(card, state.deck)) for player_id, card in entries]


def add_choice(state: MatchState, form) -> Change:
    """Add the row choice the current round waits for."""
    game = state.current
    pending = game.pending if game else None
    if pending is None:
        raise Rejected({"form": gettext("No card is waiting for a row choice.")})
    check_turn(state, form, game.number, game.rounds_played)
    if form.get("player") != str(pending.player):
        raise Rejected(
            {
                "form": gettext(
                    "It is %(player)s's turn to choose a row.", player=state.name(pending.player)
                )
            }
        )
    try:
        row = rules.parse_row_choice(form.get("row", ""))
    except rules.RuleError as error:
        raise Rejected({"form": translate(error)}) from error
    round_id = db.session.scalar(
        select(Round.id).where(Round.game_id == game.game.id, Round.number == game.rounds_played)
    )
    # After a correction the game may wait here with rounds stored after this one: they
    # are placed again, and may finish the game, or no longer need a choice they hold.
    return Change(
        [RowChoice(round_id=round_id, player_id=pending.player, row=row)],
        deletes=unneeded_after(state, game, pending.player, row),
        results=game.rounds_played == rules.HAND_SIZE or bool(game.table.later),
    )


def add_score_game(state: MatchState, form) -> Change:
    """Add a score-only game: each player's bulls, typed or as the cards of their pile."""
    if state.current is not None:
        raise Rejected({"form": gettext("Finish the current game first.")})
    check_turn(state, form, len(state.games) + 1, None)
    scores, errors, owners = [], {}, {}
    for player_id in state.player_ids:
        try:
            scores.append(read_score(state, form, player_id, owners))
        except rules.RuleError as error:
            errors[f"score-{player_id}"] = translate(error)
    if errors:
        raise Rejected(errors)
    try:
        rules.check_game_bulls([score_bulls(score) for score in scores], state.deck)
    except rules.RuleError as error:
        raise Rejected({"form": translate(error)}) from error
    return Change(
        [Game(match_id=state.match.id, number=len(state.games) + 1, mode="scores", scores=scores)],
        results=True,
    )


def read_score(state: MatchState, form, player_id: int, owners: dict[int, int]) -> Score:
    """One player's score: a number of bulls, or the cards on their pile."""
    text = " ".join(form.get(f"score-{player_id}", "").replace(",", " ").split())
    if not text:
        raise rules.RuleError(rules.N_("Enter the bulls, or the cards on the pile."))
    if form.get(f"kind-{player_id}") != "pile":
        return Score(player_id=player_id, bulls=rules.parse_bulls(text, state.deck))
    cards = [rules.parse_card(value, state.deck) for value in text.split()]
    for card in cards:
        if card in owners:
            raise rules.RuleError(rules.N_("%(card)d is entered twice."), card=card)
        owners[card] = player_id
    return Score(player_id=player_id, cards=",".join(str(card) for card in cards))
