"""Luck at the table (issue 34): each play's chance of taking a row and the bulls it was
expected to take, kept per placed round, following undo and corrections; ``luck.json``;
the round's improbable take in words; the game's end with each player's expected bulls."""

import random
import re
from html import unescape as html_unescape

import pytest
from correcting import correct
from driver import (
    add_players,
    choose,
    deal,
    enter_round,
    pending_of,
    phone,
    play_game,
    play_rounds,
    score_game,
    start_game,
    start_match,
    summary_lines,
    tokens,
    undo,
)
from sqlalchemy import delete, func, select, update

from companion import rules, store
from companion.db import db
from companion.derived import play_luck
from companion.derived.play_luck import rebuild_luck, sums_out_of_line
from companion.derived.tables import LuckPlayer, PlayLuck
from companion.models import Game, Match
from companion.state import played_game

NBSP = "\u00a0"


def luck_of(client, match_id, game=1):
    response = client.get(f"/matches/{match_id}/games/{game}/luck.json")
    assert response.status_code == 200, response.text
    return response.get_json()


def engine_figures(app, match_id, number=1):
    """The figures the rules want for a stored game, straight from its replay: by
    (round, player), (card, chance, expected, bulls, samples)."""
    with app.app_context():
        game = db.session.scalars(
            select(Game).where(Game.match_id == match_id, Game.number == number)
        ).one()
        player_ids = [seat.player_id for seat in game.match.seats]
        replay = played_game(game, player_ids)
        rounds = [result for result in replay.table.rounds if result.resolved]
        deck = rules.deck_size(len(player_ids), game.match.pro)
        odds = rules.game_odds(game.starting, rounds, deck, replay.finished, (game.id,))
    return {
        (number, play.player): (play.card, play.chance, play.expected, play.bulls, play.samples)
        for number, plays in enumerate(odds, 1)
        for play in plays
    }


def served_figures(document):
    return {
        (round_["round"], play["player_id"]): (
            play["card"],
            play["chance"],
            play["expected"],
            play["bulls"],
        )
        for round_ in document["rounds"]
        for play in round_["plays"]
    }


def same(document, wanted):
    assert served_figures(document) == {key: value[:4] for key, value in wanted.items()}


def stored_rows(app, match_id):
    with app.app_context():
        query = select(PlayLuck.round_number, PlayLuck.player_id, PlayLuck.whole)
        return set(db.session.execute(query.where(PlayLuck.match_id == match_id)).all())


