"""Determinized Monte-Carlo search: sample the hidden hands, simulate every option, keep the best.

Every decision runs the same anytime loop until its deadline: draw a deal from those consistent
with the view (:class:`barbu.sampler.Sampler`, weighted by what the bidding says, see
:mod:`.belief`), turn it into an engine state, and for each legal option play the rest of the
deal out with the greedy rollout policy (:mod:`barbu.rollout`). Options are scored by this seat's
deal score (raw score plus doubling settlement). All options of one sample share the
determinization and the rollout's tie-break order, so their comparison is paired.

The heuristic bot's choice is the default: another option replaces it only when its paired
advantage is more than ``Z`` standard errors. Measured, a bare argmax lost to the heuristic
when the machine was loaded and a decision got only a handful of samples (the search is
anytime, so a starved decision must degrade to the heuristic, not to noise); with enough time
the gate costs little, because real differences soon clear it.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from barbu.rollout import greedy_playout
from barbu.rules import Contract, View
from barbu.rules.state import MatchState
from barbu.sampler import Sampler

from .belief import Belief
from .model import estimator_for

Policy = Callable[[MatchState, int], None]
Z = 1.0  # standard errors an option must beat the default (the heuristic's choice) by


class Stats:
    """Weighted running sums per option, and paired differences against the default option."""

    __slots__ = ("options", "default", "sums", "diff", "diff2", "samples", "weight", "weight2")

    def __init__(self, options: Sequence[Any], default: Any = None):
        self.options = list(options)
        self.default = self.options.index(default) if default in self.options else 0
        n = len(self.options)
        self.sums = [0.0] * n  # weighted sums of the seat's deal score
        self.diff = [0.0] * n  # weighted sums of (score - default's score)
        self.diff2 = [0.0] * n  # ... of its square
        self.samples = 0
        self.weight = 0.0
        self.weight2 = 0.0

    def add(self, w: float, values: Sequence[float]) -> None:
        base = values[self.default]
        for i, v in enumerate(values):
            d = v - base
            self.sums[i] += w * v
            self.diff[i] += w * d
            self.diff2[i] += w * d * d
        self.samples += 1
        self.weight += w
        self.weight2 += w * w

    def means(self) -> list[float]:
        n = self.weight or 1.0
        return [s / n for s in self.sums]

    def advantage(self, i: int) -> tuple[float, float]:
        """(mean paired advantage of option i over the default, its standard error)."""
        if self.weight <= 0:
            return 0.0, math.inf
        mean = self.diff[i] / self.weight
        var = max(0.0, self.diff2[i] / self.weight - mean * mean)
        n_eff = self.weight * self.weight / self.weight2
        if n_eff < 2:
            return mean, math.inf
        return mean, math.sqrt(var / (n_eff - 1))

    def best(self, z: float | None = None, bonus: Sequence[float] | None = None) -> Any:
        """The default, unless the best option beats it by ``z`` standard errors.

        ``bonus`` adds a fixed value per option (what simulation cannot see, e.g. the worth
        of the contracts a declaration leaves for later).
        """
        z = Z if z is None else z
        bonus = bonus or [0.0] * len(self.options)
        means = self.means()
        i = max(range(len(self.options)), key=lambda k: means[k] + bonus[k])
        if i == self.default:
            return self.options[i]
        mean, se = self.advantage(i)
        if mean + bonus[i] - bonus[self.default] > z * se:
            return self.options[i]
        return self.options[self.default]


class Clock:
    """Anytime loop control: go on while one more sample, as long as the last one took, still
    ends before the deadline (and always until ``min_samples``)."""

    __slots__ = ("deadline", "min_samples", "last", "step")

    def __init__(self, deadline: float, min_samples: int = 1):
        self.deadline = deadline
        self.min_samples = min_samples
        self.last = time.perf_counter()
        self.step = 0.0

    def more(self, samples: int) -> bool:
        t = time.perf_counter()
        if samples:
            self.step = t - self.last
        self.last = t
        return samples < self.min_samples or t + self.step < self.deadline


# In card play, samples are weighed by the declaration (see .belief) where it says most about
# the declarer's hand: his trump suit, his Domino start rank. Elsewhere the weights cost more
# samples than they are worth (measured: weighing by the declaration and the doubles doubled
# the cost of a sample; by the declaration alone, +45%).
WEIGH = True
WEIGH_CONTRACTS = (Contract.TRUMPS, Contract.DOMINO)


def simulate_play(
    view: View,
    rng: random.Random,
    deadline: float,
    default: Any = None,
    policy: Policy = greedy_playout,
    min_samples: int = 1,
    weigh: bool | None = None,
) -> Stats:
    """Card play (trick play and Domino): every legal card against sampled deals."""
    me = view.seat
    stats = Stats(view.legal, default)
    options = stats.options
    weigh = (WEIGH if weigh is None else weigh) and view.contract in WEIGH_CONTRACTS
    belief = Belief(view, estimator_for(view.rules), doubles=False) if weigh else None
    sampler = belief.sampler if belief else Sampler(view)
    clock = Clock(deadline, min_samples)
    values = [0.0] * len(options)
    while clock.more(stats.samples):
        if belief:
            hands, w = belief.draw(rng)
        else:
            hands, w = sampler.sample(rng), 1.0
        state = sampler.determinize(hands)
        offset = rng.getrandbits(2)
        for i, action in enumerate(options):
            s = state.clone()
            s.apply(action)
            policy(s, offset)  # returns at once if the action ended the deal
            values[i] = s.results[-1].scores[me]
        stats.add(w, values)
    return stats


def choose_play(view: View, rng: random.Random, deadline: float, default: Any = None, min_samples: int = 1) -> Any:
    if len(view.legal) == 1:
        return view.legal[0]
    return simulate_play(view, rng, deadline, default, min_samples=min_samples).best()


__all__ = ["Clock", "Stats", "Z", "choose_play", "simulate_play"]
