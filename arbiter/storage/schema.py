"""The results database's schema revisions (Alembic): a run brings its database to the code's
newest revision; a reader only checks that the code knows the database's revision.

The revisions ship in the package (``migrations/versions/``) and run on the caller's connection
(``migrations/env.py``): nothing is needed in the user's folder. A database made before
migrations existed holds our tables without an ``alembic_version`` table; when those tables
have the baseline's columns, the baseline takes the database over as it is (adding any table
it lacks), else nothing is changed and the run stops with one line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import MetaData, inspect
from sqlalchemy.engine import Connection, Engine

from arbiter.errors import StorageError

MIGRATIONS = Path(__file__).with_name("migrations")
BASELINE = "0001"  # the schema of databases made before migrations (create_all)


def alembic_config(extra_versions: Sequence[Path] = ()) -> Config:
    """The package's revisions; ``extra_versions``: more version folders (a test's revisions)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("path_separator", "os")
    config.set_main_option("version_locations", os.pathsep.join(map(str, [MIGRATIONS / "versions", *extra_versions])))
    return config


def upgrade(engine: Engine, name: str, config: Config | None = None) -> None:
    """Bring the database to the newest revision, in one transaction where the database allows
    it (PostgreSQL; SQLite changes its schema outside transactions)."""
    config = config or alembic_config()
    script = ScriptDirectory.from_config(config)
    with engine.begin() as connection:
        if _revision(connection, script, name) is None:
            _check_tables_before_migrations(connection, script, name)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def check_readable(engine: Engine, name: str, config: Config | None = None) -> None:
    """Refuse a database whose revision is older than a change readers need (a revision whose
    module says ``READERS_NEED_IT = False`` only adds what results readers never read) or newer
    than the code: the tables would not be the ones the code reads. Reading changes nothing, so
    an older database is upgraded by a run."""
    script = ScriptDirectory.from_config(config or alembic_config())
    with engine.connect() as connection:
        revision = _revision(connection, script, name) or BASELINE
    head = script.get_current_head()
    missing = script.iterate_revisions(head, revision)  # newer than the database's, up to the head
    if any(getattr(later.module, "READERS_NEED_IT", True) for later in missing):
        raise StorageError(
            f"database {name} has schema revision {revision}, older than this arbiter's {head}: "
            "a run on it (arbiter run --db ...) upgrades it"
        )


def _revision(connection: Connection, script: ScriptDirectory, name: str) -> str | None:
    """The database's revision (None: no migration ran yet), which the code must know."""
    revision = MigrationContext.configure(connection).get_current_revision()
    if revision is not None:
        try:
            script.get_revision(revision)
        except CommandError:
            raise StorageError(
                f"database {name} has schema revision {revision!r}, newer than this arbiter knows "
                f"(its newest is {script.get_current_head()!r}): use the barbu-arena version that wrote it; "
                "the database was not changed"
            ) from None
    return revision


def _check_tables_before_migrations(connection: Connection, script: ScriptDirectory, name: str) -> None:
    """Every table of ours that the database already holds has the baseline's columns."""
    baseline: MetaData = script.get_revision(BASELINE).module.TABLES
    inspector = inspect(connection)
    present = set(inspector.get_table_names())
    for table in baseline.sorted_tables:
        if table.name not in present:
            continue
        columns = [column["name"] for column in inspector.get_columns(table.name)]
        if columns != [column.name for column in table.columns]:
            raise StorageError(
                f"database {name} holds a table {table.name!r} that is not the arena's "
                f"(columns {', '.join(columns)}): use another database; this one was not changed"
            )
