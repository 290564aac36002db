"""The resolver page, the rules page and the pattern page, through the Flask test client."""

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.resolver.resolve_page import WORKED_EXAMPLE

# The rules page's worked example as a person types it: commas too, a blank fourth line.
WORKED = {
    **WORKED_EXAMPLE,
    "row2": "20, 24",
    "row4": "31,32, 33 34 40",
    "player4": "",
    "card4": "",
    "deck": "104",
    "lines": "4",
}


class Page(HTMLParser):
    """A parsed page: every start tag, and the text inside each element with an id."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.texts: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag not in ("input", "meta", "link", "br", "img"):
            self._open.append((tag, attrs.get("id")))
            if attrs.get("id"):
                self.texts[attrs["id"]] = ""

    def handle_endtag(self, tag):
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        for _tag, element_id in self._open:
            if element_id:
                self.texts[element_id] += data

    def find(self, tag: str, **attrs) -> list[dict]:
        """Attributes of every `tag` element whose attributes include `attrs`."""
        return [
            found
            for name, found in self.tags
            if name == tag and all(found.get(key) == value for key, value in attrs.items())
        ]

    def field(self, name: str) -> dict:
        """The one input or select called `name`."""
        found = self.find("input", name=name) + self.find("select", name=name)
        assert len(found) == 1, name
        return found[0]

    def note(self, name: str) -> str:
        """The text that the field called `name` points to with aria-describedby."""
        return " ".join(self.texts[self.field(name)["aria-describedby"]].split())


def resolve(client, data=WORKED, **kwargs):
    """Post a position to the resolver page."""
    return client.post("/resolve", data=data, **kwargs)


def text_of(response) -> str:
    """The page's text with tags removed and whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


def row_shown(html: str, number: int) -> tuple[str, list[int]]:
    """The heading words and the card numbers of one row after the round."""
    row = html.split(f'id="after-row-{number}"')[1].split("</ol>")[0]
    head = row.split("<ol")[0]
    words = " ".join(unescape(re.sub(r"<[^>]+>", " ", head.split(">", 1)[1])).split())
    return words, [int(n) for n in re.findall(r'class="card-number">(\d+)<', row)]


# --- the empty form --------------------------------------------------------


def test_empty_form_has_four_rows_and_four_play_lines(client):
    response = client.get("/resolve")
    assert response.status_code == 200
    page = Page(response.text)
    assert [page.field(f"row{n}").get("value", "") for n in range(1, 5)] == [""] * 4
    assert len(page.find("input", type="text")) == 4 + 2 * 4
    assert page.field("deck")
    (form,) = page.find("form", method="post")
    assert form["action"] == "/resolve"
    assert form["hx-post"] == "/resolve"
    assert page.find("input", type="hidden", name="csrf_token")
    assert page.find("button", name="more")


@pytest.mark.parametrize(
    ("lines", "shown"),
    [("7", 7), ("10", 10), ("99", 10), ("1", 4), ("abc", 4), ("", 4), ("²", 4), ("9" * 5000, 4)],
)
def test_more_play_lines_without_javascript(client, lines, shown):
    page = Page(client.get("/resolve", query_string={"lines": lines}).text)
    assert len(page.find("input", type="text")) == 4 + 2 * shown
    assert page.find("input", name=f"card{shown}")


def test_more_players_keeps_what_was_typed(client):
    response = resolve(client, {**WORKED, "deck": "44", "more": "1"})
    assert response.status_code == 200
    page = Page(response.text)
    assert page.field("row2")["value"] == "20, 24"
    assert page.field("player3")["value"] == "Cleo"
    assert page.field("card6").get("value", "") == ""
    assert not page.find("input", name="card7")
    assert "selected" in page.find("option", value="44")[0]
    assert "What happens" not in response.text


def test_a_link_can_prefill_the_form(client):
    query = {**WORKED, "lines": "5"}
    page = Page(client.get("/resolve", query_string=query).text)
    assert page.field("row4")["value"] == WORKED["row4"]
    assert page.field("card3")["value"] == "3"
    assert page.find("input", name="card5")


