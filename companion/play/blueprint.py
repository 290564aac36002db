"""The blueprint of a match at the table: every page and write of playing one.

In a module of its own so each module of the package adds its routes to it, and the
package imports them all (``companion.play``) without a cycle.

Where the routes come from: the views of correct, entry, home, links, live,
luck_report, pages, push, setup and undo add themselves (``@bp.get``, ``@bp.post``,
``@bp.route``) when their module is imported, and ``companion/play/__init__.py``
imports each of them before ``init_app`` registers ``bp``. A new module with routes
goes into that import.
"""

from flask import Blueprint

bp = Blueprint("play", __name__)
