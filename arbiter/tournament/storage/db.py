"""Opening the results database: an SQLite file by default, PostgreSQL by URL.

``open_database`` accepts a SQLAlchemy URL (``sqlite:///results.db``,
``postgresql+psycopg://user:pw@host:5432/db``; ``postgresql://`` and ``postgres://`` mean the
psycopg 3 driver) or a plain file path (an SQLite file). It creates the tables if they are
missing and checks that the server answers, turning every failure into one ConfigError line
with the password hidden.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlmodel import SQLModel, create_engine

from arbiter.errors import ConfigError
from arbiter.tournament.storage import models

DEFAULT_DATABASE = "logs/arbiter.db"  # relative to the current directory
ENV_VAR = "BARBU_DB"
TABLES = [
    models.Tournament.__table__,
    models.Entrant.__table__,
    models.Match.__table__,
    models.SeatResult.__table__,
    models.Fault.__table__,
    models.RatingHistory.__table__,
]


def database_url(value: str | None = None, base_dir: Path | None = None) -> str:
    """The SQLAlchemy URL for a --db value, a file's ``database`` key, $BARBU_DB or the default."""
    value = value or os.environ.get(ENV_VAR) or DEFAULT_DATABASE
    base = base_dir or Path.cwd()
    if "://" not in value:
        path = Path(os.path.expanduser(value))
        return "sqlite:///" + str(path if path.is_absolute() else (base / path).resolve())
    for prefix in ("postgresql://", "postgres://"):
        if value.startswith(prefix):
            return "postgresql+psycopg://" + value[len(prefix) :]
    if value.startswith("sqlite:///") and not value.startswith("sqlite:////"):
        rest = value[len("sqlite:///") :]
        if rest and not rest.startswith(":memory:"):
            return "sqlite:///" + str((base / rest).resolve())
    return value


def shown(url: str) -> str:
    """The URL with its password hidden, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return url


def open_database(value: str | None = None, *, create: bool = True) -> Engine:
    url = database_url(value)
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise ConfigError(f"not a database URL: {url!r} (e.g. sqlite:///results.db or postgresql+psycopg://user@host/db)") from None
    backend = parsed.get_backend_name()
    kwargs: dict = {}
    if backend == "sqlite":
        db_path = parsed.database
        if db_path and db_path != ":memory:":
            folder = Path(db_path).parent
            if not create and not Path(db_path).exists():
                raise ConfigError(f"no such database: {db_path} (run a tournament first, or give --db)")
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ConfigError(f"cannot create the folder of database {db_path}: {e.strerror}") from None
        kwargs["connect_args"] = {"timeout": 30}
    elif backend == "postgresql":
        kwargs["connect_args"] = {"connect_timeout": 10}
        kwargs["pool_pre_ping"] = True
    else:
        raise ConfigError(f"unsupported database {shown(url)}: use an SQLite file or a postgresql+psycopg:// URL")
    try:
        engine = create_engine(url, **kwargs)
    except (NoSuchModuleError, ImportError) as e:
        raise ConfigError(f"cannot use database {shown(url)}: missing driver ({e})") from None
    except (ArgumentError, SQLAlchemyError) as e:
        raise ConfigError(f"cannot use database {shown(url)}: {first_line(e)}") from None
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    try:
        with engine.connect():
            pass
        if create:
            SQLModel.metadata.create_all(engine, tables=TABLES)
    except (DBAPIError, SQLAlchemyError, OSError) as e:
        engine.dispose()
        raise ConfigError(f"cannot reach database {shown(url)}: {first_line(e)}") from None
    return engine


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")  # readers (arbiter standings) never block the writer
    cursor.execute("PRAGMA synchronous=FULL")  # a committed match survives a power cut
    cursor.close()


def first_line(e: BaseException) -> str:
    orig = getattr(e, "orig", None)
    text = str(orig if orig is not None else e).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("(Background")]
    return lines[0] if lines else type(e).__name__
