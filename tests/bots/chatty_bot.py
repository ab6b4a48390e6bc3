"""Plays legally while flooding its stdout and stderr (several MB per match)."""

import random
import sys

from barbu.bot import Bot
from barbu.runner import run


class ChattyBot(Bot):
    name = "chatty"

    def __init__(self):
        self.rng = random.Random(6)

    def decide(self, view):
        sys.stdout.write("x" * 4000 + "\n")
        sys.stderr.write("y" * 4000 + "\n")
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(ChattyBot()))
