"""Site pages that belong to no feature: the home page and the health check."""

from flask import Blueprint, current_app
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from companion.db import db
from companion.htmx import render
from companion.matches import recent_matches

bp = Blueprint("pages", __name__)


@bp.get("/")
def home():
    """Say what the companion is, list the latest matches and offer a new one."""
    return render("pages/home.html", block="content", matches=recent_matches())


@bp.get("/healthz")
def healthz():
    """Report 200 when the app can reach its database, 503 when it cannot."""
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        current_app.logger.exception("Health check: database unreachable")
        return {"status": "unavailable"}, 503
    return {"status": "ok"}
