"""Who may do what on a match: the player or watch link this phone holds (in its
signed session), and the player it said it is ("I am Anna").

A phone holds a match's link token in its session; every request compares it with the
match's current tokens in constant time, so renewing the tokens locks out every phone
that joined with the old ones.
"""

from __future__ import annotations

import hmac

from flask import abort, session

from companion.models import Match

PLAYER = "player"


WATCH = "watch"


LINKS = "links"  # session key: {match id: token}


ME = "me"  # session key: {match id: player id} ("I am Anna")


# session key: {match id: [game, round, {player id: card}]}, the hidden cards this phone
# sent: it shows its own ("Your card: 3 · Change"), and no other phone does, not even one
# that says "I am" that player afterwards. The newest few matches: a table plays one.
SENT = "sent"
KEPT_SENT = 4

# Links a phone keeps, the newest: each is about 60 bytes of its session cookie, and a
# browser silently drops a cookie past 4 KB (after about 80 matches, the phone then lost
# the match it had just started). A household plays a few matches an evening.
KEPT_LINKS = 32


def access(match: Match) -> str | None:
    """What this phone may do on the match: PLAYER, WATCH or None (look only)."""
    return token_level(match, session.get(LINKS, {}).get(str(match.id)))


def token_level(match: Match, token: object) -> str | None:
    """PLAYER or WATCH for the match's current tokens, compared in constant time."""
    return level_for(match.player_token, match.watch_token, token)


def level_for(player_token: str, watch_token: str, token: object) -> str | None:
    """PLAYER or WATCH if ``token`` is one of these two, compared in constant time."""
    if not isinstance(token, str):
        return None
    if hmac.compare_digest(token.encode(), player_token.encode()):
        return PLAYER
    if hmac.compare_digest(token.encode(), watch_token.encode()):
        return WATCH
    return None


def grant(match_id: int, token: str) -> None:
    """Remember on this phone the link it opened (or created) for the match, as its
    newest: past KEPT_LINKS the oldest goes."""
    links = dict(session.get(LINKS, {}))
    links.pop(str(match_id), None)  # opened again: the newest now
    links[str(match_id)] = token
    session[LINKS] = newest(links)
    lasting()


def lasting() -> None:
    """Keep this phone's session across a browser restart: a cookie with an expiry
    (PERMANENT_SESSION_LIFETIME, 31 days from the last link or "I am"), not one that goes
    when the browser closes. Phones close their browsers by themselves (a killed app,
    a low battery), and a match whose every phone lost its link could not go on."""
    session.permanent = True


def newest(kept: dict) -> dict:
    """The last KEPT_LINKS entries of a session's dict, in the order they came."""
    return dict(list(kept.items())[-KEPT_LINKS:])


def require_player(match: Match) -> None:
    """Refuse (403) a write from a phone without the match's player link."""
    if access(match) != PLAYER:
        abort(403)


def me(match_id: int) -> int | None:
    """The player this phone said it is, for entering only their own card."""
    value = session.get(ME, {}).get(str(match_id))
    return value if isinstance(value, int) else None


def follow(old: Match, new: Match) -> None:
    """Give this phone the link of ``new`` (a rematch of ``old``) at the level it holds on
    ``old``, and its "I am" when that player sits in ``new`` too: every phone of the
    table follows the rematch with one tap, and the TV by itself. Once ``new`` has links
    made new, they come from its own invite only: new links lock out the phones that
    followed, and following again must not hand them back."""
    level, held = access(old), access(new)
    if level is None or new.links_renewed_at is not None:
        return
    if held is None or (level == PLAYER and held != PLAYER):
        grant(new.id, new.player_token if level == PLAYER else new.watch_token)
    player = me(old.id)
    if player is not None and me(new.id) is None and player in {s.player_id for s in new.seats}:
        session[ME] = newest({**session.get(ME, {}), str(new.id): player})


def keep_sent(match_id: int, game: int, round_number: int, cards: dict[int, int]) -> None:
    """Remember on this phone the cards it sent for a match's coming round."""
    kept = dict(session.get(SENT, {}))
    earlier = kept.pop(str(match_id), None)
    same_round = isinstance(earlier, list) and earlier[:2] == [game, round_number]
    mine = dict(earlier[2]) if same_round else {}
    mine.update((str(seat), card) for seat, card in cards.items())
    kept[str(match_id)] = [game, round_number, mine]
    session[SENT] = dict(list(kept.items())[-KEPT_SENT:])


def sent(match_id: int, game: int, round_number: int) -> dict[int, int]:
    """The cards this phone sent for the match's round ``round_number`` of ``game``."""
    kept = session.get(SENT, {}).get(str(match_id))
    if not isinstance(kept, list) or len(kept) != 3 or kept[:2] != [game, round_number]:
        return {}
    return {int(seat): card for seat, card in kept[2].items()}
