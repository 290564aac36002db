"""One glance per round, in Chromium at 390x844: what just happened and what to enter next
are on the screen without scrolling, for 2, 4 and 6 players, from the first round to the
end of a game; the too-low choice opens in view; cards never wrap; the table view fits."""

import itertools
import random
import re

import pytest
from browsing import (
    IN_VIEW,
    add_players_quickly,
    fits_the_phone,
    in_view,
    new_names,
    play_cards_game,
    start_match,
    started_match,
)
from chromium import LAN_HOST
from conftest import new_phone_context
from driver import deal
from playwright.sync_api import expect
from test_browser_phones import invite_links

pytestmark = pytest.mark.browser

_names = itertools.count(1)
PHONE_HEIGHT = 844


def until(page, condition: str, seconds: float = 2) -> None:
    """Wait until a JavaScript condition holds. Not wait_for_function: its polling
    evaluates strings, which the page's CSP (rightly) refuses."""
    for _ in range(int(seconds * 10)):
        if page.evaluate(condition):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"still not {condition}")


def type_round(page, names: list[str], cards: list[int]) -> None:
    """Type the round the way a player does: digits, Enter to the next field, Enter sends."""
    first = page.get_by_label(names[0], exact=True)
    expect(first).to_be_focused()  # the focus waits in the first empty field
    for card in cards:
        page.keyboard.type(str(card))
        page.keyboard.press("Enter")


def assert_round_at_a_glance(page, number: int) -> None:
    """After a round is placed: its summary, the rows and the next entry, all in view.
    Round 10 too shows its rows (issue 43): under them the game's bulls, then the next
    game's starting cards, a scroll away, their first field waiting."""
    summary = page.locator(".round-summary")
    expect(summary.locator("h2")).to_contain_text(f"Round {number},")
    assert page.evaluate("scrollY") == 0
    assert in_view(summary), summary.bounding_box()
    assert in_view(page.locator(".live-rows .table-rows"))
    if number < 10:
        form = page.locator(".round-form")
        first_field = form.locator("input:not([type=hidden])").first
        expect(first_field).to_be_focused()
        assert in_view(first_field)
        assert in_view(form.locator("button[type=submit]"))
        return
    expect(page.locator(".live-rows + .live-end .game-end")).to_be_visible()
    form = page.locator("#entry form").first
    expect(form.locator("input:not([type=hidden])").first).to_be_focused()
    # A scroll away, whole. Scrolled to and read in one go, again until it holds: the
    # answer to the phone's own post may come after the push that showed the same round,
    # and it puts the page back at its top (as it should: the round first).
    for _ in range(50):
        if form.evaluate(SCROLLED_TO_WHOLE):
            return
        page.wait_for_timeout(100)
    boxes = [
        form.locator(part).first.bounding_box()
        for part in ("input:not([type=hidden])", "button[type=submit]")
    ]
    raise AssertionError(f"the next game's form is not whole on the screen: {boxes}")


SCROLLED_TO_WHOLE = f"""form => {{
  form.scrollIntoView({{ block: "center" }});
  const field = form.querySelector("input:not([type=hidden])");
  return [field, form.querySelector("button[type=submit]")].every({IN_VIEW});
}}"""


# Whether the round's summary comes before the game's end in the page.
SUMMARY_THEN_END = """() => {
  const summary = document.querySelector('.round-summary');
  const end = document.querySelector('.game-end');
  return Boolean(summary && end
    && summary.compareDocumentPosition(end) & Node.DOCUMENT_POSITION_FOLLOWING);
}"""


@pytest.mark.parametrize("players", [2, 4, 6])
def test_a_whole_game_one_screen_per_round(page, console_errors, live_server, artifacts, players):
    """Every round of a game: typed with Enter, placed, seen at once; choices open in view."""
    names = new_names(players, "G")
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    hands, starting = deal(random.Random(players), players)
    for row, card in enumerate(starting, 1):
        page.get_by_label(f"Row {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Start game 1").click()
    choices = 0
    for number in range(1, 11):
        page.get_by_role("heading", name=re.compile(f"round {number} of 10")).wait_for()
        type_round(page, names, [hand[number - 1] for hand in hands])
        while True:
            page.locator(
                f".round-summary h2:has-text('Round {number},'), .row-choice"
            ).first.wait_for()
            choice = page.locator(".row-choice")
            if not choice.count():
                break
            choices += 1
            assert page.evaluate("scrollY") == 0
            assert in_view(choice.locator("h2"))
            for button in choice.locator("button.choice").all():
                assert in_view(button)
            expect(choice.locator("button.choice.is-suggested")).to_have_count(1)
            choice.locator("button.choice.is-suggested").click()
            page.locator(".row-choice").wait_for(state="detached")
        assert_round_at_a_glance(page, number)
        if number in (1, 10):
            page.screenshot(path=artifacts / f"round-{players}p-{number}.png")
    # Round 10 is shown like the others, and the end of the game under it.
    page.locator(".game-end").wait_for()
    # Both read at one moment: a poll may swap the regions between two reads (the luck).
    assert page.evaluate(SUMMARY_THEN_END)
    fits_the_phone(page)
    assert console_errors == []


