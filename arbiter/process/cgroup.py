"""A bot's own control group: entered before its program starts, it bounds the memory and the
number of processes of all the bot's processes together and kills every one of them at the end.

Where this machine lets the arbiter make cgroups (probed once, by making one and moving a process
into it): a cgroup v2 of the bot's own under the arbiter's, and, for the ``memory`` and ``pids``
controllers that the v2 tree does not offer here, a cgroup of the bot's own in each v1 hierarchy
of that controller (hosts that still mount them). A shell in the bot's exec chain writes its pid
into each ``cgroup.procs`` before it execs the bot, so every descendant is born inside, whatever
it does afterwards (``setsid``, double fork, a cleared environment). Without any, the bot's
processes are found another way (arbiter.process.tree) and its memory is bounded per process.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import subprocess
import time
from dataclasses import dataclass

from arbiter.process.procfs import kill_each

log = logging.getLogger(__name__)

# $0: how many cgroup.procs files follow; each gets the shell's pid, then the bot is exec'd.
_ENTER_SCRIPT = 'n=$0; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'
_CONTROLLERS = ("memory", "pids")
_numbers = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """A folder where the arbiter may make a cgroup per bot: ``version`` 2 or 1, and the
    controllers a child made there gets."""

    parent: str
    version: int
    controllers: frozenset[str]


def _mounts(kind: str) -> list[tuple[str, set[str]]]:
    """Mount points of filesystems of type ``kind``, with their options."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            rows = [line.split() for line in f]
    except OSError:
        return []
    return [(row[1], set(row[3].split(","))) for row in rows if len(row) > 3 and row[2] == kind]


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy: ``""`` for v2, else each v1 controller's name."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as f:
            for line in f:
                number, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if number != "0" else [""]:
                    paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


