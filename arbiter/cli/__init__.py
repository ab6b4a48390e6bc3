"""The ``arbiter`` command line.

User mistakes (a missing file, a bad preset, a bad switch) print one line on stderr and exit
non-zero; ``--json`` prints machine-readable results on stdout.
"""

from __future__ import annotations

import logging
import sys

import typer
from barbu.rules import BarbuError

from arbiter.cli.checkbot import check_bot_command
from arbiter.cli.play import match, selfplay
from arbiter.cli.replay import replay_command
from arbiter.cli.report import report_command
from arbiter.cli.tournament import run_command, standings_command
from arbiter.errors import INTERRUPTED

app = typer.Typer(
    name="arbiter",
    help="Barbu Arena: run bot matches and tournaments, verify and replay match logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


app.command("selfplay")(selfplay)
app.command("match")(match)
app.command("replay")(replay_command)
app.command("check-bot")(check_bot_command)
app.command("report")(report_command)
app.command("run")(run_command)
app.command("standings")(standings_command)


def main() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        app()
    except BarbuError as e:  # raised while typer parses options, outside any command's guard
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(INTERRUPTED)


