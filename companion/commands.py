"""Command-line tasks: ``flask --app companion rebuild``."""

from __future__ import annotations

import click
from flask import Flask
from flask.cli import with_appcontext
from sqlalchemy import select

from companion.db import db
from companion.derived import rebuild_statistics
from companion.models import Match
from companion.state import match_state, sync_results


@click.command("rebuild")
@with_appcontext
@click.option("--check", is_flag=True, help="Only report disagreements; change nothing.")
def rebuild_command(check: bool) -> None:
    """Recompute every finished game's results from the stored inputs and compare."""
    games = differing = 0
    for match in db.session.scalars(select(Match).order_by(Match.id)):
        for game in match_state(match, replay_all=True).games:
            games += 1
            stored = {result.player_id: result.bulls for result in game.game.results}
            wanted = game.bulls if game.finished else {}
            if stored != wanted:
                differing += 1
                click.echo(
                    f"match {match.id} game {game.number}: stored {stored}, replayed {wanted}"
                )
                if not check:
                    sync_results(game)
    if not check:
        db.session.commit()
    verb = "found" if check else "rebuilt"
    click.echo(f"{games} games replayed, {differing} {verb} differing from the stored results.")
    differing += rebuild_statistics(check, click.echo)  # companion.derived
    if check and differing:
        raise SystemExit(1)


def register_commands(app: Flask) -> None:
    """Attach the CLI commands."""
    app.cli.add_command(rebuild_command)
    from companion.backup import register_cli  # late: it imports the blueprints' modules

    register_cli(app)  # export and import
