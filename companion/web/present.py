"""What a page shows of a round: steps, a row choice and the rows, ready for templates.

Shared by every page that shows a round (the resolver, the match pages). Every fact
comes from ``companion.rules``; this module only names, translates and arranges it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from flask import current_app
from flask_babel import format_decimal, format_number, format_percent, get_locale

from companion import rules
from companion.models import MATCH_TEXTS
from companion.web.i18n import gettext, ngettext

Name = Callable[[rules.Player], str]


class StepView(NamedTuple):
    """One placed card as a page shows it."""

    player: str
    card: int
    card_bulls: int
    row: int
    action: str  # rules.PLACED, rules.SIXTH or rules.TOO_LOW
    taken: tuple[int, ...]
    bulls: int
    text: str  # its explanation ("" in a summary: ``step_views``)
    # A take's chance of happening, when it was improbable (``rules.IMPROBABLE`` or less).
    chance: float | None = None


def with_chances(steps: Sequence[StepView], chances: Mapping[int, float]) -> list[StepView]:
    """The steps with the chance of each improbable take (``chances``: by card)."""
    return [
        step._replace(chance=chances[step.card])
        if step.taken and chances.get(step.card, 1.0) <= rules.IMPROBABLE
        else step
        for step in steps
    ]


def percent(chance: float) -> str:
    """ "4 %", "0.3 %", "<0.1 %": a chance in the page's language, a tenth under 1 %."""
    if chance >= 0.01:
        return format_percent(chance)
    # The locale's own pattern (its space and sign), with a tenth: "0,3 %".
    pattern = _BEFORE_PERCENT.sub("0.#", get_locale().percent_formats[None].pattern, count=1)
    if chance < 0.001:  # drawn sets may miss what happened: never "0 %" for a take
        return "<" + format_percent(0.001, pattern)
    return format_percent(chance, pattern)


_BEFORE_PERCENT = re.compile(r"0(?=\s*%)")


def says_an(number: str) -> bool:
    """True when English says "an" before this number ("an 8% chance", "an 11%", "an
    80%", "an 800"): its first spoken word starts with a vowel (eight, eleven, eighteen).
    The number as written ("8%", "1,100", "0.3%"); "<0.1%" (less than) takes "a"."""
    digits = re.match(r"[\d,]*", number).group().replace(",", "")
    if not digits:
        return False
    value = int(digits)
    while value >= 1000:  # 18,000 is said "eighteen thousand": its first group counts
        value //= 1000
    return value in (11, 18) or str(value).startswith("8")


def chance_words(chance: float) -> str:
    """ "a 4% chance", "an 8% chance": the chance in the page's language, with the
    English article its number needs (both read the same in German and French)."""
    text = percent(chance)
    if says_an(text):
        return gettext("an %(chance)s chance", chance=text)
    return gettext("a %(chance)s chance", chance=text)


def bulls_figure(value: float) -> str:
    """ "9.1": expected bulls in the page's language, to a tenth."""
    return format_decimal(round(value, 1), "#,##0.0")


class OptionView(NamedTuple):
    """A row a too-low card's player may take."""

    row: int
    cards: tuple[int, ...]
    bulls: int
    suggested: bool


class ChoiceView(NamedTuple):
    """A too-low card waiting for its player to take a row."""

    player: str
    card: int
    card_bulls: int
    options: tuple[OptionView, ...]
    suggested: int
    text: str


class RowView(NamedTuple):
    """One row on the table: its cards, their bulls, and what this round did to it."""

    number: int
    cards: tuple[int, ...]
    bulls: int
    changed: bool
    full: bool  # the next card here would be the sixth
    taken_by: tuple[str, ...] = ()  # who took this row this round (rarely two players)
    order: tuple[int, ...] = ()  # per card: its place in the round (1 = placed first), 0 = old


class RoundView(NamedTuple):
    """A placed round at a glance: every card once, lowest first, with what it did."""

    number: int
    steps: list[StepView]  # in the order they happened: placed, 6th card or too low
    order: dict[int, int]  # card -> its place in the round, 1 = the lowest card
    taken: dict[int, tuple[str, ...]]  # row -> the players who took it

    @property
    def changed(self) -> tuple[int, ...]:
        """The rows a card of this round went to."""
        return tuple(sorted({step.row for step in self.steps}))


def step_views(
    steps: Iterable[rules.Step], name: Name = str, explained: bool = True
) -> list[StepView]:
    """Return the steps with names, bulls and, when ``explained``, the explanation in the
    page's language (a round's page, the resolver). The match pages' round summary says
    what each card did in words of its own and leaves the explanations to its "Why?"
    link: without them, a table's render of a round does not translate and format ten
    explanations it never shows (issue 59)."""
    return [
        StepView(
            player=name(step.player),
            card=step.card,
            card_bulls=rules.bulls(step.card),
            row=step.row,
            action=step.action,
            taken=step.taken,
            bulls=step.bulls,
            text=rules.explain(step, name=name, gettext=gettext, ngettext=ngettext)
            if explained
            else "",
        )
        for step in steps
    ]


def choice_view(pending: rules.ChoiceNeeded, name: Name = str) -> ChoiceView:
    """Return a pending row choice with its options and the prompt in the page's language."""
    options = tuple(
        OptionView(option.row, option.cards, option.bulls, option.row == pending.suggested)
        for option in pending.options
    )
    return ChoiceView(
        player=name(pending.player),
        card=pending.card,
        card_bulls=rules.bulls(pending.card),
        options=options,
        suggested=pending.suggested,
        text=rules.explain_choice(pending, name=name, gettext=gettext),
    )


