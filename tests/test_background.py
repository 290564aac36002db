"""Nothing heavy on the table's path (issue 42): a round's write places no card for luck;
a process of its own, at the lowest CPU priority, follows the database and figures it
after, a game at a time, each in a short write that pushes it to the phones."""

from __future__ import annotations

import itertools
import os
import random
import re
import signal
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from driver import (
    add_players,
    enter_round,
    play_game,
    replayed_rows,
    start_game,
    start_match,
    undo,
)
from sqlalchemy import event, func, select

from companion import background, derived, rules, store
from companion.db import db
from companion.derived import GameResult, game_review
from companion.derived.tables import PlayLuck, ReviewCard
from companion.models import Game, Match
from companion.state import played_game
from companion.storage import sqlite as sqlite_storage

pytestmark = pytest.mark.app_config(LUCK_APART=True)


def version_of(app, match_id: int) -> int:
    with app.app_context():
        return db.session.scalar(select(Match.version).where(Match.id == match_id))


def luck_rows(app, match_id: int) -> int:
    with app.app_context():
        query = select(func.count()).select_from(PlayLuck).where(PlayLuck.match_id == match_id)
        return db.session.scalar(query)


def one_look(app) -> None:
    """What the background process does at each change it sees, here in this process."""
    with app.app_context():
        background.Matches(db.engine, os.getppid(), quiet=0).refresh()


@pytest.fixture
def started(client):
    """Anna, Ben and Cleo at game 1 of a match, no round yet: the match's id and players."""
    ids = add_players(client, "Anna", "Ben", "Cleo")
    match_id = start_match(client, ids)
    assert start_game(client, match_id, [10, 30, 50, 70]).status_code == 303
    return match_id, ids


def test_a_rounds_write_places_no_card_for_luck(app, client, started, monkeypatch):
    match_id, ids = started

    def no_luck_here(*args, **kwargs):
        raise AssertionError("luck was figured in the round's write")

    monkeypatch.setattr(rules, "game_odds", no_luck_here)
    before = version_of(app, match_id)
    assert (
        enter_round(client, match_id, dict(zip(ids, (11, 31, 51), strict=True))).status_code == 303
    )
    assert version_of(app, match_id) == before + 1  # stored and pushed: the round's own write
    assert luck_rows(app, match_id) == 0
    monkeypatch.undo()
    one_look(app)
    assert luck_rows(app, match_id) == 3
    assert version_of(app, match_id) == before + 2  # the second push: the luck's write


def test_a_rounds_write_reads_no_match_with_its_seats_and_games(app, client, started):
    """The finding of bench.round_cpu (issue 59): inside its transaction, under the
    writer lock, the round's write loaded the whole match (its seats, their players, its
    games) to ask whether the newest game is played with cards. The replay it was checked
    against is read before; in the transaction, one small query does."""
    match_id, ids = started
    assert client.get(f"/matches/{match_id}").status_code == 200  # the version's replay
    sent = []
    with app.app_context():
        record = lambda *args: sent.append(args[2])  # noqa: E731 (the statement)
        event.listen(db.engine, "before_cursor_execute", record)
        try:
            answer = enter_round(client, match_id, dict(zip(ids, (11, 31, 51), strict=True)))
        finally:
            event.remove(db.engine, "before_cursor_execute", record)
    assert answer.status_code == 303
    raised = re.compile(r'UPDATE "?match"? SET version')  # the transaction's first
    begun = next(n for n, each in enumerate(sent) if raised.match(each))
    assert not [each for each in sent[begun:] if "FROM seat" in each]


