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

Both builds in one run: the tournament is played once with the arbiter and every bot on the pure
source (``BARBU_PURE=1``) and once on the compiled build (docs/speed.md), on the same seeds, so
the same deals: the difference between the two margins is paired set by set.

The last line is ``strength: mc vs heuristic +M per match (95% CI LO..HI), T ms per decision;
pure SDK +M (95% CI LO..HI), T ms`` (the compiled build's figures first).
"""

from __future__ import annotations

import argparse
import json
import math
import os
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
BUILDS = {"pure": "1", "compiled": "0"}  # each build's BARBU_PURE (docs/speed.md)
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

    results = {build: one_build(args, build, pure) for build, pure in BUILDS.items()}
    (p_mean, p_low, p_high, p_ms, p_sets), (c_mean, c_low, c_high, c_ms, c_sets) = results["pure"], results["compiled"]
    # The same seeds give both builds the same deals: the difference is paired set by set.
    paired = [statistics.mean(c_sets[k]) - statistics.mean(p_sets[k]) for k in sorted(c_sets) if k in p_sets]
    if len(paired) > 1:
        d = statistics.mean(paired)
        lo, hi = mean_ci(len(paired), d, statistics.stdev(paired))
        print(f"compiled - pure, paired over {len(paired)} sets: {d:+.1f} per match (95% CI {lo:+.1f}..{hi:+.1f})")
    print(f"strength: mc vs heuristic {c_mean:+.1f} per match (95% CI {c_low:+.1f}..{c_high:+.1f}), "
          f"{c_ms:.0f} ms per decision; pure SDK {p_mean:+.1f} (95% CI {p_low:+.1f}..{p_high:+.1f}), "
          f"{p_ms:.0f} ms")  # fmt: skip


def one_build(
    args: argparse.Namespace, build: str, pure: str
) -> tuple[float, float, float, float, dict[int, list[float]]]:
    """The tournament with the arbiter and every bot on one build (``BARBU_PURE``, which the bots
    inherit): mc's margin, its interval, its ms per decision, and its differences per set."""
    folder = Path(args.keep) / build if args.keep else Path(tempfile.mkdtemp(prefix="barbu-strength-"))
    folder.mkdir(parents=True, exist_ok=True)
    name = f"strength-{build}-s{args.seed}-b{args.budget:g}-{int(time.time())}"
    config = folder / f"{name}.yaml"
    config.write_text(tournament_yaml(name, args.rounds, args.seed, args.budget, args.jobs, args.per_decision, folder))
    print(f"[{build}] tournament {config}: {args.rounds} duplicate sets of 4 matches, mc at --budget "
          f"{args.budget:g} ms, jobs {args.jobs}", flush=True)  # fmt: skip
    start = time.perf_counter()
    run = subprocess.run(
        [*arbiter_command(), "run", str(config), "--json"], capture_output=True, text=True, cwd=folder,
        env={**os.environ, "BARBU_PURE": pure},
    )  # fmt: skip
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
            print(f"[{build}] arbiter standings: mc vs field {row.get('duplicate_diff')} (95% CI "
                  f"{row.get('duplicate_ci95')}), faults {row.get('faults')}, forfeits {row.get('forfeits')}")  # fmt: skip
    print(
        f"[{build}] {matches} matches in {len(diffs)} duplicate sets in {wall:.0f}s; per set: "
        + " ".join(f"{d:+.0f}" for d in diffs)
    )
    print(f"[{build}] mc: {len(times)} searched decisions, {ms:.1f} ms mean, "
          f"{statistics.median(times) if times else 0:.1f} median, {slowest:.0f} slowest (arbiter's clock); "
          f"faults {faults}; margin {mean:+.1f} per match (95% CI {low:+.1f}..{high:+.1f})")  # fmt: skip
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return mean, low, high, ms, sets


if __name__ == "__main__":
    main()
