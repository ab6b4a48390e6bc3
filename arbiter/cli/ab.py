"""``arbiter ab``: is bot B better than bot A? A sequential test on paired duplicate sets.

The driver is :mod:`arbiter.verdict.ab`; this module only reads the options (the terminal output
is :mod:`arbiter.cli.ab_output`, loaded when the test runs), shows the test as
it goes (one line per set: its difference, the mean with its 95% CI, the LLR against its bounds)
and prints the verdict, or one JSON object with ``--json``. Exit codes as ``arbiter run``: 0 the
test ended (whatever the verdict), 2 a mistake you can fix, 1 a test that could not go on,
128 + N stopped by signal N (a rerun of the same command continues).
"""

from __future__ import annotations

import json
import math
from typing import Annotated

import typer
from rich.markup import escape

from arbiter.cli.common import cluster_address, fail, safe_console, user_errors
from arbiter.signals import INTERRUPTS, exit_code, signal_of
from arbiter.text import printable
from arbiter.verdict import DEFAULT_DELTA0, DEFAULT_DELTA1, DEFAULT_MAX_MATCHES, MATCHES_PER_SET
from arbiter.verdict.sprt import DEFAULT_MIN_SETS, FixedConfig, SprtConfig

# The options (type aliases keep the command's signature readable).
_A = Annotated[
    str,
    typer.Option("--a", metavar="CMD", help='Bot A, the baseline: a command, e.g. "python sample_bots/random_bot.py".'),
]
_B = Annotated[str, typer.Option("--b", metavar="CMD", help="Bot B, the candidate: is it better than A?")]
_Field = Annotated[
    list[str] | None,
    typer.Option(
        "--field", metavar="CMD", help="A field bot (repeat for 2 or 3; default: python sample_bots/heuristic_bot.py)."
    ),
]
_Rules = Annotated[str, typer.Option("--rules", metavar="PRESET", help="Rules preset.")]
_Settings = Annotated[
    list[str] | None,
    typer.Option(
        "--set", metavar="SWITCH=VALUE", help="Override a rules switch, e.g. --set domino_ace=low (repeatable)."
    ),
]
_Delta0 = Annotated[
    float | None,
    typer.Option("--delta0", metavar="POINTS", help=f"H0: B − A ≤ δ0 points per match (default {DEFAULT_DELTA0:g})."),
]
_Delta1 = Annotated[
    float | None,
    typer.Option("--delta1", metavar="POINTS", help=f"H1: B − A ≥ δ1 points per match (default {DEFAULT_DELTA1:g})."),
]
_Alpha = Annotated[
    float | None,
    typer.Option("--alpha", metavar="P", help="False positive rate: H1 accepted when H0 holds (default 0.05)."),
]
_Beta = Annotated[
    float | None,
    typer.Option("--beta", metavar="P", help="False negative rate: H0 accepted when H1 holds (default 0.05)."),
]
_MaxMatches = Annotated[
    int | None,
    typer.Option(
        "--max-matches",
        metavar="N",
        help=f"Budget: stop without a verdict after this many matches (default {DEFAULT_MAX_MATCHES}, at least "
        f"{DEFAULT_MIN_SETS * MATCHES_PER_SET}: the test decides nothing before {DEFAULT_MIN_SETS} sets of "
        f"{MATCHES_PER_SET}).",
    ),
]
_Fixed = Annotated[
    int | None,
    typer.Option(
        "--fixed",
        metavar="N",
        min=1,
        help="Fixed count: play N matches (whole sets of 8), no test; the mean and its CI.",
    ),
]
_Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        metavar="N",
        min=1,
        max=1024,
        help="Matches played at once (default: the cores); with --cluster, matches sent to it at a time.",
    ),
]
_Cluster = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="Play the matches on the Dask cluster of this scheduler (docs/cluster.md).",
    ),
]
_Db = Annotated[
    str | None,
    typer.Option(
        "--db", metavar="DATABASE", help="Database URL or SQLite file (default: $BARBU_DB, else logs/arbiter.db)."
    ),
]
_Name = Annotated[
    str | None,
    typer.Option(
        "--name", metavar="NAME", help="The test's name in the database (default: ab-<hash of bots, rules, seed>)."
    ),
]
_Seed = Annotated[int, typer.Option("--seed", metavar="N", min=0, max=2**63 - 1, help="Seed of the deals.")]
_LogFolder = Annotated[
    str | None, typer.Option("--log-folder", metavar="FOLDER", help="Match logs (default: logs/NAME).")
]
_Html = Annotated[
    str | None,
    typer.Option("--html", metavar="FILE", help="Also write a self-contained HTML page: LLR path, CI, contracts."),
]
_AsJson = Annotated[bool, typer.Option("--json", help="Print the result as one JSON object, no progress.")]


