"""Answers with a card it may not play whenever it can find one (a card not legal now)."""

import random

from barbu.bot import Bot
from barbu.rules import Phase
from barbu.runner import run


class IllegalBot(Bot):
    name = "illegal"

    def __init__(self):
        self.rng = random.Random(3)

    def decide(self, view):
        if view.phase is Phase.PLAY:
            illegal = [c for c in range(52) if c not in view.legal]
            return illegal[0]  # another seat's card, a played card, or a revoke
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(IllegalBot()))
