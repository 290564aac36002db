"""Error pages: 403, 404 and 500 as pages of the app, and JSON for the API."""

from flask import Flask, render_template, request
from werkzeug.exceptions import HTTPException


def wants_json() -> bool:
    """True for JSON API paths, which answer errors in JSON."""
    return request.path == "/api" or request.path.startswith("/api/")


def register_error_handlers(app: Flask) -> None:
    """Render 404 and 500 as pages of the app, and every API error as JSON."""

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
        """Any other HTTP error: JSON for the API, Werkzeug's plain page elsewhere."""
        if wants_json():
            return {"error": error.name}, error.code
        return error
