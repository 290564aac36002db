"""Hostile input: no route answers 5xx, whatever arrives in its path, query or form.

The walk takes every rule of the app's URL map and sends it huge, negative, 5,000-digit,
unicode and empty values: in each path argument, in each query value or form field the
view reads (recorded while it serves a valid request, plus the fields of that request),
and every method the rule does not allow.

Each write that gets through is undone (the database is restored from its seed), so
every hostile value meets the match in the state its valid request was made for.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote, urlencode

import pytest
from conftest import ARTIFACTS, copy_sqlite, forget_cached, make_app
from driver import add_players, play_game, score_game, start_game, start_match, state_of
from flask import Request, Response
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import ImmutableMultiDict

from companion.db import db
from companion.models import Match
from companion.resolver.resolve_page import WORKED_EXAMPLE

# Values no field takes: each is past a limit, of the wrong kind, or empty.
FIELD_VALUES = (
    "9" * 5000,  # past int()'s limit of 4,300 digits
    "0" * 4999 + "1",  # a small number, written too long to convert
    str(2**63),  # one past SQLite's largest integer
    str(2**64),
    "99999999999999999999999",
    "-1",
    "0",
    "",
    " ",
    "²",  # str.isdigit() says yes, int() says no
    "٣",  # an Arabic-Indic 3: int() takes it, the forms must not
    "\U0001d7d7",  # a mathematical bold 9
    "1.5",
    "1e3",
    "x" * 5000,
    "\x00",
    "Ω\u202e名",
)
# In a path: the same, but every one an otherwise valid URL segment.
PATH_VALUES = (
    "9" * 5000,
    "0" * 4999 + "1",
    str(2**63),
    str(2**63 - 1),  # the largest id: a 404, never an OverflowError
    str(2**64),
    "99999999999999999999999",
    "-1",
    "0",
    "",
    "²",
    "٣",
    "x" * 5000,
    "Ω\u202e名",
)
# Views that read a JSON body or an uploaded file, not fields: test_api and test_backup
# send them hostile documents; here they only get the hostile paths, fields and methods.
BODY_ONLY = {"api.resolve", "backup.import_file"}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
ARGUMENT = re.compile(r"<(?:[^:<>]+:)?(\w+)>")


class Reads(ImmutableMultiDict):
    """Query or form values that note every key a view asks for."""

    asked: ClassVar[set[str]] = set()

    def __getitem__(self, key):
        Reads.asked.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None, type=None):
        Reads.asked.add(key)
        return super().get(key, default, type)

    def getlist(self, key, type=None):
        Reads.asked.add(key)
        return super().getlist(key, type)

    def __contains__(self, key):
        Reads.asked.add(key)
        return super().__contains__(key)


class RecordingRequest(Request):
    """A request whose args and form record the keys read (see ``Reads``)."""

    parameter_storage_class = Reads


@dataclass
class Seed:
    """A database with matches in every state a write needs, and a valid request per view."""

    path: Path
    tokens: dict[int, str]
    paths: dict[str, dict[str, str]]  # endpoint -> path arguments
    values: dict[str, dict[str, str]]  # endpoint -> query (GET) or form (others)


@dataclass
class Tally:
    """Hostile requests sent, and every answer of 500 or more."""

    sent: int = 0
    failures: list[str] = field(default_factory=list)


TALLY = Tally()


@pytest.fixture(scope="module")
def seed(tmp_path_factory) -> Seed:
    """Anna, Ben, Cleo and Eve (who never played); a match waiting for Cleo's row, one
    at round 1, a fresh one, a finished one, one two rounds in; and for every view a
    request it accepts."""
    path = tmp_path_factory.mktemp("hostile") / "seed.sqlite"
    app = make_app(path)
    client = app.test_client()
    anna, ben, cleo, newcomer = add_players(client, "Anna", "Ben", "Cleo", "Eve")
    waiting, open_, fresh, finished = (
        start_match(client, [anna, ben, cleo]),
        start_match(client, [anna, ben, cleo]),
        start_match(client, [anna, ben, cleo]),
        start_match(client, [anna, ben], end_kind="games", end_value=1),
    )
    for match_id in (waiting, open_):
        assert start_game(client, match_id, [12, 24, 37, 40]).status_code == 303
    round_one = {"game": "1", "round": "1", f"card-{anna}": "39", f"card-{ben}": "42"}
    assert client.post(
        f"/matches/{waiting}/rounds", data={**round_one, f"card-{cleo}": "3"}
    ).status_code == (303)
    assert state_of(client, waiting).current.pending.player == cleo
    assert score_game(client, finished, {anna: 5, ben: 7}).status_code == 303
    reviewed = start_match(client, [anna, ben], end_kind="games", end_value=1)
    play_game(client, reviewed, [anna, ben], random.Random(45))  # a game with a review
    two_rounds = start_match(client, [anna, ben])
    assert start_game(client, two_rounds, [12, 24, 37, 40]).status_code == 303
    for number, cards in ((1, (41, 42)), (2, (50, 51))):
        data = {"game": "1", "round": str(number), f"card-{anna}": cards[0]}
        assert client.post(
            f"/matches/{two_rounds}/rounds", data={**data, f"card-{ben}": cards[1]}
        ).status_code == (303)
    undo_page = client.get(f"/matches/{waiting}/undo").get_data(as_text=True)
    expect = re.search(r'name="expect" value="([^"]+)"', undo_page).group(1)
    correct_page = client.get(f"/matches/{waiting}/games/1/rounds/1/correct").get_data(as_text=True)
    filled_from = re.search(r'name="version" value="([^"]+)"', correct_page).group(1)
    with app.app_context():
        matches = db.session.scalars(db.select(Match)).all()
        tokens = {match.id: match.player_token for match in matches}
        finished_version = str(db.session.get(Match, finished).version)
        two_version = str(db.session.get(Match, two_rounds).version)
        db.engine.dispose()
    players = {"player_id": str(anna)}
    paths = {
        "default": {
            "match_id": str(waiting),
            "number": "1",
            "game": "1",
            "year": "2026",
            **players,
        },
        "play.confirm_undo_to": {"match_id": str(two_rounds)},
        "play.undo_to": {"match_id": str(two_rounds)},
        "play.start_game": {"match_id": str(fresh)},
        "play.score_game": {"match_id": str(fresh)},
        "play.enter_round": {"match_id": str(open_)},
        "players.delete": {"player_id": str(newcomer)},  # never played: may go
        "history.confirm_delete": {"match_id": str(finished)},
        "history.delete": {"match_id": str(finished)},
        "play.rematch": {"match_id": str(finished)},  # a rematch only once it is over
        "play.bgstats": {"match_id": str(finished)},  # the play of a finished match
        "play.review_json": {"match_id": str(reviewed)},  # a game played card by card
        "play.join": {"match_id": str(waiting), "token": tokens[waiting]},
        "play.change_text": {"match_id": str(waiting), "name": "note"},
        "i18n.set_language": {"code": "de"},
        "static": {"filename": "css/app.css"},
    }
    worked = {**WORKED_EXAMPLE, "lines": "4"}
    values = {
        "players.create": {"name": "Dora"},
        "players.rename": {"name": "Dora"},
        "players.archive": {"archived": "1"},
        "play.create": {
            "seat_1": str(anna),
            "seat_2": str(ben),
            "new_player": "",
            "end_kind": "more_than",
            "end_value": "66",
            "deck": "standard",
            "note": "Oma’s 80th",
        },
        "play.change_text": {"note": "Oma’s 80th"},
        "play.start_game": {"game": "1", "row1": "12", "row2": "24", "row3": "37", "row4": "40"},
        "play.score_game": {
            "game": "1",
            f"kind-{anna}": "bulls",
            f"score-{anna}": "5",
            f"kind-{ben}": "pile",
            f"score-{ben}": "55 10",
            f"kind-{cleo}": "bulls",
            f"score-{cleo}": "0",
        },
        "play.enter_round": {**round_one, f"card-{cleo}": "60"},
        "play.choose_row": {"game": "1", "round": "1", "player": str(cleo), "row": "1"},
        "play.undo": {"expect": expect},
        "play.correct": {
            **{key: value for key, value in round_one.items() if key.startswith("card")},
            f"card-{anna}": "41",
            f"card-{cleo}": "3",
            f"row-{cleo}": "2",
            "version": filled_from,  # what the form was filled from, as the page has it
            "confirm": "1",
        },
        "play.undo_to": {"version": two_version},
        "history.delete": {"version": finished_version},
        "history.index": {"page": "1"},
        "play.choose_me": {"player": str(anna)},
        "play.poll": {"since": "0", "view": "match", "form": "x"},
        "leaderboard.index": {"period": "all", "players": "3"},
        "leaderboard.player": {"page": "1"},
        "leaderboard.head_to_head": {"first": str(anna), "second": str(ben)},
        "replay.show": {"round": "1"},
        "resolver.form": worked,
        "resolver.resolve": {**worked, "choice3": "1"},
        "i18n.set_language": {"next": "/"},
    }
    return Seed(path, tokens, paths, values)


class Walker:
    """An app on a copy of the seed, its client holding every match's player link."""

    def __init__(self, seed: Seed, path: Path):
        self.seed = seed
        self.path = path
        # Errors become 500 answers, as in production, so the walk can count them.
        self.app = make_app(path, PROPAGATE_EXCEPTIONS=False)
        self.app.request_class = RecordingRequest
        self.client = self.app.test_client()
        self.restore()

    def restore(self) -> None:
        """Put the seed back in place (in the same file: every connection sees it)."""
        copy_sqlite(self.seed.path, self.path)
        forget_cached(self.app)  # versions went back: what they cached is void
        for match_id, token in self.seed.tokens.items():
            self.client.get(f"/matches/{match_id}/join/{token}")

    def rules(self):
        """Every rule with its methods, sorted for a stable walk."""
        return sorted(self.app.url_map.iter_rules(), key=lambda rule: (rule.rule, rule.endpoint))

    def arguments(self, rule) -> dict[str, str]:
        """Valid path arguments for the rule."""
        given_ = {**self.seed.paths["default"], **self.seed.paths.get(rule.endpoint, {})}
        return {name: given_.get(name, "1") for name in rule.arguments}

    def values(self, rule) -> dict[str, str]:
        """The valid query or form values for the rule's view."""
        return dict(self.seed.values.get(rule.endpoint, {}))

    def send(self, method: str, rule, arguments: dict, values: dict, hostile: bool = True):
        """One request; a write that got through is undone. Counts and notes any 5xx."""
        path = ARGUMENT.sub(lambda found: quote(arguments[found.group(1)], safe=""), rule.rule)
        try:
            if method == "GET":
                response = self.client.get(path + ("?" + urlencode(values) if values else ""))
            else:
                response = self.client.open(path, method=method, data=values)
        except Exception as error:  # raised outside Flask's handlers: a bare 500
            response = Response(repr(error)[:200], 500)
        if hostile:
            TALLY.sent += 1
            if response.status_code >= 500:
                shown = {key: value[:20] for key, value in values.items()}
                TALLY.failures.append(
                    f"{response.status_code} {method} {path[:80]} {shown} ({rule.endpoint})"
                )
        response.close()  # a static file stays open until then
        if method != "GET" and response.status_code < 400:
            self.restore()
        return response

    def fields(self, method: str, rule) -> list[str]:
        """The query or form keys the view reads while serving its valid request."""
        Reads.asked = set()
        self.send(method, rule, self.arguments(rule), self.values(rule), hostile=False)
        return sorted(Reads.asked | set(self.values(rule)))


