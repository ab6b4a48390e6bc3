"""``arbiter selfplay`` and ``arbiter match``: one match, in process or between bot processes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arbiter.cli.common import IsolationOption, check_listen, chosen_isolation, fail, print_json, user_errors
from arbiter.text import printable

if TYPE_CHECKING:
    from barbu.rules import Ruleset

    from arbiter.match.play import BotMatch

MAX_SEED = 2**63 - 1  # seeds are kept as signed 64-bit numbers (the results database's)
FIRST_DECLARER_HELP = (
    "The seat that declares the first block of contracts; each later block's declarer sits to its left."
)
FORCE_HELP = "Replace the files of an earlier match at that path (never in a tournament's log folder)."


def rules_of(preset: str, settings: list[str] | None) -> Ruleset:
    from barbu.rules import make_ruleset, parse_switch_assignments

    return make_ruleset(preset, parse_switch_assignments(settings or []))


def selfplay(
    out: Annotated[str, typer.Option("--out", metavar="FILE", help="Where to write the match log.")],
    seed: Annotated[
        int, typer.Option(metavar="N", min=0, max=MAX_SEED, help="Seed for the deals and the players.")
    ] = 0,
    rules: Annotated[
        str, typer.Option("--rules", metavar="PRESET", help="Rules preset: standard, seed_fi, seed_pl, seed_de_fr.")
    ] = "standard",
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set", metavar="SWITCH=VALUE", help="Override a rules switch: --set domino_ace=low (repeatable)."
        ),
    ] = None,
    first_declarer: Annotated[int, typer.Option(metavar="SEAT", min=0, max=3, help=FIRST_DECLARER_HELP)] = 0,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Play one match between four in-process random players and write its log."""
    from arbiter.files import output_path
    from arbiter.match.blocking import run_blocking
    from arbiter.referee.logfile import AtomicLogFile
    from arbiter.referee.loop import MatchSetup, Referee
    from arbiter.referee.players import RandomPlayer

    target = output_path(out, "--out")
    check_new_files("--out", target, [target], force)
    setup = MatchSetup(rules_of(rules, settings), seed=seed, first_declarer=first_declarer, match_id=f"selfplay-{seed}")
    players = [RandomPlayer(seed=f"{seed}/{s}", name=f"random-{s}") for s in range(4)]
    with user_errors():  # a log that cannot be written (a full disk): one line naming it
        sink = AtomicLogFile(target, replace=force)  # nor a file that appeared meanwhile
        try:
            result = run_blocking(Referee(setup, players, sink, log_times=False).play())  # same seed, same bytes
        except BaseException:
            sink.discard()  # stopped: no half log is left behind
            raise
        path = sink.commit()
    if as_json:
        print_json({"totals": result.totals, "places": result.places, "log": str(path)})
    else:
        typer.echo(
            f"played {result.deals} deals; totals {result.totals}, places {result.places}; log: {printable(path)}"
        )


