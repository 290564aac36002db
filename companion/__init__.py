"""The 6 nimmt! table companion: a Flask + htmx app for one household's games.

``create_app`` is made in ``companion.app``; this package opens without importing
anything, so the server's launcher (``python -m companion.serve``) can let gevent
patch the standard library before Flask, SQLAlchemy or the drivers are imported.
"""


def create_app(test_config: dict | None = None):
    """Create and configure the companion app (``companion.app.create_app``)."""
    from companion.app import create_app as create

    return create(test_config)
