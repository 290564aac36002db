"""Luck over many games (issue 34): the leaderboard's and a player's luck per game, and
the year's luckiest, unluckiest and unluckiest play, each equal to the same figure
counted here from the rules' odds of every finished card game, replayed from its stored
inputs; score-only and unfinished games left out; in German and French too."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import datetime
from html import unescape
from typing import NamedTuple

import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from conftest import make_app
from driver import (
    add_players,
    play_game,
    play_rounds,
    score_game,
    start_match,
)
from kept import kept
from sqlalchemy import delete, func, select, update

from companion import derived, rules, store
from companion.db import db
from companion.derived.play_luck import finished_luck
from companion.derived.tables import LuckPlayer, PlayLuck
from companion.household import match_luck, yearly
from companion.models import Game, Match, utcnow
from companion.state import played_game

TRANSLATIONS = ["de", "fr"]
CATALOGS = "companion/translations/{lang}/LC_MESSAGES/messages.po"
NBSP, NNBSP = "\u00a0", "\u202f"
MINUS, DASH = "\u2212", "\u2013"  # the pages' minus sign, and "none yet"


class PlayIs(NamedTuple):
    """One play of a finished card game, as the rules figure it from the replay."""

    match_id: int
    created_at: datetime
    players: int  # at the table
    game: int  # number in the match
    round: int
    odds: rules.Odds


def rules_plays(app) -> list[PlayIs]:
    """Every play of every finished card game, figured by ``rules.game_odds`` from the
    replay of its stored inputs with the whole hands (the seed the app uses: the game's
    id). Score-only games and games still going on have none."""
    plays = []
    with app.app_context():
        for match in db.session.scalars(select(Match).order_by(Match.id)):
            seats = [seat.player_id for seat in match.seats]
            deck = rules.deck_size(len(seats), match.pro)
            for game in match.games:
                if game.mode != "cards":
                    continue
                replay = played_game(game, seats)
                if not replay.finished:
                    continue
                rounds = [result for result in replay.table.rounds if result.resolved]
                odds = rules.game_odds(game.starting, rounds, deck, True, (game.id,))
                for number, round_plays in enumerate(odds, 1):
                    plays += [
                        PlayIs(match.id, match.created_at, len(seats), game.number, number, play)
                        for play in round_plays
                    ]
    return plays


def luck_counted(plays, keep=lambda play: True) -> dict[int, tuple[int, float, int]]:
    """Each player's (games, expected, bulls) over the plays kept."""
    games, expected, bulls = defaultdict(set), defaultdict(float), defaultdict(int)
    for play in plays:
        if keep(play):
            player = play.odds.player
            games[player].add((play.match_id, play.game))
            expected[player] += play.odds.expected
            bulls[player] += play.odds.bulls
    return {player: (len(games[player]), expected[player], bulls[player]) for player in games}


def per_game(figures: tuple[int, float, int]) -> float:
    games, expected, bulls = figures
    return (expected - bulls) / games


def signed(value: float) -> set[str]:
    """How the pages write luck per game in English ("+1.2", "0.0", and a minus sign): both
    roundings of a value a hair from a boundary (sums added in another order)."""
    shown = set()
    for near in (value - 1e-9, value + 1e-9):
        tenth = round(near, 1)
        shown.add(f"+{tenth:.1f}" if tenth > 0 else f"{MINUS}{-tenth:.1f}" if tenth < 0 else "0.0")
    return shown


def text_of(html: str) -> str:
    """The words of a page, tags and spacing gone."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def luck_cell(html: str, name: str) -> str:
    """The luck cell of a player's leaderboard row, as text."""
    row = re.search(rf"<tr[^>]*>(?:(?!</tr>).)*>{name}</a>.*?</tr>", html, re.S).group(0)
    return text_of(re.search(r'<td class="num luck">(.*?)</td>', row, re.S).group(1))


class Household(NamedTuple):
    ids: dict[str, int]
    matches: dict[str, int]


