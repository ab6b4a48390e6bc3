"""Storage on SQLite and on a real PostgreSQL server (started by the tests themselves)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import inspect
from typer.testing import CliRunner

from arbiter.errors import ConfigError, TournamentInterrupted
from arbiter.storage import database_url, open_database
from arbiter.tournament.config import override
from arbiter.tournament.loop import run_tournament

from . import inproc
from .conftest import cli_app
from .test_runner import config, stored
from .test_smoke_league import check_league, contents, run_cli


def test_database_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BARBU_DB", raising=False)
    assert database_url(None) == f"sqlite:///{tmp_path}/logs/arbiter.db"
    assert database_url("results.db") == f"sqlite:///{tmp_path}/results.db"
    assert database_url("sqlite:///r/x.db") == f"sqlite:///{tmp_path}/r/x.db"
    assert database_url("sqlite:////abs/x.db") == "sqlite:////abs/x.db"
    assert database_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert database_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    monkeypatch.setenv("BARBU_DB", "env.db")
    assert database_url(None) == f"sqlite:///{tmp_path}/env.db"


def test_tables_on_sqlite(tmp_path):
    engine = open_database(str(tmp_path / "x.db"))
    try:
        assert {"tournaments", "entrants", "matches", "seat_results", "faults", "rating_history"} <= set(
            inspect(engine).get_table_names()
        )
    finally:
        engine.dispose()
    with pytest.raises(ConfigError, match="no such database"):
        open_database(str(tmp_path / "missing.db"), create=False)
    with pytest.raises(ConfigError, match="not a database URL"):
        open_database("://nothing")
    with pytest.raises(ConfigError, match=r"cannot use database sqlite\+nothing:.*missing driver"):
        open_database("sqlite+nothing:///x.db")


def test_postgresql_resume_and_the_smoke_league(tmp_path, postgres_server, pg_url, monkeypatch):
    # One test for everything PostgreSQL, so that xdist starts one throwaway server, not two.
    # 1. An in-process tournament, interrupted and resumed on PostgreSQL, equals the SQLite run.
    cfg = config(tmp_path, extra="format: duplicate\n")
    lite = f"sqlite:///{tmp_path}/r.db"
    lite_cfg = override(cfg, log_folder=tmp_path / "lite-logs")  # another database, another log folder
    run_tournament(lite_cfg, database=lite, executor=inproc.in_process(inproc.play_inprocess))
    monkeypatch.setenv("STOP_AT", "9")
    with pytest.raises(TournamentInterrupted):
        run_tournament(cfg, database=pg_url, executor=inproc.in_process(inproc.play_then_interrupt))
    monkeypatch.delenv("STOP_AT")
    summary = run_tournament(cfg, database=pg_url, executor=inproc.in_process(inproc.play_inprocess))
    assert summary.recorded_before == 9 and summary.complete and summary.database.startswith("postgresql+psycopg://")
    t_pg, rows_pg, final_pg, history_pg, _ = stored(pg_url)
    t_lite, rows_lite, final_lite, history_lite, _ = stored(lite)
    assert [r.number for r in rows_pg] == list(range(t_pg.total_matches)) == [r.number for r in rows_lite]
    assert [(r.totals, r.log_sha256 != "") for r in rows_pg] == [(r.totals, True) for r in rows_lite]
    assert final_pg == final_lite and history_pg == history_lite  # doubles round-trip exactly
    assert t_pg.created_at.tzinfo is not None

    # 2. The smoke league with real bots, through the CLI, on another database of the server.
    url = postgres_server.create_database()
    r = run_cli(tmp_path, "--db", url, "--jobs", "2")
    assert r.returncode == 0, r.stderr
    assert "final standings" in r.stdout and "heuristic" in r.stdout and "postgresql+psycopg://" in r.stdout
    out = CliRunner().invoke(cli_app(), ["standings", "--db", url, "--json"])
    assert out.exit_code == 0, out.stderr
    table = json.loads(out.stdout)
    check_league(url, {"complete": True, "matches": len(contents(url)[1]), "standings": table})


def test_an_unreachable_server_is_one_line(tmp_path):
    with pytest.raises(ConfigError) as e:
        open_database("postgresql+psycopg://arena:pw@127.0.0.1:1/arena")
    assert "\n" not in str(e.value) and "pw" not in str(e.value)
    assert str(e.value).startswith("cannot reach database postgresql+psycopg://arena:***@127.0.0.1:1/arena: ")
