"""How an A/B test shows in the terminal: a progress bar and one line per set as it goes, then
the verdict, the difference with its CI, the LLR and the per-contract shares."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from arbiter.model import MatchOutcome, ScheduledMatch
from arbiter.text import printable
from arbiter.tournament.loop import Run
from arbiter.verdict import MATCHES_PER_SET
from arbiter.verdict.ab import AbReporter, AbResult, SetResult, contracts_table
from arbiter.verdict.sprt import SprtState

VERDICT_TEXT = {
    "H1": "[bold green]H1 accepted: B is better[/bold green] (δ ≥ δ1)",
    "H0": "[bold red]H0 accepted: B is not better[/bold red] (δ ≤ δ0)",
    "max reached": "[bold yellow]no verdict[/bold yellow]: the budget (--max-matches) ran out before a bound was crossed",
    "continue": "[bold yellow]no verdict yet[/bold yellow]: run the same command again to continue",
}


def _signed(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:+.{digits}f}"


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]"


def state_line(state: SprtState) -> str:
    """The test now, in one short line: the mean and its 95% CI, the LLR and its bounds."""
    text = f"mean {_signed(state.mean if state.n else None)} {_ci(state.ci95)}"
    bounds = state.bounds
    if bounds is not None:
        text += f"  LLR {_signed(state.llr, 2)} ({bounds[0]:.2f}..{bounds[1]:.2f})"
    return text


class RichAbReporter(AbReporter):
    """A progress bar (matches of the budget) and one line per set as the test goes."""

    def __init__(self, console: Console, budget_sets: int):
        self.console = console
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.budget_matches = budget_sets * MATCHES_PER_SET
        self.done = 0  # matches recorded, as far as this run knows

    def started(self, run: Run) -> None:
        self.done = recorded = len(run.records)
        resumed = f", resuming with {recorded} recorded" if recorded else ""
        self.console.print(
            f"[bold]{escape(printable(run.config.name))}[/bold]: A/B test, at most {self.budget_matches} matches "
            f"({self.budget_matches // MATCHES_PER_SET} sets of {MATCHES_PER_SET}){resumed}; "
            f"results in {escape(printable(run.database))}"
        )
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("matches"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.progress.start()
        self.task = self.progress.add_task("sets", total=self.budget_matches, completed=recorded)

    def match_done(self, run: Run, m: ScheduledMatch, outcome: MatchOutcome) -> None:
        if self.progress is not None and self.task is not None:
            self.done = max(self.done, len(run.records))
            self.progress.update(self.task, completed=self.done)
            if not outcome.result.complete:
                self.progress.console.print(
                    f"[yellow]match {escape(printable(m.key))} aborted: "
                    f"{escape(printable(outcome.result.reason or ''))} (its set is voided)[/yellow]"
                )

    def set_done(self, result: SetResult, state: SprtState) -> None:
        if self.progress is None or self.task is None:
            return
        self.done = max(self.done, (result.number + 1) * MATCHES_PER_SET)
        self.progress.update(self.task, completed=self.done)
        diff = "voided      " if result.diff is None else f"B−A {result.diff:+8.1f}"
        self.progress.console.print(f"set {result.number + 1:>3}  {diff}  {state_line(state)}", highlight=False)
        self.progress.update(self.task, description=f"LLR {_signed(state.llr, 2)}" if state.bounds else "sets")

    def stopped(self, run: Run) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def print_result(console: Console, result: AbResult) -> None:
    state = result.state
    data = result.to_json()
    console.print(
        VERDICT_TEXT.get(result.verdict.value, result.verdict.value)
        if data["mode"] == "sprt"
        else "[bold]fixed count[/bold]: no test"
    )
    lines = [
        (
            "sets",
            f"{state.n} in the test ({len(result.sets) * MATCHES_PER_SET} matches"
            + (
                f"; {len(result.voided)} set{'s' * (len(result.voided) != 1)} voided by aborted matches"
                if result.voided
                else ""
            )
            + f"; this run played {result.played})",
        ),
        (
            "B − A",
            f"{_signed(data['mean'])} points per match, 95% CI {_ci(data['ci95'])}, SD per set {data['sd'] or 0:.1f}",
        ),
    ]
    if data["mode"] == "sprt":
        decided = f", crossed at set {state.decided_at}" if result.verdict.value in ("H0", "H1") else ""
        lines.append(
            ("LLR", f"{data['llr']:+.3f}, bounds {data['lower']:.3f} (H0) and {data['upper']:.3f} (H1){decided}")
        )
        lines.append(
            (
                "test",
                f"H0: δ ≤ {data['delta0']:g}, H1: δ ≥ {data['delta1']:g} points per match; "
                f"α {data['alpha']:g}, β {data['beta']:g}; model {data['model']}",
            )
        )
    for label, text in lines:
        console.print(f"  {label:>6}  {escape(text)}", highlight=False)
    rows = contracts_table(result)
    if rows:
        table = Table(
            title="per contract (their shares add up to B − A)",
            title_justify="left",
            header_style="bold",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        table.add_column("contract", overflow="fold")  # a narrow terminal wraps a cell, never cuts it
        table.add_column("B − A per match", justify="right", overflow="fold")
        table.add_column("95% CI", justify="right", overflow="fold")
        for name, value, ci in rows:
            table.add_row(escape(printable(name)), _signed(value), _ci(ci))
        console.print(table)
    console.print(
        f"{escape(printable(result.name))} in {escape(printable(result.database))}; {result.wall_seconds:.1f}s"
    )