@pytest.fixture
def household(app, client, shared_folder):
    """Anna, Ben, Cleo and Dora: two card games of three; a four-player match of one card
    game and one score-only game; Anna and Ben's match still going on, one game over and
    the next three rounds in. Anna, Ben and Cleo have three complete games or more. Built
    once a session (tests/kept.py)."""
    built = kept(app, client, shared_folder, "luck", lambda: build_household(client))
    return Household(*built)


def build_household(client) -> Household:
    """The household of the fixture, entered through ``client``."""
    names = ["Anna", "Ben", "Cleo", "Dora"]
    ids = dict(zip(names, add_players(client, *names), strict=True))
    anna, ben, cleo, dora = ids.values()
    rng = random.Random(34)
    three = start_match(client, [anna, ben, cleo], end_kind="games", end_value=2)
    for _game in range(2):
        play_game(client, three, [anna, ben, cleo], rng)
    four = start_match(client, [anna, ben, cleo, dora], end_kind="games", end_value=2)
    play_game(client, four, [anna, ben, cleo, dora], rng)
    scores = {anna: 5, ben: 9, cleo: 2, dora: 14}
    assert score_game(client, four, scores).status_code == 303
    going = start_match(client, [anna, ben], end_kind="more_than", end_value=300)
    play_game(client, going, [anna, ben], rng)
    play_rounds(client, going, [anna, ben], rng, 3)
    return Household(ids, {"three": three, "four": four, "going": going})


def test_the_leaderboard_shows_luck_per_game_of_finished_card_games(app, client, household):
    """Luck per game under each filter equals the rules' odds summed here; the score-only
    game and the unfinished one are left out (Dora: one game of luck, two of bulls)."""
    plays = rules_plays(app)
    wanted = luck_counted(plays)
    anna, ben, cleo, dora = household.ids.values()
    assert {player: figures[0] for player, figures in wanted.items()} == {
        anna: 4,
        ben: 4,
        cleo: 3,
        dora: 1,
    }
    html = client.get("/leaderboard").text
    for name, player in household.ids.items():
        cell = luck_cell(html, name)
        # Everyone's luck counts fewer games than their bulls: so each cell says how many.
        figure, games = cell.split(" ", 1)
        assert figure in signed(per_game(wanted[player])), name
        assert games == ("1 game" if wanted[player][0] == 1 else f"{wanted[player][0]} games")
    assert "Luck: the bulls a player's cards were expected to take" in html
    assert "What does “expected” mean?" in html
    # The unfinished game has rows (figured round by round), but not with whole hands.
    with app.app_context():
        going = db.session.scalars(
            select(Game).where(Game.match_id == household.matches["going"], Game.number == 2)
        ).one()
        rows = db.session.execute(
            select(PlayLuck.round_number, PlayLuck.whole).where(PlayLuck.game_id == going.id)
        ).all()
        assert {number for number, _whole in rows} == {1, 2, 3}
        assert not any(whole for _number, whole in rows)
        # The derived code's own sum over the finished games agrees.
        finished = db.session.scalars(
            select(Game.id).where(Game.mode == "cards", Game.id != going.id)
        ).all()
        for player, luck in finished_luck(finished).items():
            assert luck.expected == pytest.approx(wanted[player][1])
            assert luck.bulls == wanted[player][2]
    # The players filter: the four-player match alone, then the two-player one.
    for count in (4, 2):
        by_count = luck_counted(plays, lambda play, count=count: play.players == count)
        fragment = client.get(f"/leaderboard?players={count}", headers={"HX-Request": "true"})
        assert fragment.text.lstrip().startswith('<div id="board">')
        for name, player in household.ids.items():
            cell = luck_cell(fragment.text, name)
            if player in by_count:
                assert cell.split(" ")[0] in signed(per_game(by_count[player])), (count, name)
            else:
                assert cell == DASH, (count, name)


