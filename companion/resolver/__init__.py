"""Settling disputes: where does a card go, on any typed-in table (a page and a JSON API),
the rules in short, and the page of every component."""

from flask import Flask

from companion.db import csrf
from companion.resolver import api, resolve_page


def init_app(app: Flask) -> None:
    """Attach the resolver's pages and its JSON API."""
    app.register_blueprint(resolve_page.bp)
    app.register_blueprint(api.bp)
    # The JSON API stores nothing and takes no cookies, so a forged request gains nothing.
    csrf.exempt(api.bp)
