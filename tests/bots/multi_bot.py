"""A bot that can play several matches in one process (Hello.multi_match), random and legal,
printing one line per match start and one at each MatchEnd. BARBU_MODE=illegal_first: in its first match only, it plays
one card it may not play (a fault), then plays legally. BARBU_MODE=quit_after_match: it says
multi_match, but leaves after its first match (a broken promise)."""

import os
import random
import sys
import time

from barbu.bot import Bot
from barbu.rules import Phase
from barbu.runner import run


class MultiBot(Bot):
    name = "multi"
    multi_match = True

    def __init__(self):
        self.rng = random.Random(4)
        self.matches = 0
        self.fouled = False

    def on_match_start(self, view):
        self.matches += 1
        print(f"multi_bot: pid {os.getpid()} starts its match {self.matches} in seat {view.seat}", file=sys.stderr)

    def on_match_end(self, view):
        time.sleep(0.05)  # as a JVM's logger may print a moment later
        print(f"multi_bot: pid {os.getpid()} ends its match {self.matches}", file=sys.stderr, flush=True)
        if os.environ.get("BARBU_MODE") == "quit_after_match":
            os._exit(0)

    def decide(self, view):
        if (
            os.environ.get("BARBU_MODE") == "illegal_first"
            and self.matches == 1
            and not self.fouled
            and view.phase is Phase.PLAY
        ):
            self.fouled = True
            return next(c for c in range(52) if c not in view.legal)
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(MultiBot()))
