"""Player and watch links: who may enter cards on a match, who may only look, and invites.

A phone holds a match's link token in its (signed) session; every request compares it
with the match's current tokens in constant time, so renewing the tokens locks out
every phone that joined with the old ones.
"""

from __future__ import annotations

import functools
import os
from typing import NamedTuple
from urllib.parse import urlsplit

import click
import qrcode
import qrcode.image.svg
from flask import abort, current_app, redirect, request, session, url_for
from flask.cli import with_appcontext
from markupsafe import Markup
from sqlalchemy import update

from companion.db import db
from companion.models import MAX_ID, Match, new_token, utcnow
from companion.rules import whole_number
from companion.state import MatchState
from companion.store import Change, write_match
from companion.web.access import (
    ME,
    PLAYER,
    access,
    grant,
    lasting,
    newest,
    require_player,
    token_level,
)
from companion.web.headers import no_store
from companion.web.htmx import render
from companion.web.network import configured_base, loopback_only, print_qr
from companion.web.tls import scheme


@no_store
def join(match_id: int, token: str):
    """Open a player or watch link: this phone remembers it and shows the match."""
    match = db.get_or_404(Match, match_id)
    if token_level(match, token) is None:
        abort(404)
    grant(match.id, token)
    return redirect(url_for("play.show", match_id=match.id), 303)


@no_store
def invite(match_id: int):
    """QR codes and short links for other phones: the player link only for players."""
    match = db.get_or_404(Match, match_id)
    level = access(match)
    if level is None:
        abort(403)
    return render(
        "links/invite.html",
        "invite",
        match=match,
        level=level,
        player=invite_link(match, match.player_token) if level == PLAYER else None,
        watch=invite_link(match, match.watch_token),
        loopback_only=loopback_only(current_app.config),
    )


def renew(match_id: int):
    """Give the match new links; phones that joined with the old ones are locked out."""
    tokens = new_token(), new_token()

    def check(state: MatchState) -> Change:
        require_player(state.match)  # checked again if another phone renewed meanwhile
        player, watch = tokens
        new_links = update(Match).where(Match.id == match_id)
        new_links = new_links.values(player_token=player, watch_token=watch)
        return Change(statements=[new_links.values(links_renewed_at=utcnow())])

    write_match(match_id, check)  # raises the version: the shared replays hold the tokens
    grant(match_id, tokens[0])
    return redirect(url_for("play.invite", match_id=match_id), 303)


def choose_me(match_id: int):
    """Remember which player this phone belongs to ("I am Anna"), or forget it.

    Only the phone's session changes: the match is read without the write lock, so six
    phones saying who they are do not queue behind the tables' writes.
    """
    match = db.get_or_404(Match, match_id)
    player_id = whole_number(request.form.get("player", ""), 1, MAX_ID)
    ids = {seat.player_id for seat in match.seats}
    mine = dict(session.get(ME, {}))
    mine.pop(str(match.id), None)
    if player_id in ids:
        mine[str(match.id)] = player_id  # the newest: the oldest go past KEPT_LINKS
    session[ME] = newest(mine)
    lasting()
    return redirect(url_for("play.show", match_id=match.id), 303)


@click.command("invite")
@click.argument("match_id")
@with_appcontext
def invite_command(match_id: str) -> None:
    """Print a match's player link and its QR code, for when every phone lost it."""
    # As the pages read it: ASCII digits (int() takes "٣" too), within the database's integer.
    number = whole_number(match_id, 1, MAX_ID)
    match = db.session.get(Match, number) if number else None
    if match is None:
        raise click.ClickException(f"There is no match {match_id}.")
    port = os.environ.get("COMPANION_PORT", "8000")
    base = configured_base(current_app.config, scheme(current_app.config), "", port)
    with current_app.test_request_context():
        url = base + url_for("play.join", match_id=match.id, token=match.player_token)
    click.echo(f"The player link of match {match.id}: open it on a phone to enter cards.")
    click.echo(url)
    print_qr(url)


class Invite:
    """A link to share: its address and the QR code that carries it."""

    def __init__(self, url: str):
        self.url = url
        self.qr = qr_svg(url)


class TableJoin(NamedTuple):
    """What the TV shows before the first game, for phones to join from the sofa."""

    address: str  # the match's page, short enough to type (no scheme, no token)
    qr: Markup | None  # the watch link when the TV holds one, else the address


def table_join(match: Match) -> TableJoin:
    """The TV's invite before the first game. Never the player link, even on a TV that
    holds it: a TV shows it to the whole room and to everyone who opens the table view,
    and the player link (it enters cards) is shared from a player's phone, whose holder
    chooses whom to show it. The watch link only on a TV that holds a link, as the
    invite page shows it only to a phone that holds one; else the match's address."""
    page = public_base_url() + url_for("play.show", match_id=match.id)
    scanned = invite_link(match, match.watch_token).url if access(match) else page
    return TableJoin(page.split("://", 1)[-1], qr_svg(scanned))


def invite_link(match: Match, token: str) -> Invite:
    """The join link for a token, at an address other phones can reach."""
    path = url_for("play.join", match_id=match.id, token=token)
    return Invite(public_base_url() + path)


def public_base_url() -> str:
    """Where phones reach this server: the configured PUBLIC_URL, else the address this
    request came to. Never localhost: a phone scanning "127.0.0.1" would ask itself."""
    parts = urlsplit(request.host_url)
    return configured_base(current_app.config, parts.scheme, parts.hostname or "", parts.port)


@functools.lru_cache(maxsize=64)
def qr_svg(url: str) -> Markup | None:
    """The URL as an inline SVG QR code (paths and attributes only: CSP-safe), or None
    when it holds more than the largest QR code can (version 40).

    Kept for the last links drawn: every push to a TV renders its page again, and a code
    takes milliseconds to draw where reading it back takes none.
    """
    try:
        image = qrcode.make(url, image_factory=qrcode.image.svg.SvgPathImage, border=2)
    except ValueError:  # qrcode's "Invalid version (was 41, expected 1 to 40)"
        return None
    svg = image.to_string(encoding="unicode")
    return Markup(svg.replace("<svg ", '<svg class="qr" role="img" aria-hidden="true" ', 1))
