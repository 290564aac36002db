"""The second attack run's findings (issue 41), each as the attack did it: a phone with no
link must never come to hold a match's link, and links made new must stay new.

The attacker is a test client of its own (a phone with no link): it reads only what any
phone may read, and sends only what any phone may send.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from backups import export, upload
from conftest import make_app
from driver import add_players, enter_round, phone, score_game, start_game, start_match, tokens
from sqlalchemy import select

from companion.db import db
from companion.models import Match


def new_match_of(response) -> int:
    """The match a redirect leads to."""
    return int(re.search(r"/matches/(\d+)", response.headers["Location"]).group(1))


def holds_player_link(client, match_id: int) -> bool:
    """The phone holds the match's player link: its invite shows it, and it may start a game."""
    invite = client.get(f"/matches/{match_id}/invite")
    return invite.status_code == 200 and "Player link" in invite.text


def test_an_import_cannot_hand_a_stranger_the_link_of_a_match_being_played(client, app):
    """The finding: a stranger imported a new match with no games whose rematch was an
    exact copy of the match being played (kept here as a duplicate); following that
    rematch then gave it the playing match's player link."""
    anna, ben = add_players(client, "Anna", "Ben")
    playing = start_match(client, [anna, ben])
    assert start_game(client, playing, [5, 15, 25, 35]).status_code == 303
    stranger = phone(app)
    document = export(stranger)  # open to every phone
    copy = document["matches"][0]
    bait = {**copy, "created_at": "2020-01-01T00:00:00.000000Z", "games": [], "rematch": 2}
    document["matches"] = [bait, copy]
    response = upload(stranger, document)
    assert response.status_code == 422  # a match with no games has no rematch
    with app.app_context():
        assert db.session.scalars(select(Match.id)).all() == [playing]  # nothing stored
    stranger.get(f"/matches/{playing + 1}/rematch")
    assert stranger.get(f"/matches/{playing}/invite").status_code == 403
    refused = start_game(stranger, playing, [6, 16, 26, 36], game=2)
    assert refused.status_code == 403
    with app.app_context():
        assert len(db.session.get(Match, playing).games) == 1


def test_an_import_links_a_rematch_only_among_the_matches_it_adds(client, app, tmp_path):
    """Even with games, a new match of the file never becomes the way into a match that
    was here before: its rematch link is not stored."""
    anna, ben = add_players(client, "Anna", "Ben")
    playing = start_match(client, [anna, ben], end_kind="games", end_value=1)
    document = export(client)
    finished = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, finished, {anna: 3, ben: 5})
    finished_entry = export(client)["matches"][1]
    bait = {**finished_entry, "created_at": "2020-01-01T00:00:00.000000Z", "rematch": 2}
    stranger = phone(app)
    response = upload(stranger, {**document, "matches": [bait, document["matches"][0]]})
    assert response.status_code == 303, html.unescape(response.text)
    with app.app_context():
        links = dict(db.session.execute(select(Match.id, Match.rematch_id)).all())
    assert links[finished + 1] is None and playing not in links.values()
    stranger.get(f"/matches/{finished + 1}/rematch")
    assert stranger.get(f"/matches/{playing}/invite").status_code == 403


def test_an_import_refuses_a_rematch_of_a_match_with_no_games(client):
    """A rematch starts from a finished match: a file's match with no games has none."""
    anna, ben = add_players(client, "Anna", "Ben")
    start_match(client, [anna, ben], end_kind="games", end_value=1)
    finished = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, finished, {anna: 3, ben: 5})
    document = export(client)
    document["matches"][0]["rematch"] = 2
    response = upload(phone(client.application), document)
    assert response.status_code == 422
    assert "Only a finished match has a rematch" in html.unescape(response.text)


def test_an_import_refuses_a_rematch_that_started_before_its_match(client):
    """A rematch is started after its match: one dated before it is no rematch of it."""
    anna, ben = add_players(client, "Anna", "Ben")
    for _ in range(2):
        match = start_match(client, [anna, ben], end_kind="games", end_value=1)
        score_game(client, match, {anna: 3, ben: 5})
    document = export(client)
    first, second = document["matches"]
    first["rematch"] = 2
    second["created_at"] = "2001-01-01T00:00:00.000000Z"
    first["seats"], second["seats"] = first["seats"], list(reversed(second["seats"]))
    response = upload(phone(client.application), document)
    assert response.status_code == 422
    assert "started before the match it is the rematch of" in html.unescape(response.text)


def finished_with_rematch(client, app) -> tuple[int, int, str]:
    """A finished match of Anna and Ben and its rematch, started on ``client``; the
    finished match's player token."""
    anna, ben = add_players(client, "Anna", "Ben")
    old = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, old, {anna: 3, ben: 5})
    new = new_match_of(client.post(f"/matches/{old}/rematch"))
    return old, new, tokens(app, old)[0]


def test_new_links_of_a_rematch_lock_out_the_phones_that_followed_it(client, app):
    """The finding: B followed match 1's rematch; A made new links for match 2, and B lost
    it there, but following match 1's rematch again handed B the new player link."""
    old, new, player_token = finished_with_rematch(client, app)
    phone_b = phone(app, old, player_token)
    assert phone_b.get(f"/matches/{old}/rematch").status_code == 303
    assert holds_player_link(phone_b, new)
    assert client.post(f"/matches/{new}/invite/renew").status_code == 303  # phone A
    assert phone_b.get(f"/matches/{new}/invite").status_code == 403
    for again in (phone_b.get(f"/matches/{old}/rematch"), phone_b.post(f"/matches/{old}/rematch")):
        assert again.status_code in (303, 403)
        assert phone_b.get(f"/matches/{new}/invite").status_code == 403
    assert start_game(phone_b, new, [1, 2, 3, 4]).status_code == 403
    assert holds_player_link(client, new)  # phone A keeps what it made


