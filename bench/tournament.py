"""Tournament throughput: the smoke league (tournaments/smoke.yaml, real bot processes) played
with jobs=1 and then jobs=2, each into a fresh SQLite database in a temporary folder.

Prints, per run, the wall time (worker start-up included), matches per minute, and the CPU one
match costs: the arbiter's (the worker process that referees it: RUSAGE_SELF) against the four
bots' (its child processes: RUSAGE_CHILDREN). The last line is
``tournament: A matches/min at jobs=1, B at jobs=2, scaling B/A``.

    python bench/tournament.py [--rounds N] [--config tournaments/smoke.yaml]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from arbiter.tournament.config import load_config, override
from arbiter.tournament.runner import run_tournament

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "tournaments" / "smoke.yaml")
    parser.add_argument("--rounds", type=int, default=None, help="override the file's rounds (more: steadier figures)")
    args = parser.parse_args()
    config = load_config(args.config)
    if args.rounds:
        config = override(config, rounds=args.rounds)
    print(f"{config.name}: {config.format}, {config.rounds} rounds, {config.rules.deals_per_match} deals a match, "
          f"{len(config.entrants)} entrants; {os.cpu_count()} cores")  # fmt: skip
    rates = {}
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory(prefix="barbu-bench-") as folder:
            run_config = override(config, log_folder=Path(folder) / "logs")
            started = time.perf_counter()
            summary = run_tournament(run_config, database=f"sqlite:///{folder}/bench.db", jobs=jobs)
            wall = time.perf_counter() - started
        n = summary.played
        rates[jobs] = 60 * n / wall
        print(
            f"jobs={jobs}: {n} matches in {wall:.1f}s = {rates[jobs]:.1f} matches/min; per match "
            f"CPU: arbiter {summary.arbiter_cpu / n:.2f}s, bots {summary.bots_cpu / n:.2f}s "
            f"({summary.bots_cpu / (summary.arbiter_cpu + summary.bots_cpu):.0%} of the CPU is the bots')"
        )
    print(f"tournament: {rates[1]:.1f} matches/min at jobs=1, {rates[2]:.1f} at jobs=2, scaling {rates[2] / rates[1]:.2f}")


if __name__ == "__main__":
    main()
