"""``arbiter author add`` and ``arbiter author revoke``: an arena's authors in its database.

The database is found as ``arbiter key`` finds it: ``--db``, else the file's ``database``, else
$BARBU_DB, else logs/arbiter.db. ``author add`` makes the database if it does not exist yet
(authors are added before the arena first runs); ``author revoke`` does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from arbiter.cli.common import print_json, user_errors

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy.engine import Engine

author_app = typer.Typer(
    name="author",
    help="Authors who submit bots to an arena: add one (a token, printed once), revoke one.",
    no_args_is_help=True,
    rich_markup_mode=None,  # as the main app's: click's plain help
)

_Name = Annotated[str, typer.Argument(metavar="NAME", help="The author's name (letters, digits, '_', '-', '.', '+').")]
_Config = Annotated[
    str | None,
    typer.Argument(
        metavar="ARENA",
        help="An arena file: its 'database' (found as `arbiter serve` finds it).",
        show_default=False,
    ),
]
_Db = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="DATABASE",
        help="Database URL or SQLite file (default: ARENA's 'database', else $BARBU_DB, else logs/arbiter.db).",
    ),
]


@author_app.command("add")
def add_author_command(
    name: _Name,
    config: _Config = None,
    db: _Db = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print {author, token_id, token, database} as JSON.")] = False,
) -> None:
    """Add author NAME: a token, printed once, alone on the last line; the database keeps only its hash."""
    from arbiter.lobby.keys import AUTHOR_PREFIX, parse_key
    from arbiter.storage.arena import ArenaStore

    with user_errors(), _database(name, config, db, create=True) as (engine, shown):
        token = ArenaStore(engine).add_author(name)
    if as_json:
        print_json({"author": name, "token_id": parse_key(token, AUTHOR_PREFIX)[0], "token": token, "database": shown})
        return
    typer.echo(f"A token for author {name}, in database {shown}, which keeps only its hash: it is shown this once.")
    typer.echo(
        f"Give it to {name}, privately: they save it in a file and submit a bot folder (with its entrant.yaml) with"
    )
    typer.echo("  arbiter submit DIR --arena http://HOST:PORT --token-file FILE")
    typer.echo(f"`arbiter author revoke {name}` on the same database revokes it.")
    typer.echo(token)


@author_app.command("revoke")
def revoke_author_command(
    name: _Name,
    config: _Config = None,
    db: _Db = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print {author, revoked, database} as JSON.")] = False,
) -> None:
    """Revoke author NAME's token: from its next attempt on, it is refused as revoked; their entrants keep playing."""
    from arbiter.errors import ConfigError
    from arbiter.storage.arena import ArenaStore

    with user_errors(), _database(name, config, db, create=False) as (engine, shown):
        revoked = ArenaStore(engine).revoke_author(name)
        if revoked == 0:
            raise ConfigError(f"author {name} has no live token in database {shown}: nothing was revoked")
    if as_json:
        print_json({"author": name, "revoked": revoked, "database": shown})
        return
    typer.echo(f"revoked the token of author {name} in database {shown}")


def _database(
    name: str, config: str | None, db: str | None, *, create: bool
) -> AbstractContextManager[tuple[Engine, str]]:
    """:func:`named_database` of the arena, after NAME is checked."""
    from arbiter.arena.config import load_arena
    from arbiter.cli.common import named_database
    from arbiter.errors import ConfigError
    from arbiter.tournament.config import NAME_RE

    if not NAME_RE.match(name):
        raise ConfigError(f"author name {name!r}: use letters, digits, '_', '-', '.', '+' (at most 64)")
    database = db
    if config is not None:
        arena = load_arena(config, check_commands=False)  # its bots need not be here
        database = db if db is not None else arena.tournament.database  # --db "" is an error, not the default
    return named_database(database, create=create)
