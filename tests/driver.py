"""Plays matches through the Flask test client the way a phone at the table does."""

from __future__ import annotations

import random
import re
from html import unescape

from companion import rules
from companion.db import db
from companion.derived import GameResult, rows_of
from companion.models import Match, Play, Player, Round, RowChoice
from companion.state import match_state


def add_players(client, *names: str) -> list[int]:
    """Add household players; return their ids."""
    for name in names:
        response = client.post("/players/", data={"name": name})
        assert response.status_code == 303, response.get_data(as_text=True)
    with client.application.app_context():
        return [
            db.session.scalar(db.select(Player.id).where(Player.name == name)) for name in names
        ]


def start_match(client, player_ids, end_kind="more_than", end_value=66, deck="standard") -> int:
    """Start a match with these players seated in order; return its id."""
    data = {f"seat_{seat}": str(pid) for seat, pid in enumerate(player_ids, 1)}
    data.update(end_kind=end_kind, end_value=str(end_value), deck=deck)
    response = client.post("/matches/", data=data)
    assert response.status_code == 303, response.get_data(as_text=True)
    return int(re.search(r"/matches/(\d+)", response.headers["Location"]).group(1))


def state_of(client, match_id):
    """The match as the app replays it."""
    with client.application.app_context():
        return match_state(db.session.get(Match, match_id))


def pending_of(client, match_id):
    """The row choice the match waits for, if any."""
    current = state_of(client, match_id).current
    return current.pending if current else None


def i_am(client, match_id, player_id) -> None:
    """This phone says whose card it enters ("I am Anna"); it may then send cards one by
    one (hidden until all are in) instead of the whole round at once."""
    response = client.post(f"/matches/{match_id}/me", data={"player": str(player_id)})
    assert response.status_code == 303


def start_game(client, match_id, cards, game=None):
    """Post the four starting cards."""
    state = state_of(client, match_id)
    data = {f"row{row}": str(card) for row, card in enumerate(cards, 1)}
    data["game"] = str(game if game is not None else len(state.games) + 1)
    return client.post(f"/matches/{match_id}/games", data=data)


def enter_round(client, match_id, cards_by_player, game=None, round_=None):
    """Post one round: {player_id: card}."""
    state = state_of(client, match_id)
    current = state.current
    data = {f"card-{pid}": str(card) for pid, card in cards_by_player.items()}
    data["game"] = str(game if game is not None else current.number)
    data["round"] = str(round_ if round_ is not None else current.rounds_played + 1)
    return client.post(f"/matches/{match_id}/rounds", data=data)


def choose(client, match_id, player_id, row):
    """Post a row choice."""
    current = state_of(client, match_id).current
    data = {
        "player": str(player_id),
        "row": str(row),
        "game": str(current.number),
        "round": str(current.rounds_played),
    }
    return client.post(f"/matches/{match_id}/choice", data=data)


def undo(client, match_id):
    """Confirm and perform one undo."""
    page = client.get(f"/matches/{match_id}/undo").get_data(as_text=True)
    expect = re.search(r'name="expect" value="([^"]+)"', page).group(1)
    return client.post(f"/matches/{match_id}/undo", data={"expect": expect})


def score_game(client, match_id, scores):
    """Post a score-only game: {player_id: bulls or [pile cards]}."""
    state = state_of(client, match_id)
    data = {"game": str(len(state.games) + 1)}
    for pid, score in scores.items():
        if isinstance(score, list):
            data[f"kind-{pid}"] = "pile"
            data[f"score-{pid}"] = " ".join(str(card) for card in score)
        else:
            data[f"kind-{pid}"] = "bulls"
            data[f"score-{pid}"] = str(score)
    return client.post(f"/matches/{match_id}/scores", data=data)


def deal(rng: random.Random, players: int, deck: int = 104):
    """Random hands of 10 and four starting cards."""
    cards = rng.sample(range(1, deck + 1), 10 * players + 4)
    hands = [cards[i * 10 : (i + 1) * 10] for i in range(players)]
    return hands, cards[-4:]


def play_rounds(client, match_id, player_ids, rng: random.Random, rounds: int):
    """Start a game and play only its first ``rounds`` rounds, row 1 for a too-low card
    (it stays unfinished); return the hands dealt."""
    hands, starting = deal(rng, len(player_ids))
    assert start_game(client, match_id, starting).status_code == 303
    for turn in range(rounds):
        plays = {pid: hands[seat][turn] for seat, pid in enumerate(player_ids)}
        assert enter_round(client, match_id, plays).status_code == 303
        while (pending := pending_of(client, match_id)) is not None:
            assert choose(client, match_id, pending.player, 1).status_code == 303
    return hands


def play_game(client, match_id, player_ids, rng: random.Random, deck: int = 104, chooser=None):
    """Play one whole game through the app; return the engine's own replay of it.

    ``chooser(pending) -> row`` picks rows for too-low cards (default: a random row).
    The choices the game waits for are the engine's, placing the rounds here as they are
    sent: asking the app after every round and every choice replayed the whole match each
    time (a fifth of a game's time). The app asks for the same ones: a choice it did not
    ask for, a round sent while it waits for one, fail; and at the end it waits for none.
    """
    hands, starting = deal(rng, len(player_ids), deck)
    assert start_game(client, match_id, starting).status_code == 303
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(10):
        plays = {pid: hands[seat][turn] for seat, pid in enumerate(player_ids)}
        assert enter_round(client, match_id, plays).status_code == 303
        table.start_round(plays.items())
        choices = {}
        while (pending := table.run(choices)) is not None:
            row = chooser(pending) if chooser else rng.randint(1, 4)
            choices[pending.player] = row
            assert choose(client, match_id, pending.player, row).status_code == 303
        rounds.append((list(plays.items()), choices))
    assert pending_of(client, match_id) is None
    return rules.replay_game(starting, rounds, player_ids)


def table_snapshot(app):
    """Everything stored, to prove a rejected request changed nothing."""
    with app.app_context():
        return [
            db.session.execute(db.select(model.__table__)).all()
            for model in (Match, Round, Play, RowChoice, GameResult)
        ]


def replayed_rows(match: Match) -> dict[str, set]:
    """A match's derived rows computed from its inputs alone (every game replayed), as
    ``flask rebuild`` computes them."""
    return rows_of(match_state(match, replay_all=True))


def tokens(app, match_id):
    """The match's current player and watch tokens."""
    with app.app_context():
        match = db.session.get(Match, match_id)
        return match.player_token, match.watch_token


def phone(app, match_id=None, token=None):
    """Another phone; with a token it opens that join link first."""
    other = app.test_client()
    if token is not None:
        response = other.get(f"/matches/{match_id}/join/{token}")
        assert response.status_code == 303
    return other


def count(app, model):
    """Rows of a model."""
    with app.app_context():
        return db.session.scalar(db.select(db.func.count()).select_from(model))


def summary_lines(html: str) -> list[str]:
    """The round summary's lines as a reader sees them, in page order: tags dropped, runs
    of ordinary whitespace made one space (non-breaking spaces stay)."""
    items = re.findall(r'<li class="summary-step[^"]*">(.*?)</li>', html, re.S)
    return [
        re.sub(r"[ \t\n]+", " ", unescape(re.sub(r"<[^>]+>", "", item))).strip() for item in items
    ]
