"""``arbiter run`` and ``arbiter standings``: typer command functions, registered in arbiter/cli.py.

Errors a user can act on (a bad tournament file, a missing bot, an unreachable database, a run
of the same tournament already going on) print one ``error: ...`` line on stderr and exit 2; a
tournament that could not go on exits 1; an interrupted one exits 128 + the signal (Ctrl-C: 130,
SIGTERM: 143, SIGHUP: 129) after saying how many matches are recorded and how to resume. ``--json`` prints one
JSON document on stdout and nothing else there.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Annotated, Optional

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from arbiter.cli.common import safe_console, user_errors
from arbiter.signals import INTERRUPTS, exit_code, signal_of
from arbiter.text import printable
from arbiter.tournament.ratings import Standing
from arbiter.tournament.runner import Reporter


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pm(mean: float | None, ci: tuple[float, float] | None) -> str:
    if mean is None:
        return "-"
    if ci is None:
        return f"{mean:+.1f}"
    return f"{mean:+.1f} ±{(ci[1] - ci[0]) / 2:.1f}"


def standings_table(rows: list[Standing], duplicate: bool, title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("entrant", no_wrap=True, overflow="ellipsis", min_width=7)
    for name in ("μ", "σ", "μ−3σ", "matches", "score ±95%"):
        table.add_column(name, justify="right", no_wrap=True)
    if duplicate:
        table.add_column("vs field ±95%", justify="right", no_wrap=True)
    table.add_column("faults", justify="right", no_wrap=True)
    for r in rows:
        cells = [str(r.rank), printable(r.name), _fmt(r.mu, 2), _fmt(r.sigma, 2), _fmt(r.rating, 2), str(r.matches), _pm(r.mean_score, r.ci95)]
        if duplicate:
            cells.append(_pm(r.duplicate_diff, r.duplicate_ci95))
        cells.append(str(r.faults) + (f" ({r.forfeits} forfeited)" if r.forfeits else ""))
        table.add_row(*cells)
    return table


class _TimeLeftColumn(ProgressColumn):
    """Time left from this run's own pace (matches played since it started), not a short window."""

    def render(self, task) -> Text:
        base, started = task.fields.get("base", 0), task.fields.get("started")
        played = task.completed - base
        if task.finished:
            return Text("0:00:00", style="progress.remaining")
        if not started or played <= 0 or task.total is None:
            return Text("-:--:--", style="progress.remaining")
        left = (time.monotonic() - started) / played * (task.total - task.completed)
        return Text(str(timedelta(seconds=int(left))), style="progress.remaining")


