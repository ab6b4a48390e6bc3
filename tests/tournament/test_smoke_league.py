"""The smoke league (tournaments/smoke.yaml) end to end: real bot processes over gRPC, worker
processes, the CLI in a subprocess; killed with SIGKILL mid-tournament and resumed. (The same
league on PostgreSQL: test_storage.py, in one test so that one throwaway server serves it.)"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from pathlib import Path

from barbu.matchlog import verify
from typer.testing import CliRunner

from arbiter.execution.play import file_sha256
from arbiter.referee.logfile import read_log_lines
from arbiter.storage import Repo, open_database
from arbiter.tournament.config import load_config
from arbiter.tournament.formats import build_schedule

from ..conftest import alive, descendants
from .conftest import SMOKE, cli_app, cli_command

TIMEOUT = 240


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        cli_command("run", str(SMOKE), *args), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )


def contents(url: str):
    """(rows in schedule order, final ratings by entrant) of the smoke tournament in a database."""
    engine = open_database(url, create=False)
    try:
        repo = Repo(engine)
        t = repo.tournament("smoke")
        return t, repo.match_rows(t.id), repo.final_ratings(t.id)
    finally:
        engine.dispose()


def play_reference(folder: Path) -> dict:
    """The smoke league played once, uninterrupted, on SQLite."""
    url = f"sqlite:///{folder}/ref.db"
    r = run_cli(folder, "--db", url, "--json")
    assert r.returncode == 0, r.stderr
    return {"url": url, "summary": json.loads(r.stdout)}


def check_league(url: str, summary: dict) -> None:
    """What must hold of a finished smoke league, whatever the database."""
    config = load_config(SMOKE)
    schedule = build_schedule(config.format, config.entrant_names, config.rounds, config.seed, config.challenger)
    assert summary["complete"] and summary["matches"] == len(schedule)
    ranks = {row["name"]: row for row in summary["standings"]}
    assert summary["standings"][0]["name"] == "heuristic"  # the heuristic bot ranks above the random one
    assert ranks["heuristic"]["rating"] > ranks["random"]["rating"]
    assert ranks["heuristic"]["mean_score"] > ranks["random"]["mean_score"]
    assert ranks["heuristic"]["duplicate_diff"] > 0 > ranks["random"]["duplicate_diff"]
    assert all(row["faults"] == 0 and row["matches"] == len(schedule) for row in summary["standings"])

    t, rows, final = contents(url)
    assert [r.number for r in rows] == list(range(len(schedule)))  # every scheduled match, once
    assert t.finished_at is not None
    # fairness, from what was played: every entrant in every seat equally often, opponents balanced
    seats = Counter()
    met = Counter()
    for r in rows:
        names = r.seats
        for seat, name in enumerate(names):
            seats[name, seat] += 1
        for a, b in itertools.combinations(sorted(set(names)), 2):
            met[a, b] += 1
    for name in config.entrant_names:
        assert len({seats[name, s] for s in range(4)}) == 1
    assert set(met) == {("heuristic", "random")} and met["heuristic", "random"] == len(rows)
    # each duplicate set replays the same deals; every log is finished, verifies and matches its hash
    for r in rows:
        assert r.status == "complete" and r.log_sha256 == file_sha256(r.log_path)
        report = verify(read_log_lines(r.log_path))
        assert report.valid and report.complete and report.totals == r.totals
    # CPU is measured where a match is played; a match recorded from its log (a run killed between
    # the log's rename and its commit) has none to give
    measured = [r for r in rows if r.bots_cpu > 0 and r.arbiter_cpu > 0]
    assert len(measured) >= len(rows) - summary.get("reconciled", 0)
    by_game = {}
    for r in rows:
        deals = [o["hands"] for o in map(json.loads, Path(r.log_path).read_text().splitlines()) if o["type"] == "deal"]
        by_game.setdefault(r.game, []).append(deals)
    for deals in by_game.values():
        assert len(deals) == 2 and deals[0] == deals[1]
    assert not list(Path(rows[0].log_path).parent.glob("*.part"))
    # `arbiter standings` reads the same table back, and it ends where the rating history ends
    out = CliRunner().invoke(cli_app(), ["standings", "--db", url, "--json"])
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout) == summary["standings"]
    assert {name: (round(mu, 4), round(sigma, 4)) for name, (mu, sigma) in final.items()} == {
        row["name"]: (row["mu"], row["sigma"]) for row in summary["standings"]
    }


def test_smoke_league_on_sqlite_uninterrupted_then_killed_and_resumed(tmp_path):
    # One test, so that the uninterrupted reference run is played once (xdist would split a fixture).
    (tmp_path / "ref").mkdir()
    reference = play_reference(tmp_path / "ref")
    check_league(reference["url"], reference["summary"])
    assert reference["summary"]["played"] == reference["summary"]["matches"]

    url = f"sqlite:///{tmp_path}/r.db"
    total = reference["summary"]["matches"]
    proc = subprocess.Popen(
        cli_command("run", str(SMOKE), "--db", url, "--jobs", "2", "--json"),
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    recorded, tree = 0, set()
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            tree |= descendants(proc.pid)
            if (tmp_path / "r.db").exists():
                try:
                    with sqlite3.connect(tmp_path / "r.db", timeout=5) as c:
                        recorded = c.execute("select count(*) from matches").fetchone()[0]
                except sqlite3.OperationalError:  # tables not created yet
                    recorded = 0
            half_played = list((tmp_path / "logs" / "smoke").glob("*.jsonl.part"))
            if recorded >= 2 and half_played:  # some matches recorded, others in the middle
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the tournament ended before it could be killed: " + proc.stderr.read().decode()
        tree |= descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)  # no cleanup at all in the parent
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    # the workers notice their parent is gone, kill their bots and leave: nothing is left running
    end = time.monotonic() + 15
    while time.monotonic() < end and any(alive(p) for p in tree):
        time.sleep(0.1)
    assert tree and not [p for p in tree if alive(p)]
    t, rows, _ = contents(url)
    assert 2 <= len(rows) < total and t.finished_at is None
    assert any(p.exists() for p in half_played)  # what was being played when the run died

    r = run_cli(tmp_path, "--db", url, "--json")  # the same command finishes it
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    # a match whose log was finished but not yet committed when the kill came is recorded from its log
    assert summary["recorded_before"] == len(rows) and summary["complete"]
    assert summary["played"] + summary["reconciled"] == total - len(rows)
    t, rows, final = contents(url)
    assert [r.number for r in rows] == list(range(total))  # exactly the scheduled matches, once each
    assert not list(Path(rows[0].log_path).parent.glob("*.part"))  # half-played matches were replayed
    _, ref_rows, ref_final = contents(reference["url"])
    assert final == ref_final  # the same final ratings as the uninterrupted run
    assert [r.totals for r in rows] == [r.totals for r in ref_rows]
    assert summary["standings"] == reference["summary"]["standings"]
    check_league(url, summary)