def test_the_round_reaches_the_other_phones_while_luck_is_slowed_on_purpose(
    app, client, started, monkeypatch
):
    """Luck held on purpose (until the round is stored): the round's answer and its push
    come meanwhile; the luck follows in a write of its own once it is let go."""
    match_id, ids = started
    assert (
        enter_round(client, match_id, dict(zip(ids, (11, 31, 51), strict=True))).status_code == 303
    )
    figuring, let_go = threading.Event(), threading.Event()
    game_odds = rules.game_odds

    def slowed(*args, **kwargs):
        figuring.set()
        assert let_go.wait(60), "the test never let luck go"
        return game_odds(*args, **kwargs)

    monkeypatch.setattr(rules, "game_odds", slowed)
    look = threading.Thread(target=one_look, args=(app,))
    look.start()
    try:
        assert figuring.wait(60), "the background never figured"
        before = version_of(app, match_id)
        response = enter_round(client, match_id, dict(zip(ids, (12, 32, 52), strict=True)))
        assert response.status_code == 303
        assert version_of(app, match_id) == before + 1  # every phone's stream sees it now
        assert look.is_alive()  # and luck is still being figured
    finally:
        let_go.set()
        look.join(60)
    # Figured from the match before round 2, and round 1 is as it was: stored, though the
    # match moved on (a table sending rounds faster than luck is figured sees it too).
    assert luck_rows(app, match_id) == 3
    one_look(app)  # the next look, as round 2's change brings it: round 2
    assert luck_rows(app, match_id) == 6


def test_luck_of_a_round_that_changed_while_it_was_figured_is_not_stored(
    app, client, started, monkeypatch
):
    """Round 1 undone and entered with other cards between the figuring and the write:
    the rows figured are of cards no longer played, and are dropped; the next look
    figures the round as it is."""
    match_id, ids = started
    assert (
        enter_round(client, match_id, dict(zip(ids, (11, 31, 51), strict=True))).status_code == 303
    )
    stale_luck = store.stale_luck

    def then_changed(*args, **kwargs):
        figured = stale_luck(*args, **kwargs)
        db.session.rollback()
        assert undo(client, match_id).status_code == 303
        response = enter_round(client, match_id, dict(zip(ids, (13, 33, 53), strict=True)))
        assert response.status_code == 303
        return figured

    monkeypatch.setattr(store, "stale_luck", then_changed)
    one_look(app)
    assert luck_rows(app, match_id) == 0
    monkeypatch.undo()
    one_look(app)
    with app.app_context():
        cards = db.session.scalars(select(PlayLuck.card).where(PlayLuck.match_id == match_id))
        assert sorted(cards) == [13, 33, 53]


def test_a_match_that_moved_on_is_figured_at_the_next_look(app, client, started):
    """A look that finds nothing stale writes nothing: no push for nothing, no loop."""
    match_id, ids = started
    assert (
        enter_round(client, match_id, dict(zip(ids, (11, 31, 51), strict=True))).status_code == 303
    )
    one_look(app)
    settled = version_of(app, match_id)
    watcher = background.Matches(None, os.getppid())
    with app.app_context():
        watcher.refresh()
        watcher.refresh()
    assert version_of(app, match_id) == settled


def test_a_whole_game_is_figured_with_the_whole_hands_after_its_end(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(5))
    one_look(app)
    with app.app_context():
        whole = db.session.scalars(select(PlayLuck.whole).where(PlayLuck.match_id == match_id))
        assert list(whole) == [True] * 20


