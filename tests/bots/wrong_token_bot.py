"""Connects with a token that is not the one it was given (BARBU_WRONG=version: a bad version)."""

import os

from barbu import runner
from barbu.bot import Bot


class AnyBot(Bot):
    name = "wrong-token"


if __name__ == "__main__":
    token = os.environ["BARBU_TOKEN"]
    if os.environ.get("BARBU_WRONG") == "version":
        runner.PROTOCOL_VERSION = 99  # claim a protocol this arbiter does not speak
    else:
        token = token[:-4] + "XXXX"  # the seat prefix is kept, the secret is wrong
    raise SystemExit(runner.run(AnyBot(), token=token))
