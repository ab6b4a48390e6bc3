"""Plays randomly and records every view it receives (as JSON, one per line) to BARBU_SPY_OUT,
so a test can check that no view ever showed another seat's unplayed cards."""

import json
import os
import random

from barbu import runner
from barbu.bot import Bot
from google.protobuf.json_format import MessageToDict


class SpyBot(Bot):
    name = "spy"

    def __init__(self):
        self.rng = random.Random(5)

    def decide(self, view):
        return self.rng.choice(view.legal)


_original = runner.view_from_proto


def _recording_view_from_proto(msg, rules, legal=(), results=()):
    with open(os.environ["BARBU_SPY_OUT"], "a") as f:
        f.write(json.dumps(MessageToDict(msg, preserving_proto_field_name=True)) + "\n")
    return _original(msg, rules, legal, results)


if __name__ == "__main__":
    runner.view_from_proto = _recording_view_from_proto
    raise SystemExit(runner.run(SpyBot()))
