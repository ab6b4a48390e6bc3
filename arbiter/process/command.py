"""A bot's command line: split like a shell would (no shell), a bare ``python`` made the arbiter's own."""

from __future__ import annotations

import logging
import re
import shlex
import sys

from arbiter.errors import ConfigError

log = logging.getLogger(__name__)


def split_command(command: str) -> list[str]:
    """A bot command's argv, with a bare ``python`` resolved by :func:`with_own_python`."""
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise ConfigError(f"bad bot command {command!r}: {e}") from None
    if not argv:
        raise ConfigError("a bot command is empty")
    return with_own_python(argv)


def with_own_python(argv: list[str]) -> list[str]:
    """A bare ``python``/``python3`` program (after any ``env NAME=value``) becomes the
    arbiter's own interpreter, which has the SDK installed; anything else is left alone."""
    i = 0
    if argv[:1] == ["env"]:
        i = 1
        while i < len(argv) and "=" in argv[i] and not argv[i].startswith("-"):
            i += 1
    if i < len(argv) and re.fullmatch(r"python3?", argv[i]):
        return [*argv[:i], sys.executable, *argv[i + 1 :]]
    return argv
