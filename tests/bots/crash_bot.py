"""Plays legally, then dies abruptly in the middle of a deal (its 20th decision)."""

import os
import random
import sys

from barbu.bot import Bot
from barbu.runner import run


class CrashBot(Bot):
    name = "crash"

    def __init__(self):
        self.asked = 0
        self.rng = random.Random(2)

    def decide(self, view):
        self.asked += 1
        if self.asked == 20:
            print("crash_bot: dying on purpose", file=sys.stderr, flush=True)
            os._exit(3)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(CrashBot()))
