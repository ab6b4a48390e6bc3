"""Tournament throughput: the smoke league (tournaments/smoke.yaml, real bot processes) played
with jobs=1 and jobs=2, each with the bots kept between matches (the default: both sample bots
say ``multi_match``) and without (every match starts its four bots), each into a fresh SQLite
database in a temporary folder.

Prints, per run, the wall time (worker start-up included), matches per minute, the CPU one
match costs: the arbiter's (the worker process that referees it) and the four bots' (start-up
included when they start; a kept bot is charged what it used during the match), and how many
cores the whole run kept busy (all its processes' CPU over the wall time). The cores busy at
jobs=1 bound the scaling: two workers can at most fill the machine. The smoke
league is a duplicate one: the copies of a set share their deals, so a kept bot plays at most
one copy of each set (it never sees a deal twice) and reuse pays only from set to set.

The last line is ``tournament: A matches/min at jobs=1, B at jobs=2, scaling B/A`` (with reuse).

    python bench/tournament.py [--rounds N] [--config tournaments/smoke.yaml]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from arbiter.execution.venues import default_executor
from arbiter.process.procfs import tree_cpu_seconds
from arbiter.tournament.config import load_config, override
from arbiter.tournament.loop import run_tournament

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.tournament.inproc import fresh_processes  # noqa: E402  (bots started afresh for every match)

QUICK = ["--rounds", "1"]  # --quick: a run of seconds that tests/test_benches.py makes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "tournaments" / "smoke.yaml")
    parser.add_argument("--rounds", type=int, default=None, help="override the file's rounds (more: steadier figures)")
    parser.add_argument(
        "--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}, bots kept only"
    )
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    config = load_config(args.config)
    if args.rounds:
        config = override(config, rounds=args.rounds)
    load = os.getloadavg()
    print(f"{config.name}: {config.format}, {config.rounds} rounds, {config.rules.deals_per_match} deals a match, "
          f"{len(config.entrants)} entrants; {os.cpu_count()} cores; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")  # fmt: skip
    rates: dict[tuple[int, bool], float] = {}
    busy: dict[tuple[int, bool], float] = {}  # CPU seconds of the whole run (all processes) per second
    # Interleaved, so that both kinds of run see much the same load.
    for jobs in (1, 2):
        for reuse in (True,) if args.quick else (True, False):
            with tempfile.TemporaryDirectory(prefix="barbu-bench-") as folder:
                run_config = override(config, log_folder=Path(folder) / "logs")
                cpu_before = tree_cpu_seconds(os.getpid())  # with the workers, and their bots
                started = time.perf_counter()
                summary = run_tournament(
                    run_config, database=f"sqlite:///{folder}/bench.db", jobs=jobs,
                    executor=default_executor if reuse else fresh_processes,
                )  # fmt: skip
                wall = time.perf_counter() - started
                busy[jobs, reuse] = (tree_cpu_seconds(os.getpid()) - cpu_before) / wall
            n = summary.played
            rates[jobs, reuse] = 60 * n / wall
            print(
                f"jobs={jobs} {'reuse   ' if reuse else 'no reuse'}: {n} matches in {wall:.1f}s = "
                f"{rates[jobs, reuse]:.1f} matches/min; per match CPU: arbiter {summary.arbiter_cpu / n:.2f}s, "
                f"bots {summary.bots_cpu / n:.2f}s, total {(summary.arbiter_cpu + summary.bots_cpu) / n:.2f}s; "
                f"cores busy {busy[jobs, reuse]:.2f}"
            )
    if not args.quick:
        print(f"scaling without reuse: {rates[2, False] / rates[1, False]:.2f}")
    # A match at jobs=1 already keeps more than one core busy (the arbiter works on while a bot
    # thinks); two at once can at most fill the machine.
    cores = os.cpu_count() or 1
    print(f"scaling bound: {cores} cores / {busy[1, True]:.2f} cores busy at jobs=1 = {cores / busy[1, True]:.2f}")
    a, b = rates[1, True], rates[2, True]
    print(f"tournament: {a:.1f} matches/min at jobs=1, {b:.1f} at jobs=2, scaling {b / a:.2f}")


if __name__ == "__main__":
    main()
