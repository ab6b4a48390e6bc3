"""Bots that start once, in a tournament: a worker plays its matches through one long-lived
arbiter and keeps the bots that said multi_match; the logs say which seats a kept process
played, every match still verifies, and the results are those of the same league played with a
fresh process for every seat of every match (the sample bots play each match the same way in
any process). Nothing is left running at the end."""

from __future__ import annotations

import json
import os
from pathlib import Path

from barbu.matchlog import verify

from arbiter.execution.executors import ExecutorFactory
from arbiter.execution.venues import default_executor
from arbiter.referee.logfile import read_log_lines
from arbiter.storage import Repo, open_database
from arbiter.tournament.config import load_config, override
from arbiter.tournament.loop import run_tournament

from ..conftest import command_line, descendants
from .conftest import SMOKE
from .inproc import fresh_processes


def league(tmp_path: Path, name: str, executor: ExecutorFactory) -> tuple[list, list[dict]]:
    config = override(load_config(SMOKE), format="round_robin", rounds=2, log_folder=tmp_path / name)
    url = f"sqlite:///{tmp_path}/{name}.db"
    summary = run_tournament(config, database=url, jobs=1, executor=executor)
    assert summary.complete and summary.played >= 3
    engine = open_database(url, create=False)
    try:
        repo = Repo(engine)
        rows = repo.match_rows(repo.tournament(config.name).id)
    finally:
        engine.dispose()
    headers = []
    for r in rows:
        report = verify(read_log_lines(r.log_path))
        assert report.valid and report.complete and r.status == "complete"
        headers.append(json.loads(Path(r.log_path).read_text().splitlines()[0]))
    return rows, headers


def test_a_worker_keeps_multi_match_bots_and_the_results_do_not_change(tmp_path):
    kept_rows, kept_headers = league(tmp_path, "kept", default_executor)
    fresh_rows, fresh_headers = league(tmp_path, "fresh", fresh_processes)
    assert all("reused" not in h for h in fresh_headers)
    assert "reused" not in kept_headers[0]
    # After the first match, every seat is played by a process kept from an earlier match.
    for h in kept_headers[1:]:
        assert sorted(r["seat"] for r in h["reused"]) == [0, 1, 2, 3], h.get("reused")
    assert [r.totals for r in kept_rows] == [r.totals for r in fresh_rows]
    # Each match has its own output files (a kept bot's output follows it to its next match).
    for r, h in zip(kept_rows, kept_headers, strict=True):
        stem = Path(r.log_path).name.removesuffix(".jsonl")
        for seat in range(4):
            out = Path(r.log_path).with_name(f"{stem}.seat{seat}.stderr").read_text()
            assert f"in match {h['match_id']} at" in out, out
            assert out.count(" in match ") == 1, out
    # The worker let its kept bots go when it ended: nothing of the run is left.
    left = {p: command_line(p) for p in descendants(os.getpid())}
    assert [c for c in left.values() if "resource_tracker" not in c] == [], left
