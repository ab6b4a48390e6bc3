"""Kernel resource limits on a bot (the tournament file's ``limits:``), set by util-linux
``prlimit`` wrapped around the bot's command (never a ``preexec_fn``: it is unsafe in a process
with gRPC threads); without ``prlimit`` they are set with ``resource.prlimit`` right after the
start. docs/security.md says what each limit does and does not stop.
"""

from __future__ import annotations

import functools
import logging
import resource
import shutil

from arbiter.model import DEFAULT_OUTPUT_LIMIT as DEFAULT_OUTPUT_LIMIT
from arbiter.model import Limits as Limits  # the value, in the match model
from arbiter.process.users import BotUser

log = logging.getLogger(__name__)


CPU_GRACE = 2  # seconds between the CPU soft limit (SIGXCPU) and the hard one (SIGKILL)


def human_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} bytes"


_RLIMITS = {  # Limits field -> (prlimit option, resource constant)
    "memory": ("--data", resource.RLIMIT_DATA),
    "open_files": ("--nofile", resource.RLIMIT_NOFILE),
    "file_size": ("--fsize", resource.RLIMIT_FSIZE),
    "processes": ("--nproc", resource.RLIMIT_NPROC),
}


def rlimit_values(limits: Limits, user: BotUser) -> dict[int, tuple[int, int]]:
    """The kernel limits to set: resource constant -> (soft, hard)."""
    values: dict[int, tuple[int, int]] = {resource.RLIMIT_CORE: (0, 0)}  # no core dumps on the disk
    for field, (_, res) in _RLIMITS.items():
        value = getattr(limits, field)
        if value is None or (field == "processes" and not user.is_other):
            continue
        values[res] = (value, value)
    if limits.cpu is not None:
        values[resource.RLIMIT_CPU] = (limits.cpu, limits.cpu + CPU_GRACE)
    return values


def prlimit_argv(program: str, values: dict[int, tuple[int, int]]) -> list[str]:
    """``prlimit --data=… … --`` for these limits (util-linux; ``program``: :func:`prlimit_program`)."""
    options = {res: option for option, res in _RLIMITS.values()}
    options[resource.RLIMIT_CORE] = "--core"
    options[resource.RLIMIT_CPU] = "--cpu"
    argv = [program]
    for res, (soft, hard) in values.items():
        argv.append(f"{options[res]}={soft}:{hard}")
    return [*argv, "--"]


@functools.cache
def prlimit_program() -> str | None:
    return shutil.which("prlimit")