# --- the worked example of RULES.md ------------------------------------------


def test_worked_example_asks_cleo_to_take_a_row(client):
    response = resolve(client)
    assert response.status_code == 200
    text = text_of(response)
    assert "3 is lower than every row's end: Cleo takes a row of their choice" in text
    page = Page(response.text)
    buttons = page.find("button", name="choice3")
    assert [button["value"] for button in buttons] == ["1", "2", "3", "4"]
    # A form per row: each row is its own button, with or without JavaScript.
    choice_forms = [f for f in page.find("form") if "choice-form" in f.get("class", "")]
    assert [(form["method"], form["action"]) for form in choice_forms] == [("post", "/resolve")] * 4
    # The choice re-posts the whole position.
    hidden = {tag["name"]: tag["value"] for tag in page.find("input", type="hidden")}
    assert {key: hidden[key] for key in WORKED if WORKED[key]} == {
        key: value for key, value in WORKED.items() if value
    }
    assert "suggested" in page.texts["choice3-1"]
    assert "suggested" not in page.texts["choice3-4"]


def test_worked_example_resolves_after_cleo_takes_row_1(client):
    response = resolve(client, {**WORKED, "choice3": "1"})
    assert response.status_code == 200
    text = text_of(response)
    steps = text[text.index("What happens") :]
    assert steps.index("Cleo") < steps.index("Anna") < steps.index("Ben")
    assert "Too low" in text
    assert "Cleo takes 2 cards from row 1: 3 bulls" in text
    assert "39 goes to row 3: 37 is the closest lower end (row 2 ends in 24)." in text
    assert "6th card" in text
    assert "Ben takes 5 cards from row 4: 11 bulls" in text
    page = Page(response.text)
    assert [row_shown(response.text, n) for n in range(1, 5)] == [
        ("Row 1 1 bull changed", [3]),
        ("Row 2 4 bulls", [20, 24]),
        ("Row 3 5 bulls changed", [30, 37, 39]),
        ("Row 4 1 bull changed", [42]),
    ]
    tally = " ".join(page.texts["tally"].split())
    assert tally == "Anna 0 bulls Ben 11 bulls Cleo 3 bulls"
    assert not page.find("button", name="choice3")


def test_steps_before_a_choice_are_shown(client):
    data = {
        "row1": "10",
        "row2": "20",
        "row3": "30",
        "row4": "40",
        "player1": "Anna",
        "card1": "8",
        "player2": "Ben",
        "card2": "5",
        "lines": "4",
    }
    response = resolve(client, data)
    assert response.status_code == 200
    page = Page(response.text)
    assert [b["value"] for b in page.find("button", name="choice2")] == ["1", "2", "3", "4"]
    assert "Anna" not in text_of(response).split("What happens")[0]
    response = resolve(client, {**data, "choice2": "4"})
    text = text_of(response)
    assert "Ben takes 1 card from row 4: 3 bulls" in text
    assert "8 goes to row 4" in text


# --- bad input: 422, the message next to the right field, the values kept ----------

BAD = [
    ("row1", {"row1": ""}, "Row 1 must hold 1 to 5 cards."),
    ("row2", {"row2": "20 abc"}, "“abc” is not a card"),
    ("row3", {"row3": "37 30"}, "Row 3 must rise from left to right: 30 follows 37."),
    ("row4", {"row4": "31 32 33 34 40 41"}, "Row 4 must hold 1 to 5 cards."),
    ("row4", {"row4": "12 31 32 33 34"}, "12 appears twice on the table (rows 1 and 4)."),
    ("row1", {"row1": "0 12"}, "There is no card 0 in this deck"),
    ("row3", {"deck": "34"}, "There is no card 37 in this deck: cards go from 1 to 34."),
    ("card1", {"card1": "105"}, "There is no card 105 in this deck"),
    ("card2", {"card2": "abc"}, "“abc” is not a card"),
    ("card3", {"card3": "7.5"}, "“7.5” is not a card"),
    ("card1", {"card1": ""}, "Enter a card number."),
    ("card1", {"card1": "24"}, "24 already lies in row 2."),
    ("card2", {"card2": "39"}, "Anna and Ben both entered 39: each card exists once."),
    ("player2", {"player2": "anna"}, "Two lines are for anna"),
    ("player1", {"player1": ""}, "Enter a name."),
    ("player1", {"player1": "x" * 31}, "at most 30 characters"),
    ("player1", {"player1": "An\x07na"}, "cannot contain control characters"),  # as everywhere
    ("player4", {"card4": "50"}, "Enter a name."),
    ("deck", {"deck": "100"}, "Choose a deck from the list."),
    ("card3", {"choice3": "7"}, "Choose row 1, 2, 3 or 4."),
    ("card1", {"choice3": "1", "choice1": "2"}, "Anna's 39 is not too low"),
]


