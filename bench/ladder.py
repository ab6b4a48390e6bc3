"""How soon each way of choosing tables orders a field of known strength: the arena's matchmaking
against the tournament's round robin, balanced rounds and the literature's ladders.

**The field.** Entrant *p* is the heuristic sample bot that hands each decision, with probability
*p*, to the random bot instead: the larger *p*, the weaker (``heuristic`` at p = 0, ``random`` at
p = 1). A field of N entrants has p evenly spaced over [0, 1], so its true order is known.

**Calibration, from real matches.** Eight such entrants (p = 0, 1/7, …, 1) play a duplicate
round robin (``--calibration-rounds``; every table of 4 of the 8 in its 4 seat rotations on the
same 28 standard deals) in this process, through the referee with in-process players. Each set
gives every entrant its score (its mean total per match over the set). The margin model of
:mod:`arbiter.tournament.margins` fitted to those sets gives each entrant's *strength* (points
per match against the field's average) and the residuals its *noise* (the SD of one set's score
about what its strength predicts). Strength and noise of any p are interpolated between the
eight. ``--calibration-rounds 0`` (and ``--quick``) skips the calibration's matches and uses the
figures of the run in docs/arena.md (``STORED``).

**The simulation.** A set of 4 entrants gives each the score strength + noise × z, z standard
normal; only its place (for TrueSkill) and its differences (for the margin rating) are used.
Every repetition has its own field (names shuffled) and its own luck: the k-th set an entrant
plays draws the same z whatever the method, so methods are compared *paired*.

**The methods**, each choosing one duplicate set at a time, with ``--in-flight`` sets (2) chosen
before the last ones' results are in, as a live arena does:

* ``roundrobin``: the tournament's duplicate round robin, its tables in the order it plays them
  (:func:`arbiter.tournament.schedule.round_tables`: balanced order; a tournament refuses a
  field of 32, whose round would be 143 840 matches, but the order is measured all the same);
* ``shuffled``: the same tables in a random order, as the tournament played them before its
  balanced order;
* ``balanced``: balanced rounds: every round seats each entrant once, the tables of a round
  made to repeat as few meetings as they can;
* ``swiss``: rounds of tables of four neighbours on the current leaderboard;
* ``halite``: the Halite II coordinator: the seed player is, by turns, a random one weighted by
  σ², one of the 15 that played least recently, or the one that played least recently; its
  opponents are drawn from the ⌊5 / (0.01 + U)^0.65⌋ entrants nearest in μ;
* ``sigma``: the entrant of largest σ, with the three nearest it in μ;
* ``active``: an active-ranking window: among entrants whose interval μ ± 2σ still overlaps
  another's, the least played, with opponents drawn from those it overlaps;
* ``arena``: :func:`arbiter.arena.matchmaking.next_sets` with its default policy (``--policy
  KEY=VALUE`` changes it: ``--policy provisional=8 window=4.1667``), every entrant a bot the arena
  starts itself (capacity 256 matches at once).

**The measure.** After every half set per entrant (1 to ``--budget`` sets per entrant) each
leaderboard is compared with the true order by Kendall's τ, ordered five ways: by TrueSkill's
μ − kσ for k = 0, 1, 2, 3 (:mod:`arbiter.tournament.ratings`, one game per set) and by the margin
rating (:mod:`arbiter.tournament.margins`, its prior ``--shrinkage``). Means over
``--repetitions`` with 95% intervals; the arena's paired differences against every other method
with theirs; the sets per entrant each method needs to reach τ 0.8 (interpolated on the mean
curve; bootstrap interval).

**Real bots.** ``--real`` repetitions play the arena, the round robin and the shuffled round
robin for real on the eight calibration entrants (the same in-process matches as the
calibration) up to ``--real-budget`` sets per entrant, beside the simulation's figures for the
same field: the simulation's shape is confirmed where the real means fall inside its intervals.

The last line is ``ladder: sets to tau 0.8 at N=16: arena A vs best other B (ratio R); tau at 5
sets/entrant N=32: X vs Y`` (A and B in sets per entrant, TrueSkill μ ordering; Y the best other
method at that budget; ``>15`` where a mean never reaches 0.8).

    .venv/bin/python bench/ladder.py [--repetitions 300] [--real 12] [--jobs 2] [--seed 1]
    .venv/bin/python bench/ladder.py --quick    # seconds: what the test suite runs
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots"))

from barbu.rules import make_ruleset  # noqa: E402
from heuristic_bot import HeuristicBot  # noqa: E402
from random_bot import RandomBot  # noqa: E402

from arbiter.arena.matchmaking import Contender, Matchmaking, next_sets  # noqa: E402
from arbiter.match.blocking import run_blocking  # noqa: E402
from arbiter.model import MatchRecord, SeatRecord  # noqa: E402
from arbiter.referee.loop import MatchSetup, Referee  # noqa: E402
from arbiter.referee.players import StrategyPlayer  # noqa: E402
from arbiter.stats import mean_ci  # noqa: E402
from arbiter.tournament.formats import build_schedule  # noqa: E402
from arbiter.tournament.margins import DEFAULT_SHRINKAGE, margin_ratings  # noqa: E402
from arbiter.tournament.ratings import GameOutcome, RatingBook, game_outcome  # noqa: E402
from arbiter.tournament.schedule import derive_seed, field_groups, games, rotations, round_tables  # noqa: E402

RULES = make_ruleset("standard")
LEVELS = tuple(k / 7 for k in range(8))  # the calibration entrants' random shares
FIELDS = (8, 16, 32)
TARGET = 0.8
ORDERINGS = ("mu", "mu-1s", "mu-2s", "mu-3s", "margin")  # the leaderboards compared with the truth
HEADLINE = "mu"
REAL_METHODS = ("arena", "roundrobin", "shuffled")
QUICK = [
    "--calibration-rounds",
    "0",
    "--repetitions",
    "3",
    "--budget",
    "5",
    "--real",
    "1",
    "--real-budget",
    "1",
    "--bootstrap",
    "50",
]
"""--quick: a run of seconds that tests/test_benches.py makes."""


@dataclass(frozen=True)
class Calibration:
    """Strength (points per match against the field's average) and noise (SD of one set's score)
    of each calibration entrant, by its random share."""

    levels: tuple[float, ...]
    strength: tuple[float, ...]
    noise: tuple[float, ...]

    def at(self, level: float) -> tuple[float, float]:
        """Strength and noise of an entrant of random share ``level``, interpolated."""
        i = min(len(self.levels) - 2, max(0, int(level * (len(self.levels) - 1))))
        a, b = self.levels[i], self.levels[i + 1]
        w = (level - a) / (b - a)
        return (
            (1 - w) * self.strength[i] + w * self.strength[i + 1],
            (1 - w) * self.noise[i] + w * self.noise[i + 1],
        )


STORED = Calibration(
    LEVELS,
    (568.8, 414.5, 260.0, 111.4, -54.3, -223.1, -425.8, -651.4),
    (93.2, 91.7, 101.2, 96.4, 115.7, 123.6, 159.7, 125.8),
)
"""The calibration of the run in docs/arena.md ("Measured"), for --quick."""


# ---- real bots -------------------------------------------------------------------------------
def decider(level: float, seed: str) -> Callable[[Any], Any]:
    """Entrant ``level``'s decisions: the heuristic's, or with probability ``level`` the random bot's."""
    randomly = RandomBot(seed=random.Random(seed).getrandbits(32)).decide
    if level >= 1.0:
        return randomly
    heuristic, rng = HeuristicBot().decide, random.Random(f"{seed}/noise")

    def decide(view: Any) -> Any:
        return randomly(view) if rng.random() < level else heuristic(view)

    return decide


