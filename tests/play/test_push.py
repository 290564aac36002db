"""Live pushes: a match page's event stream sends each change as it is written, what the
poll would have sent, and goes on from Last-Event-ID after a reconnect."""

import queue
import re
import threading
import time

import pytest
from driver import add_players, enter_round, i_am, phone, start_game, start_match, tokens
from itsdangerous import URLSafeTimedSerializer

from companion import store
from companion.db import db
from companion.models import Match
from companion.play import push
from companion.play.live import CSRF_SLOT

# An "alive" event every 0.1 s: a closed test stream ends at its next one.
BEAT = 0.1
PUSH = pytest.mark.app_config(LIVE_PUSH=True, LIVE_HEARTBEAT=BEAT)
WAIT = 10  # seconds a test waits for an event before it fails
TOKEN = re.compile(r'name="csrf_token" value="([^"]*)"')


class Stream:
    """A stream read by a thread of its own, event by event (comments too)."""

    def __init__(self, client, path: str, address: str = "127.0.0.1", **headers):
        environ = {"REMOTE_ADDR": address}
        self.response = client.get(path, headers=headers, buffered=False, environ_base=environ)
        self.events: queue.Queue = queue.Queue()
        self.stopped = threading.Event()
        self.ended = threading.Event()  # the server ended the stream
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        """Split what arrives into events (blocks separated by a blank line); close the
        stream here, in the thread that runs it, once the test is done with it."""
        pending = ""
        try:
            for chunk in self.response.response:
                if self.stopped.is_set():
                    break
                pending += chunk.decode() if isinstance(chunk, bytes) else chunk
                while "\n\n" in pending:
                    block, pending = pending.split("\n\n", 1)
                    self.events.put(block)
            else:
                self.ended.set()
        finally:
            self.response.close()

    def next(self) -> str:
        """The next event or comment."""
        return self.events.get(timeout=WAIT)

    def next_change(self) -> dict:
        """The next "change" event: its id and data (comments in between are skipped)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            block = self.next()
            if block.startswith("event: change"):
                lines = block.split("\n")
                return {
                    "id": lines[1].removeprefix("id: "),
                    "data": "\n".join(line[6:] for line in lines[2:]),
                }
        raise AssertionError(f"no change within {WAIT} s")

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=WAIT)
        assert not self.thread.is_alive()


def player(app, match_id):
    """Another phone, joined with the match's player link."""
    return phone(app, match_id, tokens(app, match_id)[0])


def versions_of(app, match_id):
    with app.app_context():
        match = db.session.get(Match, match_id)
        return match.version, match.table_version


def test_without_push_the_stream_says_204_and_the_page_polls(client, table):
    _ids, match_id = table
    assert client.get(f"/matches/{match_id}/events").status_code == 204
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert "sse-connect" not in page
    assert 'hx-trigger="every 2s"' in page


@PUSH
def test_a_match_page_opens_its_stream_outside_what_its_entries_replace(client, table):
    _ids, match_id = table
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    version, table_version = versions_of(client.application, match_id)
    stream = re.search(r'<div id="stream"[^>]*>', page).group(0)
    assert 'hx-ext="sse"' in stream
    assert f"/matches/{match_id}/events?since={version}&amp;table={table_version}" in stream
    # After #match closes: a phone's own entry swaps #match, the stream stays open.
    assert page.index('id="stream"') > page.index('id="poll"')
    assert "htmx-ext-sse@" in page
    tv = client.get(f"/matches/{match_id}/table").get_data(as_text=True)
    assert re.search(r'<div id="stream"[^>]*view=table', tv)


@PUSH
def test_a_write_from_another_phone_is_pushed_with_the_live_regions(app, client, table):
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    version, table_version = versions_of(app, match_id)
    path = f"/matches/{match_id}/events?since={version}&table={table_version}"
    stream = Stream(client, path, **{"Accept-Encoding": "br, gzip"})
    try:
        # Never compressed: a compressor would hold each event back until it has enough.
        assert "Content-Encoding" not in stream.response.headers
        assert stream.next() == f"retry: {push.RETRY_MS}"
        other = player(app, match_id)
        assert enter_round(other, match_id, {anna: 41, ben: 42, 3: 43}).status_code == 303
        # Two writes: the round's, then its luck's (issue 42; at once with the test's
        # client). The watcher may see the first alone, then the second, or both at once.
        change = stream.next_change()
        assert re.search(r'id="live-table"[^>]*hx-swap-oob="true"', change["data"])
        assert 'id="live-score" hx-swap-oob="true"' in change["data"]
        new_version, new_table = versions_of(app, match_id)
        assert new_version == version + 2 and new_table == table_version + 1
        if change["id"].split(" ")[0] == str(version + 1):
            # The luck of a round that took no row shows nothing on the table (issue 59):
            # its push is the "Entered:" line and the poller alone.
            change = stream.next_change()
            assert 'id="entered"' in change["data"] and "live-table" not in change["data"]
        assert change["id"].split(" ")[:2] == [str(new_version), str(new_table)]
        assert f"since={new_version}" in change["data"]  # the poller, for a fallback later
    finally:
        stream.close()


