"""Engine speed, pure Python vs compiled (mypyc), side by side in one run.

Four figures per build, each a median over rounds:

1. the public decision API, as a referee or a simple bot drives it:
   ``apply(state, choice(legal_actions(state)))`` for every decision of random matches;
2. ``random_playout``, the engine's own Monte-Carlo inner loop (cards drawn straight from the
   legal mask), over whole random matches;
3. deal playouts: a copy (``clone()``) of a deal at its first card (each of the seven
   contracts in turn), played to the deal's end by ``random_playout(..., to_deal_end=True)``:
   what a Monte-Carlo bot does per sample, from a card decision;
4. greedy deal playouts: the same copies played out by ``barbu.rollout.greedy_playout``, the
   greedy policy the sample Monte-Carlo bot plays its samples with.

Each round runs the pure build (``BARBU_PURE=1``) and the compiled one in turn, each in a fresh
process, so both meet the same load. Without a compiled build (scripts/build_compiled.py) both
columns are pure and the ratio is about 1. The last line is
``engine: P playouts/s compiled = X x pure; M random matches/s compiled``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

QUICK = ["--matches", "3", "--playouts", "200", "--rounds", "1"]  # --quick: seconds, for tests/test_benches.py
BUILDS = {"pure": "1", "compiled": "0"}  # the build's name: its BARBU_PURE


def api_match(rules, seed: int) -> int:
    """One full match of uniform random legal play through the public API; decisions made."""
    from barbu.rules import Phase, apply, deal, legal_actions, new_match, shuffle_hands

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
    from barbu.rules import new_match, random_playout

    return random_playout(new_match(rules, first_declarer=seed % 4), random.Random(seed))


def first_card_states(rules, rng: random.Random) -> list:
    """Deals at their first card: each of the seven contracts (trump suits and Domino start
    ranks in turn), every seat passing its double."""
    from barbu.rules import STANDARD_CONTRACTS, Contract, Declaration, Phase, apply, new_match, shuffle_hands

    states = []
    for i in range(4 * len(STANDARD_CONTRACTS)):
        contract = STANDARD_CONTRACTS[i % len(STANDARD_CONTRACTS)]
        state = new_match(rules, first_declarer=i % 4)
        state.deal(shuffle_hands(rng))
        trump = i % 4 if contract is Contract.TRUMPS else None
        start = rng.randrange(13) if contract is Contract.DOMINO else None
        apply(state, Declaration(contract, trump=trump, start_rank=start))
        while state.phase is Phase.DOUBLE:
            apply(state, ())
        states.append(state)
    return states


def deal_playouts(rules, playouts: int, seed: int, greedy: bool = False) -> float:
    """Deal playouts per second: a copy of a deal at its first card played to its end, by
    random play or (``greedy``) by the greedy policy."""
    from barbu.rollout import greedy_playout
    from barbu.rules import random_playout

    rng = random.Random(seed)
    starts = first_card_states(rules, rng)
    start = time.perf_counter()
    for i in range(playouts):
        if greedy:
            greedy_playout(starts[i % len(starts)].clone(), i & 3)
        else:
            random_playout(starts[i % len(starts)].clone(), rng, to_deal_end=True)
    return playouts / (time.perf_counter() - start)


def measure_once(rules_name: str, matches: int, playouts: int, seed: int) -> dict[str, float | str]:
    """One round of the four figures, in this process (its build)."""
    from barbu.build import describe
    from barbu.rules import make_ruleset

    rules = make_ruleset(rules_name)
    out: dict[str, float | str] = {"build": describe()}
    for name, play in (("api", api_match), ("playout", playout_match)):
        start = time.perf_counter()
        decisions = sum(play(rules, seed + i) for i in range(matches))
        elapsed = time.perf_counter() - start
        out[f"{name}_matches"] = matches / elapsed
        out[f"{name}_decisions"] = decisions / elapsed
    out["deal_playouts"] = deal_playouts(rules, playouts, seed)
    out["greedy_playouts"] = deal_playouts(rules, playouts, seed, greedy=True)
    return out


def child(build: str, args: argparse.Namespace, seed: int) -> dict[str, float | str]:
    argv = [sys.executable, __file__, "--child", "--rules", args.rules, "--matches", str(args.matches)]
    argv += ["--playouts", str(args.playouts), "--seed", str(seed)]
    env = {**os.environ, "BARBU_PURE": BUILDS[build]}
    run = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    return json.loads(run.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=20, help="random matches per round and build (default 20)")
    parser.add_argument("--playouts", type=int, default=3000, help="deal playouts per round and build (default 3000)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    if args.child:
        print(json.dumps(measure_once(args.rules, args.matches, args.playouts, args.seed)))
        return
    runs: dict[str, list[dict[str, float | str]]] = {build: [] for build in BUILDS}
    for r in range(args.rounds):
        for build in BUILDS:  # the same seeds for both: the same matches
            runs[build].append(child(build, args, seed=r * args.matches))

    def median(build: str, key: str) -> float:
        return statistics.median(float(run[key]) for run in runs[build])

    for build in BUILDS:
        print(f"{build:9} loaded: {runs[build][0]['build']}")
    print(f"{'':34}{'pure':>12}{'compiled':>12}{'ratio':>8}  (medians of {args.rounds} rounds)")
    rows = [
        ("random matches/s, public API", "api_matches"),
        ("decisions/s, public API", "api_decisions"),
        ("random matches/s, random_playout", "playout_matches"),
        ("decisions/s, random_playout", "playout_decisions"),
        ("deal playouts/s", "deal_playouts"),
        ("greedy deal playouts/s", "greedy_playouts"),
    ]
    for label, key in rows:
        pure, compiled = median("pure", key), median("compiled", key)
        print(f"{label:34}{pure:12.0f}{compiled:12.0f}{compiled / pure:7.2f}x")
    playouts, ratio = (
        median("compiled", "deal_playouts"),
        median("compiled", "deal_playouts") / median("pure", "deal_playouts"),
    )
    print(f"engine: {playouts:.0f} playouts/s compiled = {ratio:.2f} x pure; "
          f"{median('compiled', 'playout_matches'):.0f} random matches/s compiled")  # fmt: skip


if __name__ == "__main__":
    main()
