"""The household: its players, the leaderboard and statistics, ratings, the match history
and replays of past games."""

from flask import Flask

from companion.household import history, leaderboard, players, replay, review


def init_app(app: Flask) -> None:
    """Register the household's pages: each page family keeps its own blueprint (they
    share no URLs)."""
    for module in (players, leaderboard, history, replay, review):
        app.register_blueprint(module.bp)
