"""Plays legally, after leaving two children behind: one in its process group, one escaped
into a session of its own (setsid). Both must be gone when the match ends."""

import random
import subprocess

from barbu.bot import Bot
from barbu.runner import run


class ChildLeaverBot(Bot):
    name = "child-leaver"

    def __init__(self):
        self.rng = random.Random(4)

    def decide(self, view):
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    subprocess.Popen(["sleep", "600"])
    subprocess.Popen(["sleep", "601"], start_new_session=True)
    raise SystemExit(run(ChildLeaverBot()))
