"""A match at the table: setting it up, its pages, entering cards and row choices,
undo, player and watch links, live pushes and polls, and the table view (one blueprint, ``play``).
"""

from companion.play import entry, home, links, live, pages, push, setup, undo
from companion.play.blueprint import bp

__all__ = ["bp", "entry", "home", "links", "live", "pages", "push", "setup", "undo"]
