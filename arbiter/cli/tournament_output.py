"""How a tournament shows in the terminal: the progress bar with live standings while it plays,
and the standings table (TrueSkill, the margin rating, mean score with its CI, faults)."""

from __future__ import annotations

import time
from datetime import timedelta

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from arbiter.cli.common import warn_if_unisolated
from arbiter.model import MatchOutcome, ScheduledMatch
from arbiter.text import printable
from arbiter.tournament.loop import Run
from arbiter.tournament.ratings import Standing


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pm(mean: float | None, ci: tuple[float, float] | None) -> str:
    if mean is None:
        return "-"
    if ci is None:
        return f"{mean:+.1f}"
    return f"{mean:+.1f} ±{(ci[1] - ci[0]) / 2:.1f}"


def standings_table(rows: list[Standing], duplicate: bool, title: str | None = None) -> StandingsTable:
    return StandingsTable(rows, duplicate, title)


def ranking_note(rating: str, provisional: int, duplicate: bool) -> str:
    """What orders the table and what its columns mean, in one line under it."""
    order = (
        "the margin rating (points per match against the field's average, opponents adjusted for)"
        if rating == "margins"
        else "TrueSkill's μ (not μ−3σ: that ranks a newcomer by how little it has played)"
    )
    return (
        f"Ranked by {order}; * provisional: fewer than {provisional} complete matches. "
        "margin ±sd: the margin rating and its standard deviation. score: mean total per match, 95% confidence interval"
        + ("; vs field: mean difference per match to the others holding the same cards." if duplicate else ".")
    )


class StandingsTable:
    """The standings as one table where it fits the terminal (or a pipe's 80 columns); else folded
    into two, the ratings then the scores, each naming the entrants. A cell that still does not
    fit wraps, then folds over lines: a value is never cut short."""

    def __init__(self, rows: list[Standing], duplicate: bool, title: str | None = None):
        self.rows = rows
        self.duplicate = duplicate
        self.title = title

    def _cells(self, r: Standing) -> dict[str, str]:
        cells = {
            "#": str(r.rank),
            "entrant": printable(r.name) + (" *" if r.provisional else ""),
            "μ": _fmt(r.mu, 2),
            "σ": _fmt(r.sigma, 2),
            "margin ±sd": f"{r.margin:+.1f}" + ("" if r.margin_sd is None else f" ±{r.margin_sd:.1f}"),
            "matches": str(r.matches),
            "score ±95%": _pm(r.mean_score, r.ci95),
        }
        if self.duplicate:
            cells["vs field ±95%"] = _pm(r.duplicate_diff, r.duplicate_ci95)
        cells["faults"] = str(r.faults) + (f" ({r.forfeits} forfeited)" if r.forfeits else "")
        return cells

    def _table(self, columns: list[str], title: str | None) -> Table:
        table = Table(
            title=title,
            title_justify="left",
            header_style="bold",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            collapse_padding=True,
        )
        for name in columns:
            table.add_column(name, justify="left" if name == "entrant" else "right", overflow="fold")
        for r in self.rows:
            cells = self._cells(r)
            table.add_row(*(cells[name] for name in columns))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        columns = ["#", "entrant", "μ", "σ", "margin ±sd", "matches", "score ±95%"]
        columns += ["vs field ±95%", "faults"] if self.duplicate else ["faults"]
        whole = self._table(columns, self.title)
        natural = Measurement.get(console, options.update_width(1 << 16), whole).maximum
        if natural <= options.max_width:
            yield whole
            return
        yield self._table(columns[:6], self.title)
        yield self._table(["#", "entrant", *columns[6:]], None)


class _TimeLeftColumn(ProgressColumn):
    """Time left from this run's own pace (matches played since it started), not a short window."""

    def render(self, task: Task) -> Text:
        base, started = task.fields.get("base", 0), task.fields.get("started")
        played = task.completed - base
        if task.finished:
            return Text("0:00:00", style="progress.remaining")
        if not started or played <= 0 or task.total is None:
            return Text("-:--:--", style="progress.remaining")
        left = (time.monotonic() - started) / played * (task.total - task.completed)
        return Text(str(timedelta(seconds=int(left))), style="progress.remaining")


class RichReporter:
    """An observer of the run (arbiter.tournament.loop.Observer): a progress bar (matches done /
    total, time left) and live standings every few matches."""

    def __init__(self, console: Console):
        self.console = console
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.every = 0

    def started(self, run: Run) -> None:
        config, total, recorded = run.config, len(run.schedule), len(run.records)
        self.every = config.standings_every or max(4, total // 8)
        warn_if_unisolated(config.isolation)  # once, here: the workers' own warnings go to their log
        resumed = f", resuming with {recorded} recorded" if recorded else ""
        where = f"{run.workers} worker process{'es' * (run.workers != 1)}" if run.workers else "in process"
        if config.cluster:
            where = f"on the Dask cluster at {escape(printable(config.cluster))}"
        self.console.print(
            f"[bold]{escape(printable(config.name))}[/bold]: {config.format.replace('_', ' ')}, {total} matches{resumed}; "
            f"{where}; results in {escape(printable(run.database))}",
            soft_wrap=True,  # a path or URL is never cut by a line break of ours
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
        self.task = self.progress.add_task(
            "matches", total=total, completed=recorded, base=recorded, started=time.monotonic()
        )

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        if self.progress is None or self.task is None:
            return
        recorded, total = len(run.records), len(run.schedule)
        self.progress.update(self.task, completed=recorded)
        if not outcome.result.complete:
            self.progress.console.print(
                f"[yellow]match {m.key} aborted: {escape(printable(outcome.result.reason or ''))}[/yellow]"
            )
        if recorded < total and run.played and run.played % self.every == 0:
            title = f"standings after {recorded}/{total} matches"
            self.progress.console.print(standings_table(run.standings(), run.duplicate, title))

    def stopped(self, run: Run) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
