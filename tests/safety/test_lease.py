"""The tournament lease: one run of a tournament at a time, decided by the database.

On SQLite and on a real PostgreSQL server: taken atomically (of many runs racing for a fresh
lease, one wins), refused while its holder lives, taken over when the holder is silent too long
or (on this machine) dead, and a run that lost it can record nothing. Then the real thing: two
``arbiter run`` of one tournament, one after the other and at the same instant.
"""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
from sqlalchemy import update

from arbiter.errors import LeaseHeld, StorageError
from arbiter.storage import open_database
from arbiter.storage.lease import TABLE, Lease, current_holder, me

from .conftest import (
    arbiter,
    assert_one_error,
    assert_recorded_logs_intact,
    count_matches,
    env_for,
    gated_tournament,
    lease_owner,
    problem_lines,
    tournament_file,
    wait_for,
)

DEAD_PID = 4_194_304 + 17  # above any pid_max: no process has it


def _forge(engine, name: str, **values) -> None:
    with engine.begin() as conn:
        conn.execute(update(TABLE).where(TABLE.c.tournament == name).values(**values))


def _check_lease_rules(url: str) -> None:
    engine = open_database(url)
    try:
        # 1. Of many runs taking a fresh lease at once, exactly one gets it.
        won, refused, errors = [], [], []
        start = threading.Barrier(8)

        def race() -> None:
            start.wait()
            try:
                won.append(Lease.take(engine, "race"))
            except LeaseHeld as e:
                refused.append(str(e))
            except Exception as e:  # pragma: no cover - the test reports it
                errors.append(repr(e))

        threads = [threading.Thread(target=race) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == [] and len(won) == 1 and len(refused) == 7, (won, refused, errors)
        assert all("is already being run by pid" in r and "\n" not in r for r in refused)

        # 2. Held by a live run: refused, naming the holder; freed: taken.
        first = won[0]
        with pytest.raises(LeaseHeld, match=rf"tournament 'race' is already being run by pid \d+ on host {me().host}"):
            Lease.take(engine, "race")
        first.release()
        second = Lease.take(engine, "race")
        assert second.took_over is None and second.folder_key == first.folder_key  # the key stays with the row

        # 3. Another machine's run, heard from recently: refused; silent for too long: taken over.
        _forge(engine, "race", owner="elsewhere:1:x", host="elsewhere", node="elsewhere/boot/ns", pid=1)
        with pytest.raises(LeaseHeld, match="by pid 1 on host elsewhere"):
            Lease.take(engine, "race")
        holder = current_holder(engine, "race")
        _forge(engine, "race", heartbeat=holder.heartbeat - 3600)
        third = Lease.take(engine, "race")
        assert third.took_over is not None and third.took_over.host == "elsewhere"

        # 4. The run it replaced (second) lost its lease: it cannot renew, nor record anything.
        assert second.renew() is False and second.lost
        with pytest.raises(StorageError, match="lost the lease of tournament 'race'"):
            second.check()

        # 5. A holder on this machine whose process is gone: taken over at once.
        _forge(engine, "race", owner="here:dead:x", node=me().node, pid=DEAD_PID, heartbeat=holder.heartbeat + 10**6)
        fourth = Lease.take(engine, "race")
        assert fourth.took_over is not None and fourth.took_over.pid == DEAD_PID
        assert third.renew() is False

        # 6. The heartbeat thread keeps it fresh; release frees it.
        fourth.keep_alive()
        fourth.release()
        assert current_holder(engine, "race") is None
    finally:
        engine.dispose()


def test_the_lease_on_sqlite(tmp_path):
    _check_lease_rules(f"sqlite:///{tmp_path}/lease.db")


def test_the_lease_on_postgresql(pg_url):
    _check_lease_rules(pg_url)


def test_a_run_without_the_lease_records_nothing(tmp_path):
    """The fence: record_match renews the lease in its own transaction, or records nothing."""
    from sqlmodel import Session

    engine = open_database(f"sqlite:///{tmp_path}/fence.db")
    try:
        mine = Lease.take(engine, "t")
        _forge(engine, "t", owner="thief", node="x", heartbeat=0)  # stolen while we looked away
        with Session(engine) as s, pytest.raises(StorageError, match="lost the lease"):
            mine.fence(s)
    finally:
        engine.dispose()


def test_a_second_run_of_the_same_tournament_refuses_at_once(tmp_path):
    config = gated_tournament(tmp_path)  # its matches wait for tmp_path/go
    first = subprocess.Popen(
        [*_arbiter_argv(), "run", str(config), "--json"], cwd=tmp_path, env=env_for(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: lease_owner(tmp_path / "results.db") != "", 60, "the first run to take its lease")
        started = time.monotonic()
        second = arbiter("run", str(config), cwd=tmp_path, timeout=60)
        took = time.monotonic() - started
        line = assert_one_error(second, 2, "tournament 't' is already being run by pid", f"pid {first.pid} on host")
        assert "this run does not start" in line
        assert took < 30, f"the second run took {took:.1f}s to refuse"
        assert first.poll() is None  # the first run is still playing
        (tmp_path / "go").touch()
        out, err = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err[-2000:]
    assert assert_recorded_logs_intact(tmp_path / "results.db") == 2


def test_two_runs_started_at_the_same_instant_on_a_fresh_database(tmp_path):
    config = tournament_file(tmp_path)
    procs = [
        subprocess.Popen([*_arbiter_argv(), "run", str(config), "--json"], cwd=tmp_path, env=env_for(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=180)
            results.append((p.returncode, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    lines = problem_lines(loser)
    assert len(lines) == 1 and "is already being run by pid" in lines[0], loser
    assert all("UNIQUE" not in err and "Traceback" not in err for _, err in results)
    assert count_matches(tmp_path / "results.db") == 2
    assert assert_recorded_logs_intact(tmp_path / "results.db") == 2


def _arbiter_argv() -> list[str]:
    from .conftest import PY

    return [PY, "-m", "arbiter"]
