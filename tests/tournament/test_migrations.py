"""Schema migrations (Alembic) on a real SQLite file and a real PostgreSQL server: the revisions
make today's schema, a database made before migrations is taken over in place with nothing lost,
a database at the baseline gets the entrant keys' table and one at revision 0002 the arena's
authors and submissions with nothing lost, a later revision
applies to a populated database, and a database newer than the code is refused without being
touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, func, inspect, select, text
from sqlmodel import SQLModel
from typer.testing import CliRunner

from arbiter.errors import StorageError
from arbiter.storage import open_database, schema
from arbiter.storage.credentials import AuthorTokens
from arbiter.tournament.loop import run_tournament

from . import inproc
from .conftest import cli_app
from .test_runner import config, stored

EXAMPLE = Path(__file__).with_name("example_migration")
HEAD = ScriptDirectory.from_config(schema.alembic_config()).get_current_head()  # the product's newest
BASELINE_TABLES = ScriptDirectory.from_config(schema.alembic_config()).get_revision(schema.BASELINE).module.TABLES
NEWER_TABLES = {
    "entrant_keys": [],
    "authors": [],
    "submissions": [],
    "standings": [],
    "standings_marks": [],
    "margin_sums": [],
}  # what revisions after the baseline add


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'results.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> str:
    """A finished tournament's database (SQLite), the source of the databases made 'before'."""
    folder = tmp_path_factory.mktemp("finished")
    url = f"sqlite:///{folder / 'source.db'}"
    assert run_tournament(config(folder), database=url, executor=inproc.in_process(inproc.play_inprocess)).complete
    return url


def made_before_migrations(source: str, target: str) -> None:
    """``target`` as the code before migrations made it (``create_all`` of the models of then:
    the baseline's tables, no ``alembic_version``), holding every row of ``source``."""
    tables = BASELINE_TABLES.sorted_tables
    reading, writing = create_engine(source), create_engine(target)
    BASELINE_TABLES.create_all(writing)
    with reading.connect() as src, writing.begin() as dst:
        for table in tables:
            rows = [row._asdict() for row in src.execute(select(table))]
            if rows:
                dst.execute(table.insert(), rows)
            if dst.dialect.name == "postgresql" and "id" in table.c:  # the server's own counters
                dst.execute(text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), {len(rows) or 1})"))
    reading.dispose()
    writing.dispose()
    assert "alembic_version" not in inspect_tables(target)


