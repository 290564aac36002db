"""The round summary tells a round in the order it happened: lowest card first, each card
once, with what it did and, for a card that took a row, which card it was and the bulls."""

import pytest
from driver import add_players, choose, enter_round, start_game, start_match, tokens
from driver import phone as other_phone
from driver import summary_lines as read

NBSP = "\u00a0"
SIX = ["Anna", "Ben", "Cleo", "Dora", "Emil", "Fritz"]

# Round 2, lowest card first: Fritz's 5 is too low and he takes row 1 (only the 12 in it);
# Ben's 69 goes to row 2 as its 5th card; Dora's 71 is the 6th card there and takes the
# row with Ben's 69 in it (60 61 62 63 69: 3+1+1+1+1 bulls); Emil's 72 starts on her 71.
SUMMARY_EN = [
    f"Fritz 5: too low, took row 1, 1{NBSP}bull",
    "Ben 69 → row 2",
    f"Dora 71: sixth card, took row 2, 7{NBSP}bulls",
    "Emil 72 → row 2",
    "Anna 85 → row 3",
    "Cleo 95 → row 4",
]
SUMMARY_DE = [
    f"Fritz 5: zu niedrig, nimmt Reihe{NBSP}1, 1{NBSP}Hornochse",
    "Ben 69 → Reihe 2",
    f"Dora 71: sechste Karte, nimmt Reihe{NBSP}2, 7{NBSP}Hornochsen",
    "Emil 72 → Reihe 2",
    "Anna 85 → Reihe 3",
    "Cleo 95 → Reihe 4",
]
SUMMARY_FR = [
    f"Fritz 5{NBSP}: trop faible, a ramassé la rangée{NBSP}1, 1{NBSP}tête de bœuf",
    f"Ben 69 → rangée{NBSP}2",
    f"Dora 71{NBSP}: sixième carte, a ramassé la rangée{NBSP}2, 7{NBSP}têtes de bœuf",
    f"Emil 72 → rangée{NBSP}2",
    f"Anna 85 → rangée{NBSP}3",
    f"Cleo 95 → rangée{NBSP}4",
]


@pytest.fixture
def six_at_the_table(client):
    """Six players, game 1 started on 12 60 80 90 and round 1 placed so that row 2 holds
    four cards (60 61 62 63); round 2 entered, Fritz's 5 waiting for his row choice."""
    ids = add_players(client, *SIX)
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [12, 60, 80, 90]).status_code == 303
    first = dict(zip(ids, [61, 62, 63, 81, 91, 92], strict=True))
    assert enter_round(client, match_id, first).status_code == 303
    second = dict(zip(ids, [85, 69, 95, 71, 72, 5], strict=True))
    assert enter_round(client, match_id, second).status_code == 303
    return ids, match_id


def test_the_summary_is_the_round_in_the_order_it_happened(client, six_at_the_table):
    """Dora's 71 takes row 2 after Ben's 69 went there: the lines say so in that order,
    with the taking card and the bulls; Fritz's too-low 5 takes the row he chose."""
    ids, match_id = six_at_the_table
    assert choose(client, match_id, ids[5], 1).status_code == 303
    html = client.get(f"/matches/{match_id}").text
    assert read(html) == SUMMARY_EN
    assert "Nobody took a row" not in html
    # Each card once: no separate list of the rows taken above the others.
    assert html.count('class="summary-step ') == 6


def test_the_too_low_card_names_the_row_its_player_chose(client, six_at_the_table):
    """Not the suggested row (1, 1 bull): Fritz picks row 3 (80 81, 4 bulls). The rest of
    the round follows from his pick: Anna's 85 now goes to row 2."""
    ids, match_id = six_at_the_table
    assert choose(client, match_id, ids[5], 3).status_code == 303
    lines = read(client.get(f"/matches/{match_id}").text)
    assert lines[0] == f"Fritz 5: too low, took row 3, 4{NBSP}bulls"
    assert lines[1:3] == SUMMARY_EN[1:3]
    assert lines[-2:] == ["Anna 85 → row 2", "Cleo 95 → row 4"]


def test_the_table_view_shows_the_same_summary(client, app, six_at_the_table):
    """The TV reads the round like the phones do."""
    ids, match_id = six_at_the_table
    choose(client, match_id, ids[5], 1)
    _, watch_token = tokens(app, match_id)
    tv = other_phone(app, match_id, watch_token)
    assert read(tv.get(f"/matches/{match_id}/table").text) == SUMMARY_EN
    # The live poll's fragment carries the same lines.
    assert read(tv.get(f"/matches/{match_id}/live").text) == SUMMARY_EN


@pytest.mark.parametrize(
    ("accept", "expected"), [("de", SUMMARY_DE), ("fr-FR,fr;q=0.9", SUMMARY_FR)]
)
def test_the_summary_in_german_and_french(client, six_at_the_table, accept, expected):
    """Singular and plural bulls through ngettext; French keeps its non-breaking spaces."""
    ids, match_id = six_at_the_table
    choose(client, match_id, ids[5], 1)
    html = client.get(f"/matches/{match_id}", headers={"Accept-Language": accept}).text
    assert read(html) == expected


def test_a_long_name_is_whole_in_the_summary(client):
    """A name cut short by the screen is whole in its title and for screen readers."""
    long = "Bartholomäus Maximilian"
    ids = add_players(client, long, "Ben")
    match_id = start_match(client, ids)
    start_game(client, match_id, [12, 24, 37, 40])
    enter_round(client, match_id, {ids[0]: 3, ids[1]: 41})
    choose(client, match_id, ids[0], 2)
    html = client.get(f"/matches/{match_id}").text
    assert read(html) == [f"{long} 3: too low, took row 2, 1{NBSP}bull", "Ben 41 → row 4"]
    assert f'<span class="name" title="{long}">{long}</span>' in html
