"""The blueprint of a match at the table: every page and write of playing one.

In a module of its own so each module of the package adds its routes to it, and the
package imports them all (``companion.play``) without a cycle.
"""

from flask import Blueprint

bp = Blueprint("play", __name__)
