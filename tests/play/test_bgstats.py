"""A finished match is logged in BG Stats in one tap: the link on its page, its scoreboard,
the TV (also as a QR code) and a watching phone carries the play as the scoreboard has it."""

import json
import random
import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from driver import add_players, phone, play_game, score_game, start_match, state_of, tokens
from qr import qr_text
from timings import set_times

from companion.db import db
from companion.models import Game

NAMES = ["Anna", "Ben", "Cleo", "Dora", "Émile", "Fritz", "Gül", "Hana", "Ines", "Jo & Co"]
LINK = re.compile(r'href="(https://app\.bgstatsapp\.com/createPlay\.html\?data=[^"]+)"')


def play_with_a_tie(client, count: int, seed: int) -> tuple[list[int], int]:
    """A two-game match of ``count`` players: a game card by card, then typed scores
    that leave the first two seats tied for the win (and the others one apart)."""
    ids = add_players(client, *NAMES[:count])
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, match_id, ids, random.Random(seed))
    totals = state_of(client, match_id).running.totals
    offset = {pid: 0 if seat < 2 else seat for seat, pid in enumerate(ids)}
    # The least that does it: a game hands out only so many bulls (rules.most_taken).
    top = max(totals[pid] - offset[pid] for pid in ids)
    scores = {pid: top - totals[pid] + offset[pid] for pid in ids}
    assert score_game(client, match_id, scores).status_code == 303
    assert state_of(client, match_id).over
    return ids, match_id


def decoded(link: str) -> dict:
    """The play a BG Stats link carries."""
    parts = urlsplit(unescape(link))
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https",
        "app.bgstatsapp.com",
        "/createPlay.html",
    )
    (data,) = parse_qs(parts.query, strict_parsing=True)["data"]
    return json.loads(data)


def scoreboard_of(html: str) -> tuple[list[str], list[int], list[str]]:
    """The names (in seat order), total bulls and winners as the scoreboard shows them."""
    table = re.search(r'<table class="totals per-game">(.*?)</table>', html, re.S).group(1)
    head = re.search(r"<thead>(.*?)</thead>", table, re.S).group(1)
    names = [unescape(name) for name in re.findall(r'<span class="name"[^>]*>(.*?)</span>', head)]
    foot = re.search(r"<tfoot>(.*?)</tfoot>", table, re.S).group(1)
    totals = [int(total) for total in re.findall(r'<td class="num">(\d+)</td>', foot)]
    outcome = re.search(r"(?:Winner|Shared win): ([^<]*)</p>", html).group(1)
    return names, totals, unescape(outcome).split(", ")


@pytest.mark.parametrize("count", range(4, 11))
def test_the_bgstats_link_carries_the_play_the_scoreboard_shows(client, app, count):
    """4 to 10 players, the win shared: every field of the play is the scoreboard's."""
    ids, match_id = play_with_a_tie(client, count, seed=count)
    html = client.get(f"/matches/{match_id}/scoreboard").text
    (link,) = set(LINK.findall(html))
    play = decoded(link)
    names, totals, winners = scoreboard_of(html)
    with app.app_context():
        first = db.session.scalar(db.select(Game.created_at).where(Game.match_id == match_id))
    assert play["sourceName"] == "6 nimmt! table companion"
    assert play["sourcePlayId"] == f"companion-match-{match_id}"
    assert play["playDate"] == first.strftime("%Y-%m-%d %H:%M:%S")  # the app's timezone: UTC
    assert isinstance(play["durationMin"], int) and play["durationMin"] >= 0
    assert play["game"] == {
        "name": "6 nimmt!",
        "bggId": 432,
        "highestWins": False,
        "noPoints": False,
        "sourceGameId": "companion-6-nimmt",
    }
    assert play["location"] == {"name": "Home", "sourceLocationId": "companion-household"}
    assert len(winners) == 2
    assert play["players"] == [
        {
            "name": name,
            "sourcePlayerId": f"companion-player-{pid}",
            "score": total,
            "rank": 1 + sum(other < total for other in totals),
            "winner": name in winners,
            "startPlayer": seat == 0,
        }
        for seat, (pid, name, total) in enumerate(zip(ids, names, totals, strict=True))
    ]
    assert [player["rank"] for player in play["players"]][:3] == [1, 1, 3]


