"""Hidden cards stay hidden (issue 55): no answer to a phone depends on a card hidden from
it. A card equal to another player's hidden one is taken; once the last card is in, two
equal cards (a typo: each card exists once) keep the round from being placed, every phone
names who typed them, and each of those players fixes their own. A player owns their card
until the reveal: "Your card: 3 · Change"."""

import re

import pytest
from conftest import make_app
from driver import add_players, count, i_am, phone, start_game, start_match

from companion.db import db
from companion.models import Match, PendingCard, Play, Round

pytestmark = pytest.mark.database  # the constraint that let a card wait once is gone on both

NAMES = ("Anna", "Ben", "Cleo", "Dora")
TOKENS = ("p" * 43, "w" * 43)  # the same links in every world, so that pages compare


def four_at_the_table(app):
    """Anna, Ben, Cleo and Dora in a started game, its links fixed."""
    creator = app.test_client()
    ids = add_players(creator, *NAMES)
    match_id = start_match(creator, ids)
    assert start_game(creator, match_id, [12, 24, 37, 40]).status_code == 303
    with app.app_context():  # the creator's phone is locked out, as by new links
        match = db.session.get(Match, match_id)
        match.player_token, match.watch_token = TOKENS
        db.session.commit()
    return ids, match_id


def phone_of(app, match_id, player_id=None):
    """A phone that opened the player link and, with ``player_id``, said "I am …"."""
    joined = phone(app, match_id, TOKENS[0])
    if player_id is not None:
        i_am(joined, match_id, player_id)
    return joined


def post_round(client, match_id, cards: dict, change=(), round_=1):
    """A round's form as a phone sends it, with the seats whose hidden card it changes."""
    data = {f"card-{seat}": str(card) for seat, card in cards.items()}
    data.update(game="1", round=str(round_), change=[str(seat) for seat in change])
    return client.post(f"/matches/{match_id}/rounds", data=data)


CSRF = re.compile(rb'(csrf_token" value="|"X-CSRFToken": ")[^"]+')  # random for each phone


def answer_of(response) -> tuple:
    """What a phone is told: status, headers that are not its session's, body (its CSRF
    token, random for each phone, left out)."""
    headers = sorted(
        (key, value) for key, value in response.headers.items() if key not in ("Set-Cookie", "Date")
    )
    return response.status_code, headers, CSRF.sub(rb"\1", response.get_data())


def hidden_world(tmp_path, name: str, annas_card: int):
    """Four players; Ben's phone ("I am Ben") sent 50, Anna's phone her hidden card, and
    opened the page after it, as htmx follows the 303: the live regions every phone of
    the table is then pushed are rendered on her phone, which knows her card."""
    app = make_app(tmp_path / f"{name}.sqlite")
    (anna, ben, cleo, dora), match_id = four_at_the_table(app)
    bens_phone = phone_of(app, match_id, ben)
    assert post_round(bens_phone, match_id, {ben: 50}).status_code == 303
    annas_phone = phone_of(app, match_id, anna)
    assert post_round(annas_phone, match_id, {anna: annas_card}).status_code == 303
    page = annas_phone.get(f"/matches/{match_id}", headers={"HX-Request": "true"})
    assert f"Your card: {annas_card}" in page.get_data(as_text=True)
    return app, bens_phone, match_id, (anna, ben, cleo, dora)


def probes(bens_phone, match_id, seats) -> list[tuple]:
    """Ben's phone tries cards in Cleo's seat and in its own while Dora's is open: every
    answer it gets (the form's, the page after it, its live poll) as bytes."""
    _anna, ben, cleo, _dora = seats
    answers = []
    for card in (77, 33, 50, 13, 77):
        changing = [cleo] if answers else []  # Cleo's card is in after the first try
        for form in ({cleo: card}, {ben: card}):
            sent = post_round(bens_phone, match_id, form, change=[*changing, ben])
            answers.append(answer_of(sent))
            answers.append(answer_of(bens_phone.get(f"/matches/{match_id}")))
            answers.append(answer_of(bens_phone.get(f"/matches/{match_id}/live?since=0")))
    # Every try was taken: nothing told Ben's phone that one of them was Anna's card.
    assert all(status == 303 for status, *_ in answers[::3])
    return answers


def test_no_answer_to_a_phone_depends_on_a_card_hidden_from_it(tmp_path):
    """The finding: Ben's phone typed candidate cards into open seats and read Anna's 77
    from the 422's message. Now every try is taken, and the two worlds, where Anna's
    hidden card is 77 or 33, answer Ben's phone with the same bytes, try for try."""
    seventy_seven = hidden_world(tmp_path, "a", 77)
    thirty_three = hidden_world(tmp_path, "b", 33)
    first = probes(*seventy_seven[1:])
    second = probes(*thirty_three[1:])
    assert len(first) == len(second) == 30
    for one, other in zip(first, second, strict=True):
        assert one == other
    for app, *_ in (seventy_seven, thirty_three):
        assert count(app, Round) == 0 and count(app, PendingCard) == 3  # Dora's seat open


@pytest.fixture
def four(app):
    """Anna, Ben, Cleo and Dora in a started game, each with a phone of their own."""
    ids, match_id = four_at_the_table(app)
    phones = {seat: phone_of(app, match_id, seat) for seat in ids}
    return ids, match_id, phones