def methods_of(rule) -> list[str]:
    """The methods a rule answers (HEAD and OPTIONS come with them)."""
    return sorted(rule.methods - {"HEAD", "OPTIONS"})


def walk(walker: Walker, shard: int = 0, shards: int = 1) -> None:
    """Send every rule (of this shard: every ``shards``-th from ``shard`` on) hostile
    path arguments, field values and methods."""
    for rule in walker.rules()[shard::shards]:
        for method in methods_of(rule):
            valid, values = walker.arguments(rule), walker.values(rule)
            for name in valid:
                for value in PATH_VALUES:
                    walker.send(method, rule, {**valid, name: value}, values)
            for key in walker.fields(method, rule):
                for value in FIELD_VALUES:
                    walker.send(method, rule, valid, {**values, key: value})
        for method in sorted(set(METHODS) - set(methods_of(rule))):
            walker.send(method, rule, walker.arguments(rule), {})


@pytest.fixture(scope="module")
def walker(seed, tmp_path_factory) -> Walker:
    """One walker for the module; the figures are written when it is done."""
    yield Walker(seed, tmp_path_factory.mktemp("walk") / "companion.sqlite")
    ARTIFACTS.mkdir(exist_ok=True)
    figures = f"hostile requests: {TALLY.sent}, answers of 500 or more: {len(TALLY.failures)}"
    (ARTIFACTS / "hostile-inputs.txt").write_text(figures + "\n")
    print(f"\n{figures}")


