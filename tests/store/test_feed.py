"""The change feed (companion.storage.feed): one watcher per process follows the database for
the streams' matches, stops with the last stream and starts with the next."""

import time

import pytest
from driver import enter_round, i_am

from companion.db import db
from companion.models import Match
from companion.storage import sqlite as sqlite_storage
from companion.storage.feed import feed_of

WAIT = 10  # seconds a change may take before the test fails


def version_of(app, match_id) -> int:
    with app.app_context():
        return db.session.get(Match, match_id).version


def until(condition) -> None:
    """Wait for ``condition()`` (a state the watcher reaches by itself), at most WAIT s."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_write_wakes_the_watch_of_its_match(app, client, table):
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    feed = feed_of(app)
    with feed.watching(match_id) as watch:
        version = watch.stamp[0]
        assert watch.changed(version, timeout=0.05)[0] == version  # nothing yet
        enter_round(client, match_id, {ben: 42})
        assert watch.changed(version, timeout=WAIT)[0] == version + 1


def test_the_watcher_stops_with_the_last_stream_and_starts_with_the_next(app, client, table):
    (anna, _ben, cleo), match_id = table
    i_am(client, match_id, anna)
    feed = feed_of(app)
    with feed.watching(match_id):
        assert feed.watcher is not None
    until(lambda: feed.watcher is None)
    assert feed.watches == {}
    with feed.watching(match_id) as watch:
        version = watch.stamp[0]
        enter_round(client, match_id, {cleo: 43})
        assert watch.changed(version, timeout=WAIT)[0] == version + 1


def test_a_second_stream_of_a_watched_match_reads_nothing_and_sees_each_change(
    app, client, table, monkeypatch
):
    """The watcher keeps a watched match's stamp: a phone joining the table's streams
    costs no read (issue 42: a flood of stream openings), and misses no change."""
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    feed = feed_of(app)
    with feed.watching(match_id) as first:
        reads: list[int] = []
        read_one = feed.read_one
        monkeypatch.setattr(feed, "read_one", lambda ident: reads.append(ident) or read_one(ident))
        with feed.watching(match_id) as second:
            assert reads == [] and second.stamp == first.stamp
            version = second.stamp[0]
            enter_round(client, match_id, {ben: 42})
            assert second.changed(version, timeout=WAIT)[0] == version + 1
        with feed.watching(match_id + 1000) as gone:  # a match nobody watches is read
            assert reads == [match_id + 1000] and gone.stamp is None


def test_a_write_of_this_process_wakes_its_watcher_at_once(app, client, table, monkeypatch):
    """The watcher looks at the database a few times a second (issue 59: 50 looks a
    second were a fifth of a Pi Zero's share idle): a round this process stored wakes
    it at once, so its streams carry it without waiting for the next look."""
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    feed = feed_of(app)
    with feed.watching(match_id):
        nudges: list[bool] = []
        monkeypatch.setattr(feed, "nudge", lambda: nudges.append(True))
        enter_round(client, match_id, {ben: 42})
        assert nudges


def test_a_nudge_ends_the_watchers_pause(app):
    feed = feed_of(app)
    feed.nudge()
    feed.pause(WAIT)  # returns at once: the nudge came first
    assert not feed.woken.is_set()  # the next pause waits again


@pytest.mark.sqlite_only("SQLite's data_version is looked at; PostgreSQL's NOTIFY is heard")
@pytest.mark.parametrize(
    ("workers", "every"),
    [
        (None, sqlite_storage.SQLITE_EVERY),
        (2, sqlite_storage.SQLITE_EVERY),
        (1, sqlite_storage.SQLITE_EVERY_ALONE),
    ],
)
def test_a_lone_workers_watcher_looks_less_often(app, client, table, monkeypatch, workers, every):
    """A server of one worker writes every round in that worker, which wakes its watcher
    at once; only the background's luck (or an import) comes from another process. Its
    watcher looks four times a second, not twenty: each look woke the worker for about
    a quarter of a millisecond, 5.5 ms a second idle with a stream open (issue 59).
    Several workers write each other's rounds: theirs look as before."""
    (anna, ben, _cleo), match_id = table
    if workers is not None:
        app.config["WORKERS"] = workers
    i_am(client, match_id, anna)
    feed = feed_of(app)
    paused: list[float] = []
    pause = feed.pause
    monkeypatch.setattr(feed, "pause", lambda seconds: paused.append(seconds) or pause(0.001))
    with feed.watching(match_id) as stream:
        version = stream.stamp[0]
        enter_round(client, match_id, {ben: 42})
        assert stream.changed(version, timeout=WAIT)[0] == version + 1
        until(lambda: paused)
    assert set(paused) == {every}