def page_text(client, match_id) -> str:
    """The match page as a person reads it: its text, tags taken out."""
    html = client.get(f"/matches/{match_id}").get_data(as_text=True)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_two_equal_cards_keep_the_round_and_every_phone_says_who_typed_them(app, four):
    (anna, ben, cleo, dora), match_id, phones = four
    watcher = phone(app, match_id, TOKENS[1])
    for seat, card in ((anna, 3), (ben, 3), (cleo, 60)):
        assert post_round(phones[seat], match_id, {seat: card}).status_code == 303
    assert "both typed" not in page_text(phones[dora], match_id)  # a card is still to come
    assert post_round(phones[dora], match_id, {dora: 61}).status_code == 303
    assert count(app, Round) == 0 and count(app, PendingCard) == 4
    for client in (*phones.values(), watcher):
        assert "Anna and Ben both typed 3: check your card." in page_text(client, match_id)
    # Ben's phone opens his field again with what he typed; Cleo's does not open hers.
    bens = phones[ben].get(f"/matches/{match_id}").get_data(as_text=True)
    assert re.search(rf'name="card-{ben}"[^>]*value="3"[^>]*aria-invalid="true"', bens)
    cleos = phones[cleo].get(f"/matches/{match_id}").get_data(as_text=True)
    assert f'name="card-{cleo}"' not in cleos.split('class="my-card-form"')[0]
    # Ben fixes his own: the round is placed with the four cards.
    assert post_round(phones[ben], match_id, {ben: 8}, change=[ben]).status_code == 303
    assert count(app, PendingCard) == 0
    with app.app_context():
        plays = db.session.execute(db.select(Play.player_id, Play.card)).all()
    assert sorted(plays) == sorted([(anna, 3), (ben, 8), (cleo, 60), (dora, 61)])
    assert "both typed" not in page_text(phones[anna], match_id)


def test_three_equal_cards_name_all_three(app, four):
    (anna, ben, cleo, dora), match_id, phones = four
    for seat, card in ((anna, 70), (ben, 70), (cleo, 70), (dora, 9)):
        assert post_round(phones[seat], match_id, {seat: card}).status_code == 303
    assert "Anna, Ben, and Cleo all typed 70: check your card." in page_text(phones[dora], match_id)
    assert count(app, Round) == 0


def test_a_player_owns_their_card_until_the_reveal(app, four):
    """While the round waits, "Your card: 41 · Change" on the phone that sent it; a change
    replaces it (no undo of the round); another phone saying "I am Anna" is not shown it."""
    (anna, ben, _cleo, _dora), match_id, phones = four
    assert post_round(phones[anna], match_id, {anna: 41}).status_code == 303
    assert post_round(phones[ben], match_id, {ben: 42}).status_code == 303
    assert "Your card: 41 · Change" in page_text(phones[anna], match_id)
    assert post_round(phones[anna], match_id, {anna: 45}, change=[anna]).status_code == 303
    assert "Your card: 45 · Change" in page_text(phones[anna], match_id)
    with app.app_context():
        hidden = dict(db.session.execute(db.select(PendingCard.player_id, PendingCard.card)).all())
    assert hidden == {anna: 45, ben: 42}
    impostor = phone_of(app, match_id, anna)
    text = page_text(impostor, match_id)
    assert "Change your card" in text and "45" not in text and "41" not in text


def test_a_form_older_than_a_players_card_still_cannot_replace_it(app, four):
    """Only a form that says it changes a card replaces it: a phone whose form still had
    Anna's field open when her card came in is told so, and nothing changes."""
    (anna, ben, _cleo, _dora), match_id, phones = four
    assert post_round(phones[anna], match_id, {anna: 41}).status_code == 303
    table_phone = phone_of(app, match_id)
    response = post_round(table_phone, match_id, {anna: 50, ben: 51})
    assert response.status_code == 422
    assert "Anna&#39;s card is already in" in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalar(db.select(PendingCard.card)) == 41


def test_the_phone_for_everybody_is_told_its_own_card_typed_twice_at_once(app, four):
    """The one phone at the table sees its own typing: two equal cards in its form are
    refused at once, beside the field."""
    (anna, ben, cleo, dora), match_id, _phones = four
    table_phone = phone_of(app, match_id)
    response = post_round(table_phone, match_id, {anna: 5, ben: 6, cleo: 5, dora: 7})
    assert response.status_code == 422
    assert "Anna and Cleo both entered 5: each card exists once." in response.get_data(as_text=True)
    assert count(app, PendingCard) == 0 and count(app, Round) == 0


def test_the_phone_for_everybody_fixes_a_card_typed_twice(app, four):
    """Two phones typed the same card; the phone for everybody shows both seats' fields
    again (and no others), and a card typed there places the round."""
    (anna, ben, cleo, dora), match_id, phones = four
    for seat, card in ((anna, 30), (ben, 31), (cleo, 30), (dora, 32)):
        assert post_round(phones[seat], match_id, {seat: card}).status_code == 303
    table_phone = phone_of(app, match_id)
    html = table_phone.get(f"/matches/{match_id}").get_data(as_text=True)
    form = html.split('class="round-form"')[1].split("</form>")[0]
    assert re.findall(r'name="card-(\d+)"', form) == [str(anna), str(cleo)]
    assert post_round(table_phone, match_id, {cleo: 33}, change=[anna, cleo]).status_code == 303
    assert count(app, Round) == 1 and count(app, PendingCard) == 0
