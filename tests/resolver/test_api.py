"""POST /api/resolve: the dispute resolver, with every malformed body answered 400."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

WORKED = {
    "rows": [[5, 12], [20, 24], [30, 37], [31, 32, 33, 34, 40]],
    "plays": [
        {"player": "Anna", "card": 39},
        {"player": "Ben", "card": 42},
        {"player": "Cleo", "card": 3},
    ],
}


def post(client, body, **kwargs):
    """Post ``body`` (JSON-encoded unless it is already bytes) to the resolver."""
    data = body if isinstance(body, bytes | str) else json.dumps(body)
    return client.post("/api/resolve", data=data, content_type="application/json", **kwargs)


def test_worked_example_asks_cleo_for_a_row(client):
    response = post(client, WORKED)
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "needs_choice"
    assert (body["player"], body["card"], body["suggested"]) == ("Cleo", 3, 1)
    assert body["options"] == [
        {"row": 1, "cards": [5, 12], "bulls": 3},
        {"row": 2, "cards": [20, 24], "bulls": 4},
        {"row": 3, "cards": [30, 37], "bulls": 4},
        {"row": 4, "cards": [31, 32, 33, 34, 40], "bulls": 11},
    ]
    assert body["steps"] == []
    assert body["rows"] == WORKED["rows"]
    assert "Cleo" in body["explanation"]


def test_worked_example_resolves_with_the_choice(client):
    response = post(client, {**WORKED, "choices": {"Cleo": 1}, "deck": 104})
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "resolved"
    assert [
        {key: step[key] for key in ("player", "card", "row", "action", "taken", "bulls")}
        for step in body["steps"]
    ] == [
        {"player": "Cleo", "card": 3, "row": 1, "action": "too_low", "taken": [5, 12], "bulls": 3},
        {"player": "Anna", "card": 39, "row": 3, "action": "placed", "taken": [], "bulls": 0},
        {
            "player": "Ben",
            "card": 42,
            "row": 4,
            "action": "sixth",
            "taken": [31, 32, 33, 34, 40],
            "bulls": 11,
        },
    ]
    assert body["rows"] == [[3], [20, 24], [30, 37, 39], [42]]
    assert body["bulls"] == {"Anna": 0, "Ben": 11, "Cleo": 3}
    assert body["steps"][1]["explanation"] == (
        "39 goes to row 3: 37 is the closest lower end (row 2 ends in 24)."
    )


def test_steps_before_the_choice_are_reported(client):
    body = post(
        client,
        {
            "rows": [[10], [20], [30], [40]],
            "plays": [{"player": "Anna", "card": 25}, {"player": "Ben", "card": 5}],
        },
    ).get_json()
    assert body["status"] == "needs_choice"
    assert body["steps"] == []
    body = post(
        client,
        {
            "rows": [[10], [20], [30], [40]],
            "plays": [{"player": "Anna", "card": 8}, {"player": "Ben", "card": 5}],
            "choices": {"Ben": 4},
        },
    ).get_json()
    assert body["status"] == "resolved"
    assert [step["row"] for step in body["steps"]] == [4, 4]


def test_explanations_follow_the_language(app, client):
    response = post(client, {**WORKED, "choices": {"Cleo": 1}}, headers={"Accept-Language": "de"})
    text = response.get_json()["steps"][1]["explanation"]
    assert text.startswith("39 ")
    assert "Reihe 3" in text


def test_pro_deck_rejects_cards_above_its_range(client):
    body = {"rows": [[1], [2], [3], [4]], "plays": [{"player": "A", "card": 35}], "deck": 34}
    response = post(client, body)
    assert response.status_code == 400
    assert "1 to 34" in response.get_json()["error"]


BAD_BODIES = [
    ("not json", "must be JSON"),
    ("[]", "JSON object"),
    ("null", "JSON object"),
    ('"text"', "JSON object"),
    ("{}", "rows"),
    ({"rows": [[1], [2], [3]], "plays": WORKED["plays"]}, "exactly 4 rows"),
    ({"rows": [[1], [2], [3], []], "plays": WORKED["plays"]}, "1 to 5 cards"),
    ({"rows": [[1], [2], [3], [4, 5, 6, 7, 8, 9]], "plays": WORKED["plays"]}, "1 to 5 cards"),
    ({"rows": [[1], [2], [3], [9, 8]], "plays": WORKED["plays"]}, "rise"),
    ({"rows": [[1], [2], [3], [1]], "plays": WORKED["plays"]}, "twice"),
    ({"rows": [[1], [2], [3], "4"], "plays": WORKED["plays"]}, "list of cards"),
    ({"rows": [[1], [2], [3], [4.5]], "plays": WORKED["plays"]}, "not a card"),
    ({"rows": [[1], [2], [3], [True]], "plays": WORKED["plays"]}, "not a card"),
    ({"rows": [[1], [2], [3], [None]], "plays": WORKED["plays"]}, "not a card"),
    ({"rows": [[1], [2], [3], [10**40]], "plays": WORKED["plays"]}, "no card"),
    ({"rows": WORKED["rows"]}, "plays"),
    ({"rows": WORKED["rows"], "plays": []}, "1 to 10 plays"),
    (
        {"rows": WORKED["rows"], "plays": [{"player": f"P{i}", "card": 50 + i} for i in range(11)]},
        "1 to 10 plays",
    ),
    ({"rows": WORKED["rows"], "plays": {"Anna": 39}}, "1 to 10 plays"),
    ({"rows": WORKED["rows"], "plays": [39]}, "“player” and “card”"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna"}]}, "“player” and “card”"),
    ({"rows": WORKED["rows"], "plays": [{"player": " ", "card": 39}]}, "Enter a name"),
    ({"rows": WORKED["rows"], "plays": [{"player": "x" * 31, "card": 39}]}, "at most 30"),
    ({"rows": WORKED["rows"], "plays": [{"player": 7, "card": 39}]}, "must be text"),
    ({"rows": WORKED["rows"], "plays": [{"player": "A\x00", "card": 39}]}, "control char"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": 0}]}, "no card 0"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": 105}]}, "no card 105"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": "abc"}]}, "is text"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": ""}]}, "is text"),
    # Numbers are JSON numbers: the forms send text, the API does not.
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": "39"}]}, "“39” is text"),
    ({"rows": [[5], [20], [30], ["31"]], "plays": WORKED["plays"]}, "“31” is text"),
    ({**WORKED, "choices": {"Cleo": "1"}}, "“1” is text"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": 7.5}]}, "not a card"),
    ({"rows": WORKED["rows"], "plays": [{"player": "Anna", "card": 24}]}, "already lies in row 2"),
    (
        {
            "rows": WORKED["rows"],
            "plays": [{"player": "Anna", "card": 50}, {"player": "Ben", "card": 50}],
        },
        "both entered 50",
    ),
    (
        {
            "rows": WORKED["rows"],
            "plays": [{"player": "Anna", "card": 50}, {"player": " Anna ", "card": 51}],
        },
        "two cards",
    ),
    (
        {
            "rows": WORKED["rows"],
            "plays": [{"player": "Anna", "card": 50}, {"player": "ANNA", "card": 51}],
        },
        "ANNA has two cards",  # one player whatever the case, as on the forms
    ),
    ({**WORKED, "choices": {"Cleo": 5}}, "row 1, 2, 3 or 4"),
    ({**WORKED, "choices": {"Cleo": 1.5}}, "row 1, 2, 3 or 4"),
    ({**WORKED, "choices": {"Cleo": "x"}}, "is text"),
    ({**WORKED, "choices": {"Cleo": 1, "cleo": 1}}, "Cleo has two row choices"),
    ({**WORKED, "choices": {"Cleo": 1, "Anna": 2}}, "not too low"),
    ({**WORKED, "choices": {"Zoe": 2}}, "no card in this round"),
    ({**WORKED, "choices": [1]}, "choices"),
    ({**WORKED, "deck": 100}, "deck"),
    ({**WORKED, "deck": "104"}, "deck"),
    ({**WORKED, "deck": True}, "deck"),
    ({**WORKED, "extra": 1}, "Unknown field"),
    ("[" * 30000 + "]" * 30000, "JSON"),
]


@pytest.mark.parametrize(("body", "fragment"), BAD_BODIES)
def test_bad_bodies_get_400_with_a_message(client, body, fragment):
    response = post(client, body)
    assert response.status_code == 400
    assert fragment in response.get_json()["error"]


def test_a_choice_may_spell_the_player_in_another_case(client):
    response = post(client, {**WORKED, "choices": {"cLEO": 1}})
    assert response.status_code == 200
    body = response.get_json()
    assert body["status"] == "resolved"
    assert body["bulls"] == {"Anna": 0, "Ben": 11, "Cleo": 3}


def test_a_number_of_5000_digits_gets_400(client):
    body = json.dumps(WORKED).replace("39", "9" * 5000)
    assert post(client, body).status_code == 400


def test_huge_body_gets_400(client):
    response = post(client, {**WORKED, "padding": "x" * 200_000})
    assert response.status_code == 400
    assert "too large" in response.get_json()["error"]


def test_wrong_method_is_json_405(client):
    response = client.get("/api/resolve")
    assert response.status_code == 405


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=12,
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "rows": json_values
            | st.lists(st.lists(st.integers(-5, 110), max_size=6), min_size=4, max_size=4),
            "plays": json_values
            | st.lists(
                st.fixed_dictionaries(
                    {"player": st.text(max_size=4), "card": st.integers(-5, 110) | json_values}
                ),
                max_size=11,
            ),
            "choices": json_values | st.dictionaries(st.text(max_size=4), json_values),
            "deck": json_values | st.sampled_from([24, 34, 104]),
        },
    )
)
def test_never_a_500_whatever_the_body(client, body):
    response = post(client, body)
    assert response.status_code in (200, 400)
    payload = response.get_json()
    if response.status_code == 400:
        assert payload["error"]
    else:
        assert payload["status"] in ("resolved", "needs_choice")
