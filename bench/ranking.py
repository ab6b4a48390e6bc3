"""Ranking power: how many matches plain round robin and duplicate need to tell two bots apart.

Two sample bots close in strength — X, the heuristic bot, against Y, the same bot playing 10% of
its moves at random (``--noise``) — play both formats of the arbiter's schedule
(arbiter.tournament.schedule), in process through the referee. With ``--field 2`` (the default)
two more heuristic bots make a league table of 4 distinct entrants in its 4 rotations; with
``--field 0`` X and Y are the only entrants: tables X Y X Y in their 2 seat rotations (each
entrant holds 2 of the 4 hands in every match, so plain matches already average half the luck).

* **plain** (``round_robin``): every match has its own deals; the unit is one match and its
  statistic the score difference X − Y (an entrant's mean total over its seats);
* **duplicate**: the k rotations of a table (k = 2 or 4) replay the same deals; the unit is the
  set of k matches and its statistic the mean difference over the set.

For a confidence interval of the mean difference of half-width w, plain needs
n_p = (z·σ_p / w)² matches and duplicate n_d = k·(z·σ_d / w)² (σ_d per set of k), so duplicate
needs 1/E the matches of plain with E = σ_p² / (k·σ_d²), the *duplicate efficiency*. E is
estimated from ``--matches`` matches of each format (≥ 64) and its 95% CI by the bootstrap
(plain matches and duplicate sets resampled independently). The last line is
``ranking: duplicate needs 1/E the matches of plain (95% CI LO..HI)``.

    .venv/bin/python bench/ranking.py [--matches 256] [--field 2|0] [--noise 0.1] [--rules standard] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots"))

from barbu.rules import PRESETS, make_ruleset  # noqa: E402
from heuristic_bot import HeuristicBot  # noqa: E402

from arbiter.match.blocking import run_blocking  # noqa: E402
from arbiter.model import ScheduledMatch  # noqa: E402
from arbiter.referee.loop import MatchSetup, Referee  # noqa: E402
from arbiter.referee.players import Player, StrategyPlayer  # noqa: E402
from arbiter.tournament.formats import build_schedule  # noqa: E402

QUICK = ["--matches", "16", "--bootstrap", "200"]  # --quick: a run of seconds that tests/test_benches.py makes

X, Y = "heuristic", "noisy"


def noisy(noise: float, seed: str) -> Callable[[Any], Any]:
    """The heuristic bot, playing a uniformly random legal action with probability ``noise``."""
    bot, rng = HeuristicBot(), random.Random(seed)

    def decide(view: Any) -> Any:
        if len(view.legal) > 1 and rng.random() < noise:
            return rng.choice(view.legal)
        return bot.decide(view)

    return decide


def players(m: ScheduledMatch, noise: float) -> list[Player]:
    out: list[Player] = []
    for s, name in enumerate(m.seats):
        if name == Y:
            out.append(StrategyPlayer(noisy(noise, f"{m.seed}/{m.number}/{s}"), Y))
        else:  # X and the field: the heuristic bot (deterministic)
            out.append(StrategyPlayer(HeuristicBot().decide, name))
    return out


def differences(fmt: str, matches: int, field: int, noise: float, rules: Any, seed: int) -> tuple[list[float], int]:
    """Per unit (a plain match, or a duplicate set), X's mean total minus Y's; and the set size."""
    entrants = [X, Y] + [f"heuristic{i + 2}" for i in range(field)]
    per_round = len(build_schedule(fmt, entrants, 1, seed))
    schedule = build_schedule(fmt, entrants, math.ceil(matches / per_round), seed)[:matches]
    by_game: dict[int, list[float]] = {}
    for m in schedule:
        result = run_blocking(Referee(MatchSetup(rules, seed=m.seed), players(m, noise), lambda line: None).play())
        x = statistics.mean(result.totals[s] for s in range(4) if m.seats[s] == X)
        y = statistics.mean(result.totals[s] for s in range(4) if m.seats[s] == Y)
        by_game.setdefault(m.game, []).append(x - y)
    units = [v for _, v in sorted(by_game.items())]
    size = max(len(v) for v in units)
    return [statistics.mean(v) for v in units if len(v) == size], size  # whole sets only


def efficiency(plain: Sequence[float], duplicate: Sequence[float], k: int) -> float:
    """Plain matches per duplicate match for the same precision: σ_p² / (k·σ_d²)."""
    return statistics.variance(plain) / (k * statistics.variance(duplicate))


def bootstrap(
    plain: Sequence[float], duplicate: Sequence[float], k: int, rounds: int, seed: int
) -> tuple[float, float]:
    rng = random.Random(seed)
    values = []
    for _ in range(rounds):
        p = rng.choices(plain, k=len(plain))
        d = rng.choices(duplicate, k=len(duplicate))
        if statistics.variance(d) > 0:
            values.append(efficiency(p, d, k))
    values.sort()
    return values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=256, help="matches of each format (at least 64; default 256)")
    parser.add_argument(
        "--field", type=int, default=2, choices=(0, 2), help="heuristic bots besides X and Y (default 2)"
    )
    parser.add_argument(
        "--noise", type=float, default=0.1, help="share of the noisy heuristic's random moves (default 0.1)"
    )
    parser.add_argument("--rules", default="standard", choices=sorted(PRESETS), help="rules preset")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bootstrap", type=int, default=4000, help="bootstrap resamples (default 4000)")
    parser.add_argument(
        "--half-width", type=float, default=20.0, help="a CI half-width to express the needs in (points)"
    )
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    least = 16 if args.quick else 64  # fewer make no interval worth reading; --quick only shows the bench runs
    if args.matches < least or args.matches % 4:
        parser.error(f"--matches must be a multiple of 4 and at least {least}")
    rules = make_ruleset(args.rules)
    field = f" and {args.field} heuristic bots" if args.field else ""
    print(
        f"{X} vs {Y} ({args.noise:.0%} random moves){field}, rules {args.rules}, {args.matches} matches of each format"
    )
    started = time.perf_counter()
    plain, _ = differences("round_robin", args.matches, args.field, args.noise, rules, args.seed)
    duplicate, k = differences("duplicate", args.matches, args.field, args.noise, rules, args.seed + 1)
    wall = time.perf_counter() - started
    z = 1.96
    for name, values, per in (("plain", plain, 1), ("duplicate", duplicate, k)):
        sd = statistics.stdev(values)
        half = z * sd / math.sqrt(len(values))
        need = per * (z * sd / args.half_width) ** 2
        unit = "per match" if per == 1 else f"per set of {per}"
        print(
            f"{name:>9}: {len(values) * per} matches, mean X−Y {statistics.mean(values):+7.1f} ±{half:5.1f}, "
            f"SD {sd:6.1f} {unit}; ±{args.half_width:g} needs {need:6.0f} matches"
        )
    e = efficiency(plain, duplicate, k)
    low, high = bootstrap(plain, duplicate, k, args.bootstrap, args.seed)
    print(f"wall time {wall:.0f}s")
    print(f"ranking: duplicate needs 1/{e:.1f} the matches of plain (95% CI {low:.1f}..{high:.1f})")


if __name__ == "__main__":
    main()
