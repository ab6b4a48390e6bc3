"""Plays legally, after leaving a grandchild behind that escaped every usual trace: it left the
bot's session (setsid), its parent exited (so it is nobody's child), and it cleared its
environment (no seat token). It writes its pid to the file named by ``ESCAPE_PID_FILE`` and
sleeps; the arbiter must kill it with the match all the same."""

import os
import random
import sys
import time

from barbu.bot import Bot
from barbu.runner import run


class EscaperBot(Bot):
    name = "setsid-escaper"

    def __init__(self):
        self.rng = random.Random(7)

    def decide(self, view):
        return self.rng.choice(view.legal)


def escape(pid_file: str) -> None:
    if os.fork():  # the bot goes on playing
        return
    os.setsid()
    if os.fork():  # the middle process exits: the grandchild is nobody's child
        os._exit(0)
    os.execve(sys.executable, [sys.executable, "-c", GRANDCHILD, pid_file], {})


GRANDCHILD = """
import os, sys, time
with open(sys.argv[1] + ".part", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".part", sys.argv[1])
time.sleep(600)
"""


if __name__ == "__main__":
    escape(os.environ["ESCAPE_PID_FILE"])
    deadline = time.monotonic() + 10
    while not os.path.exists(os.environ["ESCAPE_PID_FILE"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    raise SystemExit(run(EscaperBot()))