def test_the_too_low_choice_opens_at_the_top_wherever_the_page_was(page, live_server):
    """A phone scrolled down to type still sees the row choice at the top of the screen."""
    names = new_names(3, "Low")
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    for row, card in enumerate([12, 24, 37, 40], 1):
        page.get_by_label(f"Row {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Start game 1").click()
    page.get_by_role("heading", name=re.compile("round 1 of 10")).wait_for()
    for name, card in zip(names, [39, 44, 3], strict=True):
        page.get_by_label(name, exact=True).fill(str(card))
    page.mouse.wheel(0, 2000)
    until(page, "scrollY > 0")
    page.get_by_role("button", name="Place the cards").click()
    heading = page.locator(".row-choice h2")
    heading.wait_for()
    until(page, "scrollY === 0")  # htmx shows the top of the page right after the swap
    box = heading.bounding_box()
    assert 0 <= box["y"] <= 200, box
    suggested = page.locator("button.choice.is-suggested")
    assert in_view(suggested)
    assert "suggested" in suggested.inner_text()
    assert "1 bull" in suggested.inner_text()
    # One tap chooses: the round is placed, Cleo took the row she tapped.
    suggested.click()
    expect(page.locator(".summary-step").first).to_have_text(
        f"{names[2]} 3: too low, took row 1, 1 bull"
    )


def test_the_too_low_choice_without_javascript(page_nojs, live_server):
    """Without JavaScript each row is a form of its own: one tap takes it."""
    page = page_nojs
    names = new_names(3, "NoJs")
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    for row, card in enumerate([12, 24, 37, 40], 1):
        page.get_by_label(f"Row {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Start game 1").click()
    for name, card in zip(names, [39, 44, 3], strict=True):
        page.get_by_label(name, exact=True).fill(str(card))
    page.get_by_role("button", name="Place the cards").click()
    # The click waits for the new page to commit, not for it to be read in: count() would
    # take the forms parsed so far.
    expect(page.locator(".row-choice form")).to_have_count(4)
    assert in_view(page.locator(".row-choice h2"))
    page.get_by_role("button", name=re.compile(r"^Take row 3\b")).click()
    expect(page.locator(".summary-step").first).to_have_text(
        f"{names[2]} 3: too low, took row 3, 1 bull"
    )
    assert in_view(page.locator(".round-summary"))


def test_a_blank_field_is_an_error_next_to_it(page, live_server):
    """One phone entering for everybody: a forgotten card is named, nothing is stored."""
    names = new_names(3, "Blank")
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    for row, card in enumerate([12, 24, 37, 40], 1):
        page.get_by_label(f"Row {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Start game 1").click()
    page.get_by_label(names[0], exact=True).fill("41")
    page.get_by_label(names[2], exact=True).fill("43")
    page.get_by_role("button", name="Place the cards").click()
    error = page.locator(".field-error")
    expect(error).to_have_text(f"{names[1]}'s card is missing.")
    missing = page.get_by_label(names[1], exact=True)
    expect(missing).to_be_focused()
    assert missing.get_attribute("aria-invalid") == "true"
    assert in_view(error)
    assert page.get_by_label(names[0], exact=True).input_value() == "41"
    assert page.get_by_label(names[2], exact=True).input_value() == "43"
    assert page.locator(".entered .tag").count() == 0  # nothing was stored, not even hidden
    page.reload()  # the server stored nothing; the phone kept what was typed (issue 31)
    expect(page.locator(".entered .tag")).to_have_count(0)
    expect(page.get_by_label(names[0], exact=True)).to_have_value("41")


