"""What every command shares: one ``error:`` line and an exit code for a user's mistake.

Whatever reaches the terminal from outside (a file name, a bot's output, a log's entrant names)
goes through :func:`arbiter.text.printable` first: no escape sequence from a bot or a log is
ever written to the user's terminal. :func:`safe_console` is a rich Console that does so for
everything it prints.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from barbu.rules import BarbuError
from rich.console import Console
from rich.segment import Segment

from arbiter.errors import FAILED, USAGE, ArbiterError, ConfigError
from arbiter.text import printable
from arbiter.transport.server import SOCKET_PATH_MAX

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from arbiter.storage.models import Tournament
    from arbiter.tournament.config import TournamentConfig

# Options that mean the same in every command that runs matches (run, serve).
DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        metavar="DATABASE",
        help="Database URL or SQLite file (default: the file's 'database', else logs/arbiter.db).",
    ),
]
JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        metavar="N",
        min=1,
        max=1024,
        help="Matches played at once (default: the file's 'parallelism', else the cores).",
    ),
]
ClusterOption = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="tcp://HOST:PORT",
        help="Play the matches on the Dask cluster of this scheduler (default: the file's 'cluster', else here); "
        "see docs/cluster.md.",
    ),
]


IsolationOption = Annotated[
    str | None,
    typer.Option(
        "--isolation",
        metavar="none|bubblewrap",
        help="How bots are kept from this machine (default: bubblewrap where the host has it, else none, "
        "with a warning); none is for your own bots.",
    ),
]


def fail(message: str, code: int = USAGE) -> NoReturn:
    """Print ``error: message`` (one line, control characters spelled out) on stderr and exit."""
    typer.echo(f"error: {printable(message)}", err=True)
    raise typer.Exit(code)


class _SafeConsole(Console):
    """A rich Console that spells out control characters in the text it prints (its own
    styling codes are added after, so they still work)."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:  # rich's one funnel from segments to the terminal
        safe = (
            seg if seg.control else Segment(printable(seg.text, newlines=True), seg.style, seg.control)
            for seg in buffer
        )
        return super()._render_buffer(safe)


def warn(message: str) -> None:
    """Print ``warning: message`` (one line) on stderr: something the user should know, not an error."""
    typer.echo(f"warning: {printable(message)}", err=True)


def warn_if_unisolated(isolation: str | None) -> None:
    """The terminal's one line for bots that run without a sandbox (a match's log says it too)."""
    if isolation == "none":
        warn(
            "bots are not isolated (isolation: none): they see this machine's files, processes and network; "
            "see docs/security.md"
        )


def cluster_address(cluster: str | None) -> str | None:
    """``--cluster`` as a run takes it (stripped), None when not given; a bad address is a
    ConfigError naming the option."""
    if cluster is None:
        return None
    from arbiter.tournament.config import cluster_address_problem

    address = cluster.strip()
    if problem := cluster_address_problem(address):
        raise ConfigError(f"--cluster: {problem}")
    return address


def safe_console(**kwargs: Any) -> Console:
    return _SafeConsole(**kwargs)


