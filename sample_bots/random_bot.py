"""The simplest bot: every decision uniformly at random among the legal actions.

Run it against an arbiter (which normally starts it itself)::

    BARBU_ARBITER=unix:/tmp/arbiter.sock BARBU_TOKEN=... python sample_bots/random_bot.py

Set ``BARBU_SEED`` to an integer to make its choices reproducible (each match starts from the
seed: a match is played the same way whether its process is fresh or kept from an earlier one).
"""

from __future__ import annotations

import os
import random
from typing import Any

from barbu.bot import Bot
from barbu.rules import View


class RandomBot(Bot):
    name = "random"
    version = "1"
    multi_match = True  # one process may play several matches: each starts from the seed again

    def __init__(self, seed: int | None = None):
        if seed is None and os.environ.get("BARBU_SEED", "").strip():
            seed = int(os.environ["BARBU_SEED"])
        self.seed = seed
        self.rng = random.Random(seed)

    def on_match_start(self, view: View) -> None:
        if self.seed is not None:  # a seeded bot plays a match the same way in any process
            self.rng = random.Random(self.seed)

    def decide(self, view: View) -> Any:
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    from barbu.runner import run

    raise SystemExit(run(RandomBot()))
