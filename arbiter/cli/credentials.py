"""``arbiter key new|revoke`` and ``arbiter author add|revoke``: the secrets a results database
gives out, made by one set of commands for both kinds (a remote entrant's keys, an arena author's
token: arbiter.storage.credentials).

The database is found as ``arbiter standings`` finds it: ``--db``, else the tournament or arena
file's ``database``, else $BARBU_DB, else logs/arbiter.db. Giving one out makes the database if
it does not exist yet (they are given out before the first run); revoking does not.
(The module's annotations are evaluated where they are written: typer reads those of the
commands it makes here, whose help names the kind.)
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from arbiter.cli.common import print_json, user_errors

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from sqlalchemy.engine import Engine

    from arbiter.storage.credentials import Credentials


@dataclass(frozen=True)
class Kind:
    """One kind of secret, as its commands speak of it."""

    command: str  # "key", "author"
    holder: str  # who holds one: "entrant", "author"
    secret: str  # what it is called: "key", "token"
    give: str  # the verb that gives one out: "new", "add"
    store: Callable[["Engine"], "Credentials"]
    use: Callable[[str, str], list[str]]  # how the holder uses it, in lines (given the site's address)
    file_help: str  # what the file argument is
    needs_entrant: bool  # the holder must be one of the file's entrants


def _keys(engine: "Engine") -> "Credentials":
    from arbiter.storage.credentials import EntrantKeys

    return EntrantKeys(engine)


def _tokens(engine: "Engine") -> "Credentials":
    from arbiter.storage.credentials import AuthorTokens

    return AuthorTokens(engine)


ENTRANT_KEYS = Kind(
    "key",
    "entrant",
    "key",
    "new",
    _keys,
    lambda name, site: [
        f"Save it in a file and give that file to {name}'s author, privately, with the lobby's CA certificate",
        "(lobby.tls.cert's CA, when it is a private one); their bot then plays with",
        "  arbiter connect --lobby HOST:PORT --key-file FILE --ca CA.pem -- BOT COMMAND",
    ],
    "A tournament or arena file: its 'database' (found as `arbiter run` and `arbiter serve` find it), and NAME "
    "must be one of its entrants.",
    True,
)
AUTHOR_TOKENS = Kind(
    "author",
    "author",
    "token",
    "add",
    _tokens,
    lambda name, site: [
        f"Give it to {name}, privately: they save it in a file and submit a bot folder (with its entrant.yaml) with",
        f"  arbiter submit DIR --arena {site} --token-file FILE --wait",
        f"or log in with it in the browser, in the arena's corner: {site}/me (the site: {site}/).",
    ],
    "An arena file: its 'database' (found as `arbiter serve` finds it).",
    False,
)


def commands(kind: Kind, help_text: str) -> typer.Typer:
    """The command group of ``kind``: give one out, revoke."""
    app = typer.Typer(name=kind.command, help=help_text, no_args_is_help=True, rich_markup_mode=None)
    name_arg = Annotated[str, typer.Argument(metavar="NAME", help=f"The {kind.holder}'s name.")]
    file_arg = Annotated[str | None, typer.Argument(metavar="FILE", help=kind.file_help, show_default=False)]
    db_opt = Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="DATABASE",
            help="Database URL or SQLite file (default: FILE's 'database', else $BARBU_DB, else logs/arbiter.db).",
        ),
    ]
    json_opt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]

    @app.command(kind.give)
    def give(name: name_arg, config: file_arg = None, db: db_opt = None, as_json: json_opt = False) -> None:
        """Give NAME a new secret: printed once, alone on the last line; the database keeps only its hash."""
        from arbiter.lobby.keys import parse_key

        with user_errors(), _database(kind, name, config, db, create=True) as (engine, shown):
            store = kind.store(engine)
            secret = store.issue(name)
        if as_json:
            secret_id = parse_key(secret, store.prefix)[0]
            print_json({kind.holder: name, f"{kind.secret}_id": secret_id, kind.secret: secret, "database": shown})
            return
        typer.echo(f"A new {kind.secret} for {kind.holder} {name}, in database {shown}: it is shown this once.")
        for line in kind.use(name, _site(config)):
            typer.echo(line)
        typer.echo(f"`arbiter {kind.command} revoke {name}` on the same database revokes it.")
        typer.echo(secret)

    @app.command("revoke")
    def revoke(name: name_arg, config: file_arg = None, db: db_opt = None, as_json: json_opt = False) -> None:
        """Revoke NAME's live secrets: from their next attempt on, they are refused as revoked."""
        from arbiter.errors import ConfigError

        with user_errors(), _database(kind, name, config, db, create=False) as (engine, shown):
            revoked = kind.store(engine).revoke(name)
            if revoked == 0:
                raise ConfigError(
                    f"{kind.holder} {name} has no live {kind.secret} in database {shown}: nothing was revoked"
                )
        if as_json:
            print_json({kind.holder: name, "revoked": revoked, "database": shown})
            return
        typer.echo(f"revoked {revoked} {kind.secret}{'s' * (revoked != 1)} of {kind.holder} {name} in database {shown}")

    return app


def _site(config: str | None) -> str:
    """The arena's address for people, from its file's ``web`` (``http://HOST:PORT`` where the file
    does not say one: no arena file, any address, any port)."""
    from arbiter.addresses import host_port
    from arbiter.arena.config import load_arena
    from arbiter.errors import ConfigError

    try:
        found = host_port(load_arena(config, check_commands=False).web) if config is not None else None
    except ConfigError:  # a tournament file
        found = None
    if found is None or found[1] == 0:
        return "http://HOST:PORT"
    host, port = found
    host = "HOST" if host in ("0.0.0.0", "::", "") else f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}"


def _database(
    kind: Kind, name: str, config: str | None, db: str | None, *, create: bool
) -> "AbstractContextManager[tuple[Engine, str]]":
    """:func:`named_database` of FILE (or --db), after NAME is checked (against FILE's entrants,
    for an entrant's key)."""
    from arbiter.cli.common import competition_file, named_database
    from arbiter.errors import ConfigError
    from arbiter.text import printable
    from arbiter.tournament.config import NAME_RE

    if not NAME_RE.match(name):
        raise ConfigError(f"{kind.holder} name {name!r}: use letters, digits, '_', '-', '.', '+' (at most 64)")
    database = db
    if config is not None:
        cfg = competition_file(config)
        if kind.needs_entrant and name not in cfg.entrant_names:
            raise ConfigError(
                f"{name!r} is not an entrant of {printable(config)}: its entrants are {', '.join(cfg.entrant_names)}"
            )
        database = db if db is not None else cfg.database  # --db "" is an error, not the default
    return named_database(database, create=create)


key_app = commands(ENTRANT_KEYS, "Keys of remote entrants: make one for an entrant, revoke an entrant's keys.")
author_app = commands(
    AUTHOR_TOKENS, "Authors who submit bots to an arena: add one (a token, printed once), revoke one."
)
