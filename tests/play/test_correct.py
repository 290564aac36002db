"""Correcting a past round: a form filled in, checked like a new round, what changes shown
before it is stored, the game replayed from there; refused when it cannot be."""

import random
import re
from html import unescape

import pytest
from correcting import correct, form_values, inputs_of, replayed, text_of
from driver import (
    add_players,
    choose,
    deal,
    enter_round,
    i_am,
    pending_of,
    phone,
    play_game,
    replayed_rows,
    score_game,
    start_game,
    start_match,
    state_of,
    table_snapshot,
    tokens,
)

from companion import rules, store
from companion.db import db
from companion.derived import GameResult, PlayerMatchStat, stored_rows
from companion.models import Correction, Match


def three_rounds(client, match_id, ids, choice_round_two=True):
    """Anna, Ben, Cleo: round 1 on row 4; round 2 Anna's 2 too low (takes row 1)."""
    anna, ben, cleo = ids
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    assert enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    assert enter_round(client, match_id, {anna: 2, ben: 50, cleo: 3}).status_code == 303
    assert choose(client, match_id, anna, 1).status_code == 303
    assert enter_round(client, match_id, {anna: 60, ben: 61, cleo: 62}).status_code == 303


def test_no_correction_tells_which_cards_the_others_hold_hidden(client, app, trio):
    """The finding: a preview with each card 1-104 answered "already entered by another
    player" for exactly the hidden ones. Now every card gets the same answer, before any
    is looked at, until the round's cards are all in; nothing is stored."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    anna_phone = phone(app, match_id, tokens(app, match_id)[0])
    i_am(anna_phone, match_id, anna)
    assert enter_round(anna_phone, match_id, {anna: 70}).status_code == 303  # hidden
    values = form_values(client, match_id, 1, 1)
    shown = text_of(client.get(f"/matches/{match_id}/games/1/rounds/1/correct"))
    assert "being entered (1 of 3 in)" in shown
    before = table_snapshot(app)
    answers = set()
    for card in range(1, 105):
        response = correct(client, match_id, 1, 1, cards={ben: card}, confirm=False, values=values)
        error = re.search(r'class="form-error"[^>]*>([^<]+)<', response.text).group(1)
        answers.add((response.status_code, unescape(error)))
    assert answers == {
        (
            422,
            "The next round's cards are being entered (1 of 3 in). Correct this round "
            "once they are all in, or undo them first.",
        )
    }
    assert table_snapshot(app) == before
    # Once every card is in, they are placed, and the correction goes on as before.
    enter_round(client, match_id, {ben: 71, cleo: 72})
    assert correct(client, match_id, 1, 1, cards={ben: 39}, confirm=False).status_code == 200


def test_the_form_is_filled_with_the_round_as_entered(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    values = form_values(client, match_id, 1, 2)
    assert values[f"card-{anna}"] == "2" and values[f"card-{cleo}"] == "3"
    assert values[f"row-{anna}"] == "1"
    assert f"row-{ben}" not in values


def test_a_confirmation_shows_what_changes_before_anything_is_stored(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    before = table_snapshot(app)
    page = correct(client, match_id, 1, 1, cards={anna: 39}, confirm=False)
    assert page.status_code == 200
    text = text_of(page)
    assert "Round 1 Anna: 41 → 39, row 4 → row 3" in text  # 39 goes after 37
    assert "Store the correction" in text
    assert table_snapshot(app) == before


def test_a_correction_replays_the_later_rounds(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    assert correct(client, match_id, 1, 1, cards={anna: 39}).status_code == 303
    _, rounds = inputs_of(client, match_id, 1)
    assert dict(rounds[0][0])[anna] == 39
    game = state_of(client, match_id).current
    assert game.rounds_played == 3
    assert game.table.rows == replayed(client, match_id, 1).rows
    assert (39,) in [row[-1:] for row in game.table.rows]


def test_a_choice_no_longer_needed_is_dropped_and_said(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    # Anna's 1 in round 1 is too low and takes row 1: her 2 in round 2 then follows it.
    review = correct(client, match_id, 1, 1, cards={anna: 1}, choices={anna: 1}, confirm=False)
    assert "no longer needed" in text_of(review)
    assert correct(client, match_id, 1, 1, cards={anna: 1}, choices={anna: 1}).status_code == 303
    _, rounds = inputs_of(client, match_id, 1)
    assert rounds[0][1] == {anna: 1} and rounds[1][1] == {}
    page = client.get(f"/matches/{match_id}")
    assert "no longer needed" in text_of(page)
    with client.application.app_context():
        stored = db.session.scalars(db.select(Correction)).one()
        # Players as seats: Anna sits first.
        assert stored.round_number == 1 and stored.dropped == "2:1:1"
        assert stored.cards == "41,42,43" and stored.choices == ""


def test_a_stored_choice_the_correction_no_longer_needs_is_dropped_and_named(client, trio):
    """Round 2 held Anna's choice of row 1 for her 2; corrected to 44 (and Cleo's 3 to 45),
    no card is too low. The form still carries the stored choice: the preview names it
    as dropped instead of refusing ("Anna's 44 is not too low…"), and Store drops it."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    values = form_values(client, match_id, 1, 2)
    assert values[f"row-{anna}"] == "1"  # kept in the form, as the finding had it
    review = correct(client, match_id, 1, 2, cards={anna: 44, cleo: 45}, confirm=False)
    assert review.status_code == 200, text_of(review)
    assert "Round 2: Anna's row choice (row 1) is no longer needed." in text_of(review)
    assert "no row to choose" not in text_of(review)
    stored = correct(client, match_id, 1, 2, cards={anna: 44, cleo: 45})
    assert stored.status_code == 303
    _, rounds = inputs_of(client, match_id, 1)
    assert rounds[1][1] == {}
    assert dict(rounds[1][0])[anna] == 44


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        ("en", "Anna: 41 → 39, row 4 → row 3"),
        ("de", "Anna: 41 → 39, Reihe 4 → Reihe 3"),
        ("fr", "Anna : 41 → 39, rangée 4 → rangée 3"),
    ],
)
def test_a_corrected_card_is_one_line_before_and_after(client, trio, lang, line):
    """ "Anna: 41 → 39", not "Anna 39: not played → row 3 / Anna 41: row 4 → not
    played" (issue 43); on the confirmation, and on the match page once stored."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    client.set_cookie("lang", lang)
    preview = text_of(correct(client, match_id, 1, 1, cards={anna: 39}, confirm=False))
    shown = preview.replace("\u00a0", " ")
    assert line in shown and "41 →" not in shown.replace(line, "")
    assert correct(client, match_id, 1, 1, cards={anna: 39}).status_code == 303
    stored = text_of(client.get(f"/matches/{match_id}")).replace("\u00a0", " ")
    assert line in stored


def test_cards_swapped_between_two_players_are_named(client, trio):
    """Anna's 41 and Cleo's 43 typed the wrong way round place alike: the preview still
    says whose card changed (it said "No card goes elsewhere")."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    text = text_of(correct(client, match_id, 1, 1, cards={anna: 43, cleo: 41}, confirm=False))
    assert "Round 1 Anna: 41 → 43 Cleo: 43 → 41 Totals" in text
    assert "No card goes elsewhere" not in text