@pytest.mark.parametrize(("field", "changes", "message"), BAD)
def test_bad_input_is_shown_next_to_its_field(client, field, changes, message):
    data = {**WORKED, **changes}
    response = resolve(client, data)
    assert response.status_code == 422
    page = Page(response.text)
    assert page.field(field)["aria-invalid"] == "true"
    assert message in page.note(field)
    for name, value in data.items():
        if name.startswith(("row", "player", "card")):
            assert page.field(name).get("value", "") == value, name
    invalid = [tag["name"] for _tag, tag in page.tags if tag.get("aria-invalid")]
    assert invalid == [field]
    assert not page.find("button", name="choice3")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {key: "" for key in WORKED if key.startswith(("player", "card"))},
            "Enter at least one played card.",
        ),
        (
            {
                "row1": "1",
                "row2": "2",
                "row3": "3",
                "row4": "4",
                "card1": "10",
                "card2": "11",
                "card3": "12",
                "deck": "24",
            },
            "At most 2 players play with this deck.",
        ),
    ],
)
def test_bad_input_without_a_field_is_shown_above_the_form(client, changes, message):
    response = resolve(client, {**WORKED, **changes})
    assert response.status_code == 422
    page = Page(response.text)
    assert message in page.texts["form-error"]
    assert not [tag for _tag, tag in page.tags if tag.get("aria-invalid")]


def test_errors_are_summed_up_first_with_links_to_their_fields(client):
    response = resolve(client, {**WORKED, "player1": "", "player2": "x" * 31})
    assert response.status_code == 422
    page = Page(response.text)
    assert [link["href"] for link in page.find("a") if link["href"].startswith("#field-")] == [
        "#field-player1",
        "#field-player2",
    ]
    assert response.text.index('id="form-error"') < response.text.index('name="row1"')
    assert "Player 1: Enter a name." in " ".join(page.texts["form-error"].split())


def test_names_are_escaped(client):
    data = {**WORKED, "player3": "<b>Cleo</b>"}
    response = resolve(client, data)
    assert "<b>Cleo</b>" not in response.text
    assert "&lt;b&gt;Cleo&lt;/b&gt; takes a row" in response.text
    response = resolve(client, {**data, "choice3": "1"})
    assert "<b>" not in response.text


def test_a_deck_is_kept_after_an_error(client):
    response = resolve(client, {**WORKED, "deck": "44", "card1": "abc"})
    assert response.status_code == 422
    assert "selected" in Page(response.text).find("option", value="44")[0]


def test_more_lines_than_ten_are_ignored(client):
    data = {
        **WORKED,
        **{f"player{n}": f"P{n}" for n in range(4, 13)},
        **{f"card{n}": str(50 + n) for n in range(4, 13)},
        "lines": "12",
    }
    response = resolve(client, {**data, "choice3": "1"})
    assert response.status_code == 200
    assert "P10" in response.text
    assert "P11" not in response.text


FIELDS = [
    "row1",
    "row2",
    "row3",
    "row4",
    "deck",
    "lines",
    "more",
    *(f"{kind}{n}" for n in range(1, 12) for kind in ("player", "card", "choice")),
]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.dictionaries(
        st.sampled_from(FIELDS),
        st.sampled_from(
            [
                "",
                " ",
                "1",
                "3",
                "4",
                "12",
                "24",
                "39",
                "42",
                "104",
                "105",
                "0",
                "-1",
                "5 12",
                "1,2,3,4,5,6",
                "9 8",
                "abc",
                "7.5",
                "Anna",
                "x" * 40,
                "٣",
                "²",
            ]
        )
        | st.text(max_size=12),
    )
)
def test_never_a_500_whatever_the_form(client, data):
    response = resolve(client, data)
    assert response.status_code in (200, 422)