def check_listen(value: str | None, option: str = "--listen") -> str | None:
    """A listen address the arbiter can use (``HOST:PORT`` with a port from 0 to 65535, or
    ``unix:PATH`` for a new socket in an existing folder), checked by binding it for a moment;
    else one ``error:`` line."""
    if value is None:
        return None
    shown = printable(value)
    if not value.strip():
        fail(f"{option}: the address is empty; give HOST:PORT (e.g. 127.0.0.1:0) or unix:PATH")
    if value.startswith("unix:"):
        path = value[len("unix:") :]
        if not path:
            fail(f"{option} {shown}: the socket path is empty")
        if len(os.fsencode(path)) > SOCKET_PATH_MAX:
            fail(f"{option} {shown}: a Unix socket path has at most {SOCKET_PATH_MAX} bytes")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            fail(f"{option} {shown}: no such folder {printable(folder)}")
        if os.path.lexists(path):
            kind = "a socket" if stat.S_ISSOCK(os.lstat(path).st_mode) else "a file"
            fail(f"{option} {shown}: {printable(path)} exists ({kind}); give a new path")
        return value
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        fail(f"{option} {shown}: expected HOST:PORT with a port from 0 to 65535 (e.g. 127.0.0.1:0), or unix:PATH")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        infos = socket.getaddrinfo(bare, int(port), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        fail(f"{option} {shown}: cannot resolve host {printable(bare)}: {getattr(e, 'strerror', None) or e}")
    family, socktype, proto, _, address = infos[0]
    try:
        with socket.socket(family, socktype, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as e:
        fail(f"{option} {shown}: cannot listen there: {e.strerror or e}")
    return value


def competition_file(path: str) -> TournamentConfig:
    """A tournament file or an arena file, as the tournament its keys describe (entrants,
    database; its bots need not be on this machine), for the commands that serve both (`arbiter
    key`). A file with a key only an arena file has (``web``, ``matchmaking``, ``store``, ...) is
    read as an arena file; any other as a tournament file, then as an arena file if it is not one
    (an arena may have fewer than two house entrants); a file that is neither gets the
    tournament file's error."""
    from arbiter.tournament.config import override, read_file

    text = read_file(Path(path), COMPETITION_FILE)
    return override(competition_text(text, printable(path), Path(path).resolve().parent), path=Path(path))


COMPETITION_FILE = "tournament or arena file"


def competition_text(text: str, display: str, base: Path) -> TournamentConfig:
    """:func:`competition_file` of a file's ``text`` (named ``display``, its relative paths from
    ``base``)."""
    from arbiter.arena.config import ArenaFile, parse_arena
    from arbiter.tournament.config import parse_config
    from arbiter.tournament.config.schema import SharedFile
    from arbiter.tournament.config.yamltree import read_tree

    tree, _ = read_tree(text, display, kind=COMPETITION_FILE, needs=None)
    arena_only = set(ArenaFile.model_fields) - set(SharedFile.model_fields)
    as_arena = functools.partial(parse_arena, text, display=display, base_dir=base, check_commands=False)
    if isinstance(tree, dict) and arena_only & set(tree):
        return as_arena().tournament
    try:
        return parse_config(text, display=display, base_dir=base, check_commands=False)
    except ConfigError as as_tournament:
        try:
            return as_arena().tournament
        except ConfigError:
            raise as_tournament from None


def stored_ranking(t: Tournament) -> tuple[str, int]:
    """What orders a recorded tournament's standings (its file's ``rating``) and how many matches
    make an entrant no longer provisional, as the file it ran with says: the database keeps that
    file's text, so ``standings --db`` and ``report`` order as the run did without the file. The
    defaults where no text is kept or it no longer reads."""
    from arbiter.model import DEFAULT_RANKING

    path = Path(t.config_path or "stored file")
    try:
        config = competition_text(t.config_text, printable(str(path)), path.resolve().parent)
    except ConfigError:
        return DEFAULT_RANKING
    return config.rating, config.provisional


def print_json(obj: Any) -> None:
    typer.echo(json.dumps(obj))


@contextmanager
def named_database(database: str | None, *, create: bool) -> Iterator[tuple[Engine, str]]:
    """The engine of the database a command was given (a --db value, a file's ``database``;
    None: $BARBU_DB, else the default), at the code's newest schema, and its name to show (no
    password), for the ``with`` block. ``create``: make it if it does not exist yet; else an
    SQLite file that is not there is an error, and nothing is made."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from arbiter.storage import database_url, open_database
    from arbiter.storage.dburl import without_password

    url = database_url(database)
    if not create:
        try:
            file = make_url(url).database if url.startswith("sqlite:") else None
        except ArgumentError:
            file = None  # open_database says what is wrong with it
        if file and file != ":memory:" and not file.startswith("file:") and not Path(file).exists():
            raise ConfigError(f"no such database: {printable(file)} (give --db, or the tournament file)")
    engine = open_database(database, create=True)
    try:
        yield engine, without_password(url)
    finally:
        engine.dispose()


def database_error(e: BaseException) -> str | None:
    """One line for a database failure, or None if ``e`` is not one (SQLAlchemy is not imported
    just for this)."""
    exc = sys.modules.get("sqlalchemy.exc")
    if exc is None or not isinstance(e, exc.SQLAlchemyError):
        return None
    from arbiter.storage.db import first_line

    return f"database error: {first_line(e)}"


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the errors a user can act on into one ``error:`` line and the error's exit code;
    anything else is a bug and keeps its traceback."""
    try:
        yield
    except ArbiterError as e:
        if e.exit_code >= 128:  # interrupted by a signal: not an error, a way to stop
            typer.echo(printable(str(e)), err=True)
            raise typer.Exit(e.exit_code) from None
        fail(str(e), e.exit_code)
    except BarbuError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{e.strerror or e}: {e.filename}" if e.filename else str(e), FAILED)
    except RecursionError:
        fail("the input is nested too deeply to be read")
    except Exception as e:
        message = database_error(e)
        if message is None:
            raise
        fail(message, FAILED)


def chosen_isolation(chosen: str | None) -> str:
    """The match's isolation: the one asked for, or the strongest this host supports."""
    from arbiter.process.sandbox import ISOLATIONS, bubblewrap_problem, strongest_isolation

    if chosen is None:
        return strongest_isolation()
    if chosen not in ISOLATIONS:
        fail(f"--isolation {printable(chosen)}: choose one of {', '.join(ISOLATIONS)}")
    if chosen == "bubblewrap" and (problem := bubblewrap_problem()) is not None:
        fail(f"--isolation bubblewrap: {problem}")
    return chosen