def play_set(task: tuple[tuple[str, ...], Mapping[str, float], int]) -> dict[str, float]:
    """One duplicate set played for real: every rotation of ``seating`` on the deals of ``seed``;
    each entrant's score (its mean total per match over the set)."""
    seating, levels, seed = task
    records = []
    for k, seats in enumerate(rotations(seating)):
        players = [StrategyPlayer(decider(levels[name], f"{seed}/{k}/{s}"), name) for s, name in enumerate(seats)]
        result = run_blocking(Referee(MatchSetup(RULES, seed=seed), players, lambda line: None).play())
        records.append(
            MatchRecord(k, 0, result.status, tuple(SeatRecord(n, result.totals[s]) for s, n in enumerate(seats)))
        )
    outcome = game_outcome(records)
    if outcome is None:
        raise RuntimeError(f"a set of {seating} did not complete")
    return {name: float(score) for name, score in outcome.scores.items()}


def calibrate(rounds: int, levels: Sequence[float], pool: Any, seed: int) -> Calibration:
    """The duplicate round robin of the calibration entrants, played for real, and its fit."""
    names = [f"p{k}" for k in range(len(levels))]
    level_of = dict(zip(names, levels, strict=True))
    schedule = build_schedule("duplicate", names, rounds, seed)
    tasks = [(schedule[numbers[0]].seats, level_of, schedule[numbers[0]].seed) for numbers in games(schedule)]
    sets = pool.map(play_set, tasks, chunksize=1)
    table = margin_ratings(names, sets)
    noise = entrant_noise(names, sets, {n: table.ratings[n].rating for n in names})
    print(f"calibration: {len(sets)} real duplicate sets of {len(names)} entrants ({rounds} round robin rounds)")
    print(f"  {'random share':>12} {'strength':>9} {'±95%':>6} {'noise SD':>9}")
    for name, level in level_of.items():
        rating = table.ratings[name]
        print(f"  {level:12.3f} {rating.rating:+9.1f} {1.96 * rating.sd:6.1f} {noise[name]:9.1f}")
    print(f"  pooled noise SD per entrant and set {table.noise_sd:.1f}")
    return Calibration(tuple(levels), tuple(table.ratings[n].rating for n in names), tuple(noise[n] for n in names))


