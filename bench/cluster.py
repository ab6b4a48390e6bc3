"""The cluster's cost: the smoke league on a local two-worker Dask cluster against the local
process pool (jobs=2) on the same machine, each into a fresh SQLite database.

It starts a real ``dask scheduler`` and two ``dask worker --nthreads 1 --resources arena=1`` on
127.0.0.1, plays the league once on it to warm it up (bundles unpacked, match processes started:
a cluster is long-lived), then times the local pool and the cluster on the same league. It also
times a 28-deal match of the sample random bots (the goal's yardstick: the cluster's own cost per
match at most 5% of one), and breaks the cluster's cost down: on the worker (bundle check,
compressing the log), on the coordinator (inflating, verifying and writing the log).

    python bench/cluster.py [--rounds N] [--config tournaments/smoke.yaml]

The overhead per match is the extra slot-time a match takes on the cluster:
(wall on the cluster - wall locally) x 2 slots / matches. The last line is
``cluster: overhead X ms per match, Y matches/min local vs Z on the cluster``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arbiter.execution.cluster import executor
from arbiter.tournament.config import load_config, override, parse_config
from arbiter.tournament.loop import run_tournament

ROOT = Path(__file__).resolve().parents[1]
DASK = str(Path(sys.executable).with_name("dask"))
QUICK = ["--rounds", "1", "--yardstick", "1"]  # --quick: a run of seconds that tests/test_benches.py makes

RANDOM_28 = """
name: random28
entrants:
  - name: r1
    command: env BARBU_SEED=1 python ../sample_bots/random_bot.py
  - name: r2
    command: env BARBU_SEED=2 python ../sample_bots/random_bot.py
format: duplicate
rounds: 1
seed: 7
rules: standard
time_control: {per_decision: 5.0, reserve: 30, connect: 30, match_limit: 600}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cluster(folder: Path, workers: int = 2) -> tuple[str, list[subprocess.Popen]]:
    from distributed import Client

    address = f"tcp://127.0.0.1:{free_port()}"
    with open(folder / "cluster.log", "ab") as log:  # each child holds its own copy
        procs = [
            subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                              "--no-dashboard", "--no-show"], stdout=log, stderr=log, start_new_session=True)
        ]  # fmt: skip
        for n in range(workers):
            (folder / f"scratch{n}").mkdir()
            env = dict(os.environ, BARBU_BUNDLE_CACHE=str(folder / f"cache{n}"))
            procs.append(
                subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--resources", "arena=1",
                                  "--no-dashboard", "--local-directory", str(folder / f"scratch{n}"),
                                  "--host", "127.0.0.1"], stdout=log, stderr=log, env=env, start_new_session=True)
            )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with Client(address, timeout=10, set_as_default=False) as client:
                while time.monotonic() < deadline:
                    if len(client.scheduler_info(n_workers=-1)["workers"]) >= workers:
                        return address, procs
                    time.sleep(0.3)
        except OSError:
            time.sleep(0.5)
    stop_cluster(procs)
    raise SystemExit(f"the Dask cluster did not start; see {folder / 'cluster.log'}")


def stop_cluster(procs: list[subprocess.Popen]) -> None:
    """The workers first, then the scheduler: a worker stopped while its scheduler goes too waits
    for it (its nanny kills it after 8 s); stopped while the scheduler still runs, it is gone at once."""
    scheduler, *workers = procs
    for group in (workers, [scheduler]):
        for p in group:
            p.send_signal(signal.SIGTERM)
        for p in group:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(20)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def play(config, folder: Path, name: str, **kw) -> tuple[float, int]:
    run_config = override(config, log_folder=folder / f"logs-{name}", **kw)
    started = time.perf_counter()
    summary = run_tournament(run_config, database=f"sqlite:///{folder}/{name}.db", jobs=2)
    assert summary.complete, name
    return time.perf_counter() - started, summary.played


