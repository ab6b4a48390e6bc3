"""Engine speed: random in-process matches, single process.

Prints the median of several rounds; the last line is
``engine: N random matches/s, M decisions/s``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from barbu.rules import PRESETS, Phase, apply, deal, legal_actions, make_ruleset, new_match, shuffle_hands


def play_random_match(rules, seed: int) -> int:
    """One full match of uniform random legal play; returns the number of decisions."""
    rng = random.Random(seed)
    state = new_match(rules, first_declarer=seed % 4)
    decisions = 0
    while state.phase is not Phase.OVER:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        actions = legal_actions(state)
        apply(state, actions[int(rng.random() * len(actions))])
        decisions += 1
    return decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=200, help="matches per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rules", default="standard", choices=sorted(PRESETS))
    args = parser.parse_args()
    rules = make_ruleset(args.rules)
    rates, decision_rates = [], []
    for r in range(args.rounds):
        start = time.perf_counter()
        decisions = sum(play_random_match(rules, r * args.matches + i) for i in range(args.matches))
        elapsed = time.perf_counter() - start
        rates.append(args.matches / elapsed)
        decision_rates.append(decisions / elapsed)
        print(f"round {r + 1}: {rates[-1]:.0f} matches/s, {decision_rates[-1]:.0f} decisions/s")
    print(
        f"engine: {statistics.median(rates):.0f} random matches/s, "
        f"{statistics.median(decision_rates):.0f} decisions/s"
    )


if __name__ == "__main__":
    main()