def test_a_players_page_says_their_luck_in_words(app, client, household):
    wanted = luck_counted(rules_plays(app))
    for name, player in household.ids.items():
        words = text_of(client.get(f"/players/{player}/stats").text)
        luck = per_game(wanted[player])
        figure = re.search(r"Luck (\S+) bulls per game over (\d+) games?", words)
        assert figure.group(1) in signed(luck) and int(figure.group(2)) == wanted[player][0]
        amount = f"{abs(luck):.1f}"
        if round(luck, 1) > 0:
            sentence = f"{name} took {amount} bulls per game fewer than their cards were"
        elif round(luck, 1) < 0:
            sentence = f"{name} took {amount} bulls per game more than their cards were"
        else:
            sentence = f"{name} took as many bulls as their cards were expected to take."
        assert sentence in words, name


def test_score_only_and_unfigured_games_show_no_luck(app, client):
    """Anna played scores only: no luck. Cleo's card game is not figured yet (as after
    an import, before the background figures it): "not figured yet"."""
    anna, ben, cleo, dora = add_players(client, "Anna", "Ben", "Cleo", "Dora")
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=1)
    assert score_game(client, match_id, {anna: 3, ben: 7}).status_code == 303
    cards = start_match(client, [cleo, dora], end_kind="games", end_value=1)
    play_game(client, cards, [cleo, dora], random.Random(3))
    with app.app_context():
        for kept in (PlayLuck, LuckPlayer):  # the rows and their sums
            db.session.execute(delete(kept).where(kept.match_id == cards))
        db.session.execute(update(Match).where(Match.id == cards).values(version=Match.version + 1))
        db.session.commit()
    html = client.get("/leaderboard").text
    assert luck_cell(html, "Anna") == DASH and luck_cell(html, "Cleo") == DASH
    page = client.get(f"/players/{anna}/stats").text
    assert 'class="luck"' not in page and "all entered as scores only" in page
    words = text_of(client.get(f"/players/{cleo}/stats").text)
    assert f"Luck {DASH} not figured yet" in words


def test_the_period_filter_and_the_year_go_by_the_match(app, client, household):
    """Anna and Ben's match moved to last year: this year's luck leaves it out."""
    last_year = utcnow().year - 1
    with app.app_context():
        match = db.session.get(Match, household.matches["going"])
        match.created_at = datetime(last_year, 6, 1, 20)
        db.session.commit()
        derived.rebuild(check=False, echo=lambda _line: None)  # played_at follows
        db.session.commit()
    plays = rules_plays(app)
    this_year = luck_counted(plays, lambda play: play.created_at.year == utcnow().year)
    html = client.get("/leaderboard?period=year").text
    for name, player in household.ids.items():
        assert luck_cell(html, name).split(" ")[0] in signed(per_game(this_year[player])), name
    html = client.get("/leaderboard").text  # all time: still there
    assert luck_cell(html, "Anna").endswith("4 games")


def unluckiest_counted(plays, player=None) -> PlayIs | None:
    """The play that took a row with the lowest chance, more bulls first, then the
    earliest (and the lower player id)."""
    taken = [play for play in plays if play.odds.bulls > 0 and player in (None, play.odds.player)]
    return min(
        taken,
        key=lambda play: (
            play.odds.chance,
            -play.odds.bulls,
            play.created_at,
            play.match_id,
            play.game,
            play.round,
            play.odds.player,
        ),
        default=None,
    )


def highlight(html: str, kind: str) -> str:
    """The words of one highlight of the review."""
    found = re.search(rf'<section class="highlight {kind}">(.*?)</section>', html, re.S)
    return text_of(found.group(1)) if found else ""


