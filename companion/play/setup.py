"""Matches: start one with players, house rules and the texts the players type about it
(``models.MATCH_TEXTS``: its note), change a text later, follow a match to its rematch."""

from __future__ import annotations

from flask import redirect, request, url_for
from flask_babel import gettext
from sqlalchemy import select, update

from companion import rules
from companion.db import db
from companion.models import MATCH_TEXTS, MAX_ID, Match, Player, Seat
from companion.play.board import match_view
from companion.state import MatchState, current_state
from companion.store import Change, Full, add_player, create_match, start_rematch, write_match
from companion.web import present
from companion.web.access import follow, grant, require_player
from companion.web.htmx import render
from companion.web.names import check_new_name

END_KINDS = (rules.MORE_THAN, rules.AT_LEAST, rules.GAMES)
SEAT_FIELDS = tuple(f"seat_{position}" for position in range(1, rules.MAX_PLAYERS + 1))


def active_players() -> list[Player]:
    """Players who can be seated in a new match."""
    query = select(Player).where(Player.archived.is_(False)).order_by(Player.name)
    return list(db.session.scalars(query))


DEFAULT_RULES = {
    "end_kind": rules.MORE_THAN,
    "end_value": str(rules.DEFAULT_LIMIT),
    "deck": "standard",
}


def new():
    """The form that starts a match. Tapping a player's name seats them next (a POST
    here, which stores nothing: the form comes back with the seats so far). A GET may
    carry the seats and rules in its query (where adding someone new leads back to)."""
    form = request.form if request.method == "POST" else {**DEFAULT_RULES, **request.args}
    seats, errors = seated(form), {}
    tapped = request.form.get("tap", "")
    if tapped:
        seats, errors = tap(seats, tapped)
    added = next((p for p in seats if str(p.id) == request.args.get("added")), None)
    return new_match_form(errors, form, seats, added), 422 if errors else 200


def seated(form) -> list[Player]:
    """The players seated so far, in order: seat_1, seat_2, … (unknown ids left out)."""
    active = {player.id: player for player in active_players()}
    players = [active.get(player_id) for _field, player_id in seat_ids(form)]
    return list(dict.fromkeys(player for player in players if player is not None))


def seat_ids(form) -> list[tuple[str, int | None]]:
    """Each filled seat field, seat_1 first, with the player id it holds (None if it is
    not an id at all)."""
    filled = [(name, form.get(name, "")) for name in SEAT_FIELDS if form.get(name, "").strip()]
    return [(name, rules.whole_number(value, 1, MAX_ID)) for name, value in filled]


def tap(seats: list[Player], tapped: str) -> tuple[list[Player], dict[str, str]]:
    """Seat the tapped player next, or give a seated player's seat back."""
    chosen = next((player for player in active_players() if str(player.id) == tapped), None)
    if chosen is None:
        return seats, {"seats": gettext("Choose a player from the list.")}
    if chosen in seats:
        return [player for player in seats if player != chosen], {}
    if len(seats) >= rules.MAX_PLAYERS:
        return seats, {"seats": gettext("Seat 2 to 10 players.")}
    return [*seats, chosen], {}


