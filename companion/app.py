"""create_app() and nothing else: it attaches the extensions, the web layer and every
feature's blueprint. Nothing in the package imports it; the launcher
(``companion.serve``), ``flask --app companion`` and the tests do (through
``companion.create_app``).
"""

from flask import Flask

from companion import backup, commands, household, play, resolver, storage, web
from companion.config import PROJECT_ROOT, configure
from companion.db import attach_migrations, csrf, db
from companion.startup import check_storage


def create_app(test_config: dict | None = None, migrations: bool = True) -> Flask:
    """Create and configure the companion app; ``migrations``: with Alembic's (`flask db`),
    which the server's serving processes leave out (``companion.db.attach_migrations``)."""
    app = Flask(
        __name__,
        instance_path=str(PROJECT_ROOT / "instance"),
        instance_relative_config=True,
        template_folder=str(PROJECT_ROOT / "templates"),
        static_folder=str(PROJECT_ROOT / "static"),
    )
    # Block tags leave no blank lines and indentation behind: a phone downloads less.
    app.jinja_options = {**app.jinja_options, "trim_blocks": True, "lstrip_blocks": True}
    configure(app, test_config)
    web.init_app(app)  # hosts and origins, languages, error pages, headers
    check_storage(app)  # a read-only or missing database stops here, in one line

    db.init_app(app)
    storage.init_app(app)  # the database's own hooks: SQLite's pragmas, writer lock, WAL
    if migrations:
        attach_migrations(app, str(PROJECT_ROOT / "migrations"))
    csrf.init_app(app)

    for feature in (play, household, resolver, backup, commands):
        feature.init_app(app)  # its blueprints and commands
    return app
