"""Plays legally, after leaving behind a process that escaped every way it can: a new session
(setsid), a double fork (its parent is gone) and an empty environment (no seat token to find).
It sleeps for BARBU_ESCAPE_SECONDS (an odd number, so a test can find it by its command line)."""

import os
import random
import time
from pathlib import Path

from barbu.bot import Bot
from barbu.runner import run


class EscapeBot(Bot):
    name = "escape"

    def __init__(self):
        self.rng = random.Random(8)

    def decide(self, view):
        return self.rng.choice(view.legal)


def escape() -> None:
    seconds = os.environ.get("BARBU_ESCAPE_SECONDS", "91.37")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sleep", ["sleep", seconds], {})
        os._exit(0)
    os.wait()
    for _ in range(200):  # make sure it is there before playing
        for entry in os.scandir("/proc"):
            try:
                if (
                    entry.name.isdigit()
                    and Path(f"/proc/{entry.name}/cmdline").read_bytes() == f"sleep\0{seconds}\0".encode()
                ):
                    print(f"escape: a process escaped (pid {entry.name} here)", flush=True)
                    return
            except OSError:
                pass
        time.sleep(0.01)
    print("escape: the escaped process did not start", flush=True)


if __name__ == "__main__":
    escape()
    raise SystemExit(run(EscapeBot()))