@pytest.mark.slow
def test_the_process_follows_the_database_at_the_lowest_priority(app, client):
    """The real process, as ``python -m companion.serve`` starts it (forked there, spawned
    here): it follows the database by itself and runs at nice 19."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    play_game(client, match_id, ids, random.Random(6))
    assert luck_rows(app, match_id) == 0  # LUCK_APART: the writes left it to the process
    pid = background.start(dict(app.config), "spawn")  # this process has threads
    assert pid is not None
    try:
        deadline = time.monotonic() + 60
        while luck_rows(app, match_id) < 20:
            assert alive(pid) and time.monotonic() < deadline, "nothing was figured"
            time.sleep(0.1)
        if hasattr(os, "getpriority"):
            assert os.getpriority(os.PRIO_PROCESS, pid) == background.NICEST
        # A round of a new game while it runs: it sees the change and figures it too.
        assert start_game(client, match_id, [10, 30, 50, 70], game=2).status_code == 303
        assert enter_round(client, match_id, {ids[0]: 11, ids[1]: 31}, game=2).status_code == 303
        while luck_rows(app, match_id) < 22:
            assert alive(pid) and time.monotonic() < deadline, "round 1 of game 2"
            time.sleep(0.1)
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)


def alive(pid: int) -> bool:
    """The process runs (and is no zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_a_backlog_goes_a_few_games_at_a_time_and_another_tables_luck_between(app, client):
    """The finding of bench.fill_wait: the luck of an imported 250-game match, figured in
    one go, held up another table's luck for 150 s (400 s at a Pi's share). Each look
    now figures two games per match, the newest and the oldest: the other table's round
    is in line after the first look, the backlog after half as many looks as it has
    games."""
    ids = add_players(client, "Anna", "Ben")
    backlog = start_match(client, ids, end_kind="games", end_value=3)
    for _ in range(3):
        play_game(client, backlog, ids, random.Random(len(ids)))
    table = start_match(client, ids)
    assert start_game(client, table, [10, 30, 50, 70]).status_code == 303
    assert enter_round(client, table, {ids[0]: 80, ids[1]: 90}).status_code == 303
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        matches.refresh()
        assert luck_rows(app, table) == 2  # the table's round, at the first look
        assert luck_rows(app, backlog) == 40  # two games of the backlog
        assert figured_games(backlog) == [1, 3]  # its newest and its oldest
        assert matches.busy  # more to do: the next look comes at once
        assert reviewed_games(backlog) == 0  # luck first: no review while it is behind
        matches.refresh()
        assert luck_rows(app, backlog) == 60
        assert reviewed_games(backlog) == 1  # then its games' reviews, one per look
        assert matches.busy


def test_a_table_faster_than_the_looks_leaves_none_of_its_games_behind(app, client):
    """A table whose games go by faster than the background's looks (bench.fill_wait's
    table, a write every 0.3 s at a Pi's share): a look in the middle of each game. With
    the newest game alone per look, every finished game's tail (and its whole hands)
    waited for good; the oldest stale game now comes second in each look."""
    ids = add_players(client, "Anna", "Ben")
    table = start_match(client, ids, end_kind="games", end_value=9)
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        for number in range(1, 4):
            assert start_game(client, table, [10, 30, 50, 70], game=number).status_code == 303
            for turn in range(10):  # rising cards: no row choice stops a round
                cards = {ids[0]: 71 + 2 * turn, ids[1]: 72 + 2 * turn}
                assert enter_round(client, table, cards, game=number).status_code == 303
                if turn == 4:
                    matches.refresh()  # a look in the middle of the game
        whole = select(Game.number, func.count()).join(PlayLuck, PlayLuck.game_id == Game.id)
        query = whole.where(Game.match_id == table, PlayLuck.whole).group_by(Game.number)
        assert dict(db.session.execute(query).all()) == {1: 20, 2: 20}


def figured_games(match_id: int, kept=PlayLuck) -> list[int]:
    """The numbers of the match's games with rows of ``kept`` (luck's, or a review's)."""
    query = (
        select(Game.number)
        .join(kept, kept.game_id == Game.id)
        .where(Game.match_id == match_id)
        .distinct()
        .order_by(Game.number)
    )
    return list(db.session.scalars(query))


def reviewed_games(match_id: int) -> int:
    query = select(func.count(ReviewCard.game_id.distinct())).where(ReviewCard.match_id == match_id)
    return db.session.scalar(query)


def test_a_historys_games_are_reviewed_when_nothing_else_waits_the_newest_first(app, client):
    """Games that ended before the server ran (an import, games from before reviews):
    once luck is in line and no match that moved waits for its reviews, one per look, the
    newest first; a match whose review fails is left for its next change."""
    ids = add_players(client, "Anna", "Ben")
    history = start_match(client, ids, end_kind="games", end_value=2)
    for number in range(2):
        play_game(client, history, ids, random.Random(20 + number))
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        matches.refresh()  # the first look: luck only
        assert luck_rows(app, history) == 40 and reviewed_games(history) == 0
        matches.refresh()
        assert reviewed_games(history) == 1
        assert figured_games(history, ReviewCard) == [2]  # the newest first
        matches.refresh()
        assert figured_games(history, ReviewCard) == [1, 2]
        matches.refresh()  # nothing left: nothing written
        assert reviewed_games(history) == 2


def test_a_history_game_whose_review_fails_is_not_tried_at_every_look(
    app, client, monkeypatch, caplog
):
    ids = add_players(client, "Anna", "Ben")
    history = start_match(client, ids, end_kind="games", end_value=1)
    play_game(client, history, ids, random.Random(30))
    tried = []

    def refused(*args, **kwargs):
        tried.append(args)
        raise rules.RuleError("a game the rules refuse")

    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        matches.refresh()
        monkeypatch.setattr(store, "review_work", refused)
        matches.refresh()
        matches.refresh()
    assert len(tried) == 1
    assert "reviewing a game of match" in caplog.text


def test_a_review_gives_way_to_a_tables_round_and_goes_on_after(app, client, monkeypatch):
    """A review is figured a round at a time: when a table's round comes meanwhile, the
    review stops after the round it is on, the table's luck comes first at the next look,
    and the review goes on from where it was (the same figures as in one go)."""
    ids = add_players(client, "Anna", "Ben")
    finished = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, finished, ids, random.Random(40))
    table = start_match(client, ids)
    assert start_game(client, table, [10, 30, 50, 70]).status_code == 303
    review_work = store.review_work
    rounds_figured = []

    def with_a_round_meanwhile(match_id, game_id):
        work = review_work(match_id, game_id)
        inner = work.rounds

        def rounds():
            for number, plays in enumerate(inner, 1):
                rounds_figured.append(number)
                if number == 3:  # a table's round comes while round 3 is figured
                    cards = {ids[0]: 80, ids[1]: 90}
                    assert enter_round(client, table, cards).status_code == 303
                yield plays

        work.rounds = rounds()
        return work

    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        monkeypatch.setattr(store, "review_work", with_a_round_meanwhile)
        matches.refresh()  # the first look: luck only
        matches.refresh()  # then the review: it meets the table's round
        assert reviewed_games(finished) == 0 and matches.busy
        assert rounds_figured == [1, 2, 3] and len(matches.work.done) == 3
        matches.refresh()  # the table's luck first, then the rest of the review
        assert luck_rows(app, table) == 2
        assert rounds_figured == list(range(1, 11))
        assert reviewed_games(finished) == 1
        kept = db.session.execute(
            select(ReviewCard.round_number, ReviewCard.card, ReviewCard.to_game_end)
            .where(ReviewCard.match_id == finished)
            .order_by(ReviewCard.id)
        ).all()
        game = db.session.scalar(select(Game).where(Game.match_id == finished))
        in_one_go = game_review.figured(played_game(game, ids), 104)
    assert kept == [(row["round_number"], row["card"], row["to_game_end"]) for row in in_one_go]