def test_a_round_is_dealt_out_card_by_card_within_two_seconds(page, live_server):
    """New cards go to their rows one after another, lowest first; all within 2 s."""
    names = new_names(4, "Deal")
    add_players_quickly(page, live_server, names)
    start_match(page, live_server, names)
    for row, card in enumerate([12, 24, 37, 40], 1):
        page.get_by_label(f"Row {row}", exact=True).fill(str(card))
    page.get_by_role("button", name="Start game 1").click()
    type_round(page, names, [13, 25, 38, 41])
    page.locator("#live-table.is-dealing[data-round='1-1']").wait_for()
    timings = page.evaluate("""() => [...document.querySelectorAll('.card.is-new')]
        .map(card => [+card.querySelector('.card-number').textContent,
                      ...card.getAnimations().map(a => a.effect.getComputedTiming())
                         .map(t => t.delay + t.duration)])""")
    assert sorted(card for card, _ in timings) == [13, 25, 38, 41]
    ends = [end for _, end in sorted(timings)]
    assert ends == sorted(ends) and ends[0] < ends[-1]  # lowest card first, one by one
    assert max(ends) <= 2000
    # The rows keep their marks once the cards have landed.
    assert page.locator(".table-row.is-changed").count() == 4


def test_no_animation_on_reload_or_with_reduced_motion(browser, live_server):
    """A page load shows the table as it is; reduced motion never deals cards out."""
    context = new_phone_context(browser, reduced_motion="reduce")
    try:
        page = context.new_page()
        names = new_names(2, "Still")
        add_players_quickly(page, live_server, names)
        start_match(page, live_server, names)
        for row, card in enumerate([12, 24, 37, 40], 1):
            page.get_by_label(f"Row {row}", exact=True).fill(str(card))
        page.get_by_role("button", name="Start game 1").click()
        type_round(page, names, [13, 25])
        # table.js marks the round for dealing out once htmx has settled the swap; before
        # that no page has any animation, reduced motion or not.
        page.locator("#live-table.is-dealing[data-round='1-1']").wait_for()
        assert page.evaluate("document.getAnimations().length") == 0
        page.reload()
        assert page.locator("#live-table.is-dealing").count() == 0
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_cards_100_to_104_never_wrap(browser, live_server, artifacts, lang):
    """Three-digit cards stay on one line in the rows, the steps, the choice and on a TV."""
    phone = new_phone_context(browser)
    try:
        page = phone.new_page()
        names = new_names(5, "Wide")
        add_players_quickly(page, live_server, names)
        start_match(page, live_server, names)
        phone.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
        page.reload()
        for row, card in enumerate([100, 101, 102, 103], 1):
            page.locator(f"#field-row{row}").fill(str(card))
        page.locator("#entry button[type=submit]").first.click()
        page.locator(".round-form").wait_for()
        fields = page.locator(".round-form input:not([type=hidden])").all()
        for field, card in zip(fields, [104, 98, 97, 96, 95], strict=True):
            field.fill(str(card))
        page.locator(".round-form button[type=submit]").click()
        page.locator(".row-choice").wait_for()
        assert_single_line_cards(page)
        page.locator("button.choice").first.click()
        page.locator(".round-summary").wait_for()
        page.locator("a.explain").click()
        page.locator(".round-summary .steps").wait_for()
        assert_single_line_cards(page)
        page.screenshot(path=artifacts / f"cards-100-{lang}.png", full_page=True)
        tv = phone.browser.new_page(viewport={"width": 1280, "height": 720})
        tv.context.add_cookies([{"name": "lang", "value": lang, "url": live_server}])
        tv.goto(page.url.split("#")[0] + "/table")
        assert_single_line_cards(tv)
        tv.close()
    finally:
        phone.close()


def assert_single_line_cards(page) -> None:
    """Every card number on the page is one line high, inside its card."""
    numbers = page.eval_on_selector_all(
        ".card-number",
        """els => els.filter(el => el.offsetParent).map(el => {
            const box = el.getBoundingClientRect(), card = el.parentElement.getBoundingClientRect();
            return [el.textContent, box.height / parseFloat(getComputedStyle(el).fontSize),
                    box.left >= card.left - 1 && box.right <= card.right + 1]; })""",
    )
    assert numbers
    wrapped = [
        (text, lines, inside) for text, lines, inside in numbers if lines > 1.3 or not inside
    ]
    assert wrapped == []


def post_round(page, match_url: str, number: int, cards: dict[int, int]) -> None:
    """One round entered by a plain post (seat number -> card)."""
    html = page.request.get(match_url).text()
    ids = re.findall(r'name="card-(\d+)"', html)
    form = {f"card-{pid}": str(cards[seat]) for seat, pid in enumerate(ids)}
    form.update({"game": "1", "round": str(number)})
    response = page.request.post(f"{match_url}/rounds", form=form, max_redirects=0)
    assert response.status == 303, response.text()


TV_SIZES = [(1280, 720), (1920, 1080), (768, 1024)]