def test_the_preview_lists_only_what_reads_differently(app):
    """A card that took the same row with the same bulls, only other cards in it, reads
    the same before and after: its line is left out ("Lena 51: 6th card, took row 1
    (6 bulls) → 6th card, took row 1 (6 bulls)" told nothing)."""
    from companion.play.correction_diff import round_lines

    same_words = rules.Placement(
        1,
        51,
        rules.Step(1, 51, 1, rules.SIXTH, (3, 4, 5, 6, 7), 6, ()),
        rules.Step(1, 51, 1, rules.SIXTH, (2, 4, 5, 6, 8), 6, ()),
    )
    moved = rules.Placement(2, 60, rules.Step(2, 60, 2, rules.PLACED, (), 0, ()), None)
    change = rules.RoundChange(3, (same_words, moved), {}, False)
    with app.test_request_context():
        lines = round_lines(change, {1: "Lena", 2: "Ben"}.get, swapped={60})
    assert lines == ["Ben 60: row 2 → not played"]


def test_every_placed_round_is_two_taps_from_the_match_page(client, trio):
    """The match page lists the game's placed rounds, each linked to its form (after
    round 6, round 3 took a replay and three more taps to find)."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    listed = re.findall(
        r'href="/matches/\d+/games/1/rounds/(\d+)/correct" aria-label="([^"]+)"', page
    )
    assert listed == [(str(n), f"Correct round {n} of game 1") for n in (1, 2, 3)]
    assert "<summary>Correct a round…</summary>" in page
    for number, _ in listed:
        form = client.get(f"/matches/{match_id}/games/1/rounds/{number}/correct")
        assert form.status_code == 200


def test_during_the_next_game_the_last_finished_games_rounds_are_offered_too(client, trio):
    """The finding (issue 57): in game 2 the list held game 2 only, where docs/table.md
    promises the last finished game too (its replay is read from stored results)."""
    ids, match_id = trio
    play_game(client, match_id, ids, random.Random(3))
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    page = client.get(f"/matches/{match_id}").text
    assert re.findall(r"/games/(\d+)/rounds/(\d+)/correct", page) == [
        ("1", str(n)) for n in range(1, 11)
    ]
    anna, ben, cleo = ids
    assert enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    page = client.get(f"/matches/{match_id}").text
    listed = re.findall(r"/games/(\d+)/rounds/(\d+)/correct", page)
    assert listed == [("2", "1"), *(("1", str(n)) for n in range(1, 11))]
    assert client.get(f"/matches/{match_id}/games/1/rounds/10/correct").status_code == 200


def test_a_game_of_typed_scores_has_no_rounds_to_offer(client, trio):
    (anna, ben, cleo), match_id = trio
    assert score_game(client, match_id, {anna: 3, ben: 5, cleo: 8}).status_code == 303
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    assert "correct-rounds" not in client.get(f"/matches/{match_id}").text


def test_a_round_waiting_for_its_choice_is_not_offered_yet(client, trio):
    (anna, ben, cleo), match_id = trio
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    assert enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    assert enter_round(client, match_id, {anna: 2, ben: 50, cleo: 51}).status_code == 303
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert re.findall(r"/games/1/rounds/(\d+)/correct", page) == ["1"]


def test_a_watching_phone_is_offered_no_correction(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    watcher = phone(app, match_id, tokens(app, match_id)[1])
    assert "correct-rounds" not in watcher.get(f"/matches/{match_id}").get_data(as_text=True)


def test_the_stored_correction_opens_at_its_notice(client, trio):
    """After *Store* the page opens at what changed, not at the next round's fields."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    stored = correct(client, match_id, 1, 1, cards={anna: 39})
    assert stored.status_code == 303
    assert stored.headers["Location"].endswith(f"/matches/{match_id}#corrected")
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'id="corrected-heading"' in page