def test_a_review_waits_while_a_table_plays_and_goes_on_once_it_is_quiet(app, client, monkeypatch):
    """Inside a Pi's share of a core (a cgroup's quota) a review at nice 19 still spends
    the CPU a table's next round waits for: a game's review goes on only once no table has
    entered anything for ``quiet`` seconds, and asks the follower for that look."""
    ids = add_players(client, "Anna", "Ben")
    finished = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, finished, ids, random.Random(41))
    table = start_match(client, ids)
    assert start_game(client, table, [10, 30, 50, 70]).status_code == 303  # a table plays
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=60)
        matches.refresh()  # the first look: luck only
        matches.refresh()
        assert reviewed_games(finished) == 0  # the table entered a game just now
        assert not matches.due
        assert 50 < matches.again_at - time.monotonic() <= 60  # the look when it is quiet
        monkeypatch.setattr(store, "seconds_since_newest_entry", lambda: 60.0)  # a minute on
        matches.refresh()
        assert reviewed_games(finished) == 1
        assert matches.again_at is None and not matches.due


class Asking:
    """A feed that asks for one look with nothing changed (``due``): the follower's first
    look is its start's, the second the one asked for; then it stops."""

    def __init__(self, engine) -> None:
        self.engine, self.looks = engine, 0

    @property
    def watches(self) -> bool:
        return self.looks < 2

    @property
    def due(self) -> bool:
        return self.looks == 1

    def refresh(self, ids=None) -> None:
        assert ids is None  # a look at every match
        self.looks += 1


