"""``arbiter check-bot``: a bot program's conformance check (:mod:`arbiter.compliance.checkbot`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from arbiter.cli.common import IsolationOption, check_listen, chosen_isolation, fail, print_json, user_errors
from arbiter.files import output_folder
from arbiter.model import TRANSPORTS
from arbiter.referee.timecontrol import MAX_SECONDS
from arbiter.text import printable

CommandArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="CMD",
        help="The bot's command line, after `--`, e.g. `-- python sample_bots/random_bot.py`.",
        show_default=False,
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help='Print {"ok": bool, "steps": [{"name", "ok", "detail"}]} on stdout.')
]
TimeOption = Annotated[
    float,
    typer.Option("--time-per-decision", metavar="SECONDS", help="Seconds allowed for each decision (no reserve)."),
]
ConnectOption = Annotated[
    float,
    typer.Option(
        "--connect",
        "--connect-timeout",
        metavar="SECONDS",
        help="Seconds for the bot to start, connect and say hello (a tournament's time_control.connect).",
    ),
]
SeedOption = Annotated[
    int, typer.Option(metavar="N", min=0, max=2**63 - 1, help="Seed for the deals and the three random opponents.")
]
LogsOption = Annotated[
    str | None,
    typer.Option("--logs", metavar="FOLDER", help="Keep the match logs and the bot's output in this folder."),
]
ListenOption = Annotated[
    str | None,
    typer.Option(
        metavar="HOST:PORT",
        help="Listen on host:port (e.g. 127.0.0.1:0, any free port) instead of a private Unix socket "
        "(unsandboxed only: --transport tcp reaches a sandboxed bot).",
    ),
]
TransportOption = Annotated[
    str,
    typer.Option(
        metavar="unix|tcp",
        help="How the bot reaches the arbiter: its Unix socket, or a loopback TCP address (tcp, for stacks "
        "that cannot dial a Unix socket), as an entrant's 'transport' says.",
    ),
]

LimitOption = Annotated[
    list[str] | None,
    typer.Option(
        "--limit",
        metavar="KEY=VALUE",
        help="A resource limit, as a tournament file's limits: say it (memory=4GiB, cpu=600, processes=512, "
        "open_files, file_size, output, user; 'unlimited'); repeat for more. The others keep their defaults.",
    ),
]
MemoryOption = Annotated[
    str | None,
    typer.Option(
        "--memory", metavar="SIZE", help="The bot's memory limit (e.g. 4GiB): the same as --limit memory=SIZE."
    ),
]

BuildOption = Annotated[
    str | None,
    typer.Option(
        "--build",
        metavar="CMD",
        help="Build the bot first, as an arena does with entrant.yaml's 'build': CMD runs in a copy of this "
        "folder (writable, no network in the sandbox, the same limits), then the check runs there.",
    ),
]


def check_bot_command(
    command: CommandArgument,
    as_json: JsonOption = False,
    time_per_decision: TimeOption = 2.0,
    connect_timeout: ConnectOption = 10.0,
    seed: SeedOption = 1,
    logs: LogsOption = None,
    listen: ListenOption = None,
    transport: TransportOption = "unix",
    isolation: IsolationOption = None,
    limit: LimitOption = None,
    memory: MemoryOption = None,
    build: BuildOption = None,
) -> None:
    """Check that a bot program speaks the protocol and plays every kind of decision.

    Usage: arbiter check-bot [--json] -- CMD [ARGS]...

    The bot runs as a tournament's and an arena's do: in the strongest isolation this host has
    (bubblewrap where it works), under the default limits; --isolation, --limit and --connect
    take an arena's own (its rejections print the line that checks the same way).

    Exit code 0: every step passed; 1: a step failed.
    """
    folder, listen, sandbox = _checked(command, time_per_decision, connect_timeout, logs, listen, transport, isolation)
    from arbiter.compliance.build import build_copy, remove_built
    from arbiter.compliance.checkbot import check_bot  # here: the other commands start without it
    from arbiter.tournament.config import limits_from

    with user_errors():
        limits = limits_from([*(limit or []), *([f"memory={memory}"] if memory is not None else [])])
    scratch = Path(tempfile.mkdtemp(prefix="barbu-build-")) if build else None
    try:
        built = None
        if build and scratch is not None:  # the bot's folder, copied and built as an arena builds it
            built = build_copy(Path.cwd(), scratch / "bot", build, isolation=sandbox, limits=limits)
            if not built.ok:
                _print({"ok": False, "build": built.to_json(), "steps": []}, built.render(), as_json)
                raise typer.Exit(1)
        try:
            report = check_bot(
                command,
                time_per_decision,
                connect_timeout=connect_timeout,
                seed=seed,
                logs=folder,
                listen=listen,
                transport=transport,
                isolation=sandbox,
                limits=limits,
                cwd=None if scratch is None else str(scratch / "bot"),
            )
        except (RuntimeError, OSError, ValueError) as e:  # e.g. a --listen address that cannot be bound
            fail(str(e))
        build_json = {} if built is None else {"build": built.to_json()}
        text = report.render() if built is None else f"{built.render()}\n{report.render()}"
        _print({**report.to_json(), **build_json}, text, as_json)
    finally:
        if scratch is not None:
            remove_built(scratch)
    raise typer.Exit(0 if report.ok else 1)


def _checked(
    command: list[str],
    time_per_decision: float,
    connect_timeout: float,
    logs: str | None,
    listen: str | None,
    transport: str,
    isolation: str | None,
) -> tuple[Path | None, str | None, str]:
    """The options, refused in one line where they cannot make a check: the logs' folder, the
    address to listen on and the isolation the bot runs in."""
    if not command:
        fail("no bot command: give it after --, e.g. arbiter check-bot -- python mybot.py")
    if os.path.isdir(command[0]):  # not a bot to check: a user's mistake, said once
        fail(f"{printable(command[0])} is a folder, not a program: give the bot's command, e.g. -- python mybot.py")
    if not time_per_decision > 0 or not connect_timeout > 0:
        fail("--time-per-decision and --connect-timeout must be positive")
    if not time_per_decision <= MAX_SECONDS["per_decision"] or not connect_timeout <= MAX_SECONDS["connect"]:
        fail(
            f"--time-per-decision and --connect-timeout must be at most {MAX_SECONDS['per_decision']:g} seconds "
            f"(got {time_per_decision:g} and {connect_timeout:g}): a finite wait the bot can be judged by"
        )
    folder = None
    with user_errors():
        folder = output_folder(logs, "--logs") if logs is not None else None
    listen = check_listen(listen)
    if transport not in TRANSPORTS:
        fail(f"--transport {printable(transport)}: expected one of {', '.join(TRANSPORTS)}")
    if listen is not None and isolation is None:
        isolation = "none"  # the arbiter on TCP: a sandboxed bot could not reach it
    sandbox = chosen_isolation(isolation)
    if listen is not None and sandbox != "none":
        fail("--listen serves the arbiter on TCP, which a sandboxed bot cannot reach: use --transport tcp instead")
    return folder, listen, sandbox


def _print(data: dict[str, object], text: str, as_json: bool) -> None:
    if as_json:
        print_json(data)
    else:
        typer.echo(printable(text, newlines=True))
