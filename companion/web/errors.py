"""Error pages: 403, 404 and 500 as pages of the app, and JSON for the API and ``.json``."""

from flask import Flask, render_template, request
from werkzeug.exceptions import HTTPException


def wants_json() -> bool:
    """True for the JSON API's paths and every ``.json`` one (a game's ``luck.json``, the
    backup), which answer errors in JSON: what reads them parses JSON, not a page.

    By the path, not the route: an id no row can have matches no route at all.
    """
    path = request.path
    return path == "/api" or path.startswith("/api/") or path.endswith(".json")


def register_error_handlers(app: Flask) -> None:
    """Render 404 and 500 as pages of the app, and every error of a JSON route as JSON."""

    @app.errorhandler(403)
    def forbidden(error: HTTPException):
        """A write without the match's player link."""
        if wants_json():
            return {"error": error.name}, 403
        return render_template("errors/403.html"), 403

    @app.errorhandler(404)
    def not_found(error: HTTPException):
        """Page not found."""
        if wants_json():
            return {"error": error.name}, 404
        return render_template("errors/404.html"), 404

    @app.errorhandler(500)
    def server_error(error: HTTPException):
        """Unexpected failure; Flask has already logged the traceback."""
        if wants_json():
            return {"error": error.name}, 500
        return render_template("errors/500.html"), 500

    @app.errorhandler(HTTPException)
    def other_http_error(error: HTTPException):
        """Any other HTTP error: JSON for a JSON route, Werkzeug's plain page elsewhere."""
        if wants_json():
            return {"error": error.name}, error.code
        return error