def round_view(number: int, steps: Sequence[StepView]) -> RoundView:
    """Arrange a placed round for its summary: its steps as the engine placed them (a
    row taken after a lower card went to it reads in that order), each card's place
    and who took which row."""
    taken: dict[int, tuple[str, ...]] = {}
    for step in steps:
        if step.taken:
            taken[step.row] = (*taken.get(step.row, ()), step.player)
    return RoundView(
        number=number,
        steps=list(steps),
        order={step.card: place for place, step in enumerate(steps, 1)},
        taken=taken,
    )


def row_views(
    rows: Sequence[Sequence[int]], changed: Iterable[int] = (), shown: RoundView | None = None
) -> list[RowView]:
    """Return the four rows numbered 1-4, with bull totals and the changed ones marked.

    With ``shown`` (the round just placed), each row also says who took it and each
    card when it was placed, so a page can deal the round's cards out one by one.
    """
    changed = set(changed) | set(shown.changed if shown else ())
    taken = shown.taken if shown else {}
    order = shown.order if shown else {}
    return [
        RowView(
            number,
            tuple(row),
            rules.pile_bulls(row),
            number in changed,
            len(row) >= rules.ROW_LIMIT,
            taken.get(number, ()),
            tuple(order.get(card, 0) for card in row),
        )
        for number, row in enumerate(rows, 1)
    ]


def changed_rows(steps: Iterable[rules.Step]) -> tuple[int, ...]:
    """Return the numbers of the rows that the steps placed a card in, in order."""
    return tuple(sorted({step.row for step in steps}))


# The house rules in a few words, for lists and summaries (the scoreboard has sentences).
END_WORDS = {
    rules.MORE_THAN: rules.NP_("ends above %(value)d bull", "ends above %(value)d bulls"),
    rules.AT_LEAST: rules.NP_("ends at %(value)d bull", "ends at %(value)d bulls"),
    rules.GAMES: rules.NP_("ends after %(value)d game", "ends after %(value)d games"),
}


# The house rule in a sentence, for the scoreboard and the match page.
END_SENTENCES = {
    rules.MORE_THAN: rules.NP_(
        "The match ends after the game in which someone has more than %(value)d bull.",
        "The match ends after the game in which someone has more than %(value)d bulls.",
    ),
    rules.AT_LEAST: rules.NP_(
        "The match ends after the game in which someone has %(value)d bull or more.",
        "The match ends after the game in which someone has %(value)d bulls or more.",
    ),
    rules.GAMES: rules.NP_(
        "The match ends after %(value)d game.", "The match ends after %(value)d games."
    ),
}


def end_sentence(end: rules.EndCondition) -> str:
    """ "The match ends after 1 game.": a match's end condition as a sentence."""
    return ngettext(*END_SENTENCES[end.kind], end.value, value=end.value)


def house_rules(end: rules.EndCondition, pro: bool) -> str:
    """ "ends above 66 bulls · pro variant": a match's house rules in a few words."""
    words = ngettext(*END_WORDS[end.kind], end.value, value=end.value)
    if not pro:
        return words
    return words + " · " + gettext("pro variant")


def bull_words(count: int, together: bool = False) -> str:
    """ "1 bull", "5 bulls" in the page's language (a card says it for screen readers);
    ``together``: the number and its noun joined by a no-break space, for a sentence
    that may wrap (French has it already)."""
    words = _bull_words(str(get_locale()), count)
    return _NUMBER_SPACE.sub("\\1\u00a0", words, count=1) if together else words


_NUMBER_SPACE = re.compile(r"^(\d+) ")


@lru_cache(maxsize=64)
def _bull_words(_locale: str, count: int) -> str:
    # Cached per language: a page shows dozens of cards but only five bull values.
    return ngettext("%(num)d bull", "%(num)d bulls", count)


# Templates call these: the _table.html macros take plain rows and build their views.
TEMPLATE_GLOBALS = {
    "match_texts": MATCH_TEXTS,
    "row_views": row_views,
    "bulls": rules.bulls,
    "bull_words": bull_words,
    "percent": percent,
    "says_an": says_an,
    "chance_words": chance_words,
    "bulls_figure": bulls_figure,
}


def field_for(error: rules.RuleError, card: str, row: str | None = None) -> str:
    """The form field a rules message belongs next to: the card of the play it names
    (``card`` formatted with the play's key), the row (``row`` with its number), or the
    whole form."""
    subject = error.subject
    if row is not None and isinstance(subject, tuple) and subject[0] == "row":
        return row.format(subject[1])
    if isinstance(subject, int):
        return card.format(subject)
    return "form"


def players_full() -> str:
    """What a phone is told when the household holds as many players as it may."""
    return gettext(
        "The household has %(cap)s players, as many as it can hold. Delete a player who "
        "never played to make room.",
        cap=format_number(current_app.config["PLAYERS_HELD"]),
    )


def matches_full() -> str:
    """What a phone is told when the household holds as many matches as it may."""
    return gettext(
        "The household has %(cap)s matches, as many as it can hold. Export a backup, "
        "then delete old matches to make room.",
        cap=format_number(current_app.config["MATCHES_HELD"]),
    )
