"""Sampler speed: uniform hidden-hand samples per second at the start, middle and end of a deal.

For several random deals of each contract, the view of the seat to act is taken before the
first card (39 unseen cards, no constraints), after 6 tricks (the middle: about 20 unseen cards
and the voids shown so far) and after 11 tricks (the end: a handful of cards, heavily
constrained). For each it measures, per CPU second of this process, building the :class:`~barbu.sampler.Sampler` (reading the
view, the counting table), drawing samples, and drawing samples turned into engine states
(:meth:`~barbu.sampler.Sampler.determinize`), which is what a simulating bot pays per sample.

    .venv/bin/python bench/sampler.py

The last line is ``sampler: A samples/s at the start, B in the middle, C at the end of a deal``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from barbu.rules import Contract, Phase, apply, deal, legal_actions, make_ruleset, new_match, observe, shuffle_hands
from barbu.sampler import Sampler

QUICK = ["--deals", "1", "--seconds", "0.01"]  # --quick: a run of seconds that tests/test_benches.py makes

POINTS = {"start": 0, "middle": 6, "end": 11}  # completed tricks (Domino: 0, 24, 44 cards played)
DOMINO_CARDS = {"start": 0, "middle": 24, "end": 40}


def positions(rules, deals: int, seed: int):
    """(point, view) pairs from random play of every contract."""
    rng = random.Random(seed)
    out = []
    for contract in rules.contracts:
        for _ in range(deals):
            state = new_match(rules)
            deal(state, shuffle_hands(rng))
            apply(state, next(a for a in legal_actions(state) if a.contract is contract))
            while state.phase is Phase.DOUBLE:
                apply(state, rng.choice(legal_actions(state)))
            wanted = dict(DOMINO_CARDS if contract is Contract.DOMINO else POINTS)
            while wanted and not state.results:
                done = (
                    sum(1 for _, c in state.plays if c is not None)
                    if contract is Contract.DOMINO
                    else len(state.tricks)
                    if not state.trick
                    else -1
                )
                for point, at in list(wanted.items()):
                    if done == at:
                        out.append((point, observe(state, state.turn)))
                        del wanted[point]
                apply(state, rng.choice(legal_actions(state)))
    return out


def rate(fn, seconds: float) -> float:
    """Calls per CPU second of ``fn`` over about ``seconds`` of CPU (the process's own time, so
    the figure holds on a machine shared with other work)."""
    n, start = 0, time.process_time()
    while True:
        for _ in range(50):
            fn()
        n += 50
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=3, help="random deals per contract")
    parser.add_argument("--seconds", type=float, default=0.1, help="timing per position and measure")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    rules = make_ruleset("standard")
    found = positions(rules, args.deals, args.seed)
    rng = random.Random(args.seed)
    table: dict[str, dict[str, list[float]]] = {
        p: {"build": [], "sample": [], "state": [], "count": []} for p in POINTS
    }
    for point, view in found:
        sampler = Sampler(view)
        row = table[point]
        row["count"].append(sampler.count)
        row["build"].append(rate(lambda view=view: Sampler(view), args.seconds))
        row["sample"].append(rate(lambda sampler=sampler: sampler.sample(rng), args.seconds))
        row["state"].append(rate(lambda sampler=sampler: sampler.determinize(sampler.sample(rng)), args.seconds))
    print(f"{len(found)} positions ({args.deals} random deals of each of the 7 contracts); medians:")
    print(f"{'':8} {'deals consistent':>18} {'builds/s':>10} {'samples/s':>10} {'states/s':>10}")
    for point, row in table.items():
        print(
            f"{point:8} {statistics.median(row['count']):18.3g} {statistics.median(row['build']):10.0f} "
            f"{statistics.median(row['sample']):10.0f} {statistics.median(row['state']):10.0f}"
        )
    s = {p: statistics.median(table[p]["sample"]) for p in POINTS}
    print(
        f"sampler: {s['start']:.0f} samples/s at the start, {s['middle']:.0f} in the middle, {s['end']:.0f} at the end of a deal"
    )


if __name__ == "__main__":
    main()