def entrant_noise(
    names: Sequence[str], sets: Sequence[Mapping[str, float]], strength: Mapping[str, float]
) -> dict[str, float]:
    """Each entrant's noise SD: a set's residual e_i (score less strength, both centred on the
    table) has E[e_i²] = v_i (1 − 2/k) + Σ_table v_j / k²; solved for the v by fixed-point
    iteration, then scaled up for the strengths' own degrees of freedom."""
    residuals: list[dict[str, float]] = []
    for scores in sets:
        level = statistics.fmean(scores[n] - strength[n] for n in scores)
        residuals.append({n: scores[n] - strength[n] - level for n in scores})
    pooled = statistics.fmean(e * e for r in residuals for e in r.values())
    variance = dict.fromkeys(names, pooled * 4 / 3)
    for _ in range(50):
        variance = {
            name: max(
                1.0,
                statistics.fmean(
                    (r[name] ** 2 - sum(variance[j] for j in r) / len(r) ** 2) / (1 - 2 / len(r))
                    for r in residuals
                    if name in r
                ),
            )
            for name in names
        }
    free = sum(len(r) - 1 for r in residuals)
    scale = free / (free - (len(names) - 1))
    return {name: math.sqrt(v * scale) for name, v in variance.items()}


# ---- the simulated field -----------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """A repetition's field: names in a random order, their strengths and noise, the true order."""

    names: tuple[str, ...]
    level: dict[str, float]
    strength: dict[str, float]
    noise: dict[str, float]
    truth: tuple[str, ...]  # best first


def make_field(calibration: Calibration, size: int, repetition: int, seed: int) -> Field:
    """N entrants of random share evenly spaced over [0, 1], shuffled under their names."""
    rng = random.Random(f"{seed}/field/{size}/{repetition}")
    names = tuple(f"e{i:02d}" for i in range(size))
    levels = [k / (size - 1) for k in range(size)]
    rng.shuffle(levels)
    level = dict(zip(names, levels, strict=True))
    strength, noise = {}, {}
    for name in names:
        strength[name], noise[name] = calibration.at(level[name])
    return Field(names, level, strength, noise, tuple(sorted(names, key=lambda n: level[n])))


class Luck:
    """Each entrant's stream of standard normal draws, one per set it plays: the same in every
    method of a repetition (which pairs the methods)."""

    def __init__(self, names: Sequence[str], seed: str):
        self.streams = {name: random.Random(f"{seed}/{name}") for name in names}

    def set_scores(self, field: Field, seating: Sequence[str]) -> dict[str, float]:
        return {n: field.strength[n] + field.noise[n] * self.streams[n].gauss(0.0, 1.0) for n in set(seating)}


