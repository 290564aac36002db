"""Explanations: short sentences that settle a dispute at the table."""

from __future__ import annotations

from collections.abc import Callable

from companion.rules.cards import (
    N_,
    NP_,
    PLACED,
    TOO_LOW,
    Gettext,
    Ngettext,
    Player,
    _english_plural,
    _identity,
)
from companion.rules.table import (
    ChoiceNeeded,
    Step,
)


def explain(
    step: Step,
    name: Callable[[Player], str] = str,
    gettext: Gettext = _identity,
    ngettext: Ngettext = _english_plural,
) -> str:
    """Return one sentence saying why ``step`` happened, in the language of ``gettext``."""
    if step.action == TOO_LOW:
        return _explain_too_low(step, name, gettext, ngettext)
    lower = sorted(
        ((end, number) for number, end in enumerate(step.ends, 1) if end < step.card),
        reverse=True,
    )
    closest = lower[0][0]
    if len(lower) > 1:
        reason = gettext(
            N_("%(end)d is the closest lower end (row %(other)d ends in %(other_end)d)")
        ) % {"end": closest, "other": lower[1][1], "other_end": lower[1][0]}
    else:
        reason = gettext(N_("%(end)d is the only lower end")) % {"end": closest}
    if step.action == PLACED:
        return gettext(N_("%(card)d goes to row %(row)d: %(reason)s.")) % {
            "card": step.card,
            "row": step.row,
            "reason": reason,
        }
    return gettext(
        N_(
            "%(card)d would be the 6th card in row %(row)d: %(player)s takes %(cards)s, "
            "%(bulls)s. %(reason)s."
        )
    ) % {
        "card": step.card,
        "row": step.row,
        "reason": reason,
        "player": name(step.player),
        "cards": _count_cards(len(step.taken), ngettext),
        "bulls": _count_bulls(step.bulls, ngettext),
    }


def _explain_too_low(step: Step, name, gettext: Gettext, ngettext: Ngettext) -> str:
    ends = ", ".join(str(end) for end in step.ends)
    return gettext(
        N_(
            "%(card)d is lower than every row's end (%(ends)s): %(player)s chose row "
            "%(row)d and takes %(cards)s, %(bulls)s."
        )
    ) % {
        "card": step.card,
        "ends": ends,
        "player": name(step.player),
        "row": step.row,
        "cards": _count_cards(len(step.taken), ngettext),
        "bulls": _count_bulls(step.bulls, ngettext),
    }


def explain_choice(
    pending: ChoiceNeeded,
    name: Callable[[Player], str] = str,
    gettext: Gettext = _identity,
) -> str:
    """Return the sentence that asks a too-low card's player to choose a row."""
    return gettext(
        N_(
            "%(card)d is lower than every row's end: %(player)s takes a row of their choice "
            "(fewest bulls: row %(suggested)d)."
        )
    ) % {"card": pending.card, "player": name(pending.player), "suggested": pending.suggested}


_CARDS = NP_("%(num)d card", "%(num)d cards")
_BULLS = NP_("%(num)d bull", "%(num)d bulls")


def _count_cards(count: int, ngettext: Ngettext) -> str:
    return ngettext(*_CARDS, count) % {"num": count}


def _count_bulls(count: int, ngettext: Ngettext) -> str:
    return ngettext(*_BULLS, count) % {"num": count}
