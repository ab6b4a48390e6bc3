"""Engine speed: random matches in one process, two ways, side by side in one run.

1. The public decision API, as a referee or a simple bot drives it:
   ``apply(state, choice(legal_actions(state)))`` for every decision.
2. ``random_playout``: the engine's own Monte-Carlo inner loop (cards drawn straight from the
   legal mask), what a simulating bot calls thousands of times per decision.

Prints the median of several rounds of each; the last line is
``engine: N random matches/s, M decisions/s`` (the playout figures).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from barbu.rules import (
    PRESETS,
    Phase,
    apply,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    random_playout,
    shuffle_hands,
)  # fmt: skip

QUICK = ["--matches", "5", "--rounds", "1"]  # --quick: a run of seconds that tests/test_benches.py makes


def api_match(rules, seed: int) -> int:
    """One full match of uniform random legal play through the public API; decisions made."""
    rng = random.Random(seed)
    state = new_match(rules, first_declarer=seed % 4)
    decisions = 0
    while state.phase is not Phase.OVER:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        actions = legal_actions(state)
        apply(state, actions[rng._randbelow(len(actions))])
        decisions += 1
    return decisions


def playout_match(rules, seed: int) -> int:
    return random_playout(new_match(rules, first_declarer=seed % 4), random.Random(seed))


def measure(play, rules, matches: int, rounds: int) -> tuple[float, float]:
    rates, decision_rates = [], []
    for r in range(rounds):
        start = time.perf_counter()
        decisions = sum(play(rules, r * matches + i) for i in range(matches))
        elapsed = time.perf_counter() - start
        rates.append(matches / elapsed)
        decision_rates.append(decisions / elapsed)
    return statistics.median(rates), statistics.median(decision_rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=100, help="matches per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rules", default="standard", choices=sorted(PRESETS))
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    rules = make_ruleset(args.rules)
    api = measure(api_match, rules, args.matches, args.rounds)
    playout = measure(playout_match, rules, args.matches, args.rounds)
    print(f"public API (legal_actions + apply): {api[0]:.0f} matches/s, {api[1]:.0f} decisions/s")
    print(f"random_playout:                     {playout[0]:.0f} matches/s, {playout[1]:.0f} decisions/s")
    print(f"engine: {playout[0]:.0f} random matches/s, {playout[1]:.0f} decisions/s")


if __name__ == "__main__":
    main()