def test_a_choice_newly_needed_is_asked_for_before_anything_else(client, app, trio):
    (anna, ben, cleo), match_id = trio
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    assert enter_round(client, match_id, {anna: 41, ben: 42, cleo: 43}).status_code == 303
    assert enter_round(client, match_id, {anna: 13, ben: 25, cleo: 38}).status_code == 303
    assert enter_round(client, match_id, {anna: 50, ben: 51, cleo: 52}).status_code == 303
    # 14 instead of 41: row 1 ends in 14, so Anna's 13 in round 2 is too low now.
    assert correct(client, match_id, 1, 1, cards={anna: 14}).status_code == 303
    pending = pending_of(client, match_id)
    assert pending is not None and (pending.player, pending.card) == (anna, 13)
    assert state_of(client, match_id).current.rounds_played == 2
    refused = enter_round(client, match_id, {anna: 70, ben: 71, cleo: 72}, round_=4)
    assert refused.status_code == 422
    # Any phone with the player link may choose for Anna; the game then goes on.
    other = phone(app, match_id, tokens(app, match_id)[0])
    assert choose(other, match_id, anna, 2).status_code == 303
    game = state_of(client, match_id).current
    assert game.pending is None and game.rounds_played == 3
    assert game.table.rows == replayed(client, match_id, 1).rows


