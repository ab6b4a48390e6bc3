"""The arena's matchmaking against round robin: how soon each orders a field of known order.

Five entrants whose order is known: the heuristic bot (``sample_bots/heuristic_strategy``), the
same bot playing 10%, 25% and 50% of its decisions uniformly at random, and the random bot's
strategy (``sample_bots/random_bot.py``). True order: heuristic > heuristic10 > heuristic25 >
heuristic50 > random. Its basis: ``heuristicP`` is the mixture that follows the heuristic with
probability 1 − P and the random bot with probability P at each decision, and the heuristic
beats the random bot by a wide margin (``bench/heuristic_vs_random.py``), so each step of P
hands more decisions to the weaker policy; ``--check-order ROUNDS`` plays a long round robin
and prints each entrant's duplicate difference against the field to confirm it.

Two ways to spend the same match budget, both rated by the tournament's TrueSkill
(``arbiter.tournament.ratings``: a duplicate set is one game) and both playing duplicate sets
(a table's 4 seat rotations on the same deals):

* **round robin**: the tournament's ``duplicate`` schedule (every table of 4 of the 5 in turn);
* **arena**: the sets that ``arbiter.arena.matchmaking.next_sets`` picks from the current
  ratings, ``--slots`` matches in flight (so it picks with the last sets' results not yet in, as
  a live arena does); the bench only plays what it picks.

Matches are played in process through the referee (no bot processes), on the short contracts
subset of tournaments/smoke.yaml (12 deals a match). After each budget the leaderboard (by the
conservative rating μ − 3σ, as ``arbiter standings`` orders it) is compared with the true order
by Kendall's τ; each repetition has its own seeds, and the median τ per budget is reported. The
last line is ``ladder: tau T_arena vs T_roundrobin after N matches`` (N the largest budget).

    .venv/bin/python bench/ladder.py [--repetitions 20] [--budgets 8,16,24,40,80] [--jobs 2] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots"))

from barbu.rules import make_ruleset  # noqa: E402
from heuristic_bot import HeuristicBot  # noqa: E402
from random_bot import RandomBot  # noqa: E402

from arbiter.arena.matchmaking import Contender, DuplicateSet, next_sets  # noqa: E402
from arbiter.model import MatchRecord, SeatRecord  # noqa: E402
from arbiter.referee.loop import MatchSetup, Referee  # noqa: E402
from arbiter.referee.players import StrategyPlayer  # noqa: E402
from arbiter.tournament.formats import build_schedule  # noqa: E402
from arbiter.tournament.ratings import RatingBook, game_outcome, standings  # noqa: E402

NOISE = {"heuristic": 0.0, "heuristic10": 0.10, "heuristic25": 0.25, "heuristic50": 0.50, "random": 1.0}
TRUE_ORDER = list(NOISE)  # best first
RULES = make_ruleset("standard", {"contracts": ["no_tricks", "no_hearts", "barbu"]})  # as tournaments/smoke.yaml


def strategy(name: str, seed: str) -> Callable[[Any], Any]:
    """The entrant's decisions: the heuristic, with probability NOISE[name] the random bot's."""
    randomly = RandomBot(seed=random.Random(seed).getrandbits(32)).decide
    if NOISE[name] >= 1.0:
        return randomly
    heuristic, rng = HeuristicBot().decide, random.Random(f"{seed}/noise")

    def decide(view: Any) -> Any:
        return randomly(view) if rng.random() < NOISE[name] else heuristic(view)

    return decide


def play_set(seatings: Sequence[Sequence[str]], seed: int, game: int, first_number: int) -> list[MatchRecord]:
    """One duplicate set: every seating on the deals of ``seed``; its matches as rating records."""
    records = []
    for k, seats in enumerate(seatings):
        players = [StrategyPlayer(strategy(name, f"{seed}/{k}/{s}"), name) for s, name in enumerate(seats)]
        result = Referee(MatchSetup(RULES, seed=seed), players, lambda line: None).run()
        records.append(
            MatchRecord(
                number=first_number + k,
                game=game,
                status=result.status,
                seats=tuple(SeatRecord(name, result.totals[s]) for s, name in enumerate(seats)),
            )
        )
    return records


def leaderboard(records: Sequence[MatchRecord]) -> list[str]:
    return [row.name for row in standings(TRUE_ORDER, records)]


def round_robin(budgets: Sequence[int], seed: int) -> list[list[str]]:
    """The leaderboard after each budget of the tournament's duplicate round robin."""
    per_round = len(build_schedule("duplicate", TRUE_ORDER, 1, seed))
    schedule = build_schedule("duplicate", TRUE_ORDER, -(-max(budgets) // per_round), seed)[: max(budgets)]
    records: list[MatchRecord] = []
    boards = []
    for first in range(0, len(schedule), 4):
        block = schedule[first : first + 4]
        records += play_set([m.seats for m in block], block[0].seed, block[0].game, block[0].number)
        if len(records) in budgets:
            boards.append(leaderboard(records))
    return boards


def arena(budgets: Sequence[int], seed: int, slots: int) -> list[list[str]]:
    """The leaderboard after each budget of a ladder whose sets the arena's matchmaking picks."""
    rng = random.Random(seed)
    book = RatingBook(TRUE_ORDER)
    played = {name: 0 for name in TRUE_ORDER}
    busy = {name: 0 for name in TRUE_ORDER}
    in_flight: deque[DuplicateSet] = deque()
    records: list[MatchRecord] = []
    boards: list[list[str]] = []
    next_number = 0
    while len(records) < max(budgets):
        field = [
            Contender(n, book.ratings[n].mu, book.ratings[n].sigma, played[n], capacity=slots, busy=busy[n])
            for n in TRUE_ORDER
        ]
        free = slots - sum(len(s.seatings()) for s in in_flight)
        for chosen in next_sets(field, free, rng, arena_seed=seed, next_number=next_number):
            in_flight.append(chosen)
            next_number += 1
            for name in chosen.entrants():
                busy[name] += len(chosen.seatings())
        done = in_flight.popleft()  # the oldest set ends first; then the arena picks again
        matches = play_set(done.seatings(), done.seed, done.number, len(records))
        records += matches
        outcome = game_outcome(matches)
        if outcome is not None:
            book.rate(outcome)
        for name in done.entrants():
            busy[name] -= len(matches)
            played[name] += len(matches)
        if len(records) in budgets:
            boards.append(leaderboard(records))
    return boards


def kendall_tau(order: Sequence[str], truth: Sequence[str]) -> float:
    """Kendall's τ between two orders of the same names: (concordant − discordant) / pairs."""
    position = {name: i for i, name in enumerate(order)}
    pairs = list(itertools.combinations(truth, 2))  # each pair (better, worse) in truth
    concordant = sum(1 for better, worse in pairs if position[better] < position[worse])
    return (2 * concordant - len(pairs)) / len(pairs)


def run(task: tuple[str, Sequence[int], int, int]) -> tuple[str, int, list[float]]:
    way, budgets, seed, slots = task
    boards = arena(budgets, seed, slots) if way == "arena" else round_robin(budgets, seed)
    return way, seed, [kendall_tau(board, TRUE_ORDER) for board in boards]


def check_order(rounds: int, seed: int) -> None:
    """A long duplicate round robin: each entrant's mean difference against its table, same cards."""
    schedule = build_schedule("duplicate", TRUE_ORDER, rounds, seed)
    records: list[MatchRecord] = []
    for first in range(0, len(schedule), 4):
        block = schedule[first : first + 4]
        records += play_set([m.seats for m in block], block[0].seed, block[0].game, block[0].number)
    for row in sorted(standings(TRUE_ORDER, records, duplicate=True), key=lambda r: TRUE_ORDER.index(r.name)):
        low, high = row.duplicate_ci95 or (float("nan"), float("nan"))
        print(f"  {row.name:<12} vs field {row.duplicate_diff:+7.1f} per match (95% CI {low:+.1f}..{high:+.1f})")


def first_reaching(budgets: Sequence[int], taus: Sequence[float], target: float) -> int | None:
    return next((b for b, t in zip(budgets, taus, strict=False) if t >= target), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=20, help="independent runs of each way (default 20)")
    parser.add_argument(
        "--budgets", default="8,16,24,40,80", help="match budgets, multiples of 4 (default 8,16,24,40,80)"
    )
    parser.add_argument("--slots", type=int, default=8, help="the arena's matches in flight (default 8)")
    parser.add_argument("--jobs", type=int, default=2, help="processes playing repetitions (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check-order", type=int, default=0, metavar="ROUNDS", help="first confirm the true order")
    args = parser.parse_args()
    budgets = sorted({int(b) for b in args.budgets.split(",")})
    if any(b <= 0 or b % 4 for b in budgets) or args.repetitions < 1 or args.slots < 4:
        parser.error("budgets must be positive multiples of 4, --repetitions at least 1, --slots at least 4")
    started = time.perf_counter()
    if args.check_order:
        print(f"true order check: duplicate round robin, {args.check_order} rounds")
        check_order(args.check_order, args.seed + 10_000)
    print(f"entrants {' > '.join(TRUE_ORDER)}; {args.repetitions} repetitions, budgets {budgets}, slots {args.slots}")
    tasks = [(way, budgets, args.seed + r, args.slots) for r in range(args.repetitions) for way in ("arena", "rr")]
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        results = pool.map(run, tasks, chunksize=1)
    taus: dict[str, list[list[float]]] = {"arena": [], "rr": []}
    for way, _, values in results:
        taus[way].append(values)
    median = {way: [statistics.median(v[i] for v in runs) for i in range(len(budgets))] for way, runs in taus.items()}
    mean = {way: [statistics.mean(v[i] for v in runs) for i in range(len(budgets))] for way, runs in taus.items()}
    print(f"{'matches':>8} {'arena τ':>8} {'rr τ':>8}   (median over repetitions; mean in brackets)")
    for i, b in enumerate(budgets):
        verdict = "" if median["arena"][i] >= median["rr"][i] else "   arena BELOW round robin"
        print(
            f"{b:>8} {median['arena'][i]:>8.2f} {median['rr'][i]:>8.2f}"
            f"   ({mean['arena'][i]:.2f} vs {mean['rr'][i]:.2f}){verdict}"
        )
    for label, taus_by in (("median", median), ("mean", mean)):
        reach = {way: first_reaching(budgets, taus_by[way], 0.9) for way in taus_by}
        if reach["arena"] and reach["rr"]:
            print(f"{label} τ ≥ 0.9: arena after {reach['arena']} matches, round robin after {reach['rr']}: "
                  f"budget ratio {reach['rr'] / reach['arena']:.2f}")  # fmt: skip
        else:
            print(
                f"{label} τ ≥ 0.9: arena after {reach['arena'] or f'more than {budgets[-1]}'} matches, "
                f"round robin after {reach['rr'] or f'more than {budgets[-1]}'}"
            )
    print(f"wall time {time.perf_counter() - started:.0f}s")
    print(f"ladder: tau {median['arena'][-1]:.2f} vs {median['rr'][-1]:.2f} after {budgets[-1]} matches")


if __name__ == "__main__":
    main()