def test_the_follower_looks_when_asked_though_nothing_changed(app):
    """The look a waiting review asks for comes on both engines (SQLite's data_version
    poll, PostgreSQL's LISTEN), with no change to the database."""
    with app.app_context():
        feed = Asking(db.engine)
        thread = threading.Thread(target=store.follow_changes(db.engine), args=(feed,))
        thread.start()
        thread.join(timeout=30)
        assert not thread.is_alive() and feed.looks == 2


@pytest.mark.sqlite_only(reason="SQLite's data_version is polled; PostgreSQL notifies")
def test_the_background_looks_at_sqlites_data_version_a_few_times_a_second(app, monkeypatch):
    """The finding of bench.push at a tenth of a core (issue 59): the background process
    looked 50 times a second, as a stream's watcher does, and spent a tenth of that share
    idle. It waits ``SETTLE`` after each change anyway: a few looks a second do."""
    slept = []
    monkeypatch.setattr(sqlite_storage, "time", SimpleNamespace(sleep=slept.append))
    with app.app_context():
        background.follow(Asking(db.engine))
    assert slept and set(slept) == {background.LOOK_EVERY}
    assert sqlite_storage.SQLITE_EVERY < background.LOOK_EVERY <= background.SETTLE / 2


def stored_statistics(match_id: int) -> dict[str, set]:
    return derived.stored_rows([match_id])


def test_a_games_end_leaves_its_statistics_to_the_background_and_ends_the_match(
    app, client, monkeypatch
):
    """The game's end is stored with its results, and the match ends (its signal goes
    out); its statistics (the household's rows and ratings: nothing the table's pages
    read) follow at the background's next look, equal to a replay's."""
    ended = []

    def finished(_sender, match_id):
        ended.append(match_id)

    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    with store.match_finished.connected_to(finished):
        play_game(client, match_id, ids, random.Random(50))
    assert ended == [match_id]  # the match is over, from its results
    with app.app_context():
        assert derived.statistics_stale(match_id)
        assert stored_statistics(match_id)["matches"] == set()
        assert db.session.scalar(select(func.count()).select_from(GameResult)) == 2
    one_look(app)
    with app.app_context():
        assert not derived.statistics_stale(match_id)
        match = db.session.get(Match, match_id)
        assert stored_statistics(match_id) == replayed_rows(match)
        assert all(row.finished for row in stored_statistics(match_id)["matches"])
        assert not store.statistics_after(match_id)  # in line: nothing written


def test_an_undone_games_end_takes_its_statistics_at_the_next_look(app, client):
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=2)
    play_game(client, match_id, ids, random.Random(51))
    one_look(app)
    with app.app_context():
        assert stored_statistics(match_id)["games"]  # the finished game's rows
    assert undo(client, match_id).status_code == 303  # round 10 again: the game reopens
    with app.app_context():
        assert derived.statistics_stale(match_id)
    one_look(app)
    with app.app_context():
        assert not derived.statistics_stale(match_id)
        assert stored_statistics(match_id) == replayed_rows(db.session.get(Match, match_id))
        assert stored_statistics(match_id)["games"] == set()


