"""The smoke league on a real Dask cluster (``arbiter run --cluster``), against a local run of
the same file: the same standings and ratings with and without a worker SIGKILLed mid-match, on
SQLite and PostgreSQL; the scheduler lost (one ``error:`` line, a rerun resumes); the
coordinator SIGKILLed (a rerun resumes). No bot process is ever left on a worker."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.tournament.conftest import SMOKE, cli_command
from tests.tournament.test_smoke_league import check_league, contents

from .conftest import processes_in

TIMEOUT = 600  # a loaded CI machine plays slowly


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        cli_command("run", str(SMOKE), "--json", *args), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )


def start(cwd: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        cli_command("run", str(SMOKE), "--json", *args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def recorded(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return c.execute("select count(*) from matches").fetchone()[0]
    except sqlite3.OperationalError:  # the tables are not there yet
        return 0


def wait_for(condition, seconds: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the run ended before {what}: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def no_bots_left(cluster, seconds: float = 60) -> None:
    """Within IDLE_SECONDS and a reaper period (and the slowness of a loaded machine)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(processes_in(c) for c in cluster.caches):
        time.sleep(0.2)
    assert not [p for c in cluster.caches for p in processes_in(c)], "bot processes left on a worker"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """The smoke league played once by the local process pool."""
    folder = tmp_path_factory.mktemp("local")
    url = f"sqlite:///{folder}/ref.db"
    r = run(folder, "--db", url)
    assert r.returncode == 0, r.stderr
    return {"url": url, "summary": json.loads(r.stdout)}


def same_as_reference(url: str, summary: dict, reference: dict) -> None:
    check_league(url, summary)  # every match once, logs finished and verified, fair seating
    _, rows, final = contents(url)
    _, ref_rows, ref_final = contents(reference["url"])
    assert summary["standings"] == reference["summary"]["standings"]
    assert final == ref_final
    assert [(r.number, r.totals, r.status) for r in rows] == [(r.number, r.totals, r.status) for r in ref_rows]
    for r in rows:  # each seat's captured output came back beside the log, as locally
        stem = Path(r.log_path).name.removesuffix(".jsonl")
        assert all((Path(r.log_path).parent / f"{stem}.seat{s}.stderr").is_file() for s in range(4))


@pytest.mark.slow
def test_the_smoke_league_on_a_cluster_equals_the_local_run(dask_cluster, reference, tmp_path):
    url = f"sqlite:///{tmp_path}/c.db"
    r = run(tmp_path, "--db", url, "--cluster", dask_cluster.address)
    assert r.returncode == 0, r.stderr + dask_cluster.logs()
    summary = json.loads(r.stdout)
    assert summary["played"] == summary["matches"] and summary["complete"]
    same_as_reference(url, summary, reference)
    no_bots_left(dask_cluster)  # bots kept for a next match leave with the run
    # the entrants' folder travelled as a bundle: unpacked, read-only, on the workers that played
    unpacked = [p for c in dask_cluster.caches if c.exists() for p in c.iterdir() if not p.name.startswith(".")]
    assert unpacked and all((p / "files" / "random_bot.py").is_file() for p in unpacked)
    # a second run of the recorded tournament plays nothing
    r = run(tmp_path, "--db", url, "--cluster", dask_cluster.address)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["played"] == 0


@pytest.mark.slow
def test_an_ab_test_on_a_cluster_plays_the_sets_of_a_local_run(dask_cluster, tmp_path):
    """`arbiter ab --cluster`: the same paired sets, so the same differences, as played here."""
    bot = Path(__file__).resolve().parents[2] / "sample_bots" / "random_bot.py"
    ab = [
        "ab", "--a", f"env BARBU_SEED=1 python {bot}", "--b", f"env BARBU_SEED=2 python {bot}",
        "--field", f"env BARBU_SEED=3 python {bot}", "--set", "contracts=[barbu]", "--fixed", "16", "--json",
    ]  # fmt: skip
    runs = []
    for name, where in (("here", ["--jobs", "2"]), ("there", ["--cluster", dask_cluster.address])):
        (tmp_path / name).mkdir()  # each run its own database and log folder
        runs.append(
            subprocess.run(
                cli_command(*ab, "--db", f"sqlite:///{tmp_path}/{name}/ab.db", *where),
                cwd=tmp_path / name,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
            )
        )
    here, there = runs
    assert here.returncode == 0 and there.returncode == 0, here.stderr + there.stderr + dask_cluster.logs()
    local, remote = json.loads(here.stdout), json.loads(there.stdout)
    assert remote["matches"] == 16 and remote["played_now"] == 16
    assert remote["set_diffs"] == local["set_diffs"] and remote["mean"] == local["mean"]
    no_bots_left(dask_cluster)