# ---- the ladder every method plays -----------------------------------------------------------
@dataclass
class Ladder:
    """What a method may look at: ratings, sets played or in flight, meetings, recency."""

    names: tuple[str, ...]
    rng: random.Random
    book: RatingBook = field(init=False)
    sets: Counter[str] = field(default_factory=Counter)  # rated or in flight
    in_flight: Counter[str] = field(default_factory=Counter)
    met: Counter[frozenset[str]] = field(default_factory=Counter)
    last: dict[str, int] = field(default_factory=dict)  # the set count when it last played
    history: list[dict[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.book = RatingBook(self.names)
        self.last = dict.fromkeys(self.names, -1)

    def mu(self, name: str) -> float:
        return self.book.ratings[name].mu

    def sigma(self, name: str) -> float:
        return self.book.ratings[name].sigma

    def start(self, seating: Sequence[str]) -> None:
        for name in set(seating):
            self.sets[name] += 1
            self.in_flight[name] += 1
        for a, b in itertools.combinations(sorted(set(seating)), 2):
            self.met[frozenset((a, b))] += 1

    def finish(self, seating: Sequence[str], scores: dict[str, float]) -> None:
        for name in set(seating):
            self.in_flight[name] -= 1
            self.last[name] = len(self.history)
        self.history.append(scores)
        self.book.rate(GameOutcome(len(self.history), len(self.history), scores, frozenset()))  # type: ignore[arg-type]

    def shuffled(self, names: Sequence[str] | None = None) -> list[str]:
        out = list(self.names if names is None else names)
        self.rng.shuffle(out)
        return out

    def nearest(self, seed_player: str, others: Sequence[str], count: int) -> list[str]:
        """The ``count`` of ``others`` nearest ``seed_player`` in μ (ties in random order)."""
        return sorted(self.shuffled(others), key=lambda n: abs(self.mu(n) - self.mu(seed_player)))[:count]

    def orders(self, shrinkage: float) -> dict[str, list[str]]:
        """The leaderboard each way of ordering makes (best first)."""
        out = {}
        for k, key in enumerate(ORDERINGS[:4]):
            out[key] = sorted(self.names, key=lambda n, k=k: (-(self.mu(n) - k * self.sigma(n)), n))
        out["margin"] = margin_ratings(self.names, self.history, shrinkage).order()
        return out


def kendall_tau(order: Sequence[str], truth: Sequence[str]) -> float:
    """Kendall's τ between two orders of the same names: (concordant − discordant) / pairs."""
    position = {name: i for i, name in enumerate(order)}
    pairs = len(truth) * (len(truth) - 1) // 2
    concordant = sum(
        1 for i, better in enumerate(truth) for worse in truth[i + 1 :] if position[better] < position[worse]
    )
    return (2 * concordant - pairs) / pairs


# ---- the methods -----------------------------------------------------------------------------
class Method:
    """Chooses the next duplicate set of a ladder (four names)."""

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        raise NotImplementedError


class Rounds(Method):
    """Whole rounds, every entrant seated once a round; ``tables`` makes a round."""

    def __init__(self) -> None:
        self.queue: list[tuple[str, ...]] = []

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        if not self.queue:
            self.queue = self.tables(ladder)[::-1]
        return self.queue.pop()

    def tables(self, ladder: Ladder) -> list[tuple[str, ...]]:
        raise NotImplementedError


class Balanced(Rounds):
    """Each table grows by the unseated entrant who met its members least (ties at random)."""

    def tables(self, ladder: Ladder) -> list[tuple[str, ...]]:
        left = ladder.shuffled()
        out = []
        while left:
            table = [left.pop(0)]
            while len(table) < 4 and left:
                best = min(left, key=lambda n: sum(ladder.met[frozenset((n, m))] for m in table))
                left.remove(best)
                table.append(best)
            out.append(tuple(table))
        return out


class Swiss(Rounds):
    """Tables of four neighbours on the current leaderboard (by μ)."""

    def tables(self, ladder: Ladder) -> list[tuple[str, ...]]:
        order = sorted(ladder.shuffled(), key=lambda n: -ladder.mu(n))
        return [tuple(order[i : i + 4]) for i in range(0, len(order), 4)]


class RoundRobin(Method):
    """The tournament's duplicate round robin: its first round's tables in the order it plays them."""

    def __init__(self) -> None:
        self.played = 0

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        table = ROUND_ROBIN[len(ladder.names)][self.played]
        self.played += 1
        return table


ROUND_ROBIN: dict[int, list[tuple[str, ...]]] = {}
"""The tournament's first round of tables by field size (:func:`round_tables`), made once before
the workers fork: its balanced order takes seconds for 32 entrants. Every repetition gives the
names other strengths, so one order serves them all."""


class Shuffled(Method):
    """Every table of four in a random order, none twice (the tournament's round robin before it
    played its tables in balanced order)."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, ...]] = set()

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        while True:
            table = tuple(sorted(ladder.rng.sample(ladder.names, 4)))
            if table not in self.seen or len(self.seen) >= math.comb(len(ladder.names), 4):
                self.seen.add(table)
                return table


class Halite(Method):
    """The Halite II coordinator's matchmaking."""

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        draw = ladder.rng.random()
        by_recency = sorted(ladder.shuffled(), key=lambda n: ladder.last[n])
        if draw > 0.5:
            seed_player = max(ladder.names, key=lambda n: ladder.rng.random() * ladder.sigma(n) ** 2)
        elif draw > 0.25:
            seed_player = ladder.rng.choice(by_recency[:15])
        else:
            seed_player = by_recency[0]
        limit = int(5.0 / (0.01 + ladder.rng.random()) ** 0.65)
        others = [n for n in ladder.names if n != seed_player]
        near = ladder.nearest(seed_player, others, max(3, limit))
        return (seed_player, *ladder.rng.sample(near, 3))


class Sigma(Method):
    """The most uncertain entrant and the three nearest it."""

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        seed_player = max(ladder.shuffled(), key=ladder.sigma)
        return (seed_player, *ladder.nearest(seed_player, [n for n in ladder.names if n != seed_player], 3))


class Active(Method):
    """An active-ranking window: intervals μ ± 2σ; the least played entrant whose interval
    overlaps another's, against entrants it overlaps (the nearest fill the table)."""

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        low = {n: ladder.mu(n) - 2 * ladder.sigma(n) for n in ladder.names}
        high = {n: ladder.mu(n) + 2 * ladder.sigma(n) for n in ladder.names}
        overlaps = {
            n: [m for m in ladder.names if m != n and low[m] <= high[n] and low[n] <= high[m]] for n in ladder.names
        }
        active = [n for n in ladder.shuffled() if overlaps[n]] or ladder.shuffled()
        seed_player = min(active, key=lambda n: ladder.sets[n])
        pool = overlaps[seed_player]
        if len(pool) >= 3:
            return (seed_player, *ladder.rng.sample(pool, 3))
        rest = [n for n in ladder.names if n != seed_player and n not in pool]
        return (seed_player, *pool, *ladder.nearest(seed_player, rest, 3 - len(pool)))


class Arena(Method):
    """The arena's own matchmaking (arbiter.arena.matchmaking), one set at a time."""

    def __init__(self, policy: Matchmaking):
        self.policy = policy
        self.number = 0

    def pick(self, ladder: Ladder) -> tuple[str, ...]:
        field = [
            Contender(
                n,
                ladder.mu(n),
                ladder.sigma(n),
                matches=4 * (ladder.sets[n] - ladder.in_flight[n]),
                capacity=256,  # a bot the arena starts itself (arbiter.arena.ladder.LOCAL_CAPACITY)
                busy=4 * ladder.in_flight[n],
            )
            for n in ladder.names
        ]
        (chosen,) = next_sets(
            field, 4, ladder.rng, arena_seed=0, next_number=self.number, policy=self.policy, met=ladder.met
        )
        self.number += 1
        return chosen.seating


METHODS: dict[str, Callable[[Matchmaking], Method]] = {
    "arena": Arena,
    "roundrobin": lambda policy: RoundRobin(),
    "shuffled": lambda policy: Shuffled(),
    "balanced": lambda policy: Balanced(),
    "swiss": lambda policy: Swiss(),
    "halite": lambda policy: Halite(),
    "sigma": lambda policy: Sigma(),
    "active": lambda policy: Active(),
}


# ---- one run ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    method: str
    size: int
    repetition: int
    steps: tuple[float, ...]  # sets per entrant at which the leaderboards are compared
    calibration: Calibration
    policy: Matchmaking
    in_flight: int
    seed: int
    real: bool = False  # play the sets for real (the calibration entrants) instead of simulating
    shrinkage: float = DEFAULT_SHRINKAGE  # the margin rating's prior weight


def run(task: Task) -> tuple[Task, dict[str, list[float]]]:
    """A ladder run by one method: τ of every ordering after each step."""
    field = make_field(task.calibration, task.size, task.repetition, task.seed)
    ladder = Ladder(field.names, random.Random(f"{task.seed}/{task.method}/{task.size}/{task.repetition}"))
    luck = Luck(field.names, f"{task.seed}/luck/{task.size}/{task.repetition}")
    method = METHODS[task.method](task.policy)
    checkpoints = {round(step * task.size / 4): i for i, step in enumerate(task.steps)}
    taus: dict[str, list[float]] = {key: [math.nan] * len(task.steps) for key in ORDERINGS}
    pending: deque[tuple[str, ...]] = deque()
    while len(ladder.history) < max(checkpoints):
        while len(pending) < task.in_flight:
            pending.append(method.pick(ladder))
            ladder.start(pending[-1])
        seating = pending.popleft()
        if task.real:
            deals = derive_seed(task.seed, "real deals", task.repetition, len(ladder.history))
            scores = play_set((tuple(seating), field.level, deals))
        else:
            scores = luck.set_scores(field, seating)
        ladder.finish(seating, scores)
        if len(ladder.history) in checkpoints:
            for key, order in ladder.orders(task.shrinkage).items():
                taus[key][checkpoints[len(ladder.history)]] = kendall_tau(order, field.truth)
    return task, taus


# ---- statistics ------------------------------------------------------------------------------
Curves = dict[tuple[str, int, bool], list[dict[str, list[float]]]]  # (method, N, real) → per repetition


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval (Student's t)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.inf
    low, _ = mean_ci(len(values), mean, statistics.stdev(values))
    return mean, mean - low


def mean_curve(runs: Sequence[dict[str, list[float]]], ordering: str) -> list[float]:
    return list(lazy_mean([run[ordering] for run in runs]))


def lazy_mean(curves: Sequence[Sequence[float]]) -> Iterator[float]:
    """The mean of ``curves`` step by step, each step summed only when asked for."""
    for i in range(len(curves[0])):
        yield math.fsum(c[i] for c in curves) / len(curves)


def crossing(curve: Iterable[float], steps: Sequence[float], target: float = TARGET) -> float:
    """The sets per entrant at which ``curve`` first reaches ``target`` (linear between steps;
    inf if it never does). Read lazily: a bootstrap's mean curve is summed only that far."""
    previous = (0.0, -1.0)
    for step, tau in zip(steps, curve, strict=False):
        if tau >= target:
            (s0, t0) = previous
            return step if t0 < -0.5 else s0 + (step - s0) * (target - t0) / (tau - t0)
        previous = (step, tau)
    return math.inf


def crossing_interval(
    runs: Sequence[dict[str, list[float]]], others: Sequence[dict[str, list[float]]] | None, ordering: str,
    other_ordering: str, steps: Sequence[float], resamples: int, rng: random.Random,
) -> tuple[float, float]:  # fmt: skip
    """A 95% bootstrap interval of the crossing (of the ratio of two crossings, paired, when
    ``others`` is given), repetitions resampled."""
    values = []
    for _ in range(resamples):
        pick = [rng.randrange(len(runs)) for _ in runs]
        mine = crossing(lazy_mean([runs[i][ordering] for i in pick]), steps)
        if others is None:
            values.append(mine)
        else:
            theirs = crossing(lazy_mean([others[i][other_ordering] for i in pick]), steps)
            values.append(mine / theirs if math.isfinite(theirs) else (math.inf if math.isfinite(mine) else math.nan))
    values = sorted(v for v in values if not math.isnan(v))
    if not values:
        return math.nan, math.nan
    return values[int(0.025 * len(values))], values[min(len(values) - 1, int(0.975 * len(values)))]


def sets_text(value: float, budget: float) -> str:
    return f"{value:.1f}" if math.isfinite(value) else f">{budget:g}"


# ---- report ----------------------------------------------------------------------------------
def report_field(
    curves: Curves, size: int, methods: Sequence[str], steps: Sequence[float], shown: Sequence[int]
) -> None:
    """Mean τ per method with intervals, and the arena's paired differences, for field ``size``."""
    runs = {m: curves[m, size, False] for m in methods}
    print(f"\nN={size}: mean τ of the leaderboard by TrueSkill μ (± 95% half-width), {len(runs['arena'])} repetitions")
    print(f"{'sets/entrant':>12} " + " ".join(f"{m:>12}" for m in methods))
    for i in shown:
        cells = [interval([r[HEADLINE][i] for r in runs[m]]) for m in methods]
        print(f"{steps[i]:>12g} " + " ".join(f"{mean:7.3f}±{half:.3f}" for mean, half in cells))
    others = [m for m in methods if m != "arena"]
    print(
        f"N={size}: arena − method, paired (± 95% half-width; ▼ the arena below, interval clear of 0, "
        "which chance alone makes about one cell in 40)"
    )
    print(f"{'sets/entrant':>12} " + " ".join(f"{m:>14}" for m in others))
    for i in shown:
        cells = []
        for m in others:
            mean, half = interval(
                [a[HEADLINE][i] - b[HEADLINE][i] for a, b in zip(runs["arena"], runs[m], strict=True)]
            )
            cells.append(f"{mean:+7.3f}±{half:.3f}{'▼' if mean + half < 0 else ' '}")
        print(f"{steps[i]:>12g} " + " ".join(f"{c:>14}" for c in cells))


def report_crossings(
    curves: Curves, size: int, methods: Sequence[str], steps: Sequence[float], resamples: int, rng: random.Random
) -> dict[str, float]:
    """Sets per entrant to mean τ 0.8 per method, and the arena's ratio to each (bootstrap)."""
    runs = {m: curves[m, size, False] for m in methods}
    reach = {m: crossing(mean_curve(runs[m], HEADLINE), steps) for m in methods}
    print(f"N={size}: sets per entrant to mean τ {TARGET} (TrueSkill μ; bootstrap 95%), and arena / method")
    for m in methods:
        low, high = crossing_interval(runs[m], None, HEADLINE, HEADLINE, steps, resamples, rng)
        line = (
            f"  {m:>9} {sets_text(reach[m], steps[-1]):>5} ({sets_text(low, steps[-1])}..{sets_text(high, steps[-1])})"
        )
        if m != "arena":
            r_low, r_high = crossing_interval(runs["arena"], runs[m], HEADLINE, HEADLINE, steps, resamples, rng)
            ratio = reach["arena"] / reach[m] if math.isfinite(reach[m]) else math.nan
            line += f"   ratio {ratio:.2f} ({r_low:.2f}..{r_high:.2f})"
        print(line)
    return reach


def report_orderings(curves: Curves, size: int, method: str, steps: Sequence[float], shown: Sequence[int]) -> None:
    """Which leaderboard order is nearest the truth: each ordering's mean τ, and its paired
    difference from μ, for ``method``'s runs."""
    runs = curves[method, size, False]
    print(f"\nN={size}, {method}: mean τ by ordering; beside each, its paired difference from μ (± 95%)")
    print(f"{'sets/entrant':>12} {'mu':>7} " + " ".join(f"{key:>22}" for key in ORDERINGS[1:]))
    for i in shown:
        base = statistics.fmean(r["mu"][i] for r in runs)
        cells = []
        for key in ORDERINGS[1:]:
            diff, half = interval([r[key][i] - r["mu"][i] for r in runs])
            cells.append(f"{statistics.fmean(r[key][i] for r in runs):.3f} ({diff:+.3f}±{half:.3f})")
        print(f"{steps[i]:>12g} {base:7.3f} " + " ".join(f"{c:>22}" for c in cells))


def report_margin_gain(
    curves: Curves, methods: Sequence[str], sizes: Sequence[int], steps: Sequence[float], resamples: int,
    rng: random.Random,
) -> None:  # fmt: skip
    """The margin rating against TrueSkill μ on the same runs: sets per entrant to τ 0.8, paired."""
    print(
        f"\nmargin rating vs TrueSkill μ, same runs: sets per entrant to mean τ {TARGET}, ratio margin / μ (bootstrap 95%)"
    )
    for size in sizes:
        for m in methods:
            runs = curves[m, size, False]
            mu, margin = crossing(mean_curve(runs, "mu"), steps), crossing(mean_curve(runs, "margin"), steps)
            low, high = crossing_interval(runs, runs, "margin", "mu", steps, resamples, rng)
            at5 = steps.index(5.0) if 5.0 in steps else len(steps) - 1
            gain, half = interval([r["margin"][at5] - r["mu"][at5] for r in runs])
            ratio = margin / mu if math.isfinite(mu) else math.nan
            print(
                f"  N={size:<3} {m:>9}: μ {sets_text(mu, steps[-1]):>5}, margin {sets_text(margin, steps[-1]):>5}, "
                f"ratio {ratio:.2f} ({low:.2f}..{high:.2f}); τ at {steps[at5]:g} sets/entrant {gain:+.3f}±{half:.3f}"
            )


def report_real(curves: Curves, steps: Sequence[float]) -> None:
    """The real bots beside the simulation, field of 8."""
    print("\nreal bots (the 8 calibration entrants, in-process matches) beside the simulation, N=8, mean τ (μ)")
    print(f"{'sets/entrant':>12} " + " ".join(f"{m + ' real':>14} {m + ' sim':>14}" for m in REAL_METHODS))
    inside = total = 0
    for i, step in enumerate(steps):
        cells = []
        for m in REAL_METHODS:
            real = interval([r[HEADLINE][i] for r in curves[m, 8, True]])
            sim = interval([r[HEADLINE][i] for r in curves[m, 8, False]])
            inside += abs(real[0] - sim[0]) <= sim[1] + real[1]
            total += 1
            cells += [f"{real[0]:7.3f}±{real[1]:.3f}", f"{sim[0]:7.3f}±{sim[1]:.3f}"]
        print(f"{step:>12g} " + " ".join(f"{c:>14}" for c in cells))
    print(f"real and simulated means within their intervals of each other: {inside} of {total}")


# ---- main ------------------------------------------------------------------------------------
def policy_of(items: Sequence[str]) -> Matchmaking:
    """The arena's default policy with ``KEY=VALUE`` overrides (Matchmaking's fields)."""
    policy = Matchmaking()
    for item in items:
        key, _, value = item.partition("=")
        current = getattr(policy, key, None)
        if current is None or not value:
            raise SystemExit(f"error: --policy {item!r}: expected KEY=VALUE with KEY one of Matchmaking's fields")
        policy = replace(policy, **{key: type(current)(value)})
    return policy


def play_all(tasks: Sequence[Task], jobs: int) -> Curves:
    curves: Curves = {}
    done: dict[tuple[str, int, bool], dict[int, dict[str, list[float]]]] = {}
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for task, taus in pool.imap_unordered(run, tasks, chunksize=1 if tasks[0].real else 4):
            done.setdefault((task.method, task.size, task.real), {})[task.repetition] = taus
    for key, by_repetition in done.items():
        curves[key] = [by_repetition[r] for r in sorted(by_repetition)]  # paired: repetition r of every method
    return curves


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--repetitions", type=int, default=300, help="simulated runs per method and field (default 300)"
    )
    parser.add_argument("--budget", type=float, default=15, help="sets per entrant at the end (default 15)")
    parser.add_argument("--real", type=int, default=12, help="real-bot runs per method, field of 8 (default 12)")
    parser.add_argument("--real-budget", type=float, default=6, help="sets per entrant of a real run (default 6)")
    parser.add_argument(
        "--calibration-rounds",
        type=int,
        default=3,
        help="round robin rounds of 70 real sets; 0: the stored calibration (default 3)",
    )
    parser.add_argument(
        "--in-flight", type=int, default=2, help="sets chosen before the last results are in (default 2)"
    )
    parser.add_argument("--policy", nargs="*", default=[], metavar="KEY=VALUE", help="the arena's policy, changed")
    parser.add_argument(
        "--shrinkage", type=float, default=DEFAULT_SHRINKAGE, help="the margin rating's prior, in sets (default 0.25)"
    )
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    if args.repetitions < 2 or not 1 <= args.budget <= 30 or args.real_budget > args.budget or args.in_flight < 1:
        parser.error("--repetitions at least 2, --budget 1..30, --real-budget at most --budget, --in-flight at least 1")
    return args


def main() -> None:
    args = arguments()
    started = time.perf_counter()
    policy = policy_of(args.policy)
    steps = tuple(k / 2 for k in range(2, int(2 * args.budget) + 1))
    real_steps = tuple(s for s in steps if s <= args.real_budget)
    shown = [i for i, s in enumerate(steps) if s == int(s)]
    methods = list(METHODS)
    if not args.calibration_rounds:
        calibration = STORED
        print(f"calibration: the stored one, {STORED}")
    else:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            calibration = calibrate(args.calibration_rounds, LEVELS, pool, args.seed)
    print(
        f"arena policy: {policy}; {args.in_flight} sets in flight; load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    tasks = [
        Task(m, 8, r, real_steps, calibration, policy, args.in_flight, args.seed, True, args.shrinkage)
        for r in range(args.real)
        for m in REAL_METHODS
    ]
    tasks += [
        Task(m, size, r, steps, calibration, policy, args.in_flight, args.seed, False, args.shrinkage)
        for size in FIELDS
        for r in range(args.repetitions)
        for m in methods
    ]
    for size in FIELDS:
        names = make_field(calibration, size, 0, args.seed).names
        needed = math.ceil(args.budget * size / 4) + args.in_flight  # picked ahead of the results
        ROUND_ROBIN[size] = round_tables(field_groups(names), 0, args.seed)[:needed]
    curves = play_all(tasks, args.jobs)
    rng = random.Random(args.seed)
    reach: dict[int, dict[str, float]] = {}
    for size in FIELDS:
        report_field(curves, size, methods, steps, shown)
        reach[size] = report_crossings(curves, size, methods, steps, args.bootstrap, rng)
    for size in FIELDS:
        report_orderings(curves, size, "arena", steps, shown)
    report_margin_gain(curves, ["arena", "balanced"], FIELDS, steps, args.bootstrap, rng)
    if args.real:
        report_real(curves, real_steps)
    print(f"wall time {time.perf_counter() - started:.0f}s")
    print(headline(curves, reach[16], steps))


def headline(curves: Curves, reach16: Mapping[str, float], steps: Sequence[float]) -> str:
    others = {m: v for m, v in reach16.items() if m != "arena"}
    best = min(others, key=lambda m: others[m])
    arena, other = reach16["arena"], others[best]
    ratio = f"{arena / other:.2f}" if math.isfinite(arena) and math.isfinite(other) else "n/a"
    at5 = steps.index(5.0) if 5.0 in steps else len(steps) - 1
    at = {m: statistics.fmean(r[HEADLINE][at5] for r in curves[m, 32, False]) for m in METHODS}
    rival = max((m for m in at if m != "arena"), key=lambda m: at[m])
    print(f"best other at N=16: {best}; at {steps[at5]:g} sets/entrant N=32: {rival}")
    return (
        f"ladder: sets to tau {TARGET} at N=16: arena {sets_text(arena, steps[-1])} vs best other "
        f"{sets_text(other, steps[-1])} (ratio {ratio}); tau at 5 sets/entrant N=32: {at['arena']:.3f} vs {at[rival]:.3f}"
    )


if __name__ == "__main__":
    main()
