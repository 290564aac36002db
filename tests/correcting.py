"""Correcting a past round through the test client, as a phone does."""

from __future__ import annotations

import re
from html import unescape

from driver import state_of

from companion import rules
from companion.db import db
from companion.models import Game
from companion.state import stored_rounds


def form_values(client, match_id, game, number):
    """The correction form's values as the page fills them in (GET)."""
    response = client.get(f"/matches/{match_id}/games/{game}/rounds/{number}/correct")
    assert response.status_code == 200, response.status_code
    html = response.get_data(as_text=True)
    values = dict(re.findall(r'name="((?:card|row)-\d+|version)"[^>]*?value="([^"]*)"', html))
    for name, row in re.findall(r'name="(row-\d+)".*?<option value="(\d)" selected', html, re.S):
        values[name] = row
    return values


def correct(client, match_id, game, number, cards=None, choices=None, confirm=True, values=None):
    """Send a correction of a round: ``cards`` {player: card} and ``choices`` {player: row}
    replace the form's values (a choice of None clears it); confirmed unless told not."""
    data = dict(values or form_values(client, match_id, game, number))
    for player, card in (cards or {}).items():
        data[f"card-{player}"] = str(card)
    for player, row in (choices or {}).items():
        data[f"row-{player}"] = "" if row is None else str(row)
    if confirm:
        data["confirm"] = "1"
    return client.post(f"/matches/{match_id}/games/{game}/rounds/{number}/correct", data=data)


def inputs_of(client, match_id, number):
    """A game's starting cards and stored rounds: (plays by player, choices)."""
    with client.application.app_context():
        game = db.session.scalar(
            db.select(Game).where(Game.match_id == match_id, Game.number == number)
        )
        # A round's plays in no particular order (PostgreSQL's may differ after a change).
        return game.starting, [
            (sorted(plays), choices) for plays, choices in stored_rounds(game.id)
        ]


def replayed(client, match_id, number):
    """The engine's replay of a game from its stored inputs."""
    starting, rounds = inputs_of(client, match_id, number)
    return rules.replay_game(starting, rounds, state_of(client, match_id).player_ids)


def text_of(response) -> str:
    """A page's text, tags dropped and spaces made one."""
    html = re.sub(r"<[^>]+>", " ", response.get_data(as_text=True))
    return re.sub(r"\s+", " ", unescape(html))