@pytest.fixture
def three_played(app, client):
    """Anna, Ben and Cleo have played one whole game."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    replay = play_game(client, match_id, ids, random.Random(34))
    return ids, match_id, replay


def test_a_three_player_game_is_counted_exactly_and_matches_the_rules(app, client, three_played):
    ids, match_id, replay = three_played
    document = luck_of(client, match_id)
    assert document["match"] == match_id and document["game"] == 1
    assert document["method"] == "exact" and "samples" not in document
    assert [round_["round"] for round_ in document["rounds"]] == list(range(1, 11))
    same(document, engine_figures(app, match_id))
    # Each play's bulls are what its card took on the table, the names the seats'.
    for round_, result in zip(document["rounds"], replay.rounds, strict=True):
        taken = {step.player: step.bulls for step in result.steps}
        assert {play["player_id"]: play["bulls"] for play in round_["plays"]} == taken
        assert [play["card"] for play in round_["plays"]] == sorted(
            step.card for step in result.steps
        )
    names = dict(zip(ids, ["Anna", "Ben", "Cleo"], strict=True))
    players = document["players"]
    assert [player["player_id"] for player in players] == ids
    for player in players:
        assert player["name"] == names[player["player_id"]]
        assert player["bulls"] == replay.bulls()[player["player_id"]]
        assert player["luck"] == pytest.approx(player["expected"] - player["bulls"])
        plays = [
            play
            for round_ in document["rounds"]
            for play in round_["plays"]
            if play["player_id"] == player["player_id"]
        ]
        assert player["expected"] == pytest.approx(sum(play["expected"] for play in plays))
    # Every round is kept, figured with the whole hands now that the game is over.
    assert stored_rows(app, match_id) == {(n, pid, True) for n in range(1, 11) for pid in ids}


def test_four_players_are_sampled_the_same_way_every_time(app, client):
    ids = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(4))
    first = luck_of(client, match_id)
    assert first["method"] == "sampled" and first["samples"] == 4000
    assert luck_of(client, match_id) == first
    same(first, engine_figures(app, match_id))


def test_a_watch_link_reads_it_and_an_unknown_game_or_match_is_404(app, client, three_played):
    _ids, match_id, _replay = three_played
    _player, watch = tokens(app, match_id)
    watcher = phone(app, match_id, watch)
    assert luck_of(watcher, match_id) == luck_of(client, match_id)
    assert client.get(f"/matches/{match_id}/games/2/luck.json").status_code == 404
    assert client.get(f"/matches/{match_id + 1}/games/1/luck.json").status_code == 404


def test_a_running_game_counts_only_the_rounds_card_of_each_player(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [10, 50, 70, 90]).status_code == 303
    for cards in ([11, 51], [12, 52]):
        assert enter_round(client, match_id, dict(zip(ids, cards, strict=True))).status_code == 303
    document = luck_of(client, match_id)
    same(document, engine_figures(app, match_id))
    assert stored_rows(app, match_id) == {(n, pid, False) for n in (1, 2) for pid in ids}
    # Round 2 from Anna's side: Ben's card lies among the 104 - 4 - 2 - 1 = 97 cards she
    # could not see (Ben's 51 of round 1 she saw); her 12 follows the 11 on row 1 unless
    # it is too low (never: 10 is below it, and only a card below 10 could start a row
    # there, which would then take a row of its own) — it never takes a row.
    anna_12 = next(play for play in document["rounds"][1]["plays"] if play["card"] == 12)
    assert anna_12["chance"] == 0 and anna_12["expected"] == 0


def test_undo_and_a_correction_take_the_figures_along(app, client, three_played):
    ids, match_id, _replay = three_played
    assert undo(client, match_id).status_code in (303, 200)
    while stored_rows(app, match_id) and max(stored_rows(app, match_id))[0] == 10:
        assert undo(client, match_id).status_code in (303, 200)
    # The game runs again: nine rounds, each figured with the round's card alone.
    rows = stored_rows(app, match_id)
    assert {whole for _n, _pid, whole in rows} == {False}
    assert {n for n, _pid, _whole in rows} == set(range(1, 10))
    same(luck_of(client, match_id), engine_figures(app, match_id))
    # A correction of round 3 that swaps two players' cards: the figures follow.
    with app.app_context():
        game = db.session.scalars(select(Game).where(Game.match_id == match_id)).one()
        plays = {play.player_id: play.card for play in game.rounds[2].plays}
    swapped = {ids[0]: plays[ids[1]], ids[1]: plays[ids[0]], ids[2]: plays[ids[2]]}
    response = correct(client, match_id, 1, 3, cards=swapped)
    assert response.status_code in (200, 303)
    same(luck_of(client, match_id), engine_figures(app, match_id))
    with app.app_context():
        assert rebuild_luck(check=True, echo=lambda line: None) == ([], [])


def test_rebuild_puts_back_what_was_lost_and_luck_json_never_waits_for_it(
    app, client, three_played
):
    _ids, match_id, _replay = three_played
    wanted = luck_of(client, match_id)
    with app.app_context():
        db.session.execute(delete(PlayLuck))
        db.session.execute(delete(LuckPlayer))
        db.session.commit()
    # Nothing kept (an import's game before the background fills it): luck.json says so,
    # and figures nothing in the request (0.2 s a game of ten, every request held up).
    waiting = luck_of(client, match_id)
    assert waiting["rounds"] == [] and waiting["players"] == []
    assert waiting["pending"] == list(range(1, 11))
    with app.app_context():
        # None kept is not a difference: the background figures it.
        assert rebuild_luck(check=True, echo=lambda line: None) == ([], [match_id])
        assert rebuild_luck(check=False, echo=lambda line: None) == ([], [match_id])
        db.session.commit()
        assert rebuild_luck(check=True, echo=lambda line: None) == ([], [])
    assert luck_of(client, match_id) == wanted
    with app.app_context():  # a kept figure that is wrong is a difference
        db.session.execute(update(PlayLuck).values(expected=PlayLuck.expected + 1))
        db.session.commit()
        assert rebuild_luck(check=True, echo=lambda line: None) == ([match_id], [])
        rebuild_luck(check=False, echo=lambda line: None)
        db.session.commit()
        # and so is a player's kept sum of a game (LuckPlayer) that is not its rows'
        db.session.execute(update(LuckPlayer).values(bulls=LuckPlayer.bulls + 1))
        db.session.commit()
        assert rebuild_luck(check=True, echo=lambda line: None) == ([match_id], [])
        rebuild_luck(check=False, echo=lambda line: None)
        db.session.commit()
        assert rebuild_luck(check=True, echo=lambda line: None) == ([], [])
        assert sums_out_of_line(match_id) == set()


def test_a_finished_games_sums_are_its_rows_and_go_with_an_undo(app, client, three_played):
    """Each player's sums of a game (LuckPlayer, what the household's pages read) are
    written with the game's whole luck, equal to its rows' sums, and none is kept for a
    game whose luck is not complete."""
    ids, match_id, replay = three_played
    with app.app_context():
        sums = db.session.execute(select(LuckPlayer.player_id, LuckPlayer.bulls)).all()
        assert dict(sums) == {pid: rules.pile_bulls(replay.piles[pid]) for pid in ids}
        assert sums_out_of_line(match_id) == set()
    assert undo(client, match_id).status_code == 303  # round 10 gone: the game reopened
    with app.app_context():
        store.luck_after(match_id)
        assert db.session.scalar(select(func.count()).select_from(LuckPlayer)) == 0
        assert sums_out_of_line(match_id) == set()


def test_a_score_only_game_has_no_plays(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    assert score_game(client, match_id, {ids[0]: 10, ids[1]: 20}).status_code == 303
    document = luck_of(client, match_id)
    assert document["rounds"] == [] and document["players"] == []


@pytest.fixture
def improbable_take(client):
    """Anna's 15 is the sixth card of row 1 only because Ben played the 14, the one card
    between the row's end and hers: row 1 holds 10 11 12 13 after three rounds."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [10, 50, 70, 90]).status_code == 303
    for cards in ([11, 51], [12, 52], [13, 53], [15, 14]):
        assert enter_round(client, match_id, dict(zip(ids, cards, strict=True))).status_code == 303
    return ids, match_id