def test_the_table_view_fits_every_screen_with_ten_players(browser, page, live_server, artifacts):
    """Ten players (long names too), rows of five: no scrolling on a TV or a tablet, and
    card numbers at least 48 px tall on a 1080p screen, to be read across the room."""
    names = new_names(10, "Tv")
    names[3] = ("Bartholomäus Maximilian" + names[3])[:30]
    names[7] = ("W" * 30 + names[7])[-30:]
    match_url = started_match(page, live_server, names)
    start = page.request.post(
        f"{match_url}/games",
        form={"row1": "1", "row2": "20", "row3": "40", "row4": "60", "game": "1"},
    )
    assert start.ok
    post_round(page, match_url, 1, dict(enumerate([2, 3, 4, 5, 21, 22, 23, 24, 41, 42])))
    post_round(page, match_url, 2, dict(enumerate([43, 44, 61, 62, 63, 64, 104, 103, 100, 102])))
    for width, height in TV_SIZES:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            tv = context.new_page()
            tv.goto(f"{match_url}/table")
            tv.locator(".tv .table-rows").wait_for()
            size = tv.evaluate("""() => ({width: document.documentElement.scrollWidth,
                height: document.documentElement.scrollHeight})""")
            assert size == {"width": width, "height": height}
            bottom = tv.evaluate("""() => Math.max(...[...document.querySelectorAll('.tv *')]
                .map(el => el.getBoundingClientRect().bottom))""")
            assert bottom <= height
            assert tv.locator(".tv #live-score tbody tr").count() == 10
            assert_single_line_cards(tv)
            if width == 1920:
                heights = tv.eval_on_selector_all(
                    ".row-cards .card-number",
                    "els => els.map(el => el.getBoundingClientRect().height)",
                )
                assert min(heights) >= 48
            tv.screenshot(path=artifacts / f"table-view-{width}x{height}.png")
        finally:
            context.close()


# A push as the event stream applies it: fragments swapped out of band, here the live
# table with a tall block (the game's luck and review, say) added above the entry form.
GROW_ABOVE = """(height) => {
  const grown = document.getElementById("live-table").cloneNode(true);
  grown.querySelectorAll(".grown-by-a-push").forEach((old) => old.remove());
  const block = document.createElement("div");
  block.style.height = height + "px";
  block.className = "grown-by-a-push";
  grown.appendChild(block);
  grown.setAttribute("hx-swap-oob", "true");
  htmx.swap(document.body, grown.outerHTML, { swapStyle: "none" });
}"""


# Chromium's scroll anchoring off, on the root and the body (on the root alone Chromium
# still anchored the page), as WebKit has none.
NO_SCROLL_ANCHORING = """[document.documentElement, document.body].forEach((element) => {
  element.style.overflowAnchor = "none";
})"""


def field_top(field) -> float:
    return field.evaluate("field => field.getBoundingClientRect().top")


def test_a_push_above_the_field_being_typed_in_does_not_move_it(page, lan_server):
    """The next game's starting cards, scrolled to and being typed, stay where they are on
    the screen when the game's luck arrives above them; a page at its top stays there.
    At a home network's address (no secure context), as phones at the table are."""
    names = new_names(2, "Push")
    # Game 1 by plain posts on loopback (Playwright's requests cannot resolve the name
    # that Chromium maps); the phone joins at the LAN address.
    loopback = lan_server.replace(LAN_HOST, "127.0.0.1")
    play_cards_game(page, started_match(page, loopback, names), 1, seed=2)
    player_link, _watch = invite_links(page, lan_server)
    page.goto(player_link)
    match_url = player_link.split("/join/")[0]
    page.goto(match_url)
    assert page.evaluate("isSecureContext") is False
    field = page.locator("#field-row1")
    expect(field).to_be_focused()
    # At the top, a push that grows the table keeps the page at its top.
    page.evaluate("scrollTo(0, 0)")
    until(page, "scrollY === 0")
    page.evaluate(GROW_ABOVE, 50)
    expect(page.locator(".grown-by-a-push")).to_have_count(1)
    assert page.evaluate("scrollY") == 0
    # Scrolled down to the form and typing: the push moves the page, not the field, also
    # where the browser does not anchor the scroll by itself (Safari: no overflow-anchor).
    page.evaluate(NO_SCROLL_ANCHORING)
    form = page.locator("#entry form").first
    form.evaluate("form => form.scrollIntoView({ block: 'center' })")  # whole, not to the edge
    field.focus()
    page.keyboard.type("3")
    until(page, "scrollY > 0")
    before = field_top(field)
    page.evaluate(GROW_ABOVE, 400)
    expect(page.locator(".grown-by-a-push")).to_have_count(1)
    assert abs(field_top(field) - before) < 1
    expect(field).to_be_focused()
    expect(field).to_have_value("3")
    assert in_view(form.locator("button[type=submit]"))