def match_seconds(url: str, name: str = "random28") -> tuple[float, float]:
    """The mean wall time of a recorded match (launch to clean-up) and its CPU (arbiter + bots)."""
    from arbiter.storage import Repo, open_database

    engine = open_database(url, create=False)
    try:
        repo = Repo(engine)
        t = repo.tournament(name)
        assert t is not None and t.id is not None
        rows = repo.match_rows(t.id)
    finally:
        engine.dispose()
    return sum(r.wall_seconds for r in rows) / len(rows), sum(r.arbiter_cpu + r.bots_cpu for r in rows) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "tournaments" / "smoke.yaml")
    parser.add_argument("--rounds", type=int, default=6, help="rounds of the league per run (default 6)")
    parser.add_argument("--yardstick", type=int, default=2, help="rounds of the 28-deal random-bot match (default 2)")
    parser.add_argument(
        "--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}, no warm-up"
    )
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    config = override(load_config(args.config), rounds=args.rounds)
    load = os.getloadavg()
    print(f"{config.name}: {config.format}, {config.rounds} rounds, {config.rules.deals_per_match} deals a match; "
          f"{os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")  # fmt: skip

    # What the cluster adds, measured where it happens: wrap the coordinator's receive().
    costs = {"worker": 0.0, "coordinator": 0.0, "n": 0}
    receive = executor.receive

    def timed_receive(result, task):
        t = time.perf_counter()
        try:
            return receive(result, task)
        finally:
            costs["coordinator"] += time.perf_counter() - t
            costs["worker"] += result.overhead
            costs["n"] += 1

    executor.receive = timed_receive
    with tempfile.TemporaryDirectory(prefix="barbu-bench-cluster-") as tmp:
        folder = Path(tmp)
        yardstick_config = parse_config(RANDOM_28, display="random28", base_dir=ROOT / "tournaments")
        _, n28 = play(override(yardstick_config, rounds=args.yardstick), folder, "random28")
        match28, cpu28 = match_seconds(f"sqlite:///{folder}/random28.db")
        print(f"a 28-deal match of the random bots: {match28:.2f}s wall, {cpu28:.2f}s CPU (mean of {n28}, 2 at a time)")

        address, procs = start_cluster(folder)
        try:
            if not args.quick:  # a long-lived cluster has its bundles unpacked and its bots started
                play(override(config, rounds=1), folder, "warmup", cluster=address)
            costs.update(worker=0.0, coordinator=0.0, n=0)
            local_wall, n = play(config, folder, "local")
            cluster_wall, n_cluster = play(config, folder, "cluster", cluster=address)
            _, smoke_cpu = match_seconds(f"sqlite:///{folder}/cluster.db", config.name)
        finally:
            stop_cluster(procs)
            executor.receive = receive
    assert n == n_cluster
    local_rate, cluster_rate = 60 * n / local_wall, 60 * n / cluster_wall
    overhead = (cluster_wall - local_wall) * 2 / n
    print(f"local pool (jobs=2): {n} matches in {local_wall:.1f}s = {local_rate:.1f} matches/min")
    print(f"cluster (2 workers x arena=1): {n} matches in {cluster_wall:.1f}s = {cluster_rate:.1f} matches/min")
    k = max(1, costs["n"])
    print(
        f"measured per match: on the worker {1000 * costs['worker'] / k:.0f} ms (bundle check, compressing), "
        f"on the coordinator {1000 * costs['coordinator'] / k:.0f} ms (inflating, verifying, writing the log)"
    )
    parts = (costs["worker"] + costs["coordinator"]) / k
    print(
        f"overhead per match {1000 * overhead:.0f} ms = {overhead / match28:.1%} of a 28-deal random-bot match "
        f"(goal: <= 5%); the parts measured above, summed: {parts / match28:.1%} of one"
    )
    print(f"per worker core, by CPU: {3600 / cpu28:.0f} 28-deal random-bot matches/hour, {3600 / smoke_cpu:.0f} "
          f"{config.rules.deals_per_match}-deal smoke matches/hour (heuristic vs random); measured on the cluster: "
          f"{60 * cluster_rate / 2:.0f} smoke matches/hour per worker core")  # fmt: skip
    print(
        f"cluster: overhead {1000 * overhead:.0f} ms per match, {local_rate:.1f} matches/min local vs {cluster_rate:.1f} on the cluster"
    )


if __name__ == "__main__":
    main()