def _usable(parent: str) -> bool:
    """Whether a cgroup made under ``parent`` takes a process (made, entered, removed)."""
    probe = os.path.join(parent, f"barbu-{os.getpid()}-probe-{next(_numbers)}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        entered = (
            subprocess.run(
                ["/bin/sh", "-c", _ENTER_SCRIPT, "1", os.path.join(probe, "cgroup.procs"), "true"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
                check=False,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        entered = False
    _remove(probe)
    if entered:
        _remove_stale(parent)
    return entered


def _v2_controllers(parent: str) -> frozenset[str]:
    try:
        with open(os.path.join(parent, "cgroup.subtree_control"), encoding="ascii") as f:
            return frozenset(f.read().split()) & frozenset(_CONTROLLERS)
    except OSError:
        return frozenset()


@functools.cache
def hierarchies() -> tuple[Hierarchy, ...]:
    """Where a bot's cgroups are made on this machine: at most one v2 and one v1 per controller
    the v2 one lacks. Empty where none is allowed."""
    own = _own_paths()
    found: list[Hierarchy] = []
    if "" in own:
        for mount, _ in _mounts("cgroup2"):
            parent = os.path.join(mount, own[""].lstrip("/"))
            if _usable(parent):
                found.append(Hierarchy(parent, 2, _v2_controllers(parent)))
                break
    covered = set().union(*(h.controllers for h in found))
    for controller in _CONTROLLERS:
        if controller in covered or controller not in own:
            continue
        for mount, options in _mounts("cgroup"):
            if controller in options:
                parent = os.path.join(mount, own[controller].lstrip("/"))
                if _usable(parent):
                    found.append(Hierarchy(parent, 1, frozenset({controller})))
                break
    return tuple(found)


def per_bot_controllers() -> frozenset[str]:
    """The limits a bot's own cgroup can set here (``memory``, ``pids``)."""
    return frozenset().union(*(h.controllers for h in hierarchies()))


def _remove_stale(parent: str) -> None:
    """Remove the empty cgroups of arbiter processes that are gone (killed before their clean-up)."""
    for entry in os.scandir(parent):
        owner = entry.name.split("-")[1] if entry.name.startswith("barbu-") else ""
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            with contextlib.suppress(OSError):  # fails while it holds a process
                os.rmdir(entry.path)


def _remove(path: str) -> bool:
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


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w", encoding="ascii") as f:
            f.write(value)
        return True
    except OSError:
        return False


def _read_int(path: str, key: str | None = None) -> int:
    """A number from a cgroup file: the whole file, or the value of ``key`` in a keyed file."""
    try:
        with open(path, encoding="ascii") as f:
            text = f.read()
    except OSError:
        return 0
    if key is None:
        return int(text.strip() or 0) if text.strip().isdigit() else 0
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


class BotCgroup:
    """One bot's cgroups (one per hierarchy of :func:`hierarchies`), with its limits set:
    :meth:`wrap` its command line, :meth:`kill` at the end, :meth:`close` once it is reaped."""

    def __init__(self, *, memory: int | None, processes: int | None):
        self.paths: list[tuple[Hierarchy, str]] = []
        self.memory: int | None = None  # the memory limit set on the bot as a whole, if any
        self.processes: int | None = None  # the process limit set on the bot as a whole, if any
        self._killed_for_memory = False  # noted when the cgroups are removed
        name = f"barbu-{os.getpid()}-{next(_numbers)}"
        for hierarchy in hierarchies():
            path = os.path.join(hierarchy.parent, name)
            try:
                os.mkdir(path)
            except OSError as e:
                log.warning("cannot make a cgroup for a bot (%s): its processes are found another way", e)
                continue
            self.paths.append((hierarchy, path))
            if "memory" in hierarchy.controllers and memory is not None and self._limit_memory(hierarchy, path, memory):
                self.memory = memory
            pids = os.path.join(path, "pids.max")
            if "pids" in hierarchy.controllers and processes is not None and _write(pids, str(processes)):
                self.processes = processes

    @staticmethod
    def _limit_memory(hierarchy: Hierarchy, path: str, memory: int) -> bool:
        if hierarchy.version == 2:
            _write(os.path.join(path, "memory.swap.max"), "0")
            return _write(os.path.join(path, "memory.max"), str(memory))
        done = _write(os.path.join(path, "memory.limit_in_bytes"), str(memory))
        _write(os.path.join(path, "memory.memsw.limit_in_bytes"), str(memory))  # where swap is accounted
        return done

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started inside the bot's cgroups (unchanged without any)."""
        if not self.paths:
            return argv
        procs = [os.path.join(path, "cgroup.procs") for _, path in self.paths]
        return ["/bin/sh", "-c", _ENTER_SCRIPT, str(len(procs)), *procs, *argv]

    def members(self) -> list[int]:
        pids: set[int] = set()
        for _, path in self.paths:
            try:
                with open(os.path.join(path, "cgroup.procs"), encoding="ascii") as f:
                    pids.update(int(pid) for pid in f.read().split())
            except (OSError, ValueError):
                continue
        return sorted(pids)

    def kill(self, pids: list[int]) -> None:
        """Kill every member: at once through a v2 ``cgroup.kill`` (even one forking meanwhile),
        else one by one."""
        for hierarchy, path in self.paths:
            if hierarchy.version == 2 and _write(os.path.join(path, "cgroup.kill"), "1"):
                return
        kill_each(pids)

    def out_of_memory(self) -> bool:
        """Whether the kernel killed one of the bot's processes for the bot's memory limit."""
        if self._killed_for_memory:
            return True
        for hierarchy, path in self.paths:
            if "memory" not in hierarchy.controllers:
                continue
            if hierarchy.version == 2 and _read_int(os.path.join(path, "memory.events"), "oom_kill"):
                return True
            if hierarchy.version == 1 and _read_int(os.path.join(path, "memory.oom_control"), "oom_kill"):
                return True
        return False

    def close(self) -> None:
        """Remove the bot's cgroups (once its processes are gone)."""
        self._killed_for_memory = self.out_of_memory()
        for _, path in self.paths:
            if not _remove(path):
                log.error("the cgroup %s still holds processes; it is left in place", path)
        self.paths = []
