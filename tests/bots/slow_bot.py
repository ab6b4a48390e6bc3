"""Plays legally, but once (its 3rd decision) sleeps BARBU_SLEEP seconds (default 1) first."""

import os
import random
import time

from barbu.bot import Bot
from barbu.runner import run


class SlowBot(Bot):
    name = "slow"

    def __init__(self):
        self.asked = 0
        self.rng = random.Random(1)

    def decide(self, view):
        self.asked += 1
        if self.asked == 3:
            time.sleep(float(os.environ.get("BARBU_SLEEP", "1")))
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(SlowBot()))