def create():
    """Start a match: seat the players in order and fix the house rules.

    The form is checked without the write lock; the match is then stored in a short
    write (a name taken meanwhile trips the unique key and is reported). The Add button
    beside "Someone new?", or Enter with a name typed there, adds them instead.
    """
    if adds_someone(request.form):
        return seat_someone_new(request.form)
    seats, new_name, errors = read_seats(request.form)
    # The seats are tapped, not typed: a wrong one is shown by the seating as a whole.
    seat_errors = [errors.pop(key) for key in sorted(errors) if key.startswith("seat_")]
    if seat_errors:
        errors["seats"] = seat_errors[0]
    end, end_errors = read_end(request.form)
    errors.update(end_errors)
    texts, text_errors = read_texts(request.form)
    errors.update(text_errors)
    pro = request.form.get("deck") == "pro"
    total = len(seats) + (1 if new_name else 0)
    if "seats" not in errors and not rules.MIN_PLAYERS <= total <= rules.MAX_PLAYERS:
        errors["seats"] = gettext("Seat 2 to 10 players.")
    if pro and total > rules.PRO_MAX_PLAYERS and "seats" not in errors:
        errors["deck"] = gettext("The pro variant is for 2 to 6 players.")
    if errors:
        return new_match_form(errors), 422
    try:
        match = create_match(end, pro, seats, new_name, texts)
    except Full as full:
        message = present.matches_full() if full.model is Match else present.players_full()
        return new_match_form({"new_player" if full.model is Player else "seats": message}), 422
    if match is None:
        return new_match_form({"new_player": gettext("That name was just taken.")}), 422
    grant(match.id, match.player_token)  # the phone that starts a match holds its player link
    return redirect(url_for("play.show", match_id=match.id), code=303)


def adds_someone(form) -> bool:
    """True when the form asks to add the name typed under "Someone new?": its Add
    button, or Enter in any field with a name typed there (Enter presses the form's
    first submit button, a hidden one that says "enter"); else it starts the match."""
    action = form.get("action")
    return action == "add" or (action == "enter" and bool(form.get("new_player", "").strip()))


def seat_someone_new(form):
    """Add the typed name to the household and seat them next: back to the form (303,
    the seats and rules in its address), or 422 with the name's error beside the field
    and nothing stored."""
    seats = seated(form)
    name, error = check_new_name(form.get("new_player"))
    if error is None and len(seats) >= rules.MAX_PLAYERS:
        error = gettext("Seat 2 to 10 players.")
    try:
        if error is None and not add_player(name):
            error = gettext("That name was just taken.")
    except Full:
        error = present.players_full()
    if error:
        return new_match_form({"new_player": error}, form, seats), 422
    player = db.session.scalar(select(Player).where(Player.name == name))
    kept = {field: seat.id for field, seat in zip(SEAT_FIELDS, [*seats, player], strict=False)}
    kept.update((key, form.get(key, DEFAULT_RULES[key])) for key in DEFAULT_RULES)
    kept.update((name, form[name]) for name in MATCH_TEXTS if form.get(name))
    return redirect(url_for("play.new", **kept, added=player.id), code=303)


def new_match_form(
    errors: dict[str, str], form=None, seats: list[Player] | None = None, added=None
):
    """Render the new-match form with the player's entries, the seats so far and errors;
    ``added``: the player just added (said, and the name field ready for the next)."""
    form = request.form if form is None else form
    end, end_errors = read_end(form)
    seats = seated(form) if seats is None else seats
    return render(
        "matches/new.html",
        "content",
        # The seated in seat order (seat 3 before seat 4), then the others by name.
        players=[*seats, *(player for player in active_players() if player not in seats)],
        seats=seats,
        form=form,
        errors=errors,
        added=added,
        house_rules="" if end_errors else present.house_rules(end, form.get("deck") == "pro"),
    )


def read_seats(form) -> tuple[list[int], str | None, dict[str, str]]:
    """Return the seated player ids in order, a new player's name, and any errors."""
    errors: dict[str, str] = {}
    active = {player.id for player in active_players()}
    seats: list[int] = []
    for name, player_id in seat_ids(form):
        if player_id not in active:
            errors[name] = gettext("Choose a player from the list.")
        elif player_id in seats:
            errors[name] = gettext("This player already has a seat.")
        else:
            seats.append(player_id)
    # A seat the form does not have (seat_11) is refused, not dropped.
    if any(
        key.startswith("seat_") and key not in SEAT_FIELDS and form[key].strip() for key in form
    ):
        errors["seats"] = gettext("Seat 2 to 10 players.")
    new_name = None
    if form.get("new_player", "").strip():
        new_name, error = check_new_name(form.get("new_player"))
        if error:
            errors["new_player"] = error
    return seats, new_name, errors


