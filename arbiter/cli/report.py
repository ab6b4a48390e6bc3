"""``arbiter report``: a tournament's self-contained HTML report (:mod:`arbiter.web.report`)."""

from __future__ import annotations

from typing import Annotated

import typer

from arbiter.cli.common import user_errors
from arbiter.files import output_folder, output_path


def report_command(
    html: Annotated[
        str, typer.Option("--html", metavar="FILE", help="Where to write the report: one self-contained HTML file.")
    ],
    config: Annotated[
        str | None,
        typer.Argument(
            metavar="FILE",
            help="A tournament or arena file: its 'database' and name (default: --db and --tournament).",
            show_default=False,
        ),
    ] = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", metavar="DATABASE", help="Database URL or SQLite file (default: $BARBU_DB, else logs/arbiter.db)."
        ),
    ] = None,
    tournament: Annotated[
        str | None,
        typer.Option("--tournament", "-t", metavar="NAME", help="Which tournament (default: the latest created)."),
    ] = None,
    replays: Annotated[
        bool | None,
        typer.Option(
            "--replays/--no-replays",
            help="Also write each match's replay page, in a folder next to the report (report_replays/ for report.html), "
            "and link it (default: yes for a tournament, no for an arena's ladder, whose arena serves them).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write a tournament report: standings, rating history, contracts, doubling, faults, matches."""
    from arbiter.cli.common import competition_file, stored_ranking
    from arbiter.web.report import build_report  # here: the other commands start without it

    with user_errors():
        out = output_path(html, "--html")  # a regular file or a new path, checked before any work
        file_ranking = None  # the file's choice wins over the one stored with the run
        if config is not None:
            cfg = competition_file(config)
            db = db if db is not None else cfg.database
            tournament = tournament if tournament is not None else cfg.name
            file_ranking = cfg.rating, cfg.provisional
        if replays:
            output_folder(out.with_name(f"{out.stem}_replays"), "the replays folder")
        result = build_report(db, tournament, out, replays=replays, ranking=lambda t: file_ranking or stored_ranking(t))
    note = f"{result.tournament}, {result.matches} match{'es' * (result.matches != 1)}"
    if result.light and replays is None:
        note += " (no replay pages: --replays writes them)"
    if not result.light:
        note += f", {result.replays} replay page{'s' * (result.replays != 1)} in {result.out.stem}_replays/"
    if result.log_problems:
        note += "; " + ", ".join(f"{n} log{'s' * (n != 1)} {k}" for k, n in sorted(result.log_problems.items()))
    typer.echo(f"wrote {result.out} ({note})")