def test_new_links_of_a_rematch_are_not_handed_to_a_phone_that_never_followed(client, app):
    """A phone that joined match 1 only after match 2's links were made new gets nothing
    of match 2 through the rematch: its new links come from its own invite."""
    old, new, player_token = finished_with_rematch(client, app)
    assert client.post(f"/matches/{new}/invite/renew").status_code == 303
    late = phone(app, old, player_token)
    late.get(f"/matches/{old}/rematch")
    late.get(f"/matches/{old}/rematch?view=table")
    assert late.get(f"/matches/{new}/invite").status_code == 403


def test_new_watch_links_of_a_rematch_lock_out_the_tv_that_followed_it(client, app):
    old, new, _ = finished_with_rematch(client, app)
    tv = phone(app, old, tokens(app, old)[1])
    assert tv.get(f"/matches/{old}/rematch?view=table").status_code == 303
    assert tv.get(f"/matches/{new}/invite").status_code == 200
    assert client.post(f"/matches/{new}/invite/renew").status_code == 303
    tv.get(f"/matches/{old}/rematch?view=table")
    assert tv.get(f"/matches/{new}/invite").status_code == 403


def test_new_links_hold_along_a_chain_of_rematches(client, app):
    """Match 1 → 2 → 3: new links for 2 and 3 leave a phone of match 1 with neither."""
    anna, ben = add_players(client, "Anna", "Ben")
    first = start_match(client, [anna, ben], end_kind="games", end_value=1)
    score_game(client, first, {anna: 3, ben: 5})
    second = new_match_of(client.post(f"/matches/{first}/rematch"))
    score_game(client, second, {anna: 4, ben: 6})
    third = new_match_of(client.post(f"/matches/{second}/rematch"))
    phone_b = phone(app, first, tokens(app, first)[0])
    for match in (second, third):
        assert client.post(f"/matches/{match}/invite/renew").status_code == 303
    phone_b.get(f"/matches/{first}/rematch")
    phone_b.get(f"/matches/{second}/rematch")
    assert phone_b.get(f"/matches/{second}/invite").status_code == 403
    assert phone_b.get(f"/matches/{third}/invite").status_code == 403


def dated(document: dict, years: int, *path) -> dict:
    """The document with the time at ``path`` moved ``years`` past now."""
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = f"{datetime.now(UTC).year + years}-06-01T20:00:00.000000Z"
    return document


@pytest.mark.parametrize(
    "path",
    [
        ("exported_at",),
        ("matches", 0, "created_at"),
        ("matches", 0, "games", 0, "created_at"),
        ("matches", 0, "games", 0, "rounds", 0, "at"),
        ("players", 0, "created_at"),
    ],
)
def test_an_import_refuses_a_date_years_in_the_future(client, tmp_path, path):
    """A match or round dated years ahead: nothing was played in the future."""
    anna, ben = add_players(client, "Anna", "Ben")
    match = start_match(client, [anna, ben])
    assert start_game(client, match, [5, 15, 25, 35]).status_code == 303
    assert enter_round(client, match, {anna: 50, ben: 60}).status_code == 303
    document = dated(export(client), 3, *path)
    response = upload(make_app(tmp_path / "target.sqlite").test_client(), document)
    assert response.status_code == 422
    assert f"“{path[-1]}” is {datetime.now(UTC).year + 3}-06-01" in html.unescape(response.text)


def test_an_import_takes_a_clock_a_few_hours_ahead(client, tmp_path):
    """The machine that exported it ran a few hours ahead: the file still comes in."""
    anna, ben = add_players(client, "Anna", "Ben")
    start_match(client, [anna, ben])
    document = export(client)
    ahead = datetime.now(UTC) + timedelta(hours=5)
    document["exported_at"] = ahead.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    response = upload(make_app(tmp_path / "target.sqlite").test_client(), document)
    assert response.status_code == 303, html.unescape(response.text)


def test_typed_scores_past_what_a_game_hands_out_are_refused(client, app):
    """171 and 1 for two players: more than the deck holds (their game hands out 79 at
    most); the form says so and stores nothing."""
    anna, ben = add_players(client, "Anna", "Ben")
    match = start_match(client, [anna, ben])
    response = score_game(client, match, {anna: 171, ben: 1})
    assert response.status_code == 422
    assert "The scores add up to 172 bulls, but a game of 2 players hands out at most 79." in (
        html.unescape(response.text)
    )
    with app.app_context():
        assert db.session.get(Match, match).games == []
    assert score_game(client, match, {anna: 78, ben: 1}).status_code == 303


def test_an_import_refuses_typed_scores_past_what_a_game_hands_out(client, tmp_path):
    anna, ben = add_players(client, "Anna", "Ben")
    match = start_match(client, [anna, ben])
    assert score_game(client, match, {anna: 70, ben: 9}).status_code == 303
    document = export(client)
    document["matches"][0]["games"][0]["scores"] = [171, 1]
    response = upload(make_app(tmp_path / "target.sqlite").test_client(), document)
    assert response.status_code == 422
    assert "The scores add up to 172 bulls" in html.unescape(response.text)
