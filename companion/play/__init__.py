"""A match at the table: setting it up, its pages, entering cards and row choices,
undo, corrections, player and watch links, live pushes and polls, and the table view
(one blueprint, ``play``).
"""

from flask import Flask

# Importing these modules is what adds the routes to ``bp``: each one's views decorate
# themselves with ``@bp.get``, ``@bp.post`` or ``@bp.route`` (companion.play.blueprint).
# A module with routes left out here has none.
from companion.play import (
    correct,
    entry,
    home,
    links,
    live,
    luck_report,
    match_pages,
    push,
    setup,
    undo,
)
from companion.play.blueprint import bp

__all__ = [
    "bp",
    "correct",
    "entry",
    "home",
    "init_app",
    "links",
    "live",
    "luck_report",
    "match_pages",
    "push",
    "setup",
    "undo",
]


def init_app(app: Flask) -> None:
    """Register the match pages (the ``play`` blueprint), and ``flask invite MATCH``."""
    app.register_blueprint(bp)
    app.cli.add_command(links.invite_command)
