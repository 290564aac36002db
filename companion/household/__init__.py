"""The household: its players, the leaderboard and statistics, ratings, the match history
and replays of past games."""

from companion.household import history, leaderboard, players, replay, review

# Each page family keeps its own blueprint: they share no URLs.
blueprints = (players.bp, leaderboard.bp, history.bp, replay.bp, review.bp)
