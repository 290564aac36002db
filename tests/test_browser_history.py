"""History, replay, backup and delete in a phone-sized Chromium: they fit 390px and work."""

import json
import random
import re
from datetime import UTC, datetime, timedelta

import pytest

from companion import rules

pytestmark = pytest.mark.browser

# Ten seats, long names (30 characters at most): the widest replay a household can make.
NAMES = [
    "Hilde",
    "Ole",
    "Pia",
    "Rolf",
    "Smilla",
    "Theo",
    "Ulla",
    "Vito",
    "Wiebke",
    "Xaver-Maximilian Großkopf",
    "Maximiliane-Alexandra Großkopf",
]


def fits_the_phone(page) -> None:
    """No sideways scrolling at 390px."""
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def simulated_game(rng: random.Random, seats: list[str], when: datetime) -> dict:
    """A legal game as a backup holds it; too-low cards take the suggested row."""
    cards = rng.sample(range(1, rules.STANDARD_DECK + 1), 10 * len(seats) + 4)
    starting, hands = cards[:4], [cards[4 + 10 * i : 14 + 10 * i] for i in range(len(seats))]
    table = rules.Table([(card,) for card in starting])
    rounds = []
    for turn in range(rules.HAND_SIZE):
        plays = [(name, hands[seat][turn]) for seat, name in enumerate(seats)]
        table.start_round(plays)
        choices: dict[str, int] = {}
        while (pending := table.run(choices)) is not None:
            choices[pending.player] = pending.suggested
        rounds.append(
            {"cards": [card for _, card in plays], **({"choices": choices} if choices else {})}
        )
    return {"mode": "cards", "created_at": stamp(when), "starting": starting, "rounds": rounds}


def backup_file() -> bytes:
    """Two finished one-game matches from a minute ago: four players, and ten."""
    now = datetime.now(UTC).replace(tzinfo=None) - timedelta(minutes=1)
    rng = random.Random(390)
    four = [NAMES[0], NAMES[1], NAMES[2], NAMES[9]]
    matches = [
        {
            "created_at": stamp(now + timedelta(seconds=index)),
            "end": {"kind": "games", "value": 1},
            "pro": False,
            "seats": seats,
            "games": [simulated_game(rng, seats, now + timedelta(seconds=index))],
        }
        for index, seats in enumerate([four, NAMES[1:]])
    ]
    players = [{"name": name, "archived": False, "created_at": stamp(now)} for name in NAMES]
    return json.dumps(
        {
            "format": "6nimmt-companion",
            "version": 1,
            "exported_at": stamp(now),
            "players": players,
            "matches": matches,
        }
    ).encode()


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
    page.wait_for_function("window.htmx !== undefined")
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
    assert f"{name} was deleted." in page.locator("#history").inner_text()
