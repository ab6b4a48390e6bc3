"""Plays randomly, after probing what its environment lets it reach; prints one JSON line
(``probe: {...}``): the network (a TCP port on the host's loopback, BARBU_PROBE_PORT), a host
file (secret.txt in the folder BARBU_PROBE_SECRET), its own folder (write), /tmp (write), the processes it can see, the
arbiter's environment (BARBU_PROBE_ENV names a variable only the arbiter has)."""

import json
import os
import random
import socket

from barbu.bot import Bot
from barbu.runner import run


def probe() -> dict:
    found = {}
    try:
        with socket.create_connection(("127.0.0.1", int(os.environ["BARBU_PROBE_PORT"])), timeout=2):
            found["network"] = "connected"
    except OSError as e:
        found["network"] = f"refused: {e.strerror or e}"
    try:
        with open(os.path.join(os.environ["BARBU_PROBE_SECRET"], "secret.txt")) as f:
            found["secret"] = f.read()
    except OSError as e:
        found["secret"] = f"unreadable: {e.strerror}"
    here = os.path.dirname(os.path.abspath(__file__))
    for name, folder in (("own_folder", here), ("tmp", "/tmp")):
        path = os.path.join(folder, f"probe-{os.getpid()}.txt")
        try:
            with open(path, "w") as f:
                f.write("x")
            os.unlink(path)
            found[name] = "writable"
        except OSError as e:
            found[name] = f"read-only: {e.strerror}"
    found["processes"] = sum(1 for e in os.scandir("/proc") if e.name.isdigit())
    found["arbiter_env"] = os.environ.get(os.environ["BARBU_PROBE_ENV"], "absent")
    return found


class ProbeBot(Bot):
    name = "probe"

    def __init__(self):
        self.rng = random.Random(7)

    def decide(self, view):
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    print("probe: " + json.dumps(probe()), flush=True)
    raise SystemExit(run(ProbeBot()))