def ab_command(
    a: _A,
    b: _B,
    field: _Field = None,
    rules: _Rules = "standard",
    settings: _Settings = None,
    delta0: _Delta0 = None,
    delta1: _Delta1 = None,
    alpha: _Alpha = None,
    beta: _Beta = None,
    max_matches: _MaxMatches = None,
    fixed: _Fixed = None,
    jobs: _Jobs = None,
    cluster: _Cluster = None,
    db: _Db = None,
    name: _Name = None,
    seed: _Seed = 0,
    log_folder: _LogFolder = None,
    html: _Html = None,
    as_json: _AsJson = False,
) -> None:
    """Is B better than A? A sequential test on paired duplicate matches.

    A and B play the same deals, from the same seats, against the same field (duplicate sets of 8 matches).

    It stops when a sequential probability ratio test decides, or at --max-matches."""
    from pathlib import Path

    from arbiter.cli.ab_output import RichAbReporter, print_result
    from arbiter.cli.play import rules_of
    from arbiter.files import output_path
    from arbiter.tournament.config import NAME_RE
    from arbiter.verdict.ab import AbSpec, run_ab

    console = safe_console(stderr=False, highlight=False)
    with user_errors():
        if name is not None and not NAME_RE.match(name):
            fail(f"--name {name!r}: use letters, digits, '_', '-', '.', '+' (at most 64)")
        if len(field or []) > 3:
            fail(f"--field: the field has 1 to 3 bots, got {len(field or [])}")
        ruleset = rules_of(rules, settings)
        test = _test(delta0, delta1, alpha, beta, max_matches, fixed)
        address = cluster_address(cluster)
        out = output_path(html, "--html") if html is not None else None
        spec = AbSpec(
            a=a,
            b=b,
            field=tuple(field or ()),
            rules=ruleset,
            test=test,
            seed=seed,
            name=name,
            database=db,
            log_folder=Path(log_folder) if log_folder else None,
            jobs=jobs,
            cluster=address,
        )
        try:
            result = run_ab(spec, reporter=None if as_json else RichAbReporter(console, spec.budget_sets))
        except INTERRUPTS as e:  # before the run read the database: nothing was played
            typer.echo("interrupted before any match was played", err=True)
            raise typer.Exit(exit_code(signal_of(e))) from None
        if out is not None:
            from arbiter.web.ab import write_ab_page

            write_ab_page(out, result.to_json(with_history=True))
    if as_json:
        data = result.to_json(with_history=True)
        if out is not None:
            data["html"] = str(out)
        typer.echo(json.dumps(data))
        return
    print_result(console, result)
    if out is not None:
        console.print(f"wrote {escape(printable(str(out)))}")


def _test(
    delta0: float | None,
    delta1: float | None,
    alpha: float | None,
    beta: float | None,
    max_matches: int | None,
    fixed: int | None,
) -> SprtConfig | FixedConfig:
    """The test the options ask for: a fixed count, or the SPRT within the budget."""
    if fixed is not None:
        given = [
            o
            for o, v in (
                ("--delta0", delta0),
                ("--delta1", delta1),
                ("--alpha", alpha),
                ("--beta", beta),
                ("--max-matches", max_matches),
            )
            if v is not None
        ]
        if given:
            fail(f"--fixed plays a fixed count without a test: drop {', '.join(given)}")
        return FixedConfig(math.ceil(fixed / MATCHES_PER_SET))
    budget = max_matches if max_matches is not None else DEFAULT_MAX_MATCHES
    sets = budget // MATCHES_PER_SET
    if sets < DEFAULT_MIN_SETS:
        fail(
            f"--max-matches {budget} allows {sets} set{'s' * (sets != 1)} of {MATCHES_PER_SET}; the test gives no "
            f"verdict before {DEFAULT_MIN_SETS} sets: allow at least {DEFAULT_MIN_SETS * MATCHES_PER_SET} matches"
        )
    try:
        return SprtConfig(
            delta0=DEFAULT_DELTA0 if delta0 is None else delta0,
            delta1=DEFAULT_DELTA1 if delta1 is None else delta1,
            alpha=0.05 if alpha is None else alpha,
            beta=0.05 if beta is None else beta,
            max_sets=sets,
        )
    except ValueError as e:
        fail(f"the test: {e}")
