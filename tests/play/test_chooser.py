"""A too-low card on phones of their own: the big row buttons are on the chooser's phone.

The finding: when Cleo's card was too low, Anna's phone ("I am Anna") showed the same
full-size "Take row 1…4" buttons under "Cleo takes a row", and a tap meant for her own
screen took Cleo's row. Other phones now say who chooses and keep the buttons behind
"Choose for Cleo" (a player without a phone still needs someone to choose for them);
the phone for everybody, which says no "I am", keeps them in view.
"""

import re

import pytest
from driver import enter_round, i_am, pending_of, phone, tokens

ROW_BUTTON = re.compile(r'<button type="submit" name="row" value="\d"')
CHOOSE_FOR = re.compile(r'<details class="choose-for">.*?</details>', re.S)


@pytest.fixture
def choosing(client, app, table):
    """Cleo's 3 is too low in round 1; three phones: Anna's, Cleo's, and one for all."""
    (anna, ben, cleo), match_id = table
    player_token, _ = tokens(app, match_id)
    annas, cleos, everybody = (phone(app, match_id, player_token) for _ in range(3))
    i_am(annas, match_id, anna)
    i_am(cleos, match_id, cleo)
    assert enter_round(everybody, match_id, {anna: 39, ben: 44, cleo: 3}).status_code == 303
    return match_id, {"Anna": annas, "Cleo": cleos, "everybody": everybody}


def buttons_in_view(html: str) -> int:
    """The row buttons a page shows without a tap: those outside "Choose for …"."""
    return len(ROW_BUTTON.findall(CHOOSE_FOR.sub("", html)))


def test_only_the_choosers_phone_shows_the_row_buttons(choosing):
    match_id, phones = choosing
    pages = {who: c.get(f"/matches/{match_id}").get_data(as_text=True) for who, c in phones.items()}
    assert buttons_in_view(pages["Cleo"]) == 4
    assert buttons_in_view(pages["everybody"]) == 4
    assert "choose-for" not in pages["Cleo"] and "choose-for" not in pages["everybody"]
    assert buttons_in_view(pages["Anna"]) == 0
    (behind,) = CHOOSE_FOR.findall(pages["Anna"])
    assert "<summary>Choose for Cleo</summary>" in behind
    assert len(ROW_BUTTON.findall(behind)) == 4
    assert "Cleo chooses a row" in pages["Anna"]


def test_a_live_update_gives_each_phone_its_own_buttons(choosing):
    """The live regions are rendered once and shared by the table's phones: the chooser's,
    another player's and the phone for everybody each get their own, in any order."""
    match_id, phones = choosing
    for who in ("Anna", "Cleo", "everybody", "Anna", "Cleo"):
        html = phones[who].get(f"/matches/{match_id}/live").get_data(as_text=True)
        assert buttons_in_view(html) == (0 if who == "Anna" else 4), who
        assert ("Choose for Cleo" in html) == (who == "Anna"), who


def test_the_other_phone_may_still_choose_for_cleo(choosing, client):
    """Cleo has no phone in hand: Anna opens "Choose for Cleo" and takes row 2 for her."""
    match_id, phones = choosing
    annas = phones["Anna"]
    page = annas.get(f"/matches/{match_id}").get_data(as_text=True)
    form = re.search(
        r'<form method="post" action="([^"]+)" class="choice-form".*?</form>', page, re.S
    )
    data = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form.group(0)))
    data["row"] = "2"
    assert annas.post(form.group(1), data=data).status_code == 303
    assert pending_of(client, match_id) is None
    assert "Choose for Cleo" not in annas.get(f"/matches/{match_id}").get_data(as_text=True)