def test_statistics_not_written_yet_are_no_difference_for_rebuild_check(app, client, runner):
    """A copy taken between a game's end and the background's look (the copy after a
    finished match is made at once) must pass ``restore``'s trial, which runs ``rebuild
    --check``: such statistics are counted apart, as luck not figured yet is."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    play_game(client, match_id, ids, random.Random(52))
    with app.app_context():
        problems = []
        rebuilt = derived.rebuild(check=True, echo=problems.append)
        assert problems == [] and rebuilt.pending_statistics == 1
    result = runner.invoke(args=["rebuild", "--check"])
    assert result.exit_code == 0, result.output
    assert "1 matches' statistics not written yet" in result.output
    one_look(app)
    with app.app_context():
        assert derived.rebuild(check=True, echo=problems.append).pending_statistics == 0
        assert problems == []


# --- kept alive (issue 55) ---------------------------------------------------------------


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


KILLED = signal.SIGKILL  # a wait status: killed by signal 9 (kill -9, out of memory)
FAILED = 1 << 8  # a wait status: exit status 1 (an exception in the process)


def keeper_of(clock: Clock, lives: list[float], how=lambda pid: KILLED) -> background.Keeper:
    """A Keeper of a fake process: started at the clock's time (its pid the count of
    starts), dead ``lives[n]`` seconds after its n-th start (for ever once past the list),
    ending as ``how`` says."""
    starts: list[float] = []

    def start(config: dict) -> int:
        starts.append(clock.now)
        return len(starts)

    def exited(pid: int) -> int | None:
        life = lives[pid - 1] if pid <= len(lives) else float("inf")
        return how(pid) if clock.now >= starts[pid - 1] + life else None

    keeper = background.Keeper({}, start=start, exited=exited, clock=clock)
    keeper.starts = starts
    return keeper


def run_for(keeper: background.Keeper, clock: Clock, seconds: float, step: float = 0.5) -> None:
    """The server's loop for ``seconds``: the keeper tended at every ``step``."""
    end = clock.now + seconds
    while clock.now < end:
        clock.now += step
        keeper.tend()


def test_a_background_process_that_keeps_dying_waits_twice_as_long_each_time(caplog):
    """Dying at once, it is started again after 1 s, 2 s, 4 s ... at most a minute apart,
    each end logged with how it ended and each start with its pid."""
    clock = Clock()
    keeper = keeper_of(clock, lives=[0.0] * 20)
    assert keeper.begin() and keeper.pid == 1
    with caplog.at_level("WARNING", logger="companion.background"):
        run_for(keeper, clock, 300)
    starts = keeper.starts
    waits = [later - sooner - 0.5 for sooner, later in itertools.pairwise(starts)]
    assert waits[:8] == [1, 2, 4, 8, 16, 32, 60, 60]  # each death seen at the next tend
    assert "the background process (pid 1) was killed by SIGKILL: it starts again in 1 s" in (
        caplog.text
    )
    assert "it starts again in 60 s" in caplog.text
    assert "it starts again in 64 s" not in caplog.text
    assert "the background process started again (pid 2)" in caplog.text


def test_a_background_process_that_stayed_up_a_while_is_started_again_after_a_second(caplog):
    """The wait goes back to the first once the process ran STEADY seconds; its exit
    status is logged."""
    clock = Clock()
    keeper = keeper_of(clock, lives=[0.0, 0.0, 0.0, 120.0, 0.0], how=lambda pid: FAILED)
    keeper.begin()
    with caplog.at_level("ERROR", logger="companion.background"):
        run_for(keeper, clock, 200)
    waits = [b - a for a, b in itertools.pairwise(keeper.starts)]
    # Each death seen 0.5 s late: 1 s, 2 s, 4 s; then up 120 s and 1 s again, not 8 s;
    # then 2 s, as the next dies at once.
    assert waits[:5] == [1.5, 2.5, 4.5, 121.0, 2.5]
    assert "(pid 4) exited with status 1: it starts again in 1 s" in caplog.text


def test_a_stopped_keeper_starts_nothing_again():
    clock = Clock()
    keeper = keeper_of(clock, lives=[0.0])
    keeper.begin()
    keeper.pid = None  # as if stop() had ended it (a fake pid cannot be signalled)
    keeper.stopped = True
    run_for(keeper, clock, 30)
    assert keeper.starts == [0.0]