@PUSH
def test_each_phone_gets_its_own_token_in_the_forms_of_a_push(app, client, table):
    """The pushed regions are one render for the table: each stream fills its phone's
    token into the slot the forms were given, and sends no slot."""
    (anna, ben, cleo), match_id = table
    version, table_version = versions_of(app, match_id)
    phones = [player(app, match_id) for _ in range(2)]
    for one in phones:
        one.get(f"/matches/{match_id}")  # the page gives the session its token
    path = f"/matches/{match_id}/events?since={version}&table={table_version}"
    streams = [Stream(one, path) for one in phones]
    try:
        for stream in streams:
            assert stream.next() == f"retry: {push.RETRY_MS}"
        enter_round(client, match_id, {anna: 39, ben: 42, cleo: 3})  # Cleo must choose
        for one, stream in zip(phones, streams, strict=True):
            data = stream.next_change()["data"]
            assert "Take row 1" in data and CSRF_SLOT not in data
            [token] = set(TOKEN.findall(data))
            assert unsigned(app, token) == session_token(one)
    finally:
        for stream in streams:
            stream.close()


def unsigned(app, token: str) -> str:
    """The session's raw token that a form's token was signed from (as Flask-WTF does)."""
    return URLSafeTimedSerializer(app.config["SECRET_KEY"], salt="wtf-csrf-token").loads(token)


def session_token(client) -> str:
    """The raw CSRF token in this phone's session."""
    with client.session_transaction() as session:
        return session["csrf_token"]


@PUSH
def test_a_reconnect_goes_on_from_the_last_event_id(app, client, table):
    """EventSource sends back the last id: what changed since then comes at once, and
    nothing is sent again when nothing did."""
    (anna, ben, cleo), match_id = table
    i_am(client, match_id, anna)
    version, table_version = versions_of(app, match_id)
    first = Stream(client, f"/matches/{match_id}/events?since={version}&table={table_version}")
    try:
        assert enter_round(client, match_id, {ben: 42}).status_code == 303
        last_id = first.next_change()["id"]
    finally:
        first.close()
    enter_round(client, match_id, {cleo: 43})  # while the stream was away
    # The page's own URL is stale now; Last-Event-ID says what it shows.
    again = Stream(
        client,
        f"/matches/{match_id}/events?since={version}&table={table_version}",
        **{"Last-Event-ID": last_id},
    )
    try:
        change = again.next_change()
        assert change["id"].split(" ")[0] == str(versions_of(app, match_id)[0])
        # The same table version as the last event: the "Entered:" line alone.
        assert '<p class="entered" id="entered" hx-swap-oob="true">' in change["data"]
        assert 'id="live-table"' not in change["data"]
    finally:
        again.close()


@PUSH
def test_the_entry_form_comes_only_when_what_the_phone_can_enter_changed(app, client, table):
    """... and in an event of its own after the regions (issue 59): the round placed
    reaches the phone before its form for the next one is rendered; each event's id
    says the form the phone then shows, and the second's poller polls for the new one."""
    (anna, ben, cleo), match_id = table
    i_am(client, match_id, anna)
    version, table_version = versions_of(app, match_id)
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    form_key = re.search(r'id="entry" data-form-key="([^"]+)"', page).group(1)
    stream = Stream(
        client,
        f"/matches/{match_id}/events?since={version}&table={table_version}&form={form_key}",
    )
    try:
        other = player(app, match_id)
        i_am(other, match_id, ben)
        assert enter_round(other, match_id, {ben: 42}).status_code == 303
        assert 'id="entry"' not in stream.next_change()["data"]  # Anna still types hers
        assert enter_round(other, match_id, {anna: 41, cleo: 43}).status_code == 303
        placed = stream.next_change()  # the round is placed
        assert 'id="live-table"' in placed["data"] and 'id="entry"' not in placed["data"]
        assert placed["id"].split(" ")[2] == form_key and f"form={form_key}" in placed["data"]
        forms = stream.next_change()
        assert forms["id"].split(" ")[:2] == placed["id"].split(" ")[:2]  # the same version
        new_key = re.search(r'id="entry" data-form-key="([^"]+)"', forms["data"]).group(1)
        assert new_key != form_key and forms["id"].split(" ")[2] == new_key
        assert "live-table" not in forms["data"] and f"form={new_key}" in forms["data"]
    finally:
        stream.close()


