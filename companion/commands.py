"""Command-line tasks: ``flask --app companion rebuild`` and ``version`` (the backup's:
``companion.backup``)."""

from __future__ import annotations

import click
from flask import Flask
from flask.cli import with_appcontext

from companion.derived import rebuild
from companion.derived.game_review import finished_games
from companion.store import rebuild_all_luck, rebuild_all_reviews, rebuild_matches
from companion.web import site


@click.command("rebuild")
@with_appcontext
@click.option("--check", is_flag=True, help="Only report disagreements; change nothing.")
def rebuild_command(check: bool) -> None:
    """Replay every match from its stored inputs: games' results, statistics, luck and
    reviews, compared."""
    rebuilt = rebuild(check=True, echo=click.echo) if check else rebuild_matches(click.echo)
    if rebuilt.broken:  # named above, one line each; nothing was replayed from them
        raise click.ClickException(
            f"stored rows break a constraint or the rules ({len(rebuilt.broken)}, named "
            "above): put them right, or restore a good copy."
        )
    verb = "found" if check else "rebuilt"
    click.echo(
        f"{rebuilt.games} games replayed, {rebuilt.differing_games} {verb} differing "
        "from the stored results."
    )
    click.echo(
        f"{rebuilt.matches} matches' statistics replayed, "
        f"{rebuilt.differing_matches} {verb} differing."
    )
    if rebuilt.pending_statistics:
        click.echo(
            f"{rebuilt.pending_statistics} matches' statistics not written yet (the server "
            "writes them in the background)."
        )
    click.echo(f"Every finished match rated again, {rebuilt.differing_ratings} {verb} differing.")
    luck = rebuild_all_luck(check, click.echo)
    click.echo(f"Every card game's luck figured again, {len(luck.differing)} {verb} differing.")
    if luck.missing:
        done = "not figured yet (the server figures it in the background)" if check else "filled in"
        click.echo(f"{len(luck.missing)} games' luck {done}.")
    click.echo(f"Reviewing {finished_games()} finished card games again (seconds of CPU each).")
    reviews = rebuild_all_reviews(check, click.echo)
    click.echo(
        f"Every finished card game reviewed again, {len(reviews.differing)} {verb} differing."
    )
    if reviews.missing:
        done = "not reviewed yet (`flask rebuild` reviews them)" if check else "reviewed anew"
        click.echo(f"{len(reviews.missing)} games {done}.")
    if check and (
        rebuilt.differing_games
        or rebuilt.differing_matches
        or rebuilt.differing_ratings
        or luck.differing
        or reviews.differing
    ):
        raise SystemExit(1)


# flask --version is Flask's own, answered before the app is loaded: it cannot name ours.
@click.command("version")
def version_command() -> None:
    """Show the companion's version (CHANGELOG.md says what each one changed)."""
    click.echo(f"6 nimmt! companion {site.version()}")


def init_app(app: Flask) -> None:
    """Attach ``rebuild`` and ``version`` to the app's command line (the backup's commands
    are its own)."""
    app.cli.add_command(rebuild_command)
    app.cli.add_command(version_command)
