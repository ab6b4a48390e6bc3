"""Plays legally, but once (its 3rd decision) sleeps BARBU_SLEEP seconds (default 1) first; with
BARBU_SPIN=1 it computes that long instead (a busy loop in Python, holding the interpreter)."""

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
            seconds = float(os.environ.get("BARBU_SLEEP", "1"))
            if os.environ.get("BARBU_SPIN") == "1":
                until = time.monotonic() + seconds
                while time.monotonic() < until:
                    sum(range(1000))
            else:
                time.sleep(seconds)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(SlowBot()))
