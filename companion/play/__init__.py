"""A match at the table: setting it up, its pages, entering cards and row choices,
undo, corrections, player and watch links, live pushes and polls, and the table view.

One blueprint, ``play``, made here with every route it has: the table below is the
whole list of a match's URLs, each with the view that answers it. The views are plain
functions of the modules named; none of them adds a route of its own.
"""

from flask import Blueprint, Flask

from companion.models import MATCH_TEXTS
from companion.play import (
    correct,
    entry,
    fields,
    home,
    links,
    live,
    luck_report,
    match_pages,
    push,
    review_page,
    review_report,
    setup,
    undo,
)

bp = Blueprint("play", __name__)

GET, POST = ["GET"], ["POST"]
MATCH = "/matches/<id:match_id>"
ROUND = f"{MATCH}/games/<id:game>/rounds/<id:number>"
ROUTES = [
    ("/", GET, home.home),
    # Setting a match up, and its rematch.
    ("/matches/new", ["GET", "POST"], setup.new),
    ("/matches/", POST, setup.create),
    (f"{MATCH}/rematch", POST, setup.rematch),
    (f"{MATCH}/rematch", GET, setup.follow_rematch),
    (f"{MATCH}/<any({', '.join(MATCH_TEXTS)}):name>", POST, setup.change_text),
    # The match at the table: its pages, and how they stay up to date.
    (MATCH, GET, match_pages.show),
    (f"{MATCH}/grid", GET, match_pages.grid),
    (f"{MATCH}/scoreboard", GET, match_pages.scoreboard),
    (f"{MATCH}/bgstats", GET, match_pages.bgstats),
    (f"{MATCH}/table", GET, live.table_view),
    (f"{MATCH}/live", GET, live.poll),
    (f"{MATCH}/events", GET, push.events),
    (f"{MATCH}/games/<id:game>/luck.json", GET, luck_report.luck_json),
    (f"{MATCH}/games/<id:game>/review.json", GET, review_report.review_json),
    (f"{MATCH}/games/<id:game>/review", GET, review_page.review_page),
    # What the players enter.
    (f"{MATCH}/games", POST, entry.start_game),
    (f"{MATCH}/scores", POST, entry.score_game),
    (f"{MATCH}/rounds", POST, entry.enter_round),
    (f"{MATCH}/choice", POST, entry.choose_row),
    # Taking entries back, and correcting a past round.
    (f"{MATCH}/undo", GET, undo.confirm_undo),
    (f"{MATCH}/undo", POST, undo.undo),
    (f"{ROUND}/undo", GET, undo.confirm_undo_to),
    (f"{ROUND}/undo", POST, undo.undo_to),
    (f"{ROUND}/correct", GET, correct.correct_form),
    (f"{ROUND}/correct", POST, correct.correct),
    # Player and watch links, and which player this phone is.
    (f"{MATCH}/join/<token>", GET, links.join),
    (f"{MATCH}/invite", GET, links.invite),
    (f"{MATCH}/invite/renew", POST, links.renew),
    (f"{MATCH}/me", POST, links.choose_me),
]
for rule, methods, view in ROUTES:
    bp.add_url_rule(rule, view_func=view, methods=methods)


def init_app(app: Flask) -> None:
    """Register the match pages (the ``play`` blueprint), and ``flask invite MATCH``."""
    app.register_blueprint(bp)
    app.jinja_env.globals["card_field"] = fields.card_field
    app.cli.add_command(links.invite_command)
