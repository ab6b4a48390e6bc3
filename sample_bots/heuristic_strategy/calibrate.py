"""Refit the hand-evaluation tables of :mod:`.evaluate` from self-play (a development tool).

    .venv/bin/python sample_bots/heuristic_strategy/calibrate.py --deals 4000 > /tmp/tables.py

1. MODELS: every contract is played on ``--deals`` random deals by four copies of the bot
   (seat 0 declares; the trump suit and Domino start rank are the estimate's best half of the
   time and random otherwise, to spread the features). Each seat's hand features and raw score
   make one sample; a ridge least-squares fit per contract gives the coefficients.
2. BASELINE: the mean over random hands of the declarer's best estimate per contract.
3. FUTURE: the declaring policy's dynamic programme over subsets of remaining contracts.
4. DECLARER_MEAN: the mean raw score of declarers in full self-play matches.

It prints the four tables as Python source, to paste into ``evaluate.py``. Pure standard
library; about a minute per 1 000 deals.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from types import ModuleType

from barbu.rules import (
    STANDARD_CONTRACTS,
    Contract,
    Declaration,
    Phase,
    Ruleset,
    make_ruleset,
    new_match,
    observe,
    shuffle_hands,
)  # fmt: skip

from arbiter.referee.loop import MatchSetup, Referee
from arbiter.referee.players import StrategyPlayer


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[col][col]:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


def ridge(xs: list[list[float]], ys: list[float], lam: float = 5.0) -> list[float]:
    """Least squares with a small ridge on every coefficient but the intercept (column 0)."""
    k = len(xs[0])
    a = [[0.0] * k for _ in range(k)]
    b = [0.0] * k
    for x, y in zip(xs, ys, strict=True):
        for i in range(k):
            b[i] += x[i] * y
            for j in range(k):
                a[i][j] += x[i] * x[j]
    for i in range(1, k):
        a[i][i] += lam
    return _solve(a, b)


def options(c: Contract) -> list[Declaration]:
    """Every declaration of contract ``c``."""
    if c is Contract.TRUMPS:
        return [Declaration(c, trump=s) for s in range(4)]
    if c is Contract.DOMINO:
        return [Declaration(c, start_rank=r) for r in range(13)]
    return [Declaration(c)]


def fit_models(ev: ModuleType, bot, rules: Ruleset, deals: int, seed: int) -> dict[Contract, dict[str, float]]:
    """1. MODELS: each seat's hand features against its raw score, over ``deals`` deals."""

    def features(hand, decl):
        if decl.contract is Contract.TRUMPS:
            return ev.trumps_features(hand, decl.trump)
        if decl.contract is Contract.DOMINO:
            return ev.domino_features(hand, decl.start_rank, rules.domino_ace)
        return ev.trick_features(hand)

    samples: dict[Contract, list[tuple[dict, int, int]]] = {c: [] for c in STANDARD_CONTRACTS}
    for i in range(deals):
        rng = random.Random(f"{seed}/{i}")
        hands = shuffle_hands(rng)
        for c in STANDARD_CONTRACTS:
            opts = options(c)
            if len(opts) > 1 and rng.random() < 0.5:
                decl = rng.choice(opts)
            else:
                decl = max(opts, key=lambda d: ev.estimate(rules, hands[0], d, True))
            state = new_match(rules, 0)
            state.deal(hands)
            state.apply(decl)
            while state.phase is Phase.DOUBLE:
                state.apply(state.legal_actions()[0])
            while not state.results:
                state.apply(bot.decide(observe(state, state.turn)))
            raw = state.results[-1].raw
            for s in range(4):
                samples[c].append((features(hands[s], decl), int(s == 0), raw[s]))
    models = {}
    for c, rows in samples.items():
        keys = sorted(rows[0][0])
        xs = [[1.0, float(d)] + [f[k] for k in keys] for f, d, _ in rows]
        coef = ridge(xs, [float(y) for _, _, y in rows])
        models[c] = dict(zip(["const", "decl", *keys], coef, strict=True))
    return models


def baseline_and_future(
    ev: ModuleType, rules: Ruleset, hands: int, seed: int
) -> tuple[dict[Contract, float], list[float]]:
    """2. BASELINE and 3. FUTURE, from the best estimates of ``hands`` random hands."""
    rng = random.Random(f"{seed}/hands")
    best: dict[Contract, list[float]] = {c: [] for c in STANDARD_CONTRACTS}
    for _ in range(hands):
        hand = shuffle_hands(rng)[0]
        for c in STANDARD_CONTRACTS:
            best[c].append(max(ev.estimate(rules, hand, d, True) for d in options(c)))
    baseline = {c: statistics.mean(v) for c, v in best.items()}
    gains = [[best[c][i] - baseline[c] for c in STANDARD_CONTRACTS] for i in range(hands)]
    future = [0.0] * 128
    for remaining in sorted(range(1, 128), key=lambda r: r.bit_count()):
        total = 0.0
        for g in gains:
            total += max(g[j] + future[remaining & ~(1 << j)] for j in range(7) if remaining >> j & 1)
        future[remaining] = total / len(gains)
    return baseline, future


def declarer_raw_scores(bot_class, rules: Ruleset, matches: int, seed: int) -> dict[Contract, list[int]]:
    """4. The declarers' raw scores per contract in ``matches`` full self-play matches."""
    raws: dict[Contract, list[int]] = {c: [] for c in STANDARD_CONTRACTS}
    for m in range(matches):
        players = [StrategyPlayer(bot_class().decide, "heuristic") for _ in range(4)]
        result = Referee(MatchSetup(rules, seed=seed * 100000 + m), players, lambda line: None).run()
        for d in result.results:
            raws[d.declaration.contract].append(d.raw[d.declarer])
    return raws


def print_tables(models, baseline, future, raws) -> None:
    """The four tables as Python source, to paste into ``evaluate.py``."""
    name = {c: f"Contract.{c.name}" for c in STANDARD_CONTRACTS}
    print("MODELS: dict[Contract, dict[str, float]] = {")
    for c, coef in models.items():
        print(f"    {name[c]}: {{")
        print("        " + ", ".join(f'"{k}": {v:.2f}' for k, v in coef.items()) + ",")
        print("    },")
    print("}  # fmt: skip")
    print("BASELINE = {" + ", ".join(f"{name[c]}: {v:.2f}" for c, v in baseline.items()) + "}")
    print("FUTURE = (" + ", ".join(f"{v:.2f}" for v in future) + ")")
    print("DECLARER_MEAN = {" + ", ".join(f"{name[c]}: {statistics.mean(v):.1f}" for c, v in raws.items()) + "}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=2000, help="deals per contract for the fit")
    parser.add_argument("--hands", type=int, default=6000, help="random hands for BASELINE and FUTURE")
    parser.add_argument("--matches", type=int, default=150, help="self-play matches for DECLARER_MEAN")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the bot and its strategy package
    from heuristic_bot import HeuristicBot

    from heuristic_strategy import evaluate as ev

    rules = make_ruleset("standard")
    models = fit_models(ev, HeuristicBot(strict=True), rules, args.deals, args.seed)
    ev.MODELS.update(models)  # the next steps estimate with the refitted models
    baseline, future = baseline_and_future(ev, rules, args.hands, args.seed)
    ev.BASELINE.update(baseline)
    ev.FUTURE = tuple(future)
    raws = declarer_raw_scores(HeuristicBot, rules, args.matches, args.seed)
    print_tables(models, baseline, future, raws)


if __name__ == "__main__":
    main()