def test_the_years_review_names_the_luckiest_the_unluckiest_and_the_unluckiest_play(
    app, client, household
):
    plays = rules_plays(app)
    year = utcnow().year
    luck = luck_counted(plays)
    counted = {
        player: round(per_game(figures), 6)
        for player, figures in luck.items()
        if figures[0] >= yearly.LUCK_GAMES
    }
    assert household.ids["Dora"] not in counted  # one game: too few
    best, worst = max(counted.values()), min(counted.values())
    assert best != worst
    names = {player: name for name, player in household.ids.items()}
    html = client.get(f"/review/{year}").text
    luckiest = highlight(html, "luckiest")
    assert luckiest.startswith(
        "Luckiest "
        + ", ".join(names[p] for p in sorted(p for p, v in counted.items() if v == best))
    )
    assert f"{abs(best):.1f} bulls per game" in luckiest
    unluckiest = highlight(html, "unluckiest")
    assert unluckiest.startswith(
        "Unluckiest "
        + ", ".join(names[p] for p in sorted(p for p, v in counted.items() if v == worst))
    )
    assert f"{abs(worst):.1f} bulls per game" in unluckiest
    # The unluckiest play: its card, chance, bulls and player, one tap to its round.
    play = unluckiest_counted(plays)
    shown = highlight(html, "unlucky-play")
    assert shown.startswith(f"The unluckiest play {play.odds.card} A ")
    bulls = "1 bull" if play.odds.bulls == 1 else f"{play.odds.bulls} bulls"
    assert f"chance of taking a row, and it took {bulls}." in shown
    assert names[play.odds.player] in shown
    url = f"/matches/{play.match_id}/games/{play.game}/replay?round={play.round}"
    assert f'href="{url}"' in html
    replay = text_of(client.get(url).text)
    assert f"Round {play.round} of 10" in replay and str(play.odds.card) in replay
    # One player's year: their own luck and their unluckiest play.
    ben = household.ids["Ben"]
    html = client.get(f"/review/{year}?player={ben}").text
    mine = highlight(html, "luck")
    assert mine.split(" ")[1] in signed(per_game(luck[ben]))
    assert mine.endswith(f"over {luck[ben][0]} games")
    theirs = unluckiest_counted(plays, ben)
    url = f"/matches/{theirs.match_id}/games/{theirs.game}/replay?round={theirs.round}"
    assert f'href="{url}"' in html and "Luckiest" not in html


def test_a_year_with_too_few_games_names_no_luckiest(client):
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben], end_kind="games", end_value=1)
    play_game(client, match_id, [anna, ben], random.Random(7))
    html = client.get(f"/review/{utcnow().year}").text
    assert 'class="highlight luckiest"' not in html
    assert 'class="highlight unlucky-play"' in html  # a single play is enough


def test_luck_follows_new_games_and_a_late_fill(app, client, household):
    """The pages read luck kept in memory: a game finished since, and an imported game's
    luck figured later by the background (``store.fill_missing_luck``), show at once."""
    anna, ben, cleo, _dora = household.ids.values()
    assert luck_cell(client.get("/leaderboard").text, "Cleo").endswith("3 games")
    three = start_match(client, [anna, ben, cleo], end_kind="games", end_value=1)
    play_game(client, three, [anna, ben, cleo], random.Random(5))
    html = client.get("/leaderboard").text
    assert luck_cell(html, "Cleo").endswith("4 games")
    assert luck_cell(html, "Anna").split(" ")[0] in signed(
        per_game(luck_counted(rules_plays(app))[anna])
    )
    # As after an import: the match's luck not figured yet (the import raises versions).
    with app.app_context():
        for kept in (PlayLuck, LuckPlayer):  # the rows and their sums
            db.session.execute(delete(kept).where(kept.match_id == three))
        db.session.execute(update(Match).where(Match.id == three).values(version=Match.version + 1))
        db.session.commit()
    assert luck_cell(client.get("/leaderboard").text, "Cleo").endswith("3 games")
    with app.app_context():
        store.fill_missing_luck()
        assert db.session.scalar(select(func.count(PlayLuck.id)).where(PlayLuck.match_id == three))
    assert luck_cell(client.get("/leaderboard").text, "Cleo").endswith("4 games")