def inspect_tables(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        return inspect(engine).get_table_names()
    finally:
        engine.dispose()


def contents(url: str) -> dict[str, list]:
    """Every row of every table the database holds, in key order, and the schema revision."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = set(inspect(conn).get_table_names())
            out = {
                table.name: conn.execute(select(text("*")).select_from(table).order_by(*table.primary_key)).all()
                for table in SQLModel.metadata.sorted_tables
                if table.name in found
            }
            out["revision"] = MigrationContext.configure(conn).get_current_revision() if found else None
        return out
    finally:
        engine.dispose()


def standings(url: str) -> tuple[int, str]:
    out = CliRunner().invoke(cli_app(), ["standings", "--db", url, "--json"])
    return out.exit_code, out.stdout + out.stderr


def test_the_revisions_make_the_models_schema(empty_db):
    # what `alembic check` does: the migrated database and the models differ in nothing
    open_database(empty_db).dispose()
    engine = create_engine(empty_db)
    try:
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), SQLModel.metadata) == []
            assert MigrationContext.configure(conn).get_current_revision() == HEAD
    finally:
        engine.dispose()


def test_a_database_from_before_migrations_upgrades_in_place_and_later_revisions_apply(finished, empty_db):
    made_before_migrations(finished, empty_db)
    before = contents(empty_db)
    assert before["revision"] is None and len(before["matches"]) == 20 and len(before["rating_history"]) == 80
    code, table_before = standings(empty_db)  # reading changes nothing, and reads it as the baseline
    assert code == 0 and json.loads(table_before) and contents(empty_db) == before

    # 1. opened by a run: taken over as the baseline, then upgraded, every row as it was
    open_database(empty_db).dispose()
    after = contents(empty_db)
    assert after.pop("revision") == HEAD
    assert after == {k: v for k, v in before.items() if k != "revision"} | NEWER_TABLES
    assert standings(empty_db) == (0, table_before)
    t, rows, final, history, faults = stored(empty_db)
    assert (final, history, faults) == stored(finished)[2:]
    assert [(r.number, r.totals, r.places, r.log_sha256) for r in rows] == [
        (r.number, r.totals, r.places, r.log_sha256) for r in stored(finished)[1]
    ]

    # 2. a later revision (a new column with a default) on the populated database
    engine = create_engine(empty_db)
    try:
        schema.upgrade(engine, "the test database", schema.alembic_config([EXAMPLE]))
        with engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == "0008"
            assert (
                conn.execute(select(func.count()).where(text("comment = ''")).select_from(text("matches"))).scalar()
                == 20
            )
    finally:
        engine.dispose()
    upgraded = contents(empty_db)
    assert upgraded.pop("revision") == "0008"
    assert {name: [row[:-1] for row in rows] for name, rows in upgraded.items() if name == "matches"} == {
        "matches": after["matches"]
    }
    assert {k: v for k, v in upgraded.items() if k != "matches"} == {k: v for k, v in after.items() if k != "matches"}

    # 3. this code does not know revision 0008: one line, for a run and a reader; nothing changed
    newer = contents(empty_db)
    for create in (True, False):
        with pytest.raises(StorageError) as e:
            open_database(empty_db, create=create)
        message = str(e.value)
        assert "\n" not in message and "schema revision '0008', newer than this arbiter knows" in message
    code, output = standings(empty_db)
    assert code != 0 and output.startswith("error: ") and output.count("\n") == 1 and "newer" in output
    assert contents(empty_db) == newer


def test_tables_of_another_schema_are_refused_and_left_alone(empty_db):
    engine = create_engine(empty_db)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE matches (id INTEGER PRIMARY KEY, home TEXT, away TEXT)"))
        conn.execute(text("INSERT INTO matches VALUES (1, 'x', 'y')"))
    engine.dispose()
    with pytest.raises(StorageError, match="holds a table 'matches' that is not the arena's .*was not changed"):
        open_database(empty_db)
    assert inspect_tables(empty_db) == ["matches"]


def test_a_reader_refuses_a_database_older_than_the_code(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    open_database(url).dispose()
    engine = create_engine(url)
    try:
        with pytest.raises(StorageError, match="schema revision 0007, older than this arbiter's 0008: a run on it"):
            schema.check_readable(engine, "r.db", schema.alembic_config([EXAMPLE]))
    finally:
        engine.dispose()


def test_a_database_at_the_baseline_gets_the_entrant_keys_table_and_keeps_every_row(finished, empty_db):
    from arbiter.storage.credentials import EntrantKeys

    made_before_migrations(finished, empty_db)
    engine = create_engine(empty_db)
    try:
        with engine.begin() as conn:  # what a run of the code before entrant keys left: revision 0001
            config = schema.alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, schema.BASELINE)
    finally:
        engine.dispose()
    before = contents(empty_db)
    assert before["revision"] == schema.BASELINE and "entrant_keys" not in before and len(before["matches"]) == 20
    code, table_before = standings(empty_db)  # a reader needs nothing of revision 0002: it reads the database as it is
    assert code == 0 and json.loads(table_before) and contents(empty_db) == before

    engine = open_database(empty_db)  # a run (or `arbiter key new`) upgrades it
    try:
        key = EntrantKeys(engine).issue("alice")
        assert EntrantKeys(engine).holder_of(key) == "alice"
    finally:
        engine.dispose()
    after = contents(empty_db)
    assert after.pop("revision") == HEAD == "0007"
    assert len(after.pop("entrant_keys")) == 1
    assert after == {k: v for k, v in before.items() if k != "revision"} | {
        "authors": [],
        "submissions": [],
        "standings": [],
        "standings_marks": [],
        "margin_sums": [],
    }
    assert standings(empty_db) == (0, table_before)


def test_a_database_at_0002_gets_the_authors_and_submissions_tables_and_keeps_every_row(finished, empty_db):
    from arbiter.storage.arena import ArenaStore
    from arbiter.storage.credentials import EntrantKeys

    made_before_migrations(finished, empty_db)
    engine = create_engine(empty_db)
    try:
        with engine.begin() as conn:  # what a run of the code before the arena left: revision 0002
            config = schema.alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "0002")
        key = EntrantKeys(engine).issue("alice")
    finally:
        engine.dispose()
    before = contents(empty_db)
    assert before["revision"] == "0002" and "authors" not in before and "submissions" not in before
    assert len(before["matches"]) == 20 and len(before["entrant_keys"]) == 1
    code, table_before = standings(empty_db)  # a reader needs nothing of revision 0003: it reads the database as it is
    assert code == 0 and json.loads(table_before) and contents(empty_db) == before

    engine = open_database(empty_db)  # a run (or `arbiter author add`) upgrades it
    try:
        assert EntrantKeys(engine).holder_of(key) == "alice"  # the key made before still opens
        store = ArenaStore(engine)
        assert AuthorTokens(store.engine).holder_of(AuthorTokens(store.engine).issue("alice")) == "alice"
    finally:
        engine.dispose()
    after = contents(empty_db)
    assert after.pop("revision") == HEAD == "0007"
    assert len(after.pop("authors")) == 1 and after.pop("submissions") == []
    assert after.pop("standings") == after.pop("standings_marks") == after.pop("margin_sums") == []  # a run fills them
    assert after == {k: v for k, v in before.items() if k != "revision"}
    assert standings(empty_db) == (0, table_before)


def test_a_database_at_0004_gets_the_authors_session_epoch_and_its_tokens_still_open(empty_db):
    from arbiter.lobby.keys import AUTHOR_PREFIX, new_key
    from arbiter.storage.credentials import AuthorTokens

    engine = create_engine(empty_db)
    token_id, digest, token = new_key(AUTHOR_PREFIX)
    try:
        with engine.begin() as conn:  # what the code before sessions left: revision 0004, an author in it
            config = schema.alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "0004")
            conn.execute(
                text("INSERT INTO authors (name, token_id, token_sha256, created_at) VALUES ('ann', :id, :sha, :at)"),
                {"id": token_id, "sha": digest, "at": "2026-01-01 00:00:00"},
            )
    finally:
        engine.dispose()
    engine = open_database(empty_db)  # `arbiter serve` upgrades it
    try:
        assert AuthorTokens(engine).holder_of(token) == "ann"
        _, found = AuthorTokens(engine).find(token)
        assert found is not None and (found.name, found.session_epoch) == ("ann", 0)
        assert AuthorTokens(engine).session_live("ann", token_id, 0)
    finally:
        engine.dispose()
    assert contents(empty_db)["revision"] == HEAD == "0007"


def test_a_database_at_0006_is_read_by_replay_then_its_standings_rebuilt_with_margin_sums(finished, tmp_path):
    """Standings kept before revision 0007 have no margin sums: a reader replays the matches; the
    upgrade clears the marks, and the next run rebuilds the standings, margin sums included."""
    from arbiter.storage import Repo, row_id

    url = f"sqlite:///{tmp_path / 'at0006.db'}"
    (tmp_path / "at0006.db").write_bytes(Path(finished.removeprefix("sqlite:///")).read_bytes())
    code, kept_table = standings(finished)
    assert code == 0
    engine = create_engine(url)
    try:
        with engine.begin() as conn:  # what the code of revision 0006 left: no margin sums
            conn.execute(text("DROP TABLE margin_sums"))
            conn.execute(text("UPDATE alembic_version SET version_num = '0006'"))
    finally:
        engine.dispose()
    assert standings(url) == (0, kept_table)  # a reader replays the matches: the same table

    engine = open_database(url)  # a run upgrades it: the marks go, the standings are rebuilt at its start
    try:
        repo = Repo(engine)
        t_id = row_id(repo.require_tournament("t"))
        mark, _ = repo.standings(t_id)
        assert mark is None
    finally:
        engine.dispose()
    assert standings(url) == (0, kept_table)
    cfg = config(tmp_path)
    summary = run_tournament(cfg, database=url, executor=inproc.in_process(inproc.play_inprocess))
    assert summary.complete and summary.played == 0
    engine = open_database(url)
    try:
        repo = Repo(engine)
        mark, tallies = repo.standings(row_id(repo.require_tournament("t")))
        assert mark is not None and all(t.margin.sets == t.games > 0 for t in tallies.values())
    finally:
        engine.dispose()
    assert standings(url) == (0, kept_table)
