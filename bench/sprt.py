"""The sequential test of arbiter.verdict on simulated streams: measured α, β and sample numbers.

Every run feeds SprtState (no cards) with one set's difference B − A at a time until a verdict.
At true mean δ0 the share of runs accepting H1 is the false-positive rate α; at δ1 the share
accepting H0 is the false-negative rate β; the mean sets per run is compared with Wald's
expected sample number for a normal mean with known σ (which ignores overshoot and min_sets).
"rout" is a difference like heuristic against random (1054 points per match, SD 196 per set,
measured on the sample bots): the sets it takes, mean and worst.

Streams: "normal"; "card", the shape of real per-set differences (skewness −0.25, excess
kurtosis 0.3, measured on 392 sets of a heuristic against a 10%-random heuristic), modelled as
a normal plus a reversed exponential; "skew-1", four times that skew, a stress case. σ 96 is
the duplicate per-set SD of issue 14, σ 281 the plain round-robin per-match SD.

    .venv/bin/python bench/sprt.py            # 4000 runs per point, a few minutes on 2 cores
    .venv/bin/python bench/sprt.py --runs 1000
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

from arbiter.verdict.sprt import LlrModel, SprtConfig, SprtState, Verdict, wald_asn

QUICK = ["--runs", "40", "--jobs", "1"]  # --quick: a run of seconds that tests/test_benches.py makes

# (model, stream, δ0, δ1, σ)
SCENARIOS: list[tuple[LlrModel, str, float, float, float]] = [
    ("mixture", "normal", 0.0, 30.0, 96.0),
    ("mixture", "normal", 0.0, 15.0, 96.0),
    ("mixture", "normal", -10.0, 10.0, 96.0),
    ("mixture", "normal", 0.0, 48.0, 96.0),
    ("mixture", "normal", 0.0, 100.0, 281.0),
    ("mixture", "skew-1", 0.0, 30.0, 96.0),
    ("linear", "normal", 0.0, 30.0, 96.0),
    ("profile", "normal", 0.0, 30.0, 96.0),
    ("mixture", "card", 0.0, 15.0, 96.0),
    ("mixture", "card", 0.0, 100.0, 281.0),
    ("mixture", "card", 0.0, 30.0, 96.0),  # the headline, printed last
]
ROUT = (1054.0, 196.0)
MAX_SETS = 20000


def stream(shape: str, mean: float, sd: float) -> Callable[[random.Random], float]:
    if shape == "normal":
        return lambda rng: rng.gauss(mean, sd)
    skew = {"card": -0.25, "skew-1": -1.0}[shape]
    b = (abs(skew) / 2.0) ** (1.0 / 3.0)  # a·Z − b·(E − 1): skewness −2b³, excess kurtosis 6b⁴
    a = math.sqrt(1.0 - b * b)
    return lambda rng: mean + sd * (a * rng.gauss(0.0, 1.0) - b * (rng.expovariate(1.0) - 1.0))


def simulate(task: tuple[LlrModel, str, float, float, float, float, int, int]) -> tuple[int, int, int, int, int]:
    """Runs accepting H1, accepting H0, total sets, most sets, runs stopped by MAX_SETS."""
    model, shape, delta0, delta1, sd_or_rout, mean, runs, seed = task
    config = SprtConfig(delta0, delta1, max_sets=MAX_SETS, model=model)
    draw = stream(shape, mean, sd_or_rout)
    rng = random.Random(seed)
    h1 = h0 = total = most = capped = 0
    for _ in range(runs):
        state = SprtState.start(config).run(iter(lambda: draw(rng), None))
        h1 += state.verdict is Verdict.H1
        h0 += state.verdict is Verdict.H0
        capped += state.verdict is Verdict.MAX_REACHED
        total += state.n
        most = max(most, state.n)
    return h1, h0, total, most, capped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=4000, help="runs per true mean (default 4000)")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    runs = args.runs
    started = time.perf_counter()

    tasks = []
    for i, (model, shape, d0, d1, sd) in enumerate(SCENARIOS):
        seed = args.seed + 1000 * i
        tasks.append((model, shape, d0, d1, sd, d0, runs, seed))
        tasks.append((model, shape, d0, d1, sd, d1, runs, seed + 1))
        tasks.append((model, "normal", d0, d1, ROUT[1], ROUT[0], max(1, runs // 10), seed + 2))
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(simulate, tasks))

    se = math.sqrt(0.05 * 0.95 / runs)
    print(f"SPRT on simulated streams, α = β = 0.05 (binomial SE {se:.3f} at {runs} runs), min_sets 8")
    print(f"{'model':8s} {'stream':7s} {'δ0':>5s} {'δ1':>5s} {'σ':>4s} {'alpha':>6s} {'beta':>6s}"
          f" {'ASN@δ0':>7s} {'ASN@δ1':>7s} {'theory':>6s} {'excess':>6s} {'rout':>10s}")  # fmt: skip
    headline = ""
    for i, (model, shape, d0, d1, sd) in enumerate(SCENARIOS):
        at0, at1, rout = results[3 * i : 3 * i + 3]
        config = SprtConfig(d0, d1)
        alpha = at0[0] / runs
        beta = at1[1] / runs
        asn0, asn1 = at0[2] / runs, at1[2] / runs
        theory0, theory1 = wald_asn(config, d0, sd), wald_asn(config, d1, sd)
        excess = (asn0 + asn1) / (theory0 + theory1) - 1.0
        rout_runs = max(1, runs // 10)
        capped = at0[4] + at1[4] + rout[4]
        print(
            f"{model:8s} {shape:7s} {d0:5.0f} {d1:5.0f} {sd:4.0f} {alpha:6.3f} {beta:6.3f} {asn0:7.1f} {asn1:7.1f}"
            f" {theory0:6.1f} {excess:+6.0%} {rout[2] / rout_runs:5.1f}/{rout[3]:<4d}"
            + (f" ({capped} runs hit {MAX_SETS} sets)" if capped else "")
        )
        asn, theory = (asn0 + asn1) / 2.0, (theory0 + theory1) / 2.0
        headline = (
            f"sprt: alpha {alpha:.3f} (nominal 0.05), beta {beta:.3f} (nominal 0.05), "
            f"ASN {asn:.0f} vs {theory:.0f} theory"
        )
    print(f"rout: sets to a verdict at a difference of {ROUT[0]:.0f} with SD {ROUT[1]:.0f}, mean/worst")
    print(f"excess: measured ASN over Wald's (overshoot and min_sets); wall time {time.perf_counter() - started:.0f}s")
    print(
        f"headline: {SCENARIOS[-1][1]} stream, δ0 {SCENARIOS[-1][2]:.0f}, δ1 {SCENARIOS[-1][3]:.0f}, σ {SCENARIOS[-1][4]:.0f}"
    )
    print(headline)


if __name__ == "__main__":
    main()
