"""``arbiter new-bot``: a ready-to-run bot folder (:mod:`arbiter.compliance.scaffold`)."""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from arbiter.cli.common import print_json, user_errors
from arbiter.text import printable


def new_bot_command(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="The bot's name: its folder and its entrant name (letters, digits, _ . + -).",
            show_default=False,
        ),
    ],
    lang: Annotated[str, typer.Option("--lang", metavar="python|node|go|java", help="The bot's language.")] = "python",
    parent: Annotated[
        str | None, typer.Option("--dir", metavar="PARENT", help="Write NAME/ in this folder (default: here).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"name", "language", "folder", "files", "next"} on stdout.')
    ] = False,
) -> None:
    """Write NAME/: a new bot, ready to run, that passes check-bot as written.

    The folder holds the bot's program, a README and a tournament file entering it against the sample bots;
    a Go or Java bot also its build.sh, which builds it offline from Debian's packages.

    Usage: arbiter new-bot NAME [--lang python|node|go|java] [--dir PARENT]

    Exit code 0: written; 2: refused (a folder that exists and is not empty, a bad name, an unknown language).
    """
    from arbiter.compliance.scaffold import new_bot  # here: the other commands start without Jinja

    with user_errors():
        made = new_bot(name, lang, parent if parent is not None else ".")
    if as_json:
        print_json(made.to_json())
        return
    typer.echo(f"wrote {printable(str(made.folder))}/ ({made.language}): {', '.join(made.files)}")
    typer.echo("next:")
    for step in made.next_steps:
        typer.echo(f"  {printable(shlex.join(step))}")
    typer.echo(f"then improve it: {printable(str(made.folder / 'README.md'))}")