@pytest.mark.slow
def test_the_smoke_league_on_a_cluster_into_postgresql(dask_cluster, reference, pg_url, tmp_path):
    r = run(tmp_path, "--db", pg_url, "--cluster", dask_cluster.address)
    assert r.returncode == 0, r.stderr + dask_cluster.logs()
    same_as_reference(pg_url, json.loads(r.stdout), reference)


@pytest.mark.slow
def test_a_worker_killed_mid_match_has_its_match_played_elsewhere(own_cluster, reference, tmp_path):
    cluster = own_cluster(2)
    url = f"sqlite:///{tmp_path}/k.db"
    proc = start(tmp_path, "--db", url, "--cluster", cluster.address)
    try:
        # worker 0 is in the middle of a match: its bots run in its bundle cache
        wait_for(lambda: processes_in(cluster.caches[0]), TIMEOUT, "a match on worker 0", proc)
        cluster.kill_worker(0)
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err + cluster.logs()
    summary = json.loads(out)
    assert summary["played"] == summary["matches"]
    same_as_reference(url, summary, reference)  # every match once: none lost, none counted twice
    no_bots_left(cluster)  # the killed worker's match process stopped its bots


@pytest.mark.slow
def test_the_scheduler_lost_stops_the_run_with_one_error_line_and_a_rerun_resumes(own_cluster, reference, tmp_path):
    cluster = own_cluster(1)
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    proc = start(tmp_path, "--db", url, "--cluster", cluster.address)
    try:
        wait_for(lambda: recorded(db) >= 1, TIMEOUT, "a recorded match", proc)
        cluster.kill_scheduler()
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: lost the Dask scheduler at "), err
    assert "run the same command again" in lines[0] and out == ""
    before = recorded(db)
    assert before >= 1

    # A Dask worker leaves when it loses its scheduler; the match it played was stopped, bots and all.
    no_bots_left(cluster)
    cluster.start_scheduler()  # the same address; workers are started again (a supervisor would)
    cluster.add_worker()
    cluster.wait_for_workers(1)
    r = run(tmp_path, "--db", url, "--cluster", cluster.address)
    assert r.returncode == 0, r.stderr + cluster.logs()
    summary = json.loads(r.stdout)
    assert summary["recorded_before"] + summary["reconciled"] == before
    assert summary["played"] + before == summary["matches"]
    same_as_reference(url, summary, reference)


@pytest.mark.slow
def test_the_coordinator_killed_a_rerun_resumes_and_the_workers_stop_its_matches(dask_cluster, reference, tmp_path):
    db = tmp_path / "k.db"
    url = f"sqlite:///{db}"
    proc = start(tmp_path, "--db", url, "--cluster", dask_cluster.address)
    try:
        wait_for(
            lambda: recorded(db) >= 1 and any(processes_in(c) for c in dask_cluster.caches),
            TIMEOUT, "a recorded match and another in play", proc,
        )  # fmt: skip
        proc.kill()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    no_bots_left(dask_cluster)  # the scheduler cancelled the dead coordinator's matches
    before = recorded(db)
    r = run(tmp_path, "--db", url, "--cluster", dask_cluster.address)
    assert r.returncode == 0, r.stderr + dask_cluster.logs()
    summary = json.loads(r.stdout)
    assert (
        summary["recorded_before"] == before
        and summary["played"] + summary["reconciled"] + before == summary["matches"]
    )
    same_as_reference(url, summary, reference)


@pytest.mark.slow
def test_the_coordinator_stopped_by_sigterm_cancels_its_matches_on_the_workers(dask_cluster, tmp_path):
    db = tmp_path / "t.db"
    proc = start(tmp_path, "--db", f"sqlite:///{db}", "--cluster", dask_cluster.address)
    try:
        wait_for(lambda: any(processes_in(c) for c in dask_cluster.caches), TIMEOUT, "a match in play", proc)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert "interrupted" in err and "run the same command again" in err and "Traceback" not in err
    no_bots_left(dask_cluster)  # its matches were cancelled: the workers stopped them and their bots
