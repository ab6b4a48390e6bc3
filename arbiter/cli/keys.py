"""``arbiter key new`` and ``arbiter key revoke``: remote entrants' keys in the results database.

The database is found as ``arbiter standings`` finds it: ``--db``, else the tournament (or
arena) file's ``database``, else $BARBU_DB, else logs/arbiter.db. ``key new`` makes the database if it does
not exist yet (keys are given out before the tournament's first run); ``key revoke`` does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from arbiter.cli.common import print_json, user_errors

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy.engine import Engine

key_app = typer.Typer(
    name="key",
    help="Keys of remote entrants: make one for an entrant, revoke an entrant's keys.",
    no_args_is_help=True,
    rich_markup_mode=None,  # as the main app's: click's plain help
)

_Name = Annotated[str, typer.Argument(metavar="NAME", help="The entrant's name, as in the tournament file.")]
_Config = Annotated[
    str | None,
    typer.Argument(
        metavar="CONFIG",
        help="A tournament or arena file: its 'database' (found as `arbiter run` and `arbiter serve` find it), and "
        "NAME must be one of its entrants.",
        show_default=False,
    ),
]
_Db = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="DATABASE",
        help="Database URL or SQLite file (default: CONFIG's 'database', else $BARBU_DB, else logs/arbiter.db).",
    ),
]


@key_app.command("new")
def new_key_command(
    name: _Name,
    config: _Config = None,
    db: _Db = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print {entrant, key_id, key, database} as JSON.")] = False,
) -> None:
    """Make a key for entrant NAME: printed once, alone on the last line; the database keeps only its hash."""
    from arbiter.lobby.keys import parse_key
    from arbiter.storage.keys import KeyStore

    with user_errors(), _database(name, config, db, create=True) as (engine, shown):
        key = KeyStore(engine).issue(name)
    if as_json:
        print_json({"entrant": name, "key_id": parse_key(key)[0], "key": key, "database": shown})
        return
    typer.echo(f"A new key for entrant {name}, in database {shown}, which keeps only its hash: it is shown this once.")
    typer.echo(f"Save it in a file and give that file to {name}'s author, privately; their bot then plays with")
    typer.echo("  arbiter connect --lobby HOST:PORT --key-file FILE -- BOT COMMAND")
    typer.echo(f"`arbiter key revoke {name}` on the same database revokes it (and {name}'s other keys).")
    typer.echo(key)


@key_app.command("revoke")
def revoke_key_command(
    name: _Name,
    config: _Config = None,
    db: _Db = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print {entrant, revoked, database} as JSON.")] = False,
) -> None:
    """Revoke every live key of entrant NAME: from its next attempt on, each is refused as revoked."""
    from arbiter.errors import ConfigError
    from arbiter.storage.keys import KeyStore

    with user_errors(), _database(name, config, db, create=False) as (engine, shown):
        revoked = KeyStore(engine).revoke(name)
        if revoked == 0:
            raise ConfigError(f"entrant {name} has no live key in database {shown}: nothing was revoked")
    if as_json:
        print_json({"entrant": name, "revoked": revoked, "database": shown})
        return
    typer.echo(f"revoked {revoked} key{'s' * (revoked != 1)} of entrant {name} in database {shown}")


def _database(
    name: str, config: str | None, db: str | None, *, create: bool
) -> AbstractContextManager[tuple[Engine, str]]:
    """:func:`named_database`, after NAME is checked against CONFIG's entrants."""
    from arbiter.cli.common import competition_file, named_database
    from arbiter.errors import ConfigError
    from arbiter.text import printable
    from arbiter.tournament.config import NAME_RE

    if not NAME_RE.match(name):
        raise ConfigError(f"entrant name {name!r}: use letters, digits, '_', '-', '.', '+' (at most 64)")
    database = db
    if config is not None:
        cfg = competition_file(config)
        if name not in cfg.entrant_names:
            raise ConfigError(
                f"{name!r} is not an entrant of {printable(config)}: its entrants are {', '.join(cfg.entrant_names)}"
            )
        database = db if db is not None else cfg.database  # --db "" is an error, not the default
    return named_database(database, create=create)
