"""Each match and game says when it was played and how long it took: at its end, on the
scoreboard, in the history and in the CSV; an evening's pause counts 20 minutes."""

import csv
import io

import pytest
from conftest import make_app
from flask_babel import get_timezone
from test_bgstats import LINK, decoded, play_with_a_tie
from timings import set_times

from companion.web import i18n


@pytest.fixture
def timed(client, app):
    """A finished four-player match whose entries are at known moments (tests/timings.py)."""
    _ids, match_id = play_with_a_tie(client, 4, seed=5)
    set_times(app, match_id)
    return match_id


def test_the_end_of_the_match_says_when_and_how_long(client, timed):
    """The match page and the TV: from 19:30, 45 minutes (not the 1 h 27 min on the clock)."""
    for path in (f"/matches/{timed}", f"/matches/{timed}/table"):
        html = client.get(path).text
        assert 'datetime="2026-03-14T19:30Z"' in html
        assert "played for 45 min" in html


def test_the_scoreboard_has_each_games_time(client, timed):
    """Game 1 took 38 minutes (its pause counted 20), game 2 seven, the match 45."""
    html = client.get(f"/matches/{timed}/scoreboard").text
    cells = html.split('<td class="num time">')[1:]
    assert [cell.split("</td>")[0] for cell in cells] == ["38 min", "7 min", "45 min"]
    assert "played for 45 min" in html


def test_the_history_says_when_and_how_long(client, timed):
    html = client.get("/history").text
    assert 'datetime="2026-03-14T19:30Z"' in html and "played for 45 min" in html


def test_the_csv_has_each_games_time(client, timed):
    text = client.get(f"/matches/{timed}/export.csv").data.decode().lstrip("\ufeff")
    rows = list(csv.reader(io.StringIO(text)))
    assert [row[-2:] for row in rows] == [
        ["Played at", "Minutes"],
        ["2026-03-14 19:30", "38"],
        ["2026-03-14 20:50", "7"],
        ["2026-03-14 19:30", "45"],
    ]


def test_the_time_in_german_and_french(client, timed):
    """The minutes stay with their number (no line break between them)."""
    german = client.get(f"/matches/{timed}", headers={"Accept-Language": "de"}).text
    assert "45\u00a0min gespielt" in german
    french = client.get(f"/matches/{timed}", headers={"Accept-Language": "fr"}).text
    assert "45\u00a0min de jeu" in french


@pytest.mark.app_config(TIMEZONE="Europe/Berlin")
def test_the_times_are_the_households_own(client, app):
    """COMPANION_TIMEZONE: 19:30 UTC in March is 20:30 in Berlin, on the pages, in the CSV
    and in the BG Stats play; the machine-readable moment stays in UTC."""
    _ids, match_id = play_with_a_tie(client, 4, seed=5)
    set_times(app, match_id)
    html = client.get(f"/matches/{match_id}/scoreboard").text
    assert '<time datetime="2026-03-14T19:30Z">Mar 14, 2026, 8:30\u202fPM</time>' in html
    (link,) = set(LINK.findall(html))
    assert decoded(link)["playDate"] == "2026-03-14 20:30:00"
    text = client.get(f"/matches/{match_id}/export.csv").data.decode().lstrip("\ufeff")
    assert list(csv.reader(io.StringIO(text)))[1][-2:] == ["2026-03-14 20:30", "38"]


def test_without_a_setting_the_machines_own_timezone_counts(monkeypatch, tmp_path):
    """A Raspberry Pi set to the household's zone needs no setting."""
    monkeypatch.setattr(i18n.tzlocal, "get_localzone_name", lambda: "Europe/Paris")
    app = make_app(tmp_path / "companion.sqlite", TIMEZONE=None)
    with app.test_request_context():
        assert str(get_timezone()) == "Europe/Paris"


def test_a_name_that_is_no_timezone_stops_the_start_with_a_message(tmp_path):
    with pytest.raises(ValueError, match="COMPANION_TIMEZONE='Mars/Olympus' is not a timezone"):
        make_app(tmp_path / "companion.sqlite", TIMEZONE="Mars/Olympus")


def test_a_machine_zone_unknown_here_says_to_set_one(monkeypatch, tmp_path):
    monkeypatch.setattr(i18n.tzlocal, "get_localzone_name", lambda: "Mars/Olympus")
    with pytest.raises(ValueError, match="the machine's zone 'Mars/Olympus' is not a timezone"):
        make_app(tmp_path / "companion.sqlite", TIMEZONE=None)
