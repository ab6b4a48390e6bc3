"""``arbiter connect``: play from this machine in a lobby's tournaments (arbiter/lobby/bridge.py)."""

from __future__ import annotations

import os
import shlex
from typing import Annotated

import typer

from arbiter.cli.common import user_errors
from arbiter.text import printable

CommandArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="CMD", show_default=False, help="The bot's command, after --, as you would run it (e.g. -- ./mybot)."
    ),
]
LobbyOption = Annotated[str, typer.Option("--lobby", metavar="HOST:PORT", help="Where the lobby listens.")]
KeyFileOption = Annotated[
    str, typer.Option("--key-file", metavar="FILE", help="A file holding your entrant key (and nothing else).")
]
CaOption = Annotated[
    str | None,
    typer.Option("--ca", metavar="FILE", help="The CA that signed the lobby's certificate (default: the system's)."),
]
CapacityOption = Annotated[int, typer.Option("--capacity", metavar="N", min=1, max=64, help="Matches to play at once.")]
NameOption = Annotated[str, typer.Option("--name", metavar="NAME", help="Your entrant's name (default: the key's).")]
VersionOption = Annotated[
    str, typer.Option("--version", metavar="TEXT", help="Your bot's version, for the lobby's logs.")
]
PlaintextOption = Annotated[
    bool, typer.Option("--plaintext", help="No TLS: only for a lobby on this machine (a loopback address).")
]
OutOption = Annotated[str, typer.Option("--out", metavar="DIR", help="Where each match's bot output goes.")]
TransportOption = Annotated[
    str,
    typer.Option(
        metavar="unix|tcp",
        help="How your bot reaches the bridge: a Unix socket, or a loopback TCP address (tcp, for stacks that "
        "cannot dial a Unix socket).",
    ),
]


def connect_command(
    command: CommandArgument,
    lobby: LobbyOption,
    key_file: KeyFileOption,
    ca: CaOption = None,
    capacity: CapacityOption = 1,
    name: NameOption = "",
    version: VersionOption = "",
    plaintext: PlaintextOption = False,
    out: OutOption = "connect-logs",
    transport: TransportOption = "unix",
) -> None:
    """Connect a bot to a lobby and play the matches it is invited to, until its tournament is over
    or it is stopped (Ctrl-C):
    arbiter connect --lobby HOST:PORT --key-file FILE [--ca FILE] -- CMD... (docs/remote.md)."""
    # grpc's own log lines (a failed TLS handshake, at info level) would repeat ours, untidily.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from arbiter.files import output_folder
    from arbiter.lobby.bridge import BridgeSettings, check_plaintext, read_ca, read_key, split_address
    from arbiter.model import TRANSPORTS, Transport
    from arbiter.signals import INTERRUPTS
    from arbiter.tournament.config import bot_command

    with user_errors():
        split_address(lobby)
        if plaintext:
            check_plaintext(lobby)
            if ca is not None:
                raise _usage("--ca and --plaintext do not go together: a plaintext lobby has no certificate")
        if not command:
            raise _usage(
                "give the bot's command after --, e.g. arbiter connect --lobby HOST:PORT --key-file FILE -- ./mybot"
            )
        if transport not in TRANSPORTS:
            raise _usage(f"--transport {printable(transport)}: expected one of {', '.join(TRANSPORTS)}")
        line = shlex.join(command)
        bot_command(line, where="the bot's command")
        settings = BridgeSettings(
            lobby=lobby.strip(),
            key=read_key(key_file),
            command=line,
            key_file=key_file,
            ca=read_ca(ca) if ca else None,
            ca_file=ca,
            capacity=capacity,
            name=name,
            version=version,
            plaintext=plaintext,
            out=output_folder(out, "--out"),
            transport=Transport(transport),
        )
    from arbiter.lobby.bridge import Bridge
    from arbiter.match.blocking import run_blocking

    try:
        with user_errors():
            reason = run_blocking(Bridge(settings).run())
    except INTERRUPTS:  # Ctrl-C, SIGTERM: the bots are killed by now; stopping is how a bridge ends
        typer.echo(f"stopped: disconnected from {printable(lobby)}", err=True)
        return
    typer.echo(f"{reason}: disconnected from {printable(lobby)}", err=True)  # the lobby's words, made printable


def _usage(message: str) -> Exception:
    from arbiter.errors import ConfigError

    return ConfigError(message)
