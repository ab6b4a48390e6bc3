"""A bot's command line, read once: :class:`BotCommand`.

A command is split like a shell would (no shell); its program is the first word after any
``env [OPTION | NAME=value]...``; a bare ``python`` or ``python3`` program is the arbiter's own
interpreter, which has the SDK. The tournament file's checks, the launcher, a cluster's shipping
and the sandbox all read a command through this one value.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass

from arbiter.errors import ConfigError

INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|bash|sh|Rscript|lua)$")
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".sh", ".jar", ".lua", ".R")
_OWN_PYTHON = re.compile(r"python3?")
_ENV_OPTIONS_WITH_A_VALUE = ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")


@dataclass(frozen=True)
class BotCommand:
    """A command line as written (``text``), its words, and where its program is (``at``)."""

    text: str
    words: tuple[str, ...]
    at: int

    @classmethod
    def parse(cls, text: str) -> BotCommand:
        """The command ``text``; a ValueError saying in one line what is wrong with it otherwise."""
        try:
            words = tuple(shlex.split(text))
        except ValueError as e:
            raise ValueError(f"cannot split {text!r} into words: {e}") from None
        if not words:
            raise ValueError("the command is empty")
        at = 0
        if words[0] == "env":  # env [-i] [-u NAME] [NAME=value]... program args
            at = 1
            while at < len(words) and ("=" in words[at] or words[at].startswith("-")):
                at += 2 if words[at] in _ENV_OPTIONS_WITH_A_VALUE else 1
            if at >= len(words):
                raise ValueError("'env' names no program to run")
        return cls(text, words, at)

    @property
    def program(self) -> str:
        return self.words[self.at]

    @property
    def own_python(self) -> bool:
        """Whether the program is a bare ``python``/``python3``: the arbiter's own interpreter."""
        return bool(_OWN_PYTHON.fullmatch(self.program))

    @property
    def launch_words(self) -> tuple[str, ...]:
        """The words started: a bare ``python`` made the arbiter's interpreter."""
        if not self.own_python:
            return self.words
        return (*self.words[: self.at], sys.executable, *self.words[self.at + 1 :])

    @property
    def launch(self) -> str:
        """:attr:`launch_words` as one command line."""
        return shlex.join(self.launch_words)

    @property
    def scripts(self) -> list[str]:
        """The script files it names: an interpreter's first argument that is not an option (none
        for ``-m``/``-c``/``-e``/stdin), else every argument with a script's suffix."""
        program, rest = os.path.basename(self.launch_words[self.at]), self.words[self.at + 1 :]
        if INTERPRETERS.match(program) or program == os.path.basename(sys.executable):
            j = 0
            while j < len(rest) and rest[j].startswith("-"):
                if rest[j] in ("-m", "-c", "-e", "--eval", "-"):
                    return []  # a module or inline code: nothing to check
                j += 1
            return [rest[j]] if j < len(rest) else []
        return [a for a in rest if a.endswith(SCRIPT_SUFFIXES) and not a.startswith("-")]


def split_command(command: str) -> list[str]:
    """The words a bot's command launches (:attr:`BotCommand.launch_words`); a ConfigError if it
    cannot be read."""
    try:
        return list(BotCommand.parse(command).launch_words)
    except ValueError as e:
        raise ConfigError(f"bad bot command {command!r}: {e}") from None
