"""Opening the results database: an SQLite file by default, PostgreSQL by URL.

``open_database`` accepts a SQLAlchemy URL (``sqlite:///results.db``,
``postgresql+psycopg://user:pw@host:5432/db``; ``postgresql://`` and ``postgres://`` mean the
psycopg 3 driver) or a plain file path (an SQLite file; a folder, a device or an empty name is
refused). It brings the schema to the code's newest revision (``schema``: Alembic; a new
database gets every table) and checks that the server answers, turning every failure into one
ConfigError line with the password hidden.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlmodel import Session, create_engine

from arbiter.errors import ConfigError, StorageError
from arbiter.files import kind_of
from arbiter.storage import schema
from arbiter.storage.dburl import without_password
from arbiter.text import printable

DEFAULT_DATABASE = "logs/arbiter.db"  # relative to the current directory
ENV_VAR = "BARBU_DB"
# How long a writer waits for another's lock before it is an error, on SQLite and PostgreSQL
# alike: never a silent hang.
LOCK_WAIT_SECONDS = 30


def database_url(value: str | None = None, base_dir: Path | None = None) -> str:
    """The SQLAlchemy URL for a --db value, a file's ``database`` key, $BARBU_DB or the default."""
    if value is not None and not value.strip():
        raise ConfigError("the database name is empty: give an SQLite file or a database URL")
    value = value or os.environ.get(ENV_VAR) or DEFAULT_DATABASE
    if "\0" in value:
        raise ConfigError("the database name holds a NUL character")
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


def open_database(value: str | None = None, *, create: bool = True) -> Engine:
    """An engine for the database ``value`` names. ``create``: make the file and its missing
    tables (a run); else the database must exist, and an SQLite file is opened read-only,
    writing nothing to open it (``standings``, ``report``: read-only storage works)."""
    url = database_url(value)
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        raise ConfigError(
            f"not a database URL: {url!r} (e.g. sqlite:///results.db or postgresql+psycopg://user@host/db)"
        ) from None
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        db_path = parsed.database
        if db_path and db_path != ":memory:" and not db_path.startswith("file:"):
            _check_sqlite_path(db_path)
            folder = Path(db_path).parent
            if not create and not Path(db_path).exists():
                raise ConfigError(f"no such database: {printable(db_path)} (run a tournament first, or give --db)")
            if not create:
                return _checked_readable(_open_sqlite_reading(db_path), printable(db_path))
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise ConfigError(f"cannot create the folder of database {printable(db_path)}: {e.strerror}") from None
        kwargs["connect_args"] = {"timeout": LOCK_WAIT_SECONDS}
    elif backend == "postgresql":
        kwargs["connect_args"] = {"connect_timeout": 10, "options": f"-c lock_timeout={LOCK_WAIT_SECONDS}s"}
        kwargs["pool_pre_ping"] = True
    else:
        raise ConfigError(
            f"unsupported database {without_password(url)}: use an SQLite file or a postgresql+psycopg:// URL"
        )
    try:
        engine = create_engine(url, **kwargs)
    except (NoSuchModuleError, ImportError) as e:
        raise ConfigError(f"cannot use database {without_password(url)}: missing driver ({e})") from None
    except (ArgumentError, SQLAlchemyError) as e:
        raise ConfigError(f"cannot use database {without_password(url)}: {first_line(e)}") from None
    if backend == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    try:
        with engine.connect():
            pass
        if create:
            _upgrade_schema(engine, without_password(url))
        else:
            schema.check_readable(engine, without_password(url))
    except (DBAPIError, SQLAlchemyError, OSError) as e:
        engine.dispose()
        raise ConfigError(f"cannot reach database {without_password(url)}: {first_line(e)}") from None
    except StorageError:
        engine.dispose()
        raise
    return engine


def _checked_readable(engine: Engine, name: str) -> Engine:
    """The engine of a database this code can read; else it is closed and StorageError says why."""
    try:
        schema.check_readable(engine, name)
    except StorageError:
        engine.dispose()
        raise
    return engine


def _upgrade_schema(engine: Engine, name: str) -> None:
    """Upgrade to the newest revision; two runs doing it at the same moment is not an error."""
    for attempt in range(5):
        try:
            schema.upgrade(engine, name)
            return
        except (DBAPIError, SQLAlchemyError):
            if attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))  # the other run's upgrade won: look again


def _check_sqlite_path(db_path: str) -> None:
    """An SQLite database is a regular file (or a new name): not a folder, a device or a pipe."""
    try:
        st = os.stat(db_path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise ConfigError(f"cannot use database {printable(db_path)}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"database {printable(db_path)} is {kind_of(st.st_mode)}, not an SQLite database file")


def _open_sqlite_reading(db_path: str) -> Engine:
    """Open an SQLite file only to read it, and without writing anything to open it: no
    journal-mode change, so a database on read-only storage (a read-only mount, a file and
    folder one may not write) opens too. Where even SQLite's shared-memory file cannot be made
    next to a WAL database, the file is read as immutable (nobody can change it there)."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(db_path)) + "?mode=ro"

    def connect(extra: str = "") -> sqlite3.Connection:
        conn = sqlite3.connect(uri + extra, uri=True, timeout=LOCK_WAIT_SECONDS, check_same_thread=False)
        conn.execute("PRAGMA query_only=ON")
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn

    try:
        connect().close()
        extra = ""
    except sqlite3.DatabaseError as e:
        try:
            connect("&immutable=1").close()
        except sqlite3.DatabaseError:
            raise ConfigError(f"cannot read database {printable(db_path)}: {e}") from None
        extra = "&immutable=1"
    return create_engine("sqlite://", creator=lambda: connect(extra))


def _sqlite_pragmas(dbapi_connection: sqlite3.Connection, _record: object) -> None:
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


@contextmanager
def writing(engine: Engine) -> Iterator[Session]:
    """A session committed at the end of the block. On SQLite its transaction takes the write
    lock at once (``BEGIN IMMEDIATE``): what it reads stays true until it commits, as another
    writer waits (on PostgreSQL, lock the rows you must: ``SELECT … FOR UPDATE``)."""
    with Session(engine, expire_on_commit=False) as session:
        if engine.dialect.name == "sqlite":
            session.connection().exec_driver_sql("BEGIN IMMEDIATE")
        yield session
        session.commit()