def test_kept_luck_is_read_again_only_for_changed_matches(app, client, household, monkeypatch):
    """A second request reads no match's luck; a change to one match reads that one."""
    client.get("/leaderboard")
    asked = []
    reading = match_luck.read_matches
    monkeypatch.setattr(
        match_luck,
        "read_matches",
        lambda ids, versions: asked.append(ids) or reading(ids, versions),
    )
    client.get("/leaderboard")
    assert asked == []
    with app.app_context():
        db.session.execute(
            update(Match)
            .where(Match.id == household.matches["four"])
            .values(version=Match.version + 1)
        )
        db.session.commit()
    client.get("/leaderboard")
    assert asked == [[household.matches["four"]]]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The catalogs compiled as they are now (a stale .mo cannot hide a change)."""
    directory = tmp_path_factory.mktemp("translations")
    for lang in TRANSLATIONS:
        target = directory / lang / "LC_MESSAGES"
        target.mkdir(parents=True)
        with open(CATALOGS.format(lang=lang), "rb") as source:
            catalog = read_po(source, locale=lang)
        with (target / "messages.mo").open("wb") as file:
            write_mo(file, catalog)
    return directory


@pytest.fixture
def app(tmp_path, compiled):
    """The app on a fresh database, reading the freshly compiled catalogs."""
    return make_app(tmp_path / "companion.sqlite", BABEL_TRANSLATION_DIRECTORIES=str(compiled))


@pytest.mark.parametrize(
    ("accept", "words"),
    [
        (
            "de",
            [
                "Glück",
                "Hornochsen pro Partie",
                "Was heißt „erwartet“?",
                "Am meisten Glück",
                "Am meisten Pech",
                "Die Karte mit dem größten Pech",
            ],
        ),
        (
            "fr-FR,fr;q=0.9",
            [
                "Chance",
                "têtes de bœuf par manche",
                "Que veut dire « attendu » ?",
                "Le plus de chance",
                "Le plus de malchance",
                "Le coup le plus malchanceux",
            ],
        ),
    ],
)
def test_luck_in_german_and_french(app, client, household, accept, words):
    headers = {"Accept-Language": accept}
    anna = household.ids["Anna"]
    pages = "".join(
        text_of(client.get(url, headers=headers).text).replace(NNBSP, " ").replace(NBSP, " ")
        for url in ("/leaderboard", f"/players/{anna}/stats", f"/review/{utcnow().year}")
    )
    for word in words:
        assert word.replace(NBSP, " ") in pages, word
    assert re.search(rf"[+{MINUS}]\d+,\d", pages)  # a decimal comma in both
    assert "bulls per game" not in pages and "Luckiest" not in pages


def sums_across_the_migration(app) -> tuple[list, list]:
    """A game played at the newest schema, its players' luck sums (``LuckPlayer``) as
    written with its luck, then as the migration that brought the table fills it from
    the luck rows (the database taken back before it and forward again)."""
    from flask_migrate import downgrade, upgrade

    kept = select(
        LuckPlayer.game_id,
        LuckPlayer.match_id,
        LuckPlayer.player_id,
        LuckPlayer.expected,
        LuckPlayer.bulls,
        LuckPlayer.lowest,
    ).order_by(LuckPlayer.game_id, LuckPlayer.player_id)
    with app.app_context():
        upgrade()
    client = app.test_client()
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(34))
    with app.app_context():
        store.luck_after(match_id)
        written = rounded(db.session.execute(kept))
        db.session.remove()
        downgrade(revision="d5a1c8e3f920")  # before luck_player
        upgrade()
        filled = rounded(db.session.execute(kept))
        db.session.remove()
    return written, filled


def rounded(rows) -> list[tuple]:
    """Rows with their figures to 9 places (a sum's order may differ between engines)."""
    return [tuple(round(v, 9) if isinstance(v, float) else v for v in row) for row in rows]


@pytest.mark.database  # on PostgreSQL too
def test_the_migration_fills_the_luck_sums_from_the_luck_kept(tmp_path, monkeypatch):
    import logging.config

    from conftest import database_url, testing_config

    from companion import create_app

    monkeypatch.setattr(logging.config, "fileConfig", lambda *args, **kwargs: None)
    empty = database_url(tmp_path / "o.sqlite", empty=True)  # on either engine
    app = create_app(testing_config(tmp_path / "o.sqlite", SQLALCHEMY_DATABASE_URI=empty))
    written, filled = sums_across_the_migration(app)
    assert len(written) == 3 and filled == written
