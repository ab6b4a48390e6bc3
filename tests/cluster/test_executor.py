"""The Dask executor on its own, as the tournament loop drives it: it hands back
``concurrent.futures.Future`` s settled with checked outcomes whose logs are in the log folder,
and a cancelling close stops the matches in play on the workers at once, bots and all (the
arena plugin sees their tasks cancelled: no waiting for the idle reaper)."""

from __future__ import annotations

import concurrent.futures
import hashlib
import time
from pathlib import Path

import pytest
from barbu.rules import make_ruleset

from arbiter.execution.cluster import DaskExecutor
from arbiter.execution.cluster.plugin import IDLE_SECONDS
from arbiter.process.sandbox import Isolation
from arbiter.tournament.config import load_config, override
from arbiter.tournament.formats import build_schedule
from arbiter.tournament.tasks import make_task
from tests.tournament.conftest import SMOKE

from .conftest import processes_in

TIMEOUT = 600


def smoke_tasks(cluster, folder: Path):
    # isolation none: the test finds a match's bots by their folder in /proc, which a sandbox may hide
    # whole matches (28 deals), long enough to be caught in play
    config = override(
        load_config(SMOKE), cluster=cluster.address, log_folder=folder, isolation=Isolation.NONE, rules=make_ruleset()
    )
    schedule = build_schedule(config.format, config.entrant_names, config.rounds, config.seed, config.challenger)
    return config, [make_task(config, m, folder) for m in schedule]


@pytest.mark.slow
def test_the_executor_settles_futures_with_checked_outcomes_and_a_cancel_stops_the_matches_at_once(
    dask_cluster, tmp_path
):
    config, tasks = smoke_tasks(dask_cluster, tmp_path)
    executor = DaskExecutor([e.spec for e in config.entrants], dask_cluster.address, config.log_folder)
    try:
        assert executor.slots == 2  # two workers, arena=1 each
        future = executor.submit(tasks[0])
        assert isinstance(future, concurrent.futures.Future)
        outcome = future.result(timeout=TIMEOUT)
    finally:
        executor.close(cancel=False)
    log = Path(outcome.log_path)
    assert outcome.number == tasks[0].number and log == Path(tasks[0].log_path) and outcome.result.complete
    assert hashlib.sha256(log.read_bytes()).hexdigest() == outcome.log_sha256
    assert not any(processes_in(c) for c in dask_cluster.caches)  # the bots kept for a next match left with it

    executor = DaskExecutor([e.spec for e in config.entrants], dask_cluster.address, config.log_folder)
    try:
        futures = [executor.submit(t) for t in tasks[1:3]]
        deadline = time.monotonic() + TIMEOUT
        while not any(processes_in(c) for c in dask_cluster.caches):  # a match in play
            assert time.monotonic() < deadline and not any(f.done() for f in futures)
            time.sleep(0.05)
    finally:
        executor.close(cancel=True)
    stopped = time.monotonic()
    while any(processes_in(c) for c in dask_cluster.caches) and time.monotonic() - stopped < IDLE_SECONDS:
        time.sleep(0.05)
    assert not any(processes_in(c) for c in dask_cluster.caches)
    assert time.monotonic() - stopped < IDLE_SECONDS / 2, "the bots went only with the idle reaper"
    assert all(f.cancelled() for f in futures)
