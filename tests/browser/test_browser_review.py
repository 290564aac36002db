"""The year at our table on a 390x844 phone and a 1920x1080 TV, in three languages: the
headline figures are on the first screen, and screenshots are kept to be looked at; on
paper it takes one or two A4 pages."""

import os
import re
import threading
from pathlib import Path

import pytest
from conftest import make_app, new_phone_context, route_cdn, stop_server
from waitress import create_server
from yearbook import YEAR, kept_household

pytestmark = pytest.mark.browser

SIZES = {"phone": (390, 844), "tv": (1920, 1080)}
LANGUAGES = ("en", "de", "fr")
# Where to keep the screenshots (REVIEW_SHOTS=/some/folder); none are kept without it.
SHOTS = os.environ.get("REVIEW_SHOTS")


@pytest.fixture(scope="module")
def household_server(tmp_path_factory, shared_folder):
    """A server of its own with the household of tests/household/test_review.py."""
    app = make_app(tmp_path_factory.mktemp("review") / "companion.sqlite")
    kept_household(app.test_client(), app, shared_folder)
    server = create_server(app, host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=server.run, name="review-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}"
    stop_server(server, thread)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("size", SIZES)
def test_the_headline_figures_are_on_the_first_screen(browser, household_server, size, lang):
    """Matches, games, evenings, time at the table, and the year's first highlights in view;
    nothing wider than the screen."""
    width, height = SIZES[size]
    headers = {"extra_http_headers": {"Accept-Language": lang}, "locale": lang}
    if size == "phone":
        context = new_phone_context(browser, **headers)
    else:
        context = browser.new_context(viewport={"width": width, "height": height}, **headers)
        route_cdn(context)
    try:
        page = context.new_page()
        page.goto(f"{household_server}/review/{YEAR}")
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            name = f"review-{size}-{width}x{height}-{lang}.png"
            page.screenshot(path=str(Path(SHOTS) / name), full_page=True)
        tiles = page.locator(".tile")
        assert tiles.count() == 4
        for index in range(4):
            box = tiles.nth(index).bounding_box()
            assert box["y"] + box["height"] <= height and box["x"] + box["width"] <= width
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= width
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_review_prints_on_one_or_two_a4_pages(browser, household_server, lang):
    """Chromium's print to PDF (A4, the print styles) of the household's year."""
    headers = {"extra_http_headers": {"Accept-Language": lang}, "locale": lang}
    context = new_phone_context(browser, **headers)
    try:
        page = context.new_page()
        page.goto(f"{household_server}/review/{YEAR}")
        pdf = page.pdf(format="A4", print_background=False)
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            (Path(SHOTS) / f"review-a4-{lang}.pdf").write_bytes(pdf)
        pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
        assert 1 <= pages <= 2, pages
    finally:
        context.close()
