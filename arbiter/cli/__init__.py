"""The ``arbiter`` command line.

User mistakes (a missing file, a bad preset, a bad switch) print one line on stderr and exit
non-zero; ``--json`` prints machine-readable results on stdout.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from barbu.rules import BarbuError

from .checkbot import check_bot_command
from .replay import replay_command
from .tournament_cli import run_command, standings_command
from .web.report import report_command

app = typer.Typer(
    name="arbiter",
    help="Barbu Arena: run bot matches and tournaments, verify and replay match logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _print_json(obj) -> None:
    typer.echo(json.dumps(obj))


def _rules(preset: str, settings: list[str] | None):
    from barbu.rules import make_ruleset, parse_switch_assignments

    return make_ruleset(preset, parse_switch_assignments(settings or []))


@app.command()
def selfplay(
    out: Annotated[Path, typer.Option("--out", help="Where to write the match log.")],
    seed: Annotated[int, typer.Option(help="Seed for the deals and the players.")] = 0,
    rules: Annotated[str, typer.Option("--rules", help="Rules preset: standard, seed_fi, seed_pl, seed_de_fr.")] = "standard",
    settings: Annotated[
        Optional[list[str]], typer.Option("--set", help="Override a rules switch: --set domino_ace=low (repeatable).")
    ] = None,
    first_declarer: Annotated[int, typer.Option(min=0, max=3)] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Play one match between four in-process random players and write its log."""
    from .log import AtomicLogFile
    from .players import RandomPlayer
    from .referee import MatchSetup, Referee

    setup = MatchSetup(_rules(rules, settings), seed=seed, first_declarer=first_declarer, match_id=f"selfplay-{seed}")
    players = [RandomPlayer(seed=f"{seed}/{s}", name=f"random-{s}") for s in range(4)]
    sink = AtomicLogFile(out)
    result = Referee(setup, players, sink, log_times=False).run()  # same seed, same bytes
    path = sink.commit()
    if as_json:
        _print_json({"totals": result.totals, "places": result.places, "log": str(path)})
    else:
        typer.echo(f"played {result.deals} deals; totals {result.totals}, places {result.places}; log: {path}")


@app.command()
def match(
    bots: Annotated[
        list[str], typer.Option("--bot", help='A bot command, 4 times in seat order, e.g. "python sample_bots/random_bot.py".')
    ],
    seed: Annotated[int, typer.Option(help="Seed for the deals.")] = 0,
    log_file: Annotated[Optional[Path], typer.Option("--log", help="Match log path (default: logs/match-SEED-TIME.jsonl).")] = None,
    rules: Annotated[str, typer.Option("--rules", help="Rules preset.")] = "standard",
    settings: Annotated[Optional[list[str]], typer.Option("--set", help="Override a rules switch (repeatable).")] = None,
    first_declarer: Annotated[int, typer.Option(min=0, max=3)] = 0,
    time_per_decision: Annotated[float, typer.Option("--time-per-decision", help="Seconds per decision.")] = 1.0,
    reserve: Annotated[float, typer.Option("--reserve", help="Per-match reserve in seconds.")] = 10.0,
    connect_timeout: Annotated[float, typer.Option("--connect-timeout", help="Seconds for a bot to connect.")] = 10.0,
    max_strikes: Annotated[int, typer.Option("--max-strikes", min=1, help="Faults before a seat forfeits.")] = 3,
    listen: Annotated[Optional[str], typer.Option(help="Listen on host:port instead of a private Unix socket.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Play one match between four bot processes over gRPC and write its log."""
    import time

    from .faults import FaultPolicy
    from .match import BotSpec, play_bot_match
    from .referee import MatchSetup
    from .timecontrol import TimeControl

    if len(bots) != 4:
        _fail(f"a match needs exactly 4 --bot options, got {len(bots)}")
    try:
        control = TimeControl(per_decision=time_per_decision, reserve=reserve, connect=connect_timeout)
    except ValueError as e:
        _fail(str(e))
    log_path = log_file or Path("logs") / f"match-{seed}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    setup = MatchSetup(_rules(rules, settings), seed=seed, first_declarer=first_declarer, match_id=log_path.stem)
    specs = [BotSpec(name=f"seat{s}:{_short_name(cmd)}", command=cmd) for s, cmd in enumerate(bots)]
    played = play_bot_match(
        specs, setup, log_path, time_control=control, fault_policy=FaultPolicy(max_strikes), listen=listen
    )
    r = played.result
    if as_json:
        _print_json(
            {
                "status": r.status,
                "totals": r.totals,
                "places": r.places,
                "faults": [f.to_json() for f in r.faults],
                "forfeits": r.forfeits,
                "log": str(played.log_path),
            }
        )
        return
    typer.echo(f"{r.status}: {r.deals} deals in {played.wall_seconds:.1f}s; totals {r.totals}, places {r.places}")
    for f in r.faults:
        typer.echo(f"  fault: deal {f.deal} seat {f.seat} {f.kind}: {f.detail} -> {f.action}")
    typer.echo(f"log: {played.log_path}")


def _short_name(command: str) -> str:
    """A readable entrant name from a bot command: the script's file name without extension."""
    words = command.split()
    scripts = [w for w in words if w.endswith((".py", ".js", ".rb", ".jar"))]
    return Path(scripts[-1] if scripts else words[0] if words else "bot").stem


app.command("replay")(replay_command)
app.command("check-bot")(check_bot_command)
app.command("report")(report_command)
app.command("run")(run_command)
app.command("standings")(standings_command)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        app()
    except BarbuError as e:
        _fail_plain(str(e))
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


def _fail_plain(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
