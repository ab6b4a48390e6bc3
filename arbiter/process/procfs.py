"""Finding processes through ``/proc``: by uid, by the seat token in their environment, by parent.

Clean-up needs these because a bot may leave its process group (``setsid``) or fork faster than
it can be killed; :func:`sweep` kills until nothing is found.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)


def uid_of(pid: str, live: bool = False) -> int | None:
    """The real uid of a process (None if it is gone, or a zombie when ``live``)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if live and line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                    return None
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def uids_in_use() -> set[int]:
    return {u for e in os.scandir("/proc") if e.name.isdigit() and (u := uid_of(e.name)) is not None}


def processes_of_uid(uid: int) -> list[int]:
    """Pids of live (not zombie) processes whose real uid is ``uid``."""
    return [int(e.name) for e in os.scandir("/proc") if e.name.isdigit() and uid_of(e.name, live=True) == uid]


def sweep(find: Callable[[], list[int]], rounds: int, kill: Callable[[list[int]], None] | None = None) -> None:
    """Kill whatever ``find`` names until it names nothing (``kill``: how; SIGKILL to each by
    default): a fork storm may still be forking while we look."""
    for _ in range(rounds):
        found = find()
        if not found:
            return
        (kill or kill_each)(found)
        time.sleep(0.01)


def kill_each(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def processes_with_token(token: str) -> list[int]:
    """Pids of live processes whose environment holds ``BARBU_TOKEN=token``."""
    needle = f"BARBU_TOKEN={token}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def _stat(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the name, None when the process is gone: state(0)
    ppid(1) pgrp(2) session(3) tty_nr(4) tpgid(5) flags(6) ... utime(11) stime(12) cutime(13)
    cstime(14)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    """The live children of every thread of a process."""
    found: list[int] = []
    try:
        tasks = list(os.scandir(f"/proc/{pid}/task"))
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task.name}/children", "rb") as f:
                found.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return found


def _tree(pid: int) -> Iterator[tuple[int, list[bytes] | None]]:
    """A process and its live descendants, each once, with its stat fields (None when gone)."""
    todo, seen = [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        fields = _stat(p)
        yield p, fields
        if fields is not None:
            todo.extend(_children(p))


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    return [
        int(entry.name)
        for entry in os.scandir("/proc")
        if entry.name.isdigit()
        and (fields := _stat(entry.name)) is not None
        and len(fields) > 1
        and int(fields[1]) == pid
    ]


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of a live process and its descendants, live and reaped.

    Live descendants are found through ``/proc/PID/task/TID/children``; reaped ones are in each
    process's ``cutime``/``cstime``. A process that is gone counts 0.
    """
    total = 0
    for _, fields in _tree(pid):
        try:
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) if fields else 0
        except (ValueError, IndexError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


_PF_EXITING = 0x4  # the kernel's task flag: set first thing in do_exit, before its files close


def tree_exiting(pid: int) -> bool:
    """Whether a process or one of its live descendants has ended (a zombie) or is ending.

    A process that dies closes its sockets on the way out, after the kernel marks it exiting: so
    when its peer sees the connection drop, this already says True (and stays False for a
    process that only dropped its connection)."""
    for p, fields in _tree(pid):
        if fields is None:
            if p == pid:
                return True  # gone already
            continue
        if fields[0] in (b"Z", b"X") or int(fields[6]) & _PF_EXITING:
            return True
    return False
