"""A finished match as a play for BG Stats, in one link (and, on the TV, one QR code of a
short link that leads to it).

BG Stats takes a play from another app as url-encoded JSON on its documented link
(support page "Push plays to BG Stats from other apps or websites"):
``https://app.bgstatsapp.com/createPlay.html?data=<json>``. Opening it shows BG Stats'
own import dialog; nothing is sent anywhere by this server.

The source ids are stable (``companion-player-<id>``, ``companion-match-<id>``, one id
for the game and one for the household's place), so BG Stats remembers which of its
players, game and location each one is after the first import, and knows a play it has
seen. ``play_data`` is pure; ``bgstats_link`` adds the match's times and settings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple
from urllib.parse import quote

from flask import current_app, url_for
from flask_babel import to_user_timezone
from markupsafe import Markup

from companion.derived.timing import MatchTimes
from companion.models import Match, texts_of
from companion.play.links import public_base_url, qr_svg
from companion.state import MatchState

CREATE_PLAY = "https://app.bgstatsapp.com/createPlay.html"
SOURCE_NAME = "6 nimmt! table companion"
GAME = {
    "name": "6 nimmt!",
    "bggId": 432,
    "highestWins": False,  # fewest bulls wins
    "noPoints": False,
    "sourceGameId": "companion-6-nimmt",
}
LOCATION_ID = "companion-household"
DEFAULT_LOCATION = "Home"


class Seat(NamedTuple):
    """A player at the match, in seat order: id, name, total bulls, shared the win."""

    player_id: int
    name: str
    score: int
    winner: bool


def play_data(
    match_id: int,
    seats: Sequence[Seat],
    played_at: datetime,
    minutes: int,
    location: str,
    texts: Mapping[str, str] | None = None,
) -> dict:
    """The play as BG Stats reads it: ranks by bulls (1 = fewest, ties share a rank); the
    match's texts in the play's text fields (``texts``: the note as its "comments")."""
    return {
        "sourceName": SOURCE_NAME,
        "sourcePlayId": f"companion-match-{match_id}",
        "playDate": played_at.strftime("%Y-%m-%d %H:%M:%S"),
        "durationMin": minutes,
        "game": dict(GAME),
        "location": {"name": location, "sourceLocationId": LOCATION_ID},
        "players": [
            {
                "name": seat.name,
                "sourcePlayerId": f"companion-player-{seat.player_id}",
                "score": seat.score,
                "rank": 1 + sum(other.score < seat.score for other in seats),
                "winner": seat.winner,
                "startPlayer": position == 0,
            }
            for position, seat in enumerate(seats)
        ],
        **(texts or {}),
    }


def play_link(data: Mapping) -> str:
    """The BG Stats link carrying a play (compact JSON, every reserved character escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"{CREATE_PLAY}?data={quote(text, safe='')}"


class BgStats(NamedTuple):
    """A finished match's BG Stats link, and its QR code for the TV."""

    url: str
    match_id: int

    @property
    def qr(self) -> Markup | None:
        """The QR code for the TV (made when a page shows it): the companion's own short
        link (``short_link``), not the play's: a ten-player play is 2 px a module on a TV,
        too fine for a phone on the sofa, and 0.15 s of CPU to draw each time."""
        return qr_svg(short_link(self.match_id))


def short_link(match_id: int) -> str:
    """The companion's own link that leads to the play's (``play.bgstats``), at an
    address other phones reach."""
    return public_base_url() + url_for("play.bgstats", match_id=match_id)


def bgstats_link(state: MatchState, times: MatchTimes) -> BgStats | None:
    """The link of a finished match (None while it is played): played at the local time
    of its first game (the app's timezone, as every date on its pages), for the time
    ``companion.derived.timing`` counts, at the configured LOCATION ("Home")."""
    if not state.over:
        return None
    span = times.match
    totals, winners = state.standing.totals, state.standing.winners
    seats = [
        Seat(player.id, player.name, totals[player.id], player.id in winners)
        for player in state.players
    ]
    local = to_user_timezone(span.start).replace(tzinfo=None)
    location = current_app.config.get("LOCATION") or DEFAULT_LOCATION
    data = play_data(state.match.id, seats, local, span.minutes, location, play_texts(state.match))
    return BgStats(play_link(data), state.match.id)


def play_texts(match: Match) -> dict[str, str]:
    """The match's texts that BG Stats' play carries (its note: "comments"), by its field."""
    fields: dict[str, list[str]] = {}
    for typed, text in texts_of(match):
        if typed.bgstats:
            fields.setdefault(typed.bgstats, []).append(text)
    return {key: "\n".join(texts) for key, texts in fields.items()}