def test_a_background_process_that_cannot_start_again_is_tried_later(caplog):
    """A fork that fails (no memory, no process left) is a death too: tried again later."""
    clock = Clock()
    keeper = keeper_of(clock, lives=[0.0])
    keeper.begin()
    started, failed = keeper.start, []

    def fork_fails_twice(config: dict) -> int | None:
        if len(failed) < 2:
            failed.append(clock.now)
            return None
        return started(config)

    keeper.start = fork_fails_twice
    run_for(keeper, clock, 30)
    assert keeper.pid == 2  # the second process: started once the fork worked
    assert failed == [1.5, 3.5] and keeper.starts == [0.0, 7.5]  # 1 s, 2 s, 4 s after


def test_a_look_that_leaves_luck_and_statistics_in_line_marks_the_moment(app, client, started):
    """The moment /healthz reads (``store.derived_behind``): set by the look that put the
    round's luck in line."""
    match_id, ids = started
    assert (
        enter_round(client, match_id, dict(zip(ids, (11, 31, 51), strict=True))).status_code == 303
    )
    in_line = background.InLine()
    in_line.mark(at=time.time() - 600)
    with app.app_context():
        background.Matches(db.engine, os.getppid(), quiet=0, in_line=in_line).refresh()
    assert luck_rows(app, match_id) == 3
    assert in_line.seconds_ago() < 60


# ---------------------------------------------------------------------------
# Issue 56: every finished game is reviewed once the background is idle, with no other
# write to wake it (after an upgrade that dropped the reviews, an import, a start)


def versions() -> tuple:
    """What the follower sees move: every match and its version."""
    found = tuple(db.session.execute(select(Match.id, Match.version).order_by(Match.id)).all())
    db.session.rollback()
    return found


def follow_until_still(matches: background.Matches, looks: int = 60) -> None:
    """The follower's rule without its clock: a look whenever a match moved (or one came)
    or the process asks for one (``due``), until neither; a process that never comes to
    rest fails."""
    seen = None
    for _ in range(looks):
        now = versions()
        if now == seen and not matches.due:
            return
        seen = now
        matches.refresh()
    raise AssertionError("the background never came to rest")


def unreviewed() -> list[tuple[int, int]]:
    """Every finished card game with no review kept: (match, game number)."""
    has_review = select(ReviewCard.game_id).distinct()
    query = (
        select(Game.match_id, Game.number)
        .where(Game.id.in_(select(GameResult.game_id)), Game.id.not_in(has_review))
        .order_by(Game.id)
    )
    return [tuple(row) for row in db.session.execute(query)]


def test_after_an_upgrade_every_finished_game_is_reviewed_with_no_other_write(
    app, client, monkeypatch
):
    """Issue 56: an upgrade dropped the kept reviews of a history (three matches, seven
    games). Once a match's last review was stored, the next look found nothing to do in
    it, stored nothing, and no look came again: the rest waited for a table's entry. The
    background now reviews them all, with nothing else written."""
    monkeypatch.setattr(background, "SETTLE", 0)
    ids = add_players(client, "Anna", "Ben")
    for games in (3, 2, 2):
        history = start_match(client, ids, end_kind="games", end_value=games)
        for number in range(games):
            play_game(client, history, ids, random.Random(50 + number))
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        follow_until_still(matches)  # as the version before ran it
        assert unreviewed() == []
        with store.writing():
            game_review.forget(list(db.session.scalars(select(Game.id))))  # the upgrade's
        assert len(unreviewed()) == 7
        follow_until_still(background.Matches(db.engine, os.getppid(), quiet=0))  # a start
        assert unreviewed() == []


def test_after_an_import_of_matches_with_no_games_a_finished_game_is_reviewed(
    app, client, monkeypatch
):
    """Issue 56: matches that came with no games (an import's) are looked at first and
    have nothing to review: the look went no further, and the finished game after them
    waited for some other write."""
    monkeypatch.setattr(background, "SETTLE", 0)
    ids = add_players(client, "Anna", "Ben")
    with app.app_context():
        matches = background.Matches(db.engine, os.getppid(), quiet=0)
        follow_until_still(matches)  # the server runs, nothing to do
        for _ in range(2):
            start_match(client, ids)  # no games
        finished = start_match(client, ids, end_kind="games", end_value=1)
        play_game(client, finished, ids, random.Random(60))
        follow_until_still(matches)
        assert unreviewed() == []
