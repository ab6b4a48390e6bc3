"""The log folder belongs to its database; a finished log nobody recorded is reconciled; a log
file is never written twice, nor replaced where it must not be; the fingerprint covers limits
and isolation; the saved configuration keeps no password."""

from __future__ import annotations

import json
import os
import textwrap
import threading

import pytest

from arbiter.errors import ConfigError, LeaseHeld, LogFileError
from arbiter.referee.logfile import AtomicLogFile
from arbiter.storage import Repo, open_database
from arbiter.tournament.config import override, parse_config
from arbiter.tournament.loop import run_tournament
from tests.tournament import inproc

from .conftest import (
    arbiter,
    arbiter_cases,
    assert_one_error,
    assert_recorded_logs_intact,
    recorded,
    sha256,
    tournament_file,
)


class Killed(BaseException):
    """What a kill -9 looks like from inside, for in-process runs."""


KILL: dict = {}  # match number -> "after_rename" | "mid_match"


def run_killed_at(cfg, tmp_path, number: int, how: str) -> None:
    """Run the tournament into tmp_path's database until match ``number`` dies ``how``."""
    KILL.clear()
    KILL[number] = how
    try:
        with pytest.raises(Killed):
            run(cfg, db(tmp_path), play_or_die)
    finally:
        KILL.clear()


def play_or_die(task):
    """An in-process match that 'dies' where KILL says: mid-match (a .part is left) or just
    after its log got its final name (a finished log, no row)."""
    how = KILL.get(task.number)
    if how == "mid_match":
        from arbiter.referee.logfile import AtomicLogFile as Sink

        sink = Sink(task.log_path)
        sink('{"type":"match"')  # a first, cut line
        sink.flush()
        sink._file.close()  # the process is gone: its lock with it
        raise Killed
    outcome = inproc.play_inprocess(task)
    if how == "after_rename":
        raise Killed
    return outcome


def config(tmp_path, extra: str = "", name: str = "t", third: bool = True):
    text = textwrap.dedent(
        f"""
        name: {name}
        entrants:
          - {{name: a, command: random}}
          - {{name: b, command: first}}
        {"  - {name: c, command: random}" if third else ""}
        rules: {{preset: standard, contracts: [barbu]}}
        seed: 5
        log_folder: logs
        """
    )
    return parse_config(text + extra, display="t.yaml", base_dir=tmp_path, check_commands=False)


def key_of(cfg, number: int) -> str:
    from arbiter.tournament.formats import build_schedule

    return build_schedule(cfg.format, cfg.entrant_names, cfg.rounds, cfg.seed, cfg.challenger)[number].key


def db(tmp_path, name="r.db"):
    return f"sqlite:///{tmp_path / name}"


def run(cfg, url, play=inproc.play_inprocess):
    return run_tournament(cfg, database=url, executor=inproc.in_process(play))