def match(
    bots: Annotated[
        list[str],
        typer.Option(
            "--bot",
            metavar="CMD",
            help='A bot command, 4 times in seat order, e.g. "python sample_bots/random_bot.py".',
        ),
    ],
    seed: Annotated[int, typer.Option(metavar="N", min=0, max=MAX_SEED, help="Seed for the deals.")] = 0,
    log_file: Annotated[
        str | None,
        typer.Option("--log", metavar="FILE", help="Match log path (default: logs/match-SEED-TIME.jsonl)."),
    ] = None,
    rules: Annotated[str, typer.Option("--rules", metavar="PRESET", help="Rules preset.")] = "standard",
    settings: Annotated[
        list[str] | None, typer.Option("--set", metavar="SWITCH=VALUE", help="Override a rules switch (repeatable).")
    ] = None,
    first_declarer: Annotated[int, typer.Option(metavar="SEAT", min=0, max=3, help=FIRST_DECLARER_HELP)] = 0,
    time_per_decision: Annotated[
        float, typer.Option("--time-per-decision", metavar="SECONDS", help="Seconds per decision.")
    ] = 1.0,
    reserve: Annotated[
        float, typer.Option("--reserve", metavar="SECONDS", help="Per-match reserve in seconds.")
    ] = 10.0,
    connect_timeout: Annotated[
        float, typer.Option("--connect-timeout", metavar="SECONDS", help="Seconds for a bot to connect.")
    ] = 10.0,
    max_strikes: Annotated[
        int, typer.Option("--max-strikes", metavar="N", min=1, max=1000, help="Faults before a seat forfeits.")
    ] = 3,
    listen: Annotated[
        str | None,
        typer.Option(metavar="HOST:PORT", help="Listen on host:port (or unix:PATH) instead of a private Unix socket."),
    ] = None,
    isolation: IsolationOption = None,
    force: Annotated[bool, typer.Option("--force", help=FORCE_HELP)] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Play one match between four bot processes over gRPC and write its log."""
    from arbiter.referee.faults import FaultPolicy
    from arbiter.referee.loop import MatchSetup
    from arbiter.referee.timecontrol import TimeControl
    from arbiter.signals import INTERRUPTS, exit_code, signal_of
    from arbiter.tournament.config import bot_command

    if len(bots) != 4:
        fail(f"a match needs exactly 4 --bot options, got {len(bots)}")
    try:
        control = TimeControl(per_decision=time_per_decision, reserve=reserve, connect=connect_timeout)
    except ValueError as e:
        fail(str(e))
    for cmd in bots:  # every program and script is there before anything starts, as in tournament files
        bot_command(cmd)
    sandbox = chosen_isolation(isolation)
    log_path = _match_log_path(log_file, seed, force)
    listen = check_listen(listen)
    from arbiter.match.blocking import play_bot_match  # (gRPC) once the options are known good
    from arbiter.match.play import BotSpec, MatchOptions

    setup = MatchSetup(rules_of(rules, settings), seed=seed, first_declarer=first_declarer, match_id=log_path.stem)
    specs = [BotSpec(name=f"seat{s}:{short_name(cmd)}", command=cmd) for s, cmd in enumerate(bots)]
    options = MatchOptions(
        time_control=control, fault_policy=FaultPolicy(max_strikes), replace=force, isolation=sandbox
    )
    try:
        with user_errors():  # e.g. a log or a bot's output that cannot be written (a full disk)
            played = play_bot_match(specs, setup, log_path, options, listen=listen)
    except INTERRUPTS as e:  # Ctrl-C, SIGTERM: the bots are killed and the socket removed by now
        typer.echo("interrupted: the match was stopped; no log was written", err=True)
        raise typer.Exit(exit_code(signal_of(e))) from None
    except RuntimeError as e:
        if "bind" not in str(e):
            raise
        fail(f"--listen {printable(listen)}: cannot listen there")
    _print_match(played, as_json)


def _match_log_path(log_file: str | None, seed: int, force: bool) -> Path:
    """Where ``arbiter match`` writes its log, checked with the seats' output files beside it."""
    import time

    from arbiter.files import output_path

    default_log = Path("logs") / f"match-{seed}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    log_path = output_path(log_file if log_file is not None else default_log, "--log")
    stem = log_path.name.removesuffix(".jsonl")
    check_new_files(
        "--log", log_path, [log_path, *(log_path.with_name(f"{stem}.seat{s}.stderr") for s in range(4))], force
    )
    return log_path


def _print_match(played: BotMatch, as_json: bool) -> None:
    r = played.result
    if as_json:
        print_json(
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
        typer.echo(f"  fault: deal {f.deal} seat {f.seat} {f.kind}: {printable(f.detail)} -> {f.action}")
    typer.echo(f"log: {printable(played.log_path)}")


def check_new_files(option: str, log: Path, files: list[Path], force: bool) -> None:
    """A match's files (its log, the seats' output) go neither into a tournament's log folder,
    whose logs are its database's records, nor over an existing file unless ``--force``."""
    from arbiter.errors import ConfigError
    from arbiter.tournament.logfolder import owner_of

    shown = printable(str(log))
    owner = owner_of(log.parent.resolve())
    if owner is not None:
        raise ConfigError(
            f"{option} {shown}: {printable(str(log.parent))} is the log folder of {owner}; only that "
            "tournament's run writes there (its logs are the database's records): write elsewhere"
        )
    existing = [f for f in files if os.path.lexists(f)]
    if existing and not force:
        raise ConfigError(
            f"{option} {shown}: {printable(str(existing[0]))} exists; give a new path, or --force to replace it"
        )


def short_name(command: str) -> str:
    """A readable entrant name from a bot command: the script's file name without extension."""
    words = command.split()
    scripts = [w for w in words if w.endswith((".py", ".js", ".rb", ".jar"))]
    return Path(scripts[-1] if scripts else words[0] if words else "bot").stem
