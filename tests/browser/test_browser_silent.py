"""A dead stream is noticed (issue 31), in Chromium on the real server at a LAN address:
a stream that stays open but goes silent (tests/relay.py) shows *Reconnecting…* once it
has heard nothing for 8/3 of the server's heartbeat (40 s when serving; shortened here);
the page opens a new stream by itself and gets what it missed."""

import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import tokens
from phones import FormPhone, joined
from playwright.sync_api import expect
from relay import Relay
from test_browser_push import database_app, enter_round, shows_step

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# An "alive" event every 1.5 s (15 when serving): the page takes its stream for silent
# after 4 s of nothing (8/3 of it: 40 s when serving), checked every 2 s.
HEARTBEAT = 1.5
NOTICED_WITHIN_MS = 4_000 + 2_000 + 4_000  # and a busy machine's delay
CAUGHT_UP_WITHIN_MS = 60_000  # noticed, then a new stream on a busy machine
SAW_THE_NOTICE = """() => {
  window.sawTheNoticeAt = null;
  const notice = document.getElementById("offline");
  new MutationObserver(() => {
    if (!notice.hidden && window.sawTheNoticeAt === null) window.sawTheNoticeAt = Date.now();
  }).observe(notice, { attributes: true, attributeFilter: ["hidden"] });
  return Date.now();
}"""


def test_a_silent_stream_is_noticed_and_replaced(browser, served, tmp_path):
    _server, port = served(
        COMPANION_LIVE_POLL="null",
        COMPANION_TRUSTED_HOSTS=LAN_HOST,
        COMPANION_LIVE_HEARTBEAT=str(HEARTBEAT),
    )
    relay = Relay(port)
    app = database_app(tmp_path)
    _client, ids, match_id, [sender] = joined(app, f"http://127.0.0.1:{port}", 1, FormPhone)
    context = new_phone_context(browser)
    try:
        phone = context.new_page()
        phone.goto(
            f"http://{LAN_HOST}:{relay.port}/matches/{match_id}/join/{tokens(app, match_id)[0]}"
        )
        expect(phone.locator("#stream")).to_have_attribute("data-stream", "open", timeout=30_000)
        # The notice shows only until the new stream opens: a moment, which a wait for it
        # could miss. The page records that it showed.
        silenced_at = phone.evaluate(SAW_THE_NOTICE)
        assert relay.silence_streams() == 1  # the access point sleeps: open, but silent
        enter_round(sender, match_id, ids, [41, 42, 43])
        # Through a new stream: the poll is off here.
        expect(shows_step(phone, "Cleo", 43)).to_be_visible(timeout=CAUGHT_UP_WITHIN_MS)
        noticed_at = phone.evaluate("window.sawTheNoticeAt")  # it said Reconnecting…
        assert noticed_at is not None and noticed_at - silenced_at <= NOTICED_WITHIN_MS
        expect(phone.locator("#stream")).to_have_attribute("data-stream", "open")
        expect(phone.locator("#offline")).to_be_hidden()
        enter_round(sender, match_id, ids, [44, 45, 46])  # and it goes on
        expect(shows_step(phone, "Cleo", 46)).to_be_visible(timeout=1000)
    finally:
        context.close()
        relay.close()
