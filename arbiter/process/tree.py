"""Every process one bot starts, however it leaves its process group, killed at the end of its match.

The strongest way this machine allows: a cgroup v2 of the bot's own, entered before the bot's
program starts (a shell in the exec chain writes its pid into ``cgroup.procs``, so every
descendant is born inside), killed with ``cgroup.kill``; else, for a bot with a uid of its own,
every process of that uid; else every process whose environment holds the seat's token (a
process that both left the group and cleared its environment escapes only this last way).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import subprocess
import time

from arbiter.process.procfs import kill_each, processes_of_uid, processes_with_token, sweep

log = logging.getLogger(__name__)

_CGROUP_SCRIPT = 'echo $$ > "$0" && exec "$@"'  # $0: the cgroup's cgroup.procs
_numbers = itertools.count()


def _cgroup2_mounts() -> list[str]:
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            return [fields[1] for line in f if len(fields := line.split()) > 2 and fields[2] == "cgroup2"]
    except OSError:
        return []


def _own_cgroup() -> str | None:
    """This process's cgroup v2 path (``0::/path`` in /proc/self/cgroup)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        pass
    return None


@functools.cache
def cgroup_parent() -> str | None:
    """A cgroup v2 folder where this process may make a cgroup per bot and move a process into
    it (probed once, by doing both), or None."""
    own = _own_cgroup()
    if own is None:
        return None
    for mount in _cgroup2_mounts():
        parent = os.path.join(mount, own.lstrip("/"))
        probe = os.path.join(parent, f"barbu-probe-{os.getpid()}")
        try:
            os.mkdir(probe)
        except OSError:
            continue
        try:
            moved = subprocess.run(
                ["/bin/sh", "-c", _CGROUP_SCRIPT, os.path.join(probe, "cgroup.procs"), "true"],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False,
            ).returncode == 0  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            moved = False
        _remove_cgroup(probe)
        if moved:
            _remove_stale(parent)
            return parent
    return None


def _remove_stale(parent: str) -> None:
    """Remove the empty cgroups of arbiter processes that are gone (killed before their clean-up)."""
    for entry in os.scandir(parent):
        owner = entry.name.split("-")[1] if entry.name.startswith("barbu-") else ""
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            with contextlib.suppress(OSError):  # fails while it holds a process
                os.rmdir(entry.path)


def _remove_cgroup(path: str) -> bool:
    """Remove an empty cgroup (its last processes may take a moment to leave)."""
    for _ in range(100):
        try:
            os.rmdir(path)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.01)
    return False


class ProcessTree:
    """How one bot's processes are found and killed: :meth:`wrap` its command line before it
    starts, :meth:`kill` at the end of its match, :meth:`close` once it is reaped."""

    def __init__(self, token: str, uid: int | None = None, *, own_cgroup: bool = True):
        self.token = token
        self.uid = uid  # a uid of the bot's own (a uid range), or None
        self.cgroup: str | None = None
        parent = cgroup_parent() if own_cgroup else None
        if parent is not None:
            path = os.path.join(parent, f"barbu-{os.getpid()}-{next(_numbers)}")
            try:
                os.mkdir(path)
                self.cgroup = path
            except OSError as e:
                log.warning("cannot make a cgroup for a bot (%s): its processes are found another way", e)

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the bot's cgroup (unchanged without one)."""
        if self.cgroup is None:
            return argv
        return ["/bin/sh", "-c", _CGROUP_SCRIPT, os.path.join(self.cgroup, "cgroup.procs"), *argv]

    def kill(self) -> None:
        """SIGKILL every process of the bot, until none is left."""
        if self.cgroup is not None:
            sweep(self._cgroup_members, rounds=100, kill=self._kill_cgroup)
        if self.uid is not None:
            # The uid is this bot's alone: whatever still runs under it is the bot's, even a
            # process that left the group and cleared its environment.
            sweep(self._uid_members, rounds=100)
        if self.cgroup is None and self.uid is None:
            sweep(self._token_holders, rounds=50)

    def close(self) -> None:
        """Remove the bot's cgroup (once its processes are gone)."""
        if self.cgroup is not None and not _remove_cgroup(self.cgroup):
            log.error("the cgroup %s still holds processes; it is left in place", self.cgroup)

    def _uid_members(self) -> list[int]:
        return [] if self.uid is None else processes_of_uid(self.uid)

    def _token_holders(self) -> list[int]:
        return [p for p in processes_with_token(self.token) if p != os.getpid()] if self.token else []

    def _cgroup_members(self) -> list[int]:
        assert self.cgroup is not None
        try:
            with open(os.path.join(self.cgroup, "cgroup.procs"), encoding="ascii") as f:
                return [int(pid) for pid in f.read().split()]
        except (OSError, ValueError):
            return []

    def _kill_cgroup(self, pids: list[int]) -> None:
        assert self.cgroup is not None
        try:
            with open(os.path.join(self.cgroup, "cgroup.kill"), "w", encoding="ascii") as f:
                f.write("1")  # the kernel kills every member at once, even one that forks meanwhile
            return
        except OSError:  # a kernel before 5.14: one by one
            kill_each(pids)