def read_end(form) -> tuple[rules.EndCondition, dict[str, str]]:
    """Return the end condition from the form, or the errors."""
    kind = form.get("end_kind", rules.MORE_THAN)
    value = form.get("end_value", "").strip()
    if kind not in END_KINDS:
        return rules.EndCondition(), {"end_kind": gettext("Choose how the match ends.")}
    limit = rules.whole_number(value, 1, 1000)
    if limit is None:
        return rules.EndCondition(), {"end_value": gettext("Enter a number from 1 to 1000.")}
    return rules.EndCondition(kind, limit), {}


def read_texts(form, names=tuple(MATCH_TEXTS)) -> tuple[dict[str, str | None], dict[str, str]]:
    """The match's texts ``names`` as typed in the form, each as its rule stores it (None
    when empty), and each refused one's message under its name."""
    texts, errors = {}, {}
    for name in names:
        try:
            texts[name] = MATCH_TEXTS[name].check(form.get(name, ""))
        except rules.RuleError as error:
            errors[name] = error.message(gettext)
    return texts, errors


def change_text(match_id: int, name: str):
    """Change a text of the match (its note) from a phone with its player link: back to
    the match, or 422 with the message beside the field and nothing stored."""
    texts, errors = read_texts(request.form, (name,))

    def check(state: MatchState) -> Change:
        require_player(state.match)
        return Change(statements=[update(Match).where(Match.id == match_id).values(texts)])

    if not errors:
        write_match(match_id, check)  # raises the version: the shared replays hold the text
        return redirect(url_for("play.show", match_id=match_id), 303)
    state = current_state(match_id)
    require_player(state.match)
    page = render(
        "matches/show.html",
        "match",
        **match_view(state),
        form={},
        errors={},
        text_form={name: request.form.get(name, "")},
        text_errors=errors,
    )
    return page, 422, {"HX-Reswap": f"outerHTML show:#match-{name}:top"}


def rematch(match_id: int):
    """Start a new match with the same seats, house rules and texts (its note: the same
    evening, "Oma's 80th"), in one tap; a match that has its rematch already leads to it.
    A player link only, as for every write (else it would hand a stranger the rematch's
    player link), and only once the match is over."""
    old = db.get_or_404(Match, match_id)
    require_player(old)
    if old.rematch_id is None and not current_state(match_id).over:
        return render("matches/rematch_refused.html", match=old), 409
    rules_, seats = (old.end_kind, old.end_value, old.pro), [seat.player_id for seat in old.seats]
    texts = {name: getattr(old, name) for name in MATCH_TEXTS}

    def make() -> Match:
        match = Match(end_kind=rules_[0], end_value=rules_[1], pro=rules_[2], **texts)
        match.seats = [Seat(player_id=pid, position=index) for index, pid in enumerate(seats, 1)]
        return match

    try:
        new_id = start_rematch(match_id, make)
    except Full:
        return render("matches/rematch_refused.html", match=old, full=present.matches_full()), 409
    follow(old, db.session.get(Match, new_id))  # like a new match: this phone holds its link
    return to_the_page(url_for("play.show", match_id=new_id))


def follow_rematch(match_id: int):
    """The match's rematch, for a phone of the table: it holds the rematch's link at the
    level it held this one's (and its "I am"), so nobody scans a code again."""
    old = db.get_or_404(Match, match_id)
    if old.rematch_id is None:
        return redirect(url_for("play.show", match_id=old.id), code=303)
    follow(old, db.get_or_404(Match, old.rematch_id))
    endpoint = "play.table_view" if request.args.get("view") == "table" else "play.show"
    return redirect(url_for(endpoint, match_id=old.rematch_id), code=303)


def to_the_page(url: str):
    """A redirect that htmx follows as a whole page load, so the address, the page's
    event stream and its title are the new match's (a boosted form showed the rematch
    under the old address, and a reload went back)."""
    if request.headers.get("HX-Request") == "true":
        return "", 204, {"HX-Redirect": url}
    return redirect(url, code=303)