class RichReporter(Reporter):
    """A progress bar (matches done / total, time left) and live standings every few matches."""

    def __init__(self, console: Console):
        self.console = console
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.duplicate = False

    def started(self, config, total: int, recorded: int, workers: int, database: str) -> None:
        self.duplicate = config.format == "duplicate"
        resumed = f", resuming with {recorded} recorded" if recorded else ""
        where = f"{workers} worker process{'es' * (workers != 1)}" if workers else "in process"
        if getattr(config, "cluster", None):
            where = f"on the Dask cluster at {escape(printable(config.cluster))}"
        self.console.print(
            f"[bold]{escape(printable(config.name))}[/bold]: {config.format.replace('_', ' ')}, {total} matches{resumed}; "
            f"{where}; results in {escape(printable(database))}"
        )
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("left"),
            _TimeLeftColumn(),
            console=self.console,
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("matches", total=total, completed=recorded, base=recorded, started=time.monotonic())

    def match_done(self, m, outcome, recorded: int, total: int) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=recorded)
            if outcome.status != "complete":
                self.progress.console.print(
                    f"[yellow]match {m.key} aborted: {escape(printable(outcome.reason or ''))}[/yellow]"
                )

    def live_standings(self, table: list[Standing], recorded: int, total: int) -> None:
        if self.progress is not None:
            self.progress.console.print(standings_table(table, self.duplicate, f"standings after {recorded}/{total} matches"))

    def stopped(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def run_command(
    config: Annotated[str, typer.Argument(metavar="CONFIG", help="A tournament file (YAML), e.g. tournaments/league.yaml.")],
    db: Annotated[
        Optional[str],
        typer.Option("--db", help="Database URL or SQLite file (default: the file's 'database', else logs/arbiter.db)."),
    ] = None,
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", min=1, max=1024, help="Matches played at once (default: the file's 'parallelism', else the cores)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result and standings as JSON, no progress.")] = False,
    cluster: Annotated[
        Optional[str],
        typer.Option(
            "--cluster",
            metavar="tcp://HOST:PORT",
            help="Play the matches on the Dask cluster of this scheduler (default: the file's 'cluster', else here); "
            "see docs/cluster.md.",
        ),
    ] = None,
) -> None:
    """Run (or resume) a tournament: play every match not yet recorded, then print the standings."""
    from arbiter.errors import ConfigError
    from arbiter.tournament.config import load_config
    from arbiter.tournament.runner import run_tournament

    # Ctrl-C, `kill` and a closed terminal stop alike (arbiter.signals; main() installs it)
    console = safe_console(stderr=False, highlight=False)
    try:
        with user_errors():
            if not config.strip():
                raise ConfigError("the tournament file name is empty")
            cfg = load_config(config)
            if cluster is not None:
                from arbiter.tournament.config import cluster_address_problem, override

                problem = cluster_address_problem(cluster.strip())
                if problem:
                    raise ConfigError(f"--cluster: {problem}")
                cfg = override(cfg, cluster=cluster.strip())
            reporter = Reporter() if as_json else RichReporter(console)
            summary = run_tournament(cfg, database=db, jobs=jobs, reporter=reporter)
    except INTERRUPTS as e:  # before the run took its lease: nothing was played
        typer.echo("interrupted before any match was played", err=True)
        raise typer.Exit(exit_code(signal_of(e))) from None
    if as_json:
        typer.echo(json.dumps(summary.to_json()))
        return
    duplicate = summary.format == "duplicate"
    console.print(standings_table(summary.standings, duplicate, f"{summary.tournament}: final standings" if summary.complete else None))
    note = f"{summary.played} played now, {summary.recorded_before} recorded before"
    if summary.reconciled:
        note += f", {summary.reconciled} recorded from the log a stopped run had finished"
    if summary.aborted:
        note += f", {summary.aborted} aborted (not rated)"
    if summary.played:
        note += (
            f"; per match: arbiter {summary.arbiter_cpu / summary.played:.2f}s CPU, "
            f"bots {summary.bots_cpu / summary.played:.2f}s CPU"
        )
    console.print(f"{summary.total} matches ({note}); {summary.wall_seconds:.1f}s")
    console.print(
        "Ranked by the conservative rating μ−3σ (TrueSkill). score: mean total per match, 95% confidence interval"
        + ("; vs field: mean difference per match to the others holding the same cards." if duplicate else ".")
    )


def standings_command(
    db: Annotated[
        Optional[str], typer.Option("--db", help="Database URL or SQLite file (default: $BARBU_DB, else logs/arbiter.db).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON list of {name, mu, sigma, rating, matches, mean_score, ci95, faults}.")
    ] = False,
    tournament: Annotated[
        Optional[str], typer.Option("--tournament", "-t", help="Which tournament (default: the latest created).")
    ] = None,
) -> None:
    """Print the standings of a tournament from the results database."""
    from arbiter.tournament.ratings import standings
    from arbiter.tournament.storage import Repo, open_database, row_id

    with user_errors():
        engine = open_database(db, create=False)
        try:
            repo = Repo(engine)
            t = repo.require_tournament(tournament)
            t_id = row_id(t)
            rows = standings(repo.entrant_names(t_id), repo.matches(t_id), t.format == "duplicate")
            recorded = repo.count_matches(t_id)
        finally:
            engine.dispose()
    duplicate = t.format == "duplicate"
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

