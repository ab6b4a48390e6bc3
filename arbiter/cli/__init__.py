"""The ``arbiter`` command line.

User mistakes (a missing file, a bad preset, a bad switch) print one line on stderr and exit
non-zero; ``--json`` prints machine-readable results on stdout.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

import typer
from barbu.rules import BarbuError

from arbiter.cli.ab import ab_command
from arbiter.cli.checkbot import check_bot_command
from arbiter.cli.connect import connect_command
from arbiter.cli.credentials import author_app, key_app
from arbiter.cli.newbot import new_bot_command
from arbiter.cli.play import match, selfplay
from arbiter.cli.replay import replay_command
from arbiter.cli.report import report_command
from arbiter.cli.serve import serve_command
from arbiter.cli.submit import submit_command
from arbiter.cli.table import play_command
from arbiter.cli.tournament import run_command, standings_command
from arbiter.errors import INTERRUPTED

app = typer.Typer(
    name="arbiter",
    help="Barbu Arena: run bot matches and tournaments, verify and replay match logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: a flag shows no type (typer's rich panels print `--json <bool>`)
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as package_version

        from barbu.build import describe

        try:
            number = package_version("barbu-arena")
        except PackageNotFoundError:  # run from a source tree that was not installed
            number = "unknown"
        typer.echo(f"arbiter {number}; build: {describe()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_version,
        help="The version and the build that runs (compiled or pure).",
    ),
) -> None:
    """Barbu Arena: run bot matches and tournaments, verify and replay match logs."""


app.command("selfplay")(selfplay)
app.command("match")(match)
app.command("play")(play_command)
app.command("replay")(replay_command)
app.command("check-bot")(check_bot_command)
app.command("new-bot")(new_bot_command)
app.command("report")(report_command)
app.command("run")(run_command)
app.command("standings")(standings_command)
app.command("ab")(ab_command)
app.command("connect")(connect_command)
app.command("serve")(serve_command)
app.command("submit")(submit_command)
app.add_typer(key_app, name="key")
app.add_typer(author_app, name="author")


def _not_utf8(args: list[str]) -> tuple[int, str] | None:
    """The first argument that is not valid UTF-8 (Python carries its bytes as surrogates)."""
    for i, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return i, arg
    return None


def main() -> None:
    """Run the command line: every user mistake and every stop is one line and an exit code,
    never a traceback (2: a usage error, 1: the work failed, 128 + N: stopped by signal N)."""
    try:  # typer carries its own copy of click
        from typer._click import exceptions as click_exceptions
    except ImportError:  # pragma: no cover - a typer that uses click itself
        from click import exceptions as click_exceptions  # type: ignore[no-redef]  # the same module, unvendored

    from arbiter.signals import INTERRUPTS, exit_code, ignore_stop_signals, signal_of, stop_on_signals, stopping
    from arbiter.text import printable

    terminal = logging.StreamHandler(sys.stderr)
    terminal.setFormatter(_TerminalFormatter())
    logging.basicConfig(level=logging.WARNING, handlers=[terminal])
    # The lobby's comings and goings, wherever one runs (arbiter run, arbiter connect): where it
    # listens, who connected, each invitation and how its bot ended.
    logging.getLogger("arbiter.lobby").setLevel(logging.INFO)
    bad = _not_utf8(sys.argv[1:])
    if bad is not None:
        print(f"error: argument {bad[0]} is not valid UTF-8: {printable(bad[1])!s}", file=sys.stderr)
        sys.exit(2)
    code = 0
    try:
        with stop_on_signals():
            result = app(standalone_mode=False)
            code = result if isinstance(result, int) else 0
    except click_exceptions.ClickException as e:  # a missing or bad option: one line, not a usage box
        message = e.format_message()
        if message:  # (none when the help was shown for a bare `arbiter`)
            print(f"error: {printable(message)}", file=sys.stderr)
        code = e.exit_code
    except typer.Abort:
        print("interrupted", file=sys.stderr)
        code = INTERRUPTED
    except BarbuError as e:  # raised while typer parses options, outside any command's guard
        print(f"error: {printable(str(e))}", file=sys.stderr)
        code = 2
    except INTERRUPTS as e:  # stopped where no command said more
        ignore_stop_signals()
        print("interrupted", file=sys.stderr)
        code = exit_code(signal_of(e))
    except BrokenPipeError:
        code = 0
    _quiet_if_pipe_closed()
    if code >= 128 or stopping() is not None:
        ignore_stop_signals()
        # Stopped (a bridge that a signal ends exits 0), and everything of ours is cleaned up by
        # now (bots, workers, folders, the lease): exit without waiting on interpreter-exit hooks,
        # so that a process pool whose workers were killed mid-task, or a gRPC object finalized
        # after its event loop closed, cannot keep a stopped process alive (a bridge outlived its
        # SIGTERM once, in a run with two CPU hogs).
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


class _TerminalFormatter(logging.Formatter):
    """A log record on the terminal reads like the commands' own lines: ``warning: …``."""

    def format(self, record: logging.LogRecord) -> str:
        from arbiter.text import printable

        return f"{record.levelname.lower()}: {printable(record.getMessage())}"


def _quiet_if_pipe_closed() -> None:
    """A reader that went away (``arbiter replay LOG | head``) is no error: whatever is still
    buffered for it is dropped, without Python's 'Exception ignored' note at exit."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
