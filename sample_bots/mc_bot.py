"""A determinized Monte-Carlo Barbu bot: it samples the hidden hands and simulates every option.

Every decision with more than one legal action is searched until its deadline:

* card play (tricks and Domino): each legal card is played on deals drawn uniformly from those
  consistent with the view (:mod:`barbu.sampler`; in Trumps and Domino weighted by what the
  declaration says of the declarer's hand), and the rest of the deal is played out by a cheap
  greedy policy for all four seats (the SDK's :mod:`barbu.rollout`);
* doubling: each legal set of targets is tried on sampled deals, the seats after this one
  answer with the heuristic bot's doubling rule, and a playout blended with the heuristic's
  hand evaluation settles every option;
* declaring: the heuristic's hand evaluation keeps the five most promising declarations (the
  best trump suits and start ranks), each is simulated the same way, and the heuristic's value
  of the contracts still to declare is added.

Options are compared on this seat's deal score. The heuristic bot's choice is the default: the
search replaces it only with an option better by more than one standard error (paired over the
samples), so a decision starved of time plays like the heuristic, not at random. Measured
through the arbiter (``bench/strength.py``) the bot beats three heuristic bots on duplicate
deals at under 100 ms a decision; ``mc_strategy``'s module docs give the measurements behind
each choice.

Time: the bot is anytime. Each decision uses the free time per decision the arbiter gives it
(``decision_seconds``) minus a safety margin for the round trip, never the reserve, and
``--budget MS`` (or the environment variable ``BARBU_MC_BUDGET_MS``) caps it, 10% of it kept
back for the work around the search. At least one sample is always simulated (a few
milliseconds). ``--seed N`` (or ``BARBU_SEED``) with ``--samples N`` (a fixed number of samples
instead of a clock) makes its choices reproducible.

Run it like any bot: ``python sample_bots/mc_bot.py --budget 100``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from typing import Any

from barbu.bot import Bot
from barbu.rules import Phase, View

try:  # imported as sample_bots.mc_bot
    from .heuristic_bot import HeuristicBot
    from .mc_strategy import choose_declaration, choose_double, choose_play
except ImportError:  # run as a script, or imported with sample_bots/ on sys.path
    from heuristic_bot import HeuristicBot
    from mc_strategy import choose_declaration, choose_double, choose_play

MARGIN_SECONDS = 0.03  # kept back from the arbiter's free time: the round trip and Python's hiccups
MARGIN_SHARE = 0.2  # ... or this share of it, whichever is larger
DEFAULT_SECONDS = 1.0  # when nobody says (no arbiter time, no budget)
BUDGET_MARGIN_SECONDS = 0.003  # kept back from --budget for the work around the search
BUDGET_MARGIN_SHARE = 0.1


class MCBot(Bot):
    """The Monte-Carlo bot; ``samples`` replaces the clock by a fixed count (tests, experiments)."""

    name = "mc"
    version = "1"

    def __init__(
        self, budget_ms: float | None = None, seed: int | None = None, samples: int | None = None, strict: bool = False
    ):
        self.strict = strict  # let a search exception propagate (tests) instead of falling back
        self.budget = budget_ms / 1000.0 if budget_ms else None
        self.rng = random.Random(seed)
        self.samples = samples  # a fixed number of samples instead of a deadline (reproducible runs)
        self.thinking: list[float] = []  # seconds spent per searched decision
        self.heuristic = HeuristicBot()  # its card is the default the search must beat

    def seconds_for(self) -> float:
        """The time this decision may take: the arbiter's free time less a margin, capped."""
        given = self.decision_seconds
        allowed = given - max(MARGIN_SECONDS, MARGIN_SHARE * given) if given > 0 else DEFAULT_SECONDS
        if self.budget is not None:
            # the budget covers the whole decision: keep back what the bot spends around the search
            allowed = min(allowed, self.budget - max(BUDGET_MARGIN_SECONDS, BUDGET_MARGIN_SHARE * self.budget))
        return max(0.0, allowed)

    def decide(self, view: View) -> Any:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        start = time.perf_counter()
        deadline = start + self.seconds_for() if self.samples is None else float("-inf")
        n = self.samples or 1
        try:
            if view.phase is Phase.DECLARE:
                action = choose_declaration(view, self.rng, deadline, min_samples=n)
            elif view.phase is Phase.DOUBLE:
                action = choose_double(view, self.rng, deadline, min_samples=n)
            else:
                default = self.heuristic.decide(view)
                action = choose_play(view, self.rng, deadline, default, min_samples=n)
        except Exception:  # a search bug must never cost a fault: play the heuristic's move
            if self.strict:
                raise
            action = self.heuristic.decide(view)
        self.thinking.append(time.perf_counter() - start)
        return action if action in legal else legal[0]

    def on_match_end(self, view: View) -> None:
        if self.thinking:
            ms = 1000.0 * sum(self.thinking) / len(self.thinking)
            print(f"mc: {len(self.thinking)} searched decisions, {ms:.1f} ms each on average", file=sys.stderr)


def _env_number(name: str) -> float | None:
    text = os.environ.get(name, "").strip()
    return float(text) if text else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--budget",
        type=float,
        default=_env_number("BARBU_MC_BUDGET_MS"),
        help="milliseconds per decision at most (default: $BARBU_MC_BUDGET_MS, else the arbiter's time)",
    )
    parser.add_argument("--seed", type=int, default=_env_number("BARBU_SEED"), help="seed of the bot's sampling")
    parser.add_argument("--samples", type=int, default=None, help="a fixed number of samples per decision (no clock)")
    args = parser.parse_args(argv)
    from barbu.runner import run

    seed = int(args.seed) if args.seed is not None else None
    return run(MCBot(args.budget, seed, args.samples))


if __name__ == "__main__":
    raise SystemExit(main())