def tv_qr(tv_html: str) -> str:
    """The text of the QR code on the TV's final standings."""
    (svg,) = re.findall(r'<figure class="bgstats-qr"><svg .*?</svg>', tv_html, re.S)
    return qr_text(svg)


LAN = "http://192.168.1.20:8000"  # a phone's way to the companion


@pytest.mark.app_config(TRUSTED_HOSTS=["192.168.1.20"])
def test_every_view_of_the_finished_match_has_the_same_link(client, app):
    """The match page, the TV (link, and QR code of the short link that leads to it) and
    a phone with the watch link."""
    _ids, match_id = play_with_a_tie(client, 10, seed=1)  # a tie within a game's 167 bulls
    (link,) = set(LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text))
    assert set(LINK.findall(client.get(f"/matches/{match_id}").text)) == {link}
    tv = client.get(f"/matches/{match_id}/table", base_url=LAN).text
    assert set(LINK.findall(tv)) == {link}
    short = tv_qr(tv)
    assert short == f"{LAN}/matches/{match_id}/bgstats"
    answer = client.get(short)
    assert answer.status_code == 303 and answer.location == unescape(link)
    _player, watch = tokens(app, match_id)
    watcher = phone(app, match_id, watch)
    assert set(LINK.findall(watcher.get(f"/matches/{match_id}").text)) == {link}


@pytest.mark.app_config(TRUSTED_HOSTS=["192.168.1.20"])
def test_the_tv_code_is_big_enough_for_a_phone_on_the_sofa(client):
    """The finding: a ten-player play in the QR code itself was about 2 px a module at
    720 lines. The short link makes a code of at most 37 modules with its border (version
    4 at the default correction), so the TV's 36 % of its height gives each 7 px."""
    _ids, match_id = play_with_a_tie(client, 10, seed=1)
    tv = client.get(f"/matches/{match_id}/table", base_url=LAN).text
    (size,) = re.findall(r'<figure class="bgstats-qr"><svg [^>]*viewBox="0 0 (\d+) ', tv)
    assert int(size) <= 37


def test_a_long_play_still_has_its_code(client, app):
    """The finding of an attack run: ten long Greek and emoji names made the TV answer
    500 (qrcode's "Invalid version (was 41…)"). The short link is as long for any play,
    and leads to the whole of it."""
    names = [("🐂Ωμέγα" * 5)[:29] + chr(0x3B1 + seat) for seat in range(10)]
    ids = add_players(client, *names)
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    score_game(client, match_id, {pid: seat for seat, pid in enumerate(ids)})
    tv = client.get(f"/matches/{match_id}/table")
    assert tv.status_code == 200
    live = client.get(f"/matches/{match_id}/live?since=0&view=table")
    assert live.status_code == 200 and tv_qr(live.text) == tv_qr(tv.text)
    leads_to = client.get(tv_qr(tv.text)).location
    assert [player["name"] for player in decoded(leads_to)["players"]] == names


def test_a_match_being_played_has_no_link(client, table):
    """Only a finished match is a play to log: its short link is not found yet."""
    _ids, match_id = table
    assert not LINK.findall(client.get(f"/matches/{match_id}").text)
    assert not LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text)
    assert client.get(f"/matches/{match_id}/bgstats").status_code == 404
    assert client.get("/matches/99999/bgstats").status_code == 404


@pytest.mark.app_config(LOCATION="Gartenhaus")
def test_the_location_is_the_household_setting(client):
    """COMPANION_LOCATION names the household's place."""
    _ids, match_id = play_with_a_tie(client, 4, seed=1)
    (link,) = set(LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text))
    assert decoded(link)["location"]["name"] == "Gartenhaus"


def test_the_play_has_the_time_of_its_first_game_and_its_minutes(client, app):
    """playDate and durationMin are what the scoreboard says (tests/play/test_times.py)."""
    _ids, match_id = play_with_a_tie(client, 4, seed=2)
    set_times(app, match_id)
    (link,) = set(LINK.findall(client.get(f"/matches/{match_id}/scoreboard").text))
    play = decoded(link)
    assert play["playDate"] == "2026-03-14 19:30:00"
    assert play["durationMin"] == 45