def test_an_improbable_take_says_its_chance(client, improbable_take):
    _ids, match_id = improbable_take
    # From Anna's side Ben's card was any of 104 - 4 - 6 - 1 = 93 cards; only the 14
    # makes her 15 the sixth card: 1/93, about 1 %.
    document = luck_of(client, match_id)
    anna_15 = next(play for play in document["rounds"][3]["plays"] if play["card"] == 15)
    assert anna_15["chance"] == pytest.approx(1 / 93)
    assert anna_15["expected"] == pytest.approx(11 / 93)  # 10 11 12 13 14: 3+5+1+1+1
    lines = summary_lines(client.get(f"/matches/{match_id}").text)
    assert lines == [
        "Ben 14 → row 1",
        f"Anna 15: sixth card, took row 1, 11{NBSP}bulls — a 1% chance",
    ]


def test_the_improbable_take_in_german_and_french(client, improbable_take):
    _ids, match_id = improbable_take
    page = client.get(f"/matches/{match_id}", headers={"Accept-Language": "de"}).text
    assert f"— eine Chance von 1{NBSP}%" in summary_lines(page)[1]
    page = client.get(f"/matches/{match_id}", headers={"Accept-Language": "fr"}).text
    assert f"— 1{NBSP}% de chances" in summary_lines(page)[1]


def test_the_game_end_shows_expected_bulls_and_who_was_luckiest(app, client, three_played):
    _ids, match_id, _replay = three_played
    document = luck_of(client, match_id)
    page = client.get(f"/matches/{match_id}").text
    text = re.sub(r"<[^>]+>", "", page)
    assert "Expected: the bulls a player's cards would take on average" in text
    players = sorted(document["players"], key=lambda player: player["luck"])
    unluckiest, luckiest = players[0], players[-1]
    # Named in one line; their figures in words one tap away (a <details>).
    assert f"Luckiest: {luckiest['name']} · unluckiest: {unluckiest['name']}" in text
    figure = f"{-unluckiest['luck']:.1f}"
    assert (
        f"{unluckiest['name']}: expected from the cards {unluckiest['expected']:.1f} bulls, "
        f"took {unluckiest['bulls']}: {figure} bulls of bad luck."
    ) in text
    assert f"{luckiest['name']}: expected from the cards" in text
    for player in players:
        assert f'<span class="expected">{player["expected"]:.1f}</span>' in page