def test_the_corrected_round_needs_its_own_choice_in_the_form(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    response = correct(client, match_id, 1, 1, cards={anna: 1})
    assert response.status_code == 422
    assert 'aria-invalid="true" aria-describedby="field-row-' in response.get_data(as_text=True)
    assert "too low" in text_of(response)


def test_a_choice_for_a_card_that_is_not_too_low_is_refused(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    response = correct(client, match_id, 1, 1, choices={ben: 2})
    assert response.status_code == 422
    assert "no row to choose" in text_of(response)


def test_cards_are_checked_like_a_new_round(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    for card, words in ((12, "already lies"), (61, "already played"), (105, "104"), ("x", "")):
        response = correct(client, match_id, 1, 1, cards={anna: card})
        assert response.status_code == 422, card
        html = response.get_data(as_text=True)
        assert f'id="field-card-{anna}-note"' in html, card
        assert words in text_of(response)


def test_the_round_screen_offers_correct_to_player_phones_only(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    link = f'href="/matches/{match_id}/games/1/rounds/3/correct"'
    assert link in client.get(f"/matches/{match_id}").get_data(as_text=True)
    watcher = phone(app, match_id, tokens(app, match_id)[1])
    assert link not in watcher.get(f"/matches/{match_id}").get_data(as_text=True)
    replay = client.get(f"/matches/{match_id}/games/1/replay?round=1").get_data(as_text=True)
    assert f'href="/matches/{match_id}/games/1/rounds/1/correct"' in replay
    assert f'href="/matches/{match_id}/games/1/rounds/1/undo"' in replay
    replay = watcher.get(f"/matches/{match_id}/games/1/replay?round=1").get_data(as_text=True)
    assert "/correct" not in replay and "/rounds/1/undo" not in replay


@pytest.mark.app_config(LUCK_APART=True)
def test_a_form_stays_good_while_derived_data_raises_the_matchs_version(client, app, trio):
    """The flake a CI run found, and a real one at the table: each round's luck (and a
    game's review) is stored seconds after the round and raises the match's version; a
    correction typed meanwhile was refused as if another phone had changed the round."""
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    values = form_values(client, match_id, 1, 1)
    version = state_of(client, match_id).version
    with app.app_context():
        store.luck_after(match_id)
    assert state_of(client, match_id).version > version
    assert correct(client, match_id, 1, 1, cards={anna: 44}, values=values).status_code == 303


def test_a_stale_form_is_refused(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    values = form_values(client, match_id, 1, 1)
    other = phone(app, match_id, tokens(app, match_id)[0])
    assert correct(other, match_id, 1, 1, cards={anna: 39}).status_code == 303
    before = table_snapshot(app)
    late = correct(client, match_id, 1, 1, cards={anna: 44}, values=values)
    assert late.status_code == 422
    assert "changed since this form was shown" in text_of(late)
    assert table_snapshot(app) == before
    # The form comes back with the round as it is now, ready to send again.
    assert 'value="39"' in late.get_data(as_text=True)
    assert correct(client, match_id, 1, 1, cards={anna: 44}).status_code == 303


def test_a_watch_link_cannot_correct(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    values = form_values(client, match_id, 1, 1)
    watcher = phone(app, match_id, tokens(app, match_id)[1])
    url = f"/matches/{match_id}/games/1/rounds/1/correct"
    assert watcher.get(url).status_code == 403
    data = {**values, f"card-{anna}": "39", "confirm": "1"}
    assert watcher.post(url, data=data).status_code == 403
    assert phone(app).post(url, data=data).status_code == 403


def test_nothing_changed_is_said(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    response = correct(client, match_id, 1, 2)
    assert response.status_code == 422 and "Nothing was changed" in text_of(response)


def test_unknown_games_and_rounds_are_404(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    values = form_values(client, match_id, 1, 1)
    for url in ("games/2/rounds/1", "games/1/rounds/4", "games/1/rounds/0"):
        assert client.get(f"/matches/{match_id}/{url}/correct").status_code == 404
        post = client.post(f"/matches/{match_id}/{url}/correct", data=values)
        assert post.status_code == 404


def test_the_replay_says_corrected(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    assert correct(client, match_id, 1, 1, cards={anna: 39}).status_code == 303
    page = client.get(f"/matches/{match_id}/games/1/replay?round=1")
    assert "corrected" in text_of(page)
    assert "corrected" not in text_of(client.get(f"/matches/{match_id}/games/1/replay?round=2"))


def test_another_phone_sees_what_changed(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    other = phone(app, match_id, tokens(app, match_id)[1])
    assert correct(client, match_id, 1, 1, cards={anna: 39}).status_code == 303
    text = text_of(other.get(f"/matches/{match_id}"))
    assert "Round 1 of game 1 was corrected" in text and "Anna: 41 → 39" in text
    assert enter_round(client, match_id, {anna: 70, ben: 71, cleo: 72}).status_code == 303
    assert "was corrected" not in text_of(other.get(f"/matches/{match_id}"))


def swapped_round(client, match_id, game, number, a, b):
    """Round ``number`` with the cards of players ``a`` and ``b`` swapped, and row choices
    (the suggested row) for whatever is too low then: (cards, choices)."""
    starting, rounds = inputs_of(client, match_id, game)
    ids = state_of(client, match_id).player_ids
    before = rules.replay_game(starting, rounds[: number - 1], ids)
    rows = before.rounds[-1].rows if before.rounds else [(card,) for card in starting]
    cards = dict(rounds[number - 1][0])
    cards[a], cards[b] = cards[b], cards[a]
    choices: dict = {}
    while (result := rules.resolve_round(rows, list(cards.items()), choices)).pending:
        choices[result.pending.player] = result.pending.suggested
    return cards, {pid: choices.get(pid) for pid in ids}


def totals_after(client, match_id, game, cards, choices, number):
    """The engine's bulls of a game with round ``number`` replaced (no later rounds)."""
    starting, rounds = inputs_of(client, match_id, game)
    ids = state_of(client, match_id).player_ids
    kept = {pid: row for pid, row in choices.items() if row}
    return rules.replay_game(starting, [*rounds[: number - 1], (list(cards.items()), kept)], ids)


def finished_match(client, seed, end_kind, end_value, games=1):
    """A match of three with ``games`` random games played to the end."""
    ids = add_players(client, *(f"F{seed}-{n}" for n in range(3)))
    match_id = start_match(client, ids, end_kind=end_kind, end_value=end_value)
    rng = random.Random(seed)
    for _ in range(games):
        play_game(client, match_id, ids, rng, chooser=lambda pending: pending.suggested)
    return ids, match_id


def test_a_finished_game_corrected_changes_results_totals_and_statistics(client):
    ids, match_id = finished_match(client, 5, "games", 2, games=2)
    assert state_of(client, match_id).over
    cards, choices = swapped_round(client, match_id, 1, 10, ids[0], ids[1])
    expected = totals_after(client, match_id, 1, cards, choices, 10).bulls()
    review = correct(client, match_id, 1, 10, cards, choices, confirm=False)
    assert "Totals" in text_of(review)
    assert correct(client, match_id, 1, 10, cards, choices).status_code == 303
    state = state_of(client, match_id)
    assert state.over and state.games[0].bulls == expected
    second = state.games[1].bulls
    assert state.standing.totals == {pid: expected[pid] + second[pid] for pid in ids}
    with client.application.app_context():
        results = dict(
            db.session.execute(
                db.select(GameResult.player_id, GameResult.bulls).where(
                    GameResult.game_id == state.games[0].game.id
                )
            ).all()
        )
        assert results == expected
        assert stored_rows([match_id]) == replayed_rows(db.session.get(Match, match_id))


def limit_case(client, wanted):
    """A seed and a swap in game 1's last round whose maximum bulls cross a limit the way
    ``wanted`` says ("up": the swap raises the highest total, "down": lowers it)."""
    for seed in range(200):
        rng = random.Random(seed)
        hands, starting = deal(rng, 3)
        ids = (1, 2, 3)
        rounds = []
        table = rules.Table([(card,) for card in starting])
        for turn in range(10):
            plays = [(pid, hands[seat][turn]) for seat, pid in enumerate(ids)]
            choices: dict = {}
            table.start_round(plays)
            while (pending := table.run(choices)) is not None:
                choices[pending.player] = pending.suggested
            rounds.append((plays, choices))
        base = max(rules.replay_game(starting, rounds, ids).bulls().values())
        plays = dict(rounds[9][0])
        plays[1], plays[2] = plays[2], plays[1]
        rows = rules.replay_game(starting, rounds[:9], ids).rows
        choices = {}
        while (result := rules.resolve_round(rows, list(plays.items()), choices)).pending:
            choices[result.pending.player] = result.pending.suggested
        moved = max(
            rules.replay_game(starting, [*rounds[:9], (list(plays.items()), choices)], ids)
            .bulls()
            .values()
        )
        if (moved > base) if wanted == "up" else (moved < base):
            return seed, base, moved
    raise AssertionError("no such game")


def test_a_correction_that_ends_the_match_before_a_played_game_is_refused(client, app):
    seed, _, moved = limit_case(client, "up")
    ids, match_id = finished_match(client, seed, "at_least", moved)
    assert not state_of(client, match_id).over
    assert score_game(client, match_id, dict.fromkeys(ids, 0)).status_code == 303
    cards, choices = swapped_round(client, match_id, 1, 10, ids[0], ids[1])
    before = table_snapshot(app)
    response = correct(client, match_id, 1, 10, cards, choices)
    assert response.status_code == 422
    assert "would have ended after game 1" in text_of(response)
    assert table_snapshot(app) == before


def test_a_match_whose_end_moves_away_goes_on(client):
    seed, base, moved = limit_case(client, "down")
    ids, match_id = finished_match(client, seed, "at_least", base)
    assert state_of(client, match_id).over
    cards, choices = swapped_round(client, match_id, 1, 10, ids[0], ids[1])
    assert correct(client, match_id, 1, 10, cards, choices).status_code == 303
    state = state_of(client, match_id)
    assert not state.over and max(state.standing.totals.values()) == moved
    assert start_game(client, match_id, [1, 2, 3, 4]).status_code == 303
    with client.application.app_context():
        finished = db.session.scalars(
            db.select(PlayerMatchStat.finished).where(PlayerMatchStat.match_id == match_id)
        ).all()
        assert finished and not any(finished)


def a_correction_that(client, match_id, wanted):
    """The first correction of game 1 (one card for a card nobody holds, the suggested
    row for a card too low) whose replay ``wanted(number, settled)`` likes, or None."""
    starting, rounds = inputs_of(client, match_id, 1)
    ids = state_of(client, match_id).player_ids
    used = set(starting) | {card for plays, _ in rounds for _, card in plays}
    for number in range(1, len(rounds)):
        rows = rules.replay_game(starting, rounds[: number - 1], ids)
        table = rows.rounds[-1].rows if rows.rounds else [(card,) for card in starting]
        for card in sorted(set(range(1, 105)) - used):
            cards = dict(rounds[number - 1][0])
            cards[ids[0]] = card
            choices: dict = {}
            while (result := rules.resolve_round(table, list(cards.items()), choices)).pending:
                choices[result.pending.player] = result.pending.suggested
            new = [*rounds[: number - 1], (list(cards.items()), choices), *rounds[number:]]
            if wanted(number, rules.settle(starting, new, ids)):
                return number, cards, {pid: choices.get(pid) for pid in ids}
    return None


def test_a_finished_game_that_now_waits_for_a_choice_finishes_again(client):
    for seed in range(40):
        ids, match_id = finished_match(client, 100 + seed, "games", 1)
        found = a_correction_that(
            client, match_id, lambda number, settled: settled.game.pending is not None
        )
        if found:
            break
    number, cards, choices = found
    assert correct(client, match_id, 1, number, cards, choices).status_code == 303
    state = state_of(client, match_id)
    assert not state.over and state.current.pending is not None
    with client.application.app_context():  # no finished game: no results, no match rows
        game_id = state.games[0].game.id
        assert not db.session.scalars(db.select(GameResult).filter_by(game_id=game_id)).all()
        assert not db.session.scalars(db.select(PlayerMatchStat).filter_by(match_id=match_id)).all()
    while (pending := pending_of(client, match_id)) is not None:
        assert choose(client, match_id, pending.player, pending.suggested).status_code == 303
    state = state_of(client, match_id)
    assert state.over and state.games[0].bulls == replayed(client, match_id, 1).bulls()
    starting, rounds = inputs_of(client, match_id, 1)
    assert rules.settle(starting, rounds, ids).dropped == ()  # no choice left unneeded
    with client.application.app_context():
        assert stored_rows([match_id]) == replayed_rows(db.session.get(Match, match_id))


def test_a_correction_that_leaves_an_earlier_game_waiting_is_refused(client, app):
    for seed in range(40):
        ids, match_id = finished_match(client, 200 + seed, "games", 2)
        found = a_correction_that(
            client, match_id, lambda number, settled: settled.game.pending is not None
        )
        if found:
            break
    assert score_game(client, match_id, dict.fromkeys(ids, 0)).status_code == 303
    number, cards, choices = found
    before = table_snapshot(app)
    response = correct(client, match_id, 1, number, cards, choices)
    assert response.status_code == 422
    assert "waiting for a row choice, but a later game has been played" in text_of(response)
    assert table_snapshot(app) == before


def undo_page(client, match_id, number):
    """The "undo to here" confirmation of round ``number`` of game 1."""
    return client.get(f"/matches/{match_id}/games/1/rounds/{number}/undo")


@pytest.mark.app_config(LUCK_APART=True)  # one step: the luck after it is a write apart
def test_undo_to_here_says_how_many_entries_go_and_takes_them_in_one_step(client, app, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    page = undo_page(client, match_id, 1)
    assert "3 entries go" in text_of(page)  # round 2, Anna's choice, round 3
    version = state_of(client, match_id).version
    url = f"/matches/{match_id}/games/1/rounds/1/undo"
    assert phone(app, match_id, tokens(app, match_id)[1]).post(url, data={}).status_code == 403
    assert client.post(url, data={"version": str(version)}).status_code == 303
    game = state_of(client, match_id).current
    assert game.rounds_played == 1 and game.pending is None
    assert state_of(client, match_id).version == version + 1
    again = client.post(url, data={"version": str(version)})  # a second tap
    assert again.status_code == 409 and "Nothing was undone" in text_of(again)
    assert "Nothing was entered after this round" in text_of(undo_page(client, match_id, 1))


def test_undo_to_here_is_for_the_last_game_only(client):
    ids, match_id = finished_match(client, 7, "games", 2)
    assert score_game(client, match_id, dict.fromkeys(ids, 0)).status_code == 303
    assert undo_page(client, match_id, 1).status_code == 404
    assert client.get(f"/matches/{match_id}/games/2/rounds/1/undo").status_code == 404


def test_the_correction_form_as_a_fragment(client, trio):
    (anna, ben, cleo), match_id = trio
    three_rounds(client, match_id, (anna, ben, cleo))
    url = f"/matches/{match_id}/games/1/rounds/2/correct"
    fragment = client.get(url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert fragment.lstrip().startswith('<section id="correct"') and "<html" not in fragment
    assert "<html" in client.get(url).get_data(as_text=True)


def test_rebuild_accepts_a_game_a_correction_left_waiting(client, runner, trio):
    (anna, ben, cleo), match_id = trio
    assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    for cards in ((41, 42, 43), (13, 25, 38), (50, 51, 52)):
        assert (
            enter_round(
                client, match_id, dict(zip((anna, ben, cleo), cards, strict=True))
            ).status_code
            == 303
        )
    assert correct(client, match_id, 1, 1, cards={anna: 14}).status_code == 303
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output
    assert "0 found differing" in result.output
