"""What the margin ratings cost where they are kept: a set's sums added, and the table solved.

The standings keep each entrant's :class:`~arbiter.model.MarginSums` (arbiter.tournament.standings);
a rated set adds to those of its four entrants, and every table made (``arbiter standings``, the
arena's leaderboard, once per recorded match) solves the normal equations from the sums of the
whole field: a Cholesky factorisation and the diagonal of its inverse, O(N³) in pure Python. This
measures both on a field of N entrants that each played about ``--sets`` sets of four, and the
whole standings table (:func:`~arbiter.tournament.standings.table_of`: the solve and the rows).

    .venv/bin/python bench/margins_solve.py             # N = 50, 100, 200, 400
    .venv/bin/python bench/margins_solve.py --sizes 200 --repeats 20
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
import time
from collections.abc import Callable

from arbiter.model import MarginSums, Tally
from arbiter.tournament.margins import solve
from arbiter.tournament.standings import table_of

QUICK = ["--sizes", "20", "50", "--repeats", "2"]  # --quick: a run of seconds that tests/test_benches.py makes


def field(size: int, sets_each: int, seed: int) -> tuple[dict[str, Tally], float]:
    """Tallies of ``size`` entrants after about ``sets_each`` sets each, and the mean seconds a
    set's sums took to add (its four entrants')."""
    rng = random.Random(seed)
    names = [f"bot{i:03d}" for i in range(size)]
    strength = {name: rng.gauss(0, 60) for name in names}
    sums = {name: MarginSums() for name in names}
    sets = size * sets_each // 4
    started = time.perf_counter()
    for _ in range(sets):
        table = rng.sample(names, 4)
        level = rng.uniform(-400, 400)
        scores = {name: level + strength[name] + rng.gauss(0, 150) for name in table}
        for name in table:
            sums[name] = sums[name].add(name, scores)
    per_set = (time.perf_counter() - started) / sets
    tallies = {name: Tally(name, 25.0, 2.0, games=sums[name].sets, margin=sums[name]) for name in names}
    return tallies, per_set


def timed(repeats: int, action: Callable[[], object]) -> float:
    """The fewest milliseconds of ``repeats`` calls (the cost itself: on a shared machine the
    others add only waiting)."""
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        runs.append((time.perf_counter() - started) * 1000)
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--sets", type=int, default=12, help="sets each entrant played (about)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    print(f"{'N':>5s} {'solve ms':>9s} {'table ms':>9s} {'set sums us':>12s}")
    rows = []
    for size in args.sizes:
        tallies, per_set = field(size, args.sets, seed=size)
        names = list(tallies)
        sums = {name: t.margin for name, t in tallies.items()}
        solve_ms = timed(args.repeats, functools.partial(solve, names, sums))
        table_ms = timed(args.repeats, functools.partial(table_of, names, tallies))
        rows.append((size, solve_ms, table_ms, per_set * 1e6))
        print(f"{size:5d} {solve_ms:9.1f} {table_ms:9.1f} {per_set * 1e6:12.1f}")
    size, solve_ms, table_ms, per_set_us = max(rows, key=lambda r: (r[0] == 200, r[0]))
    print(f"margins: solve {solve_ms:.1f} ms at N={size} (table {table_ms:.1f} ms), a set's sums {per_set_us:.1f} us")


if __name__ == "__main__":
    main()