# The walk in parts, which the test run's workers share out (about 15 s in one go).
SHARDS = 3


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_route_answers_5xx_to_hostile_paths_values_or_methods(walker, shard):
    before, failed = TALLY.sent, len(TALLY.failures)
    walk(walker, shard, SHARDS)
    assert TALLY.failures[failed:] == [], "\n".join(TALLY.failures[failed:])
    assert TALLY.sent - before > 2000 // SHARDS  # every rule of the part, not a few


def test_every_rule_is_walked_with_a_valid_request_first(walker):
    """The valid requests reach their views (else the hostile ones would test little)."""
    for rule in walker.rules():
        for method in methods_of(rule):
            response = walker.send(
                method, rule, walker.arguments(rule), walker.values(rule), hostile=False
            )
            assert response.status_code < 400 or rule.endpoint in BODY_ONLY, (
                rule.endpoint,
                response.status_code,
            )


hostile_text = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"[+-]?0*[0-9]{1,30}", fullmatch=True),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.integers(min_value=4000, max_value=6000).map(lambda digits: "7" * digits),
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), value=hostile_text)
def test_no_5xx_for_any_text_in_any_field(walker, data, value):
    rule = data.draw(st.sampled_from(walker.rules()), label="rule")
    method = data.draw(st.sampled_from(methods_of(rule)), label="method")
    valid, values = walker.arguments(rule), walker.values(rule)
    if data.draw(st.booleans(), label="in the path") and valid:
        name = data.draw(st.sampled_from(sorted(valid)), label="argument")
        response = walker.send(method, rule, {**valid, name: value}, values)
    else:
        keys = sorted({*values, "page", "round", "since", "player", "row", "seat_1"})
        key = data.draw(st.sampled_from(keys), label="field")
        response = walker.send(method, rule, valid, {**values, key: value})
    assert response.status_code < 500, TALLY.failures[-1:]


@pytest.mark.parametrize("match_id", [str(2**63), "9" * 5000, "0" * 4999 + "1"])
def test_a_poll_of_a_huge_id_is_a_404(client, match_id):
    """A shortcut before Flask once raised OverflowError: a bare 500 without headers."""
    response = client.get(f"/matches/{match_id}/live?since=0")
    assert response.status_code == 404
    assert "Content-Security-Policy" in response.headers


def test_the_largest_id_is_a_plain_404(client):
    assert client.get(f"/matches/{2**63 - 1}").status_code == 404
    assert client.get(f"/players/{2**63 - 1}/stats").status_code == 404
    assert client.get(f"/matches/{2**63}/games/1/replay").status_code == 404
