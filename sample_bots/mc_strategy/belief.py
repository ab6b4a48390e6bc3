"""What the others' bidding says about their hands: importance weights on uniform samples.

The sampler draws deals uniformly among those consistent with the rules, but a declarer who
named Trumps in spades probably holds spades, and a seat that doubled probably expects to win.
Each sample gets a weight, the chance that the model (:mod:`.model`) would have made the public
bidding with the sampled hands:

* the declaration: a softmax, temperature ``TAU`` points, over the heuristic's value of every
  declaration the declarer could have made;
* each doubling action of another seat: 1 if the model's doubling rule gives the same targets
  with the sampled hand, ``MISS`` otherwise (other bots double differently).

Search then averages with these weights (self-normalised importance sampling). Doubling
decisions use both factors; card play only the declaration's, and only in Trumps and Domino
(see :mod:`.search`: the weights cost samples).
"""

from __future__ import annotations

import math
import random

from barbu.rules import View
from barbu.sampler import Sampler, replay

from .model import Estimator, menu_of, model_double

TAU = 3.0  # points: how sharply the declarer is assumed to pick the best-looking declaration
MISS = 0.25  # weight factor when a seat's actual double is not what the model would have done


class Belief:
    """Weighted samples of the hidden hands of one view."""

    def __init__(self, view: View, est: Estimator, *, declaration: bool = True, doubles: bool = True):
        self.view = view
        self.est = est
        self.sampler = Sampler(view)
        me = view.seat
        self.played_by = [0, 0, 0, 0]
        for seat, c in view.plays:
            if c is not None:
                self.played_by[seat] |= 1 << c
        self.declarer = -1
        if declaration and view.declaration is not None and view.declarer != me:
            d = view.declarer
            before = set(view.declared[d]) - {view.declaration.contract}
            self.menu, self.remaining = menu_of(view.rules, before)
            if len(self.menu) > 1 and view.declaration in self.menu:
                self.declarer = d
                self.chosen = self.menu.index(view.declaration)
        self.checks = []
        if doubles and view.declaration is not None:
            self.checks = [k for k, (seat, _) in enumerate(view.doubles) if seat != me]
        self._template = None

    def draw(self, rng: random.Random) -> tuple[list[int], float]:
        """A uniform sample and its weight (0 < weight <= 1)."""
        hands = self.sampler.sample(rng)
        return hands, self.weight(hands)

    def weight(self, hands: list[int]) -> float:
        if self.declarer < 0 and not self.checks:
            return 1.0
        dealt = [h | p for h, p in zip(hands, self.played_by, strict=True)]
        w = 1.0
        if self.declarer >= 0:
            values = self.est.declaration_values(dealt[self.declarer], self.menu, self.remaining)
            top = max(values)
            z = sum(math.exp((v - top) / TAU) for v in values)
            w = math.exp((values[self.chosen] - top) / TAU) / z
        if self.checks:
            view = self.view
            if self._template is None:
                self._template = replay(view, hands, stop=1)  # just declared: the doubling starts
            state = self._template.clone()
            decl = view.declaration
            for k, (seat, targets) in enumerate(view.doubles):
                if k in self.checks:
                    guess = model_double(state, self.est(dealt[seat], decl, seat == view.declarer))
                    if guess != tuple(targets):
                        w *= MISS
                state.apply(tuple(targets))
        return w


__all__ = ["Belief", "MISS", "TAU"]
