"""Plays random legal moves, but only over TCP: like a stack without Unix sockets, it exits 2 when
``BARBU_ARBITER`` is a ``unix:`` address. It says on stderr which address it was given, and with
``BARBU_MODE=exit7`` exits 7 at once, and with ``BARBU_MODE=kill`` kills itself with SIGKILL
(what its parent hands on is then its own)."""

import os
import random
import signal
import sys

from barbu.bot import Bot
from barbu.runner import run


class TcpOnlyBot(Bot):
    name = "tcp-only"

    def __init__(self):
        self.rng = random.Random(4)

    def decide(self, view):
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    address = os.environ.get("BARBU_ARBITER", "")
    print(f"tcp_only_bot: BARBU_ARBITER={address}", file=sys.stderr, flush=True)
    mode = os.environ.get("BARBU_MODE", "")
    if mode == "exit7":
        raise SystemExit(7)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if address.startswith("unix:"):
        print("tcp_only_bot: cannot dial a Unix socket", file=sys.stderr, flush=True)
        raise SystemExit(2)
    raise SystemExit(run(TcpOnlyBot()))
