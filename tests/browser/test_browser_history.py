"""History, replay, backup and delete in a phone-sized Chromium: they fit 390px and work."""

import re

import pytest
from backups import backup_file
from browsing import fits_the_phone, htmx_started
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def import_backup(page, live_server, artifacts) -> None:
    """Upload a backup through the backup page (new matches each time: started now)."""
    page.goto(f"{live_server}/backup")
    page.get_by_label("Backup file").set_input_files(
        files=[{"name": "backup.json", "mimeType": "application/json", "buffer": backup_file()}]
    )
    page.get_by_role("button", name="Import").click()
    page.get_by_role("heading", name="Import finished").wait_for()
    fits_the_phone(page)
    page.screenshot(path=artifacts / "backup.png", full_page=True)


def test_history_and_a_replay_round_by_round(page, console_errors, live_server, artifacts):
    """Import, open the history, replay the ten-player game through all ten rounds."""
    import_backup(page, live_server, artifacts)
    page.locator(".site-menu summary").click()  # the site's pages are behind the menu
    page.get_by_role("link", name="History").click()
    page.get_by_role("heading", name="History", exact=True).wait_for()
    fits_the_phone(page)
    page.screenshot(path=artifacts / "history.png", full_page=True)

    page.locator(".history-entry", has_text="Wiebke").first.get_by_role("link").click()
    page.get_by_role("heading", name=re.compile(r"^Scoreboard")).wait_for()
    fits_the_phone(page)
    page.screenshot(path=artifacts / "scoreboard-replay-links.png", full_page=True)
    page.get_by_role("link", name="Game 1", exact=True).click()
    page.get_by_role("heading", name="Round 1 of 10").wait_for()
    htmx_started(page)
    fits_the_phone(page)
    page.screenshot(path=artifacts / "replay-round-1.png", full_page=True)

    shot = False
    for number in range(2, 11):
        page.get_by_role("link", name=f"Round {number} →").first.click()
        page.get_by_role("heading", name=f"Round {number} of 10").wait_for()
        assert page.url.endswith(f"?round={number}")  # htmx pushed the round's own URL
        assert page.locator(".step").count() == 10
        fits_the_phone(page)
        if not shot and page.locator(".step-sixth, .step-too_low").count():
            page.screenshot(path=artifacts / "replay-taking.png", full_page=True)
            shot = True
    assert page.get_by_role("link", name="Round 11 →").count() == 0
    page.screenshot(path=artifacts / "replay-round-10.png", full_page=True)
    page.go_back()
    page.get_by_role("heading", name="Round 9 of 10").wait_for()
    assert console_errors == []


def test_replay_and_history_in_german(page, live_server, artifacts):
    """German words are longer: the replay still fits."""
    import_backup(page, live_server, artifacts)
    page.context.set_extra_http_headers({"Accept-Language": "de"})
    page.goto(f"{live_server}/history")
    assert page.locator("html").get_attribute("lang") == "de"
    fits_the_phone(page)
    link = page.locator("a[href$='/scoreboard']").first.get_attribute("href")
    page.goto(f"{live_server}{link.replace('/scoreboard', '/games/1/replay')}?round=4")
    fits_the_phone(page)
    page.screenshot(path=artifacts / "replay-de.png", full_page=True)


def test_delete_a_finished_match_without_javascript(page_nojs, live_server, artifacts):
    """Scoreboard, Delete…, confirm: a plain form and a redirect to the history."""
    page = page_nojs
    import_backup(page, live_server, artifacts)  # the import form needs no JavaScript either
    page.goto(f"{live_server}/history")
    entry = page.locator(".history-entry", has_text="Hilde, Ole, Pia").first
    name = entry.get_by_role("link").inner_text()
    entry.get_by_role("link").click()
    page.get_by_role("link", name="Delete match…").click()
    page.get_by_role("heading", name=f"Delete {name.lower()}?").wait_for()
    fits_the_phone(page)
    page.screenshot(path=artifacts / "delete-confirm.png", full_page=True)
    page.get_by_role("button", name="Yes, delete the match").click()
    page.get_by_role("heading", name="History", exact=True).wait_for()
    # The notice follows the heading: a page read in up to the heading may not have it yet.
    expect(page.locator("#history")).to_contain_text(f"{name} was deleted.", use_inner_text=True)