# --- htmx: one URL, the page or the block ---------------------------------------


def test_htmx_gets_only_the_resolver_block(client):
    full = resolve(client)
    fragment = resolve(client, headers={"HX-Request": "true"})
    assert full.status_code == fragment.status_code == 200
    assert "<html" in full.text
    assert "<html" not in fragment.text
    assert 'id="resolver"' in full.text
    assert 'id="resolver"' not in fragment.text  # the block is the container's content
    assert 'name="choice3"' in fragment.text
    assert "HX-Request" in fragment.headers["Vary"]


def test_htmx_gets_errors_as_a_422_block(client):
    response = resolve(client, {**WORKED, "card1": "abc"}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "<html" not in response.text
    assert 'aria-invalid="true"' in response.text


def test_htmx_more_lines_is_a_block_too(client):
    response = client.get("/resolve", query_string={"lines": "6"}, headers={"HX-Request": "true"})
    assert "<html" not in response.text
    assert 'name="card6"' in response.text


# --- language and CSRF -----------------------------------------------------------


def test_explanations_in_german(client):
    response = resolve(client, {**WORKED, "choice3": "1"}, headers={"Accept-Language": "de"})
    assert response.status_code == 200
    assert "39 kommt in Reihe 3: 37 ist das nächste niedrigere Reihenende" in text_of(response)
    assert "There is no card" not in response.text


def test_errors_in_german(client):
    response = resolve(client, {**WORKED, "card1": "24"}, headers={"Accept-Language": "de"})
    assert response.status_code == 422
    assert "Reihe 2" in Page(response.text).note("card1")


@pytest.mark.app_config(WTF_CSRF_ENABLED=True)
def test_csrf_token_is_required(client):
    refused = resolve(client)
    assert refused.status_code == 422  # the page to send it again (web/stale.py)
    page = client.get("/resolve")
    token = Page(page.text).find("input", name="csrf_token")[0]["value"]
    accepted = resolve(client, {**WORKED, "csrf_token": token})
    assert accepted.status_code == 200
    hidden = {
        tag["name"]: tag["value"]
        for tag in Page(accepted.text).find("input")
        if tag.get("type") == "hidden"
    }
    assert hidden["csrf_token"]
    assert client.post("/resolve", data={**hidden, "choice3": "1"}).status_code == 200


# --- the rules page, the pattern page, the home page ---------------------------


def test_rules_page(client):
    response = client.get("/rules")
    assert response.status_code == 200
    text = text_of(response)
    for words in ("lowest card first", "6th card", "Too low", "more than 66", "Pro variant", "55"):
        assert words in text
    page = Page(response.text)
    cards = [tag["class"] for tag in page.find("span") if "card " in tag.get("class", "")]
    assert {"card bulls-1", "card bulls-2", "card bulls-3", "card bulls-5", "card bulls-7"} <= set(
        cards
    )
    assert page.find("a", href="/resolve")


def test_pattern_page_shows_every_component(client):
    response = client.get("/patterns")
    assert response.status_code == 200
    html = response.text
    for marker in (
        'class="table-rows"',
        "is-changed",
        "is-full",
        "step step-placed",
        "step step-sixth",
        "step step-too_low",
        'class="row-choice"',
        'aria-invalid="true"',
        "bulls-7",
        "field-error",
    ):
        assert marker in html, marker
    assert "Ben takes 5 cards from row 4: 11 bulls" in text_of(response)


def test_home_links_to_rules_and_resolver(client):
    response = client.get("/")
    page = Page(response.text)
    assert page.find("a", href="/rules")
    assert page.find("a", href="/resolve")
    assert "Coming next" not in response.text
    assert "card bulls-7" in response.text
