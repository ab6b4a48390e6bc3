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
from dataclasses import asdict, dataclass

from arbiter.process.users import BotUser

log = logging.getLogger(__name__)


DEFAULT_OUTPUT_LIMIT = 1 << 20  # bytes of a bot's stdout+stderr kept per match


CPU_GRACE = 2  # seconds between the CPU soft limit (SIGXCPU) and the hard one (SIGKILL)


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits of a launched bot (``None``: not limited).

    Every process of the bot gets them (children inherit them). ``cpu`` is CPU seconds per
    process over its life: one match, or several for a bot kept between matches (multi_match;
    arbiter.match.play lets such a process go once it has used half of it). ``memory`` and
    ``processes`` bound the bot as a whole where this machine gives it a cgroup with those
    controllers (arbiter.process.cgroup); besides, ``memory`` bounds each process's data
    (RLIMIT_DATA: what it writes, not the address space it merely reserves, which a JVM or a Go
    runtime reserves by gigabytes), and ``processes`` counts every process and thread of the
    bot's *user* (RLIMIT_NPROC), applied when the bot runs as a user of its own.
    """

    memory: int | None = 2 << 30  # bytes: the bot's memory (cgroup) and each process's data (RLIMIT_DATA)
    cpu: int | None = 1800  # CPU seconds per process (RLIMIT_CPU: SIGXCPU, then SIGKILL)
    processes: int | None = 256  # processes + threads of the bot (cgroup pids) and of its user (RLIMIT_NPROC)
    open_files: int | None = 1024  # file descriptors per process (RLIMIT_NOFILE)
    file_size: int | None = 64 << 20  # bytes: the largest file it may write (RLIMIT_FSIZE); sizes the sandbox's /tmp
    output: int = DEFAULT_OUTPUT_LIMIT  # bytes of stdout+stderr kept per seat and match
    user: str | None = None  # a user name, a uid, or a uid range FIRST-LAST (one each); None: the arbiter's

    def __post_init__(self) -> None:
        for name in ("memory", "cpu", "processes", "open_files", "file_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"limit {name!r} must be a positive whole number or None, got {value!r}")
        if isinstance(self.output, bool) or not isinstance(self.output, int) or self.output < 0:
            raise ValueError(f"limit 'output' must be a whole number of bytes >= 0, got {self.output!r}")
        if self.user is not None and (not isinstance(self.user, str) or not self.user):
            raise ValueError(f"limit 'user' must be a user name or uid as text, got {self.user!r}")

    def to_json(self) -> dict[str, object]:
        return asdict(self)


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