@PUSH
def test_a_quiet_stream_sends_an_event_to_stay_open(app, client, table):
    _ids, match_id = table
    version, table_version = versions_of(app, match_id)
    stream = Stream(client, f"/matches/{match_id}/events?since={version}&table={table_version}")
    try:
        assert stream.next().startswith("retry:")
        # every LIVE_HEARTBEAT seconds (15 when serving): an event, which the page hears
        assert stream.next() == "event: alive\ndata: "
    finally:
        stream.close()


@PUSH
@pytest.mark.parametrize(
    "since, last_id",
    [
        ("²", None),
        ("\u0661", None),  # an Arabic-Indic one
        ("9" * 5000, None),
        (None, f"{'9' * 5000} x x"),
        (None, "² ³ x"),
    ],
)
def test_a_version_that_is_no_number_gets_the_whole_match(app, client, table, since, last_id):
    """The finding: "²" passed isdigit() and int() failed, in the stream. A version is
    ASCII digits with a bound, as ids are; any other is a page that shows nothing yet."""
    _ids, match_id = table
    path = f"/matches/{match_id}/events" + (f"?since={since}" if since else "")
    stream = Stream(client, path, **({"Last-Event-ID": last_id} if last_id else {}))
    try:
        assert stream.response.status_code == 200
        assert stream.next().startswith("retry:")
        assert 'id="live-table"' in stream.next_change()["data"]
    finally:
        stream.close()


@PUSH
def test_a_new_game_started_elsewhere_is_pushed(app, client):
    """Starting cards, not only rounds: any write that moves the version."""
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids)
    version, table_version = versions_of(app, match_id)
    stream = Stream(client, f"/matches/{match_id}/events?since={version}&table={table_version}")
    try:
        assert start_game(player(app, match_id), match_id, [12, 24, 37, 40]).status_code == 303
        assert 'id="live-table"' in stream.next_change()["data"]
    finally:
        stream.close()


@PUSH
def test_a_stream_of_a_match_that_does_not_exist_is_404_and_leaves_nothing_watched(app, client):
    assert client.get("/matches/999/events").status_code == 404
    feed = app.extensions["companion.feed"]
    assert feed.watches == {} and feed.by_client == {}
    assert feed.watcher is None  # no thread following the database for it


@PUSH
def test_a_stream_is_counted_before_its_answer_starts_and_forgotten_when_it_closes(
    app, client, table, monkeypatch
):
    """Issue 42: the stream's one read of the match is the feed's, before the answer
    starts (a 404 can still be said); a second phone of a watched match reads nothing,
    and the server's closing of an answer ends its stream."""
    _ids, match_id = table
    feed = push.stamp_feed(app)
    reads: list[int] = []
    read_one = feed.read_one
    monkeypatch.setattr(feed, "read_one", lambda ident: reads.append(ident) or read_one(ident))
    version, table_version = versions_of(app, match_id)
    path = f"/matches/{match_id}/events?since={version}&table={table_version}"
    first = opened(client, path, "192.168.1.7")
    second = opened(client, path, "192.168.1.8")
    try:
        assert reads == [match_id]
        assert len(feed.watches[match_id].streams) == 2
    finally:
        first.close()
        second.close()
    assert feed.watches == {} and feed.by_client == {}


@pytest.mark.app_config(
    LIVE_PUSH=True, LIVE_HEARTBEAT=BEAT, STREAMS_PER_CLIENT=2, STREAMS_PER_MATCH=4
)
def test_past_the_bounds_the_oldest_stream_closes_and_the_others_get_every_change(
    app, client, table
):
    """A client address holds 2 streams of a match here (20 when serving), a match 4:
    a new stream is never refused; the oldest it shares a bound with ends, and its
    phone reconnects. Another phone's stream is not touched by one address's flood."""
    (anna, ben, _cleo), match_id = table
    i_am(client, match_id, anna)
    version, table_version = versions_of(app, match_id)
    path = f"/matches/{match_id}/events?since={version}&table={table_version}"
    other, flood, later = opened(client, path, "192.168.1.7"), [], []  # another phone
    try:
        flood += [opened(client, path, "192.168.1.66") for _ in range(3)]
        assert flood[0].ended.wait(WAIT)  # the oldest of its address
        assert flood[0].events.queue[-1] == f"retry: {push.CLOSED_RETRY_MS}"  # polls meanwhile
        assert not flood[1].ended.is_set() and not other.ended.is_set()
        later += [opened(client, path, f"192.168.1.{n}") for n in (8, 9)]
        # 5 streams for 4 places: the oldest of the match, the other phone's, ends
        assert other.ended.wait(WAIT)
        enter_round(client, match_id, {ben: 42})
        for stream in [*flood[1:], *later]:
            assert stream.next_change()["id"].split()[0] == str(version + 1)
            assert not stream.ended.is_set()
    finally:
        for stream in [other, *flood, *later]:
            stream.close()


