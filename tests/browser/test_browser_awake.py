"""The screen stays on over plain http (issue 31), in Chromium on the real server at a LAN
address, where there is no Wake Lock API: the page plays a video that meets blink's own
conditions for holding the screen (VideoWakeLock: playing, with frames, on a visible
page, more than 75 % of it in view, a live stream), and stops once the match is over."""

import pytest
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import add_players, score_game, start_match, tokens
from playwright.sync_api import expect
from test_browser_push import database_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# What blink's VideoWakeLock::ShouldBeActive asks of a video, read in the page.
CONDITIONS = """() => {
  const video = document.querySelector("video[data-keep-awake-video]");
  if (!video) return null;
  const box = video.getBoundingClientRect();
  const seen = Math.max(0, Math.min(box.right, innerWidth) - Math.max(box.left, 0)) *
    Math.max(0, Math.min(box.bottom, innerHeight) - Math.max(box.top, 0));
  return {
    playing: !video.paused && !video.ended,
    frames: video.readyState >= 2 && video.videoWidth > 0,
    live: video.srcObject instanceof MediaStream && video.srcObject.getVideoTracks().length === 1,
    inView: seen / (box.width * box.height),
    pageVisible: document.visibilityState === "visible",
    muted: video.muted,
    tiny: box.width * box.height <= 4,
  };
}"""


def test_a_phone_over_plain_http_keeps_its_screen_on_until_the_match_is_over(
    browser, served, tmp_path
):
    _server, port = served(COMPANION_TRUSTED_HOSTS=LAN_HOST)
    app = database_app(tmp_path)
    client = app.test_client()
    ids = add_players(client, "Anna", "Ben")
    match_id = start_match(client, ids, end_kind="games", end_value=1)
    context = new_phone_context(browser)
    try:
        phone = context.new_page()
        phone.goto(f"http://{LAN_HOST}:{port}/matches/{match_id}/join/{tokens(app, match_id)[0]}")
        assert phone.evaluate("[window.isSecureContext, 'wakeLock' in navigator]") == [False, False]
        phone.get_by_label("Row 1", exact=True).click()  # the player's first tap
        expect(phone.locator("video[data-keep-awake-video]")).to_have_count(1)
        phone.wait_for_function(f"(({CONDITIONS})() || {{}}).playing === true")
        conditions = phone.evaluate(CONDITIONS)
        assert conditions == {
            "playing": True,
            "frames": True,
            "live": True,
            "inView": 1,
            "pageVisible": True,
            "muted": True,
            "tiny": True,
        }
        # The match ends (game 1 of 1 typed in): the screen may sleep again.
        assert score_game(client, match_id, dict.fromkeys(ids, 0)).status_code == 303
        expect(phone.locator("#over-heading")).to_be_visible()
        expect(phone.locator("video[data-keep-awake-video]")).to_have_count(0)
    finally:
        context.close()