def test_another_database_never_writes_over_the_logs(tmp_path):
    """Real runs: the same tournament file against another database, an empty one, and --db ''."""
    config = tournament_file(tmp_path)
    done = arbiter("run", str(config), "--json", cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    before = {p: sha256(p) for p in recorded(tmp_path / "results.db")}
    assert len(before) == 2
    (tmp_path / "empty.db").touch()
    refusals = (
        ("other.db", ("does not record", "they are the records of database")),
        ("empty.db", ("does not record",)),
        (str(tmp_path / "new" / "fresh.db"), ("does not record",)),
        ("", ("the database name is empty",)),
    )
    results = arbiter_cases([(["run", str(config), "--db", option], tmp_path) for option, _ in refusals])
    for (_, words), r in zip(refusals, results, strict=True):
        assert_one_error(r, 2, *words)
    assert {p: sha256(p) for p in before} == before
    assert recorded(tmp_path / "other.db") == {}
    engine = open_database(str(tmp_path / "other.db"), create=False)
    try:
        assert Repo(engine).tournament("t") is None  # the refused run left no tournament behind
    finally:
        engine.dispose()
    again = arbiter("run", str(config), "--json", cwd=tmp_path, timeout=60)  # its own database: fine
    assert again.returncode == 0 and json.loads(again.stdout)["recorded_before"] == 2


def test_a_killed_run_s_finished_log_is_recorded_from_it(tmp_path):
    cfg = config(tmp_path)
    reference = run(override(cfg, log_folder=tmp_path / "ref"), db(tmp_path, "ref.db"))
    run_killed_at(cfg, tmp_path, 3, "after_rename")
    orphan = tmp_path / "logs" / f"t-{key_of(cfg, 3)}.jsonl"
    rows = recorded(tmp_path / "r.db")
    assert str(orphan) not in rows and len(rows) == 3 and orphan.is_file()
    kept = sha256(orphan)
    summary = run(cfg, db(tmp_path))
    assert summary.reconciled == 1 and summary.played == summary.total - 4 and summary.complete
    assert recorded(tmp_path / "r.db")[str(orphan)] == kept == sha256(orphan)  # recorded as it was
    assert [(s.name, s.mu, s.sigma) for s in summary.standings] == [
        (s.name, s.mu, s.sigma) for s in reference.standings
    ]
    assert assert_recorded_logs_intact(tmp_path / "r.db") == summary.total


def test_a_foreign_file_under_a_match_name_is_left_alone(tmp_path):
    cfg = config(tmp_path)
    run_killed_at(cfg, tmp_path, 2, "mid_match")
    intruder = tmp_path / "logs" / f"t-{key_of(cfg, 2)}.jsonl"  # match 2's name, not a log of it
    intruder.write_text('{"type":"match","note":"not this tournament\'s"}\n')
    with pytest.raises(ConfigError, match=rf"holds {intruder.name}, which this database does not record"):
        run(cfg, db(tmp_path))
    assert intruder.read_text() == '{"type":"match","note":"not this tournament\'s"}\n'
    intruder.unlink()
    assert run(cfg, db(tmp_path)).complete  # moved away: the run goes on (the .part is started over)


def test_a_log_file_is_written_once_and_never_replaced_where_it_must_not_be(tmp_path):
    final = tmp_path / "m.jsonl"
    final.write_text("recorded\n")
    sink = AtomicLogFile(final)
    sink("new")
    with pytest.raises(LogFileError, match="already exists and was not written by this run"):
        sink.commit()
    assert final.read_text() == "recorded\n" and not (tmp_path / "m.jsonl.part").exists()
    # two writers of one log: the second is refused while the first writes
    first = AtomicLogFile(tmp_path / "x.jsonl")
    with pytest.raises(LogFileError, match="another process is writing match log"):
        AtomicLogFile(tmp_path / "x.jsonl")
    first("a")
    first.commit()
    assert (tmp_path / "x.jsonl").read_text() == "a\n"
    # a writer killed mid-way left its .part (unlocked): started over
    (tmp_path / "y.jsonl.part").write_text("half a line")
    again = AtomicLogFile(tmp_path / "y.jsonl")
    again("whole")
    assert again.commit().read_text() == "whole\n"
    # not a regular file where the log or its .part go: refused, untouched
    os.mkfifo(tmp_path / "z.jsonl.part")
    with pytest.raises(LogFileError, match="is a named pipe; remove it first"):
        AtomicLogFile(tmp_path / "z.jsonl")
    with pytest.raises(ConfigError, match="is a folder, not a file"):
        AtomicLogFile(tmp_path)


def test_the_lease_keeps_a_second_in_process_run_out(tmp_path):
    """A run going on in another thread: a second run of the tournament refuses at once."""
    cfg = config(tmp_path)
    gate, go = threading.Event(), threading.Event()

    def slow(task):
        gate.set()
        go.wait(30)
        return inproc.play_inprocess(task)

    errors = []
    t = threading.Thread(target=lambda: errors.append(_safe(lambda: run(cfg, db(tmp_path), slow))))
    t.start()
    try:
        assert gate.wait(30)
        with pytest.raises(LeaseHeld, match="tournament 't' is already being run by pid"):
            run(cfg, db(tmp_path))
    finally:
        go.set()
        t.join(60)
    assert errors == [None]


def _safe(fn):
    try:
        fn()
    except Exception as e:  # pragma: no cover - reported by the assertion
        return repr(e)
    return None


def test_the_fingerprint_covers_limits_and_isolation(tmp_path):
    from sqlalchemy import update

    from arbiter.storage.models import Tournament

    cfg = config(tmp_path, "limits: {memory: 1GiB}\n")
    run(cfg, db(tmp_path))
    for changed in ("limits: {memory: 2GiB}\n", "limits: {memory: 1GiB, open_files: 64}\n"):
        with pytest.raises(ConfigError, match="different configuration"):
            run(config(tmp_path, changed), db(tmp_path))
    assert cfg.fingerprint() != override(cfg, isolation="bubblewrap").fingerprint()
    # a database recorded before the fingerprint covered them keeps working, and is upgraded
    engine = open_database(db(tmp_path))
    try:
        with engine.begin() as conn:
            conn.execute(update(Tournament.__table__).values(fingerprint=cfg.fingerprint(legacy=True)))
    finally:
        engine.dispose()
    assert run(cfg, db(tmp_path)).recorded_before == 12
    engine = open_database(db(tmp_path))
    try:
        assert Repo(engine).tournament("t").fingerprint == cfg.fingerprint()
    finally:
        engine.dispose()


def test_no_password_in_the_saved_configuration(tmp_path):
    cfg = config(tmp_path, 'database: "postgresql://arena:s3cr3t@db.example:5432/arena"\n')
    assert cfg.database == "postgresql://arena:s3cr3t@db.example:5432/arena"  # still used to connect
    assert "s3cr3t" not in cfg.source and "arena:***@db.example:5432/arena" in cfg.source
    assert parse_config(cfg.source, base_dir=tmp_path, check_commands=False).name == "t"  # still a tournament file
    run(cfg, db(tmp_path))  # --db overrides the file's database
    engine = open_database(db(tmp_path))
    try:
        assert "s3cr3t" not in Repo(engine).tournament("t").config_text
    finally:
        engine.dispose()