def opened(client, path: str, address: str) -> Stream:
    """A stream from ``address``, once the server holds it open (its first event)."""
    stream = Stream(client, path, address=address)
    assert stream.next().startswith("retry:")
    return stream


@pytest.mark.app_config(LIVE_PUSH=True, LIVE_HEARTBEAT=BEAT, STREAMS_PER_ADDRESS=3)
def test_past_the_address_bound_over_many_matches_the_oldest_stream_closes(app, client):
    """Issue 42: 8,300 streams spread over many matches from one address starved every
    other phone; the bound was per match only. An address holds 3 here (60 serving) over
    every match: the oldest of that address ends, another phone's stream does not."""
    ids = add_players(client, "Anna", "Ben")
    matches = [start_match(client, ids) for _ in range(5)]
    paths = []
    for match_id in matches:
        version, table_version = versions_of(app, match_id)
        paths.append(f"/matches/{match_id}/events?since={version}&table={table_version}")
    other = opened(client, paths[0], "192.168.1.7")
    flood = []
    try:
        flood += [opened(client, path, "192.168.1.66") for path in paths[:3]]
        assert not any(stream.ended.is_set() for stream in flood)
        flood += [opened(client, path, "192.168.1.66") for path in paths[3:]]
        assert flood[0].ended.wait(WAIT) and flood[1].ended.wait(WAIT)  # the two oldest
        assert flood[0].events.queue[-1] == f"retry: {push.CLOSED_RETRY_MS}"
        assert not any(stream.ended.is_set() for stream in flood[2:])
        assert not other.ended.is_set()
        feed = app.extensions["companion.feed"]
        assert len(feed.by_client["192.168.1.66"]) == 3
    finally:
        for stream in [other, *flood]:
            stream.close()


def change_at(stream: Stream, version: int) -> dict:
    """The first change that brings ``version`` or a later one."""
    while int((change := stream.next_change())["id"].split(" ")[0]) < version:
        pass
    return change


def luck(app, match_id) -> None:
    """The round's luck, as the background process writes it."""
    with app.app_context():
        store.luck_after(match_id)


@pytest.mark.app_config(LIVE_PUSH=True, LIVE_HEARTBEAT=BEAT, LUCK_APART=True)
def test_a_rounds_luck_that_says_a_chance_is_pushed_as_the_news_alone(app, client):
    """Issue 59: a stream knows the inputs its phone shows. The luck of a round of the
    open game changes nothing of them; what it shows is the chance said in the round's
    summary, so the phone gets the news above the rows and its "Entered:" line, not the
    rows and the score rendered again: Anna's 15 took row 1 with a 1 % chance."""
    anna, ben = add_players(client, "Anna", "Ben")
    match_id = start_match(client, [anna, ben])
    assert start_game(client, match_id, [10, 50, 70, 90]).status_code == 303
    other = player(app, match_id)
    for cards in ([11, 51], [12, 52], [13, 53]):
        assert enter_round(other, match_id, {anna: cards[0], ben: cards[1]}).status_code == 303
        luck(app, match_id)
    i_am(client, match_id, anna)
    version, table_version = versions_of(app, match_id)
    stream = Stream(client, f"/matches/{match_id}/events?since={version}&table={table_version}")
    try:
        assert enter_round(other, match_id, {anna: 15, ben: 14}).status_code == 303
        placed = change_at(stream, version + 1)["data"]
        assert 'id="live-table"' in placed and 'id="live-score"' in placed
        assert "chance" not in placed  # its luck is not figured yet
        luck(app, match_id)
        news = change_at(stream, version + 2)
        assert news["id"].split(" ")[:2] == [str(version + 2), str(table_version + 2)]
        assert re.search(r'<div class="live-news" id="live-news" hx-swap-oob="true">', news["data"])
        assert "— a 1% chance" in news["data"] and 'id="entered"' in news["data"]
        assert "live-table" not in news["data"] and "live-score" not in news["data"]
    finally:
        stream.close()
    # A phone that polls, or reconnects, knows no inputs: every region, the chance within.
    status_page = client.get(
        f"/matches/{match_id}/live?since={version}&table={table_version}",
        headers={"HX-Request": "true"},
    ).get_data(as_text=True)
    assert 'id="live-table"' in status_page and "— a 1% chance" in status_page