@pytest.mark.app_config(AFTER_THE_ANSWER=True)
def test_a_games_end_answers_first_and_figures_its_luck_once_it_is_sent(app, client):
    """Issue 42: no luck in the round's write, not even its own round's. The last round
    and the earlier rounds, figured again with the whole hands, follow once the answer has
    gone out (the server closes it then), in a write of its own that raises the match's
    versions: every phone gets a second push."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    rng = random.Random(30)  # a deal whose last round has no too-low card
    hands, starting = deal(rng, 3)
    assert start_game(client, match_id, starting).status_code == 303
    for turn in range(9):
        plays = {pid: hands[seat][turn] for seat, pid in enumerate(ids)}
        assert enter_round(client, match_id, plays).status_code == 303
        while (pending := pending_of(client, match_id)) is not None:
            assert choose(client, match_id, pending.player, 1).status_code == 303
    last = {f"card-{pid}": str(hands[seat][9]) for seat, pid in enumerate(ids)}
    response = client.post(f"/matches/{match_id}/rounds", data={**last, "game": "1", "round": "10"})
    assert response.status_code == 303
    assert pending_of(client, match_id) is None
    assert stored_rows(app, match_id) == set()  # no write placed cards for luck
    version = state_version(app, match_id)
    response.close()  # the answer has gone out
    assert stored_rows(app, match_id) == {(n, pid, True) for n in range(1, 11) for pid in ids}
    assert state_version(app, match_id) == version + 1
    same(luck_of(client, match_id), engine_figures(app, match_id))


def state_version(app, match_id):
    with app.app_context():
        return db.session.get(Match, match_id).version


def cells(html: str, section: str) -> list[list[str]]:
    """The rows of the first table of this class, as the texts of their cells."""
    table = re.search(rf'<table[^>]*class="[^"]*{section}[^"]*".*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    return [
        [
            re.sub(r"<[^>]+>|\s+", " ", cell).strip()
            for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        ]
        for row in rows
    ]


def test_the_matchs_end_shows_the_matchs_expected_bulls_and_luck(client):
    """Issue 43: under "Final standings" the TV showed the last game's Expected column and
    luck sentences; the match's end has the match's, beside the totals, and a phone's final
    standings name their columns (Total, Expected)."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    for game in (1, 2):
        play_game(client, match_id, ids, random.Random(40 + game))
    games = [luck_of(client, match_id, game) for game in (1, 2)]
    expected = {
        pid: sum(p["expected"] for g in games for p in g["players"] if p["player_id"] == pid)
        for pid in ids
    }
    names = dict(zip(ids, ["Anna", "Ben", "Cleo"], strict=True))
    tv = client.get(f"/matches/{match_id}/table").text
    head, *rows = cells(tv, "standings-table")
    assert head[:4] == ["Player", "Game 2", "Total", "Expected"]
    shown = {row[0].split()[0]: row[3] for row in rows}
    assert shown == {names[pid]: f"{expected[pid]:.1f}" for pid in ids}
    lucky = re.search(r'<p class="luck-lucky">(.*?)</p>', tv, re.S).group(1)
    luckiest = max(
        ids,
        key=lambda pid: sum(
            p["luck"] for g in games for p in g["players"] if p["player_id"] == pid
        ),
    )
    assert f"expected from the cards {expected[luckiest]:.1f} bulls" in unescape_text(lucky)
    phone_head, *_ = cells(client.get(f"/matches/{match_id}").text, "final-totals")
    assert phone_head == ["Player", "Total", "Expected"]


def unescape_text(html: str) -> str:
    """A fragment's text: tags dropped, entities read."""
    return html_unescape(re.sub(r"<[^>]+>", "", html))


def test_a_look_replays_only_the_games_whose_luck_may_be_out_of_line(
    app, client, three_played, monkeypatch
):
    """A round's look at luck (the background's, every round) replays the open game, and
    of the games before it only those whose kept rows are not all there with the whole
    hands: it does not grow with the evening (issue 59). A correction of an old game
    drops its rows, and the next look figures it again."""
    ids, match_id, _replay = three_played
    play_game(client, match_id, ids, random.Random(35))
    hands = play_rounds(client, match_id, ids, random.Random(36), 2)
    assert hands
    replayed = []
    real = play_luck.played_game

    def counted(game, player_ids):
        replayed.append(game.number)
        return real(game, player_ids)

    monkeypatch.setattr(play_luck, "played_game", counted)
    with app.app_context():
        assert store.luck_after(match_id) is not None
    assert replayed == [3]
    monkeypatch.setattr(play_luck, "played_game", real)
    with app.app_context():
        game = db.session.scalars(
            select(Game).where(Game.match_id == match_id, Game.number == 1)
        ).one()
        plays = {play.player_id: play.card for play in game.rounds[2].plays}
    swapped = {ids[0]: plays[ids[1]], ids[1]: plays[ids[0]], ids[2]: plays[ids[2]]}
    monkeypatch.setattr(play_luck, "played_game", counted)
    replayed.clear()
    # The correction's write drops game 1's rows; the look after it (here in the request)
    # figures them again.
    assert correct(client, match_id, 1, 3, cards=swapped).status_code in (200, 303)
    assert replayed == [3, 1]
    monkeypatch.setattr(play_luck, "played_game", real)
    for number in (1, 2):
        same(luck_of(client, match_id, number), engine_figures(app, match_id, number))
    with app.app_context():
        assert rebuild_luck(check=True, echo=lambda line: None) == ([], [])
