"""The per-process caches: kept values, the least recently used dropped, one maker a key."""

import threading
import time

import pytest
from flask import Flask

from companion.memo import Memo


def at_once(app, memo, key) -> bool:
    """True when a new maker of ``key`` runs at once: no turn of a maker left behind."""
    ran = threading.Event()

    def ask():
        with app.app_context():
            memo.alone(key, ran.set)

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    return ran.wait(5)


def test_a_value_is_made_once_and_then_kept():
    memo, app, made = Memo("kept", 2), Flask(__name__), []
    with app.app_context():
        for _ in range(3):
            assert memo.through("a", lambda: made.append("a") or "A") == "A"
        assert made == ["a"]


def test_the_least_recently_used_value_goes_first():
    memo, app = Memo("small", 2), Flask(__name__)
    with app.app_context():
        memo.put("a", 1)
        memo.put("b", 2)
        assert memo.get("a") == 1  # used: "b" is now the oldest
        memo.put("c", 3)
        assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3)


def test_threads_that_ask_for_a_missing_value_at_once_wait_for_one_maker():
    """Six phones of a table asking for a new version make it once, not six times."""
    memo, app = Memo("single", 8), Flask(__name__)
    started, release, made, answers = threading.Event(), threading.Event(), [], []

    def make():
        made.append(threading.current_thread().name)
        started.set()
        release.wait(5)  # the others arrive while this one is still making
        return "state"

    def ask():
        with app.app_context():
            answers.append(memo.through(("match", 7), make))

    first = threading.Thread(target=ask, name="first")
    first.start()
    assert started.wait(5)
    others = [threading.Thread(target=ask, name=f"other-{n}") for n in range(5)]
    for thread in others:
        thread.start()
    release.set()
    for thread in [first, *others]:
        thread.join(5)
    assert made == ["first"]
    assert answers == ["state"] * 6
    assert at_once(app, memo, ("match", 7))


def test_a_maker_that_fails_leaves_the_key_to_the_next_thread():
    memo, app = Memo("failing", 8), Flask(__name__)

    def broken():
        raise LookupError("no such match")

    with app.app_context():
        with pytest.raises(LookupError):
            memo.through("a", broken)
        assert memo.through("a", lambda: "made") == "made"
    assert at_once(app, memo, "a")


def test_each_app_keeps_its_own_values():
    memo, one, two = Memo("apps", 8), Flask("one"), Flask("two")
    with one.app_context():
        memo.put("a", 1)
    with two.app_context():
        assert memo.get("a") is None
        assert memo.through("a", lambda: 2) == 2
    with one.app_context():
        assert memo.get("a") == 1


def test_once_leaves_the_keeping_to_its_maker():
    """A replay asked for as version 7 may show version 8: its maker keeps it there."""
    memo, app = Memo("once", 8), Flask(__name__)
    with app.app_context():
        assert memo.once(7, lambda: memo.put(8, "replay")) == "replay"
        assert (memo.get(7), memo.get(8)) == (None, "replay")
        assert memo.once(8, lambda: "again") == "replay"  # kept: not made again
    assert at_once(app, memo, 7)


def test_a_second_maker_waits_for_the_first_and_then_looks_again():
    """A stale value made again (the year's review): the second thread runs after the
    first, and finds what it made."""
    memo, app = Memo("turns", 8), Flask(__name__)
    started, release, runs = threading.Event(), threading.Event(), []

    def work():
        runs.append(memo.get("review"))
        started.set()
        release.wait(5)
        return memo.put("review", "fresh")

    def ask():
        with app.app_context():
            memo.alone("review", work)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    threads[0].start()
    assert started.wait(5)
    threads[1].start()
    time.sleep(0.2)  # the second asks while the first still works
    release.set()
    for thread in threads:
        thread.join(5)
    assert runs == [None, "fresh"]  # one after the other, the second sees the first's
