"""How much stronger the Monte-Carlo bot is than the heuristic: a duplicate tournament, for real.

The bench writes a temporary tournament file — entrants ``mc`` (``sample_bots/mc_bot.py
--budget MS``) and three copies of the heuristic bot under three names, format ``duplicate``,
standard rules — and runs it with ``arbiter run``: bot processes, gRPC, the arbiter's clock.
Four distinct entrants make one table a round, played in its 4 seat rotations on the same 28
deals (a *duplicate set*), so mc holds every hand once per set and the luck of the cards
largely cancels.

The statistic is the duplicate difference per set: mc's mean total per match over the set
minus the heuristics' mean total per match on the same cards, with a Student-t 95% interval
over the sets (the same figure as ``arbiter standings``' "vs field" column, recomputed here
from the match logs). The time per decision is the arbiter's measured wall time (the logs'
``ms``) over mc's decisions that were not automatic. Faults are counted from the logs.

    .venv/bin/python bench/strength.py --rounds 8 --budget 100 --jobs 2

The last line is ``strength: mc vs heuristic +M per match (95% CI LO..HI), T ms per decision``.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from arbiter.stats import mean_ci

ROOT = Path(__file__).resolve().parent.parent
HEURISTICS = ("heuristic-a", "heuristic-b", "heuristic-c")
QUICK = ["--rounds", "1", "--budget", "1"]  # --quick: a run of seconds that tests/test_benches.py makes


def arbiter_command() -> list[str]:
    exe = Path(sys.executable).with_name("arbiter")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "arbiter"]


def tournament_yaml(
    name: str, rounds: int, seed: int, budget: float, jobs: int, per_decision: float, folder: Path
) -> str:
    mc = ROOT / "sample_bots" / "mc_bot.py"
    heuristic = ROOT / "sample_bots" / "heuristic_bot.py"
    entrants = [f"  - name: mc\n    command: python {mc} --budget {budget:g}\n"]
    entrants += [f"  - name: {h}\n    command: python {heuristic}\n" for h in HEURISTICS]
    return (
        f"name: {name}\n"
        "description: mc against three heuristic bots, duplicate sets (bench/strength.py)\n"
        "entrants:\n" + "".join(entrants) + "format: duplicate\n"
        f"rounds: {rounds}\n"
        f"seed: {seed}\n"
        "rules: standard\n"
        "time_control:\n"
        f"  per_decision: {per_decision:g}\n"
        "  reserve: 10\n"
        "  connect: 30\n"
        "  match_limit: 1800\n"
        "faults:\n"
        "  max_strikes: 3\n"
        f"parallelism: {jobs}\n"
        f"database: {folder / 'strength.db'}\n"
        f"log_folder: {folder / 'logs'}\n"
    )


def read_logs(folder: Path) -> tuple[dict[int, list[float]], list[float], int, int]:
    """Per duplicate set (keyed by its deal seed): mc's duplicate difference of each match;
    mc's decision times (ms, automatic decisions left out); faults of mc; matches read."""
    sets: dict[int, list[float]] = defaultdict(list)
    times: list[float] = []
    faults = matches = 0
    for path in sorted(folder.rglob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if not lines or lines[0].get("type") != "match" or lines[-1].get("type") != "match_end":
            continue
        head, end = lines[0], lines[-1]
        seats = {s["seat"]: s["entrant"] for s in head["seats"]}
        mc_seats = [s for s, name in seats.items() if name == "mc"]
        if len(mc_seats) != 1 or end.get("status") != "complete":
            raise SystemExit(f"error: {path}: not a complete match with one mc seat")
        (me,) = mc_seats
        totals = end["totals"]
        others = statistics.mean(totals[s] for s in range(4) if s != me)
        sets[head["seed"]].append(totals[me] - others)
        matches += 1
        for line in lines:
            if line.get("seat") != me:
                continue
            if line["type"] == "fault":
                faults += 1
            elif line["type"] in ("declare", "double", "play") and not line.get("auto") and "ms" in line:
                times.append(float(line["ms"]))
    return sets, times, faults, matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=8, help="duplicate sets (4 matches of 28 deals each)")
    parser.add_argument("--budget", type=float, default=100.0, help="mc's milliseconds per decision")
    parser.add_argument("--per-decision", type=float, default=1.0, help="the arbiter's free seconds per decision")
    parser.add_argument("--jobs", type=int, default=2, help="matches played at once")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--keep", type=Path, default=None, help="keep the tournament folder here (logs, database)")
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="barbu-strength-"))
    folder.mkdir(parents=True, exist_ok=True)
    name = f"strength-s{args.seed}-b{args.budget:g}-{int(time.time())}"
    config = folder / f"{name}.yaml"
    config.write_text(tournament_yaml(name, args.rounds, args.seed, args.budget, args.jobs, args.per_decision, folder))
    print(f"tournament {config}: {args.rounds} duplicate sets of 4 matches, mc at --budget {args.budget:g} ms, "
          f"jobs {args.jobs}", flush=True)  # fmt: skip
    start = time.perf_counter()
    run = subprocess.run([*arbiter_command(), "run", str(config), "--json"], capture_output=True, text=True, cwd=folder)
    wall = time.perf_counter() - start
    if run.returncode != 0:
        sys.stderr.write(run.stdout[-2000:] + run.stderr[-4000:])
        raise SystemExit(f"error: arbiter run exited with {run.returncode}")
    summary = json.loads(run.stdout)
    sets, times, faults, matches = read_logs(folder / "logs")
    diffs = [statistics.mean(v) for v in sets.values()]
    mean = statistics.mean(diffs)
    low, high = mean_ci(len(diffs), mean, statistics.stdev(diffs)) if len(diffs) > 1 else (-math.inf, math.inf)
    ms = statistics.mean(times) if times else 0.0
    slowest = max(times) if times else 0.0
    for row in summary.get("standings", []):
        if row.get("name") == "mc":
            print(f"arbiter standings: mc vs field {row.get('duplicate_diff')} (95% CI {row.get('duplicate_ci95')}), "
                  f"faults {row.get('faults')}, forfeits {row.get('forfeits')}")  # fmt: skip
    print(
        f"{matches} matches in {len(diffs)} duplicate sets in {wall:.0f}s; per set: "
        + " ".join(f"{d:+.0f}" for d in diffs)
    )
    print(f"mc: {len(times)} searched decisions, {ms:.1f} ms mean, {statistics.median(times) if times else 0:.1f} "
          f"median, {slowest:.0f} slowest (arbiter's clock); faults {faults}")  # fmt: skip
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"strength: mc vs heuristic {mean:+.1f} per match (95% CI {low:+.1f}..{high:+.1f}), "
          f"{ms:.0f} ms per decision")  # fmt: skip


if __name__ == "__main__":
    main()
