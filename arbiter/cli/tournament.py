"""``arbiter run`` and ``arbiter standings``: typer command functions, registered in arbiter/cli/__init__.py;
their terminal output is arbiter/cli/tournament_output.py, loaded when a command runs.

Errors a user can act on (a bad tournament file, a missing bot, an unreachable database, a run
of the same tournament already going on) print one ``error: ...`` line on stderr and exit 2; a
tournament that could not go on exits 1; an interrupted one exits 128 + the signal (Ctrl-C: 130,
SIGTERM: 143, SIGHUP: 129) after saying how many matches are recorded and how to resume. ``--json`` prints one
JSON document on stdout and nothing else there.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from arbiter.cli.common import (
    ClusterOption,
    DatabaseOption,
    JobsOption,
    cluster_address,
    competition_file,
    safe_console,
    stored_ranking,
    user_errors,
)
from arbiter.signals import INTERRUPTS, exit_code, signal_of
from arbiter.text import printable
from arbiter.tournament.formats import plays_duplicate_sets

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from arbiter.tournament.loop import RunSummary

REPLAYED_NOTE = (
    "note: the standings table is missing or behind the matches: replayed from them; "
    "`arbiter standings --rebuild` stores them"
)


def run_command(
    config: Annotated[
        str, typer.Argument(metavar="CONFIG", help="A tournament file (YAML), e.g. tournaments/league.yaml.")
    ],
    db: DatabaseOption = None,
    jobs: JobsOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the result and standings as JSON, no progress.")
    ] = False,
    cluster: ClusterOption = None,
) -> None:
    """Run (or resume) a tournament: play every match not yet recorded, then print the standings."""
    from arbiter.cli.tournament_output import RichReporter, ranking_note, standings_table
    from arbiter.errors import ConfigError
    from arbiter.tournament.config import load_config
    from arbiter.tournament.loop import run_tournament

    # Ctrl-C, `kill` and a closed terminal stop alike (arbiter.signals; main() installs it)
    console = safe_console(stderr=False, highlight=False)
    try:
        with user_errors():
            if not config.strip():
                raise ConfigError("the tournament file name is empty")
            cfg = load_config(config)
            if cluster is not None:
                from arbiter.tournament.config import override

                cfg = override(cfg, cluster=cluster_address(cluster))
            summary = run_tournament(cfg, database=db, jobs=jobs, observers=() if as_json else [RichReporter(console)])
    except INTERRUPTS as e:  # before the run took its lease: nothing was played
        typer.echo("interrupted before any match was played", err=True)
        raise typer.Exit(exit_code(signal_of(e))) from None
    if as_json:
        typer.echo(json.dumps(summary.to_json()))
        return
    duplicate = plays_duplicate_sets(summary.format)
    console.print(
        standings_table(
            summary.standings, duplicate, f"{summary.tournament}: final standings" if summary.complete else None
        )
    )
    note = f"{summary.played} played now, {summary.recorded_before} recorded before"
    if summary.reconciled:
        note += f", {summary.reconciled} recorded from the log a stopped run had finished"
    if summary.aborted:
        note += f", {summary.aborted} aborted (not rated)"
    if summary.played:
        note += f"; per match: arbiter {_cpu(summary.arbiter_cpu / summary.played)} CPU{_bots_cpu(summary)}"
    console.print(f"{summary.total} matches ({note}); {summary.wall_seconds:.1f}s")
    console.print(ranking_note(cfg.rating, cfg.provisional, duplicate))


def _bots_cpu(summary: RunSummary) -> str:
    """The bots' CPU as far as it was measured: a remote seat's is spent on its own machine,
    unseen here, so with remote seats the figure is per local seat and the rest said unknown."""
    if not summary.remote_seats:
        return f", bots {_cpu(summary.bots_cpu / summary.played)} CPU"
    if not summary.local_seats:
        return "; bots' CPU unknown (every seat remote: spent on their own machines)"
    per_seat = _cpu(summary.bots_cpu / summary.local_seats)
    return f"; bots {per_seat} CPU per local seat, unknown for the {summary.remote_seats} remote seats (their own machines')"


def _cpu(seconds: float) -> str:
    """CPU seconds as a figure that is never a bare 0.00 for a small but real cost."""
    return f"{seconds:.2f}s" if seconds >= 0.1 or seconds == 0 else f"{seconds * 1000:.1f}ms"


def _standings_database(database: str | None, no_file: bool, rebuild: bool) -> Engine:
    """The database ``arbiter standings`` reads (a rebuild writes: it upgrades the database);
    without a file, a missing database's error names the file as the other way."""
    from arbiter.errors import ConfigError
    from arbiter.storage import open_database

    try:
        return open_database(database, create=rebuild)
    except ConfigError as e:
        if no_file and str(e).startswith("no such database"):
            raise ConfigError(f"{e}; or name the tournament file: arbiter standings FILE.yaml") from None
        raise


def standings_command(
    config: Annotated[
        str | None,
        typer.Argument(
            metavar="CONFIG",
            help="A tournament or arena file: its standings, from its 'database' (found as `arbiter run` and "
            "`arbiter serve` find it).",
            show_default=False,
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="DATABASE",
            help="Database URL or SQLite file (default: CONFIG's 'database', else $BARBU_DB, else logs/arbiter.db).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print a JSON list of {rank, name, mu, sigma, rating, matches, mean_score, ci95, faults, "
            "forfeits, margin, margin_sd, provisional}.",
        ),
    ] = False,
    tournament: Annotated[
        str | None,
        typer.Option(
            "--tournament", "-t", metavar="NAME", help="Which tournament (default: CONFIG's, else the latest created)."
        ),
    ] = None,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="Replay every recorded match into the standings table (a repair; refused while a run holds the tournament).",
        ),
    ] = False,
) -> None:
    """Print the standings of a tournament from the results database (its standings table, kept
    up to date by every recorded match)."""
    from arbiter.cli.tournament_output import ranking_note, standings_table
    from arbiter.storage import Repo
    from arbiter.tournament.kept import kept_standings, rebuild_standings

    with user_errors():
        ranking = None
        if config is not None:
            cfg = competition_file(config)  # its bots need not be here to show its results
            db = db if db is not None else cfg.database  # --db "" is an error, not the default
            tournament = tournament if tournament is not None else cfg.name
            ranking = cfg.rating, cfg.provisional
        engine = _standings_database(db, config is None, rebuild)
        try:
            repo = Repo(engine)
            t = repo.require_tournament(tournament)
            rating, provisional = ranking or stored_ranking(t)
            if rebuild:
                kept = rebuild_standings(engine, t, rating, provisional)
            else:
                kept = kept_standings(repo, t, rating, provisional)
            rows, recorded = kept.rows, kept.recorded
        finally:
            engine.dispose()
    if not kept.kept and not as_json:
        typer.echo(REPLAYED_NOTE, err=True)
    duplicate = plays_duplicate_sets(t.format)
    if as_json:
        typer.echo(json.dumps([r.to_json(duplicate) for r in rows]))
        return
    console = safe_console(highlight=False)
    state = "complete" if t.finished_at else "in progress"
    console.print(
        f"[bold]{escape(printable(t.name))}[/bold]: {escape(printable(t.format.replace('_', ' ')))}, "
        f"{recorded}/{t.total_matches} matches ({state})"
    )
    console.print(standings_table(rows, duplicate))
    console.print(ranking_note(rating, provisional, duplicate))
