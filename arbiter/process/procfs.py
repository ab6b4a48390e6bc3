"""Finding processes through ``/proc``: by uid, by the seat token in their environment, by parent.

Clean-up needs these because a bot may leave its process group (``setsid``) or fork faster than
it can be killed; :func:`sweep` kills until nothing is found.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable

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


def sweep(find: Callable[[], list[int]], rounds: int) -> None:
    """SIGKILL whatever ``find`` names until it names nothing: a fork storm may still be
    forking while we look."""
    for _ in range(rounds):
        found = find()
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


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


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields_ = stat.rsplit(b")", 1)[-1].split()
        if len(fields_) > 1 and int(fields_[1]) == pid:
            found.append(int(entry.name))
    return found
