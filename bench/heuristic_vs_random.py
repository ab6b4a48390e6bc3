"""The heuristic sample bot against three random players, in-process through the referee.

Matches come in groups of four on the same seed (the same 28 deals), with the heuristic bot in
seat 0, 1, 2 and 3 in turn, so every seat and every deal is played by it once per group. Prints
the heuristic's mean match score against the random seats' mean, the margin with a 95%
confidence interval, the heuristic's win rate (place 1, ties included), the mean time per
heuristic decision, and a per-contract breakdown of deal scores. The last line is
``heuristic_vs_random: margin +M per match (95% CI LO..HI), win rate W%, T ms per decision``.

    .venv/bin/python bench/heuristic_vs_random.py --matches 40
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots"))

from barbu.rules import PRESETS, make_ruleset  # noqa: E402
from heuristic_bot import HeuristicBot  # noqa: E402

from arbiter.match.blocking import run_blocking  # noqa: E402
from arbiter.referee.loop import MatchSetup, Referee  # noqa: E402
from arbiter.referee.players import RandomPlayer, StrategyPlayer  # noqa: E402
from arbiter.stats import mean_ci  # noqa: E402

QUICK = ["--matches", "4"]  # --quick: a run of seconds that tests/test_benches.py makes


class TimedBot:
    """Wraps the bot's decide and accumulates the time spent in it."""

    def __init__(self) -> None:
        self.bot = HeuristicBot()
        self.seconds = 0.0
        self.slowest = 0.0
        self.decisions = 0

    def decide(self, view):
        start = time.perf_counter()
        action = self.bot.decide(view)
        elapsed = time.perf_counter() - start
        self.seconds += elapsed
        self.slowest = max(self.slowest, elapsed)
        self.decisions += 1
        return action


def play(matches: int, rules_name: str, seed: int):
    rules = make_ruleset(rules_name)
    rows = []
    per_contract: dict[str, list[list[float]]] = defaultdict(lambda: [[], []])
    timer = TimedBot()
    faults = 0
    for m in range(matches):
        match_seed = seed + m // 4
        seat = m % 4
        players = [
            StrategyPlayer(timer.decide, "heuristic") if s == seat else RandomPlayer(seed=f"{match_seed}/{m}/{s}")
            for s in range(4)
        ]
        referee = Referee(MatchSetup(rules, seed=match_seed, first_declarer=0), players, lambda line: None)
        result = run_blocking(referee.play())
        faults += sum(1 for f in result.faults if f.seat == seat)
        others = [result.totals[s] for s in range(4) if s != seat]
        rows.append((result.totals[seat], statistics.mean(others), result.places[seat]))
        for deal in referee.state.results:
            key = deal.declaration.contract.value
            per_contract[key][0].append(deal.scores[seat])
            per_contract[key][1].append(statistics.mean(deal.scores[s] for s in range(4) if s != seat))
    return rows, per_contract, timer, faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=40, help="number of matches (default 40)")
    parser.add_argument("--rules", default="standard", choices=sorted(PRESETS), help="rules preset")
    parser.add_argument("--seed", type=int, default=2024, help="first match seed (4 matches per seed)")
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    if args.matches < 2:
        parser.error("--matches must be at least 2")

    started = time.perf_counter()
    rows, per_contract, timer, faults = play(args.matches, args.rules, args.seed)
    elapsed = time.perf_counter() - started

    heur = [r[0] for r in rows]
    rand = [r[1] for r in rows]
    margins = [h - r for h, r in zip(heur, rand, strict=True)]
    n = len(rows)
    mean_margin = statistics.mean(margins)
    low, high = mean_ci(n, mean_margin, statistics.stdev(margins))
    wins = sum(1 for r in rows if r[2] == 1)

    last_seed = args.seed + (n - 1) // 4
    print(f"heuristic vs 3 random players: {n} matches, rules {args.rules}, seeds {args.seed}..{last_seed}")
    ms = 1000.0 * timer.seconds / max(1, timer.decisions)
    lines = [
        ("heuristic mean score per match", f"{statistics.mean(heur):9.1f}"),
        ("random seats' mean score per match", f"{statistics.mean(rand):9.1f}"),
        ("margin (heuristic - random mean)", f"{mean_margin:9.1f}  95% CI [{low:.1f}, {high:.1f}]"),
        ("heuristic win rate (place 1)", f"{wins}/{n} = {100.0 * wins / n:.1f}%"),
        (
            "mean time per heuristic decision",
            f"{ms:.3f} ms ({timer.decisions} decisions, slowest {1000.0 * timer.slowest:.2f} ms)",
        ),
    ]
    for label, value in lines:
        print(f"{label + ':':36s} {value}")
    print(f"heuristic faults: {faults}; wall time {elapsed:.1f}s")
    print("per contract, mean deal score (heuristic / random seat):")
    for contract, (h, r) in sorted(per_contract.items()):
        print(f"  {contract:12s} {statistics.mean(h):8.2f} / {statistics.mean(r):8.2f}   ({len(h)} deals)")
    print(
        f"heuristic_vs_random: margin {mean_margin:+.1f} per match (95% CI {low:+.1f}..{high:+.1f}), "
        f"win rate {100.0 * wins / n:.0f}%, {ms:.3f} ms per decision"
    )


if __name__ == "__main__":
    main()
