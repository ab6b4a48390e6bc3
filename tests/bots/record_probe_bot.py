"""Plays randomly, after trying to read, and to append to, every path in ``BARBU_PROBE_PATHS``
(separated by ``:``: the results database, another tournament's logs, its own log folder);
prints one JSON line ``reach: {path: {"read": ..., "append": ...}}``. What it appends is
:data:`MARKER` (a sandbox may let it write to a private copy: the host's files tell)."""

import json
import os
import random

from barbu.bot import Bot
from barbu.runner import run

MARKER = "planted-by-record-probe"


def reach(path: str) -> dict:
    found = {}
    try:
        with open(path, "rb") as f:
            found["read"] = f"read {len(f.read(1 << 20))} bytes"
    except OSError as e:
        found["read"] = f"refused: {e.strerror}"
    try:
        if os.path.isdir(path):
            target = os.path.join(path, "planted.jsonl")
            with open(target, "x") as f:
                f.write(MARKER + "\n")
        else:
            with open(path, "a") as f:
                f.write(MARKER + "\n")
        found["append"] = "written"
    except OSError as e:
        found["append"] = f"refused: {e.strerror}"
    return found


class RecordProbeBot(Bot):
    name = "record-probe"

    def __init__(self):
        self.rng = random.Random(3)

    def decide(self, view):
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    paths = [p for p in os.environ.get("BARBU_PROBE_PATHS", "").split(":") if p]
    print("reach: " + json.dumps({p: reach(p) for p in paths}), flush=True)
    raise SystemExit(run(RecordProbeBot()))
