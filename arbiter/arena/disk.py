"""The arena's disks: a full disk pauses the ladder instead of stopping the arena.

``arbiter serve`` writes to three places, which may share a disk: the match logs, the results
database (SQLite: its file's folder) and the bundle store. :class:`DiskWatch` says whether the
arena is paused: while a disk holding one of them has less free space than the arena file's
``free_space`` (or fewer than :data:`MIN_FREE_INODES` free inodes), and from the moment a write
failed for want of space (:func:`disk_full`: ENOSPC, EDQUOT, SQLite's "database or disk is
full") until every disk has the floor and :data:`RESUME_BYTES` free again, and at least
:data:`RETRY_SECONDS` have passed. Paused, no set, check or upload starts; the matches in play
go on (one whose log or row could not be written is kept and played, or recorded from its log,
once the arena resumes: arbiter.tournament.loop's ``Schedule.hold``); the API and the pages keep
answering and say so. The disks are looked at whenever someone asks, at most every
:data:`LOOK_SECONDS`: the ladder asks every second while it waits, so it resumes by itself.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from arbiter.errors import StorageError
from arbiter.text import printable

log = logging.getLogger(__name__)

MIN_FREE_INODES = 1000  # a disk with fewer free inodes cannot take new files, whatever its bytes
RESUME_BYTES = 16 << 20  # after a failed write: the least free space the arena resumes with
RETRY_SECONDS = 10.0  # after a failed write: the least time before the arena tries again
LOOK_SECONDS = 1.0
PAUSED = "the arena is short of disk space: no new match, check or upload starts until space returns"
FULL_WORDS = (os.strerror(errno.ENOSPC), os.strerror(errno.EDQUOT), "database or disk is full")


class DiskFull(StorageError):
    """An upload the arena has no room for now (a disk short of space): try again later (HTTP 503)."""

    def __init__(self, message: str, retry_after: float = RETRY_SECONDS):
        super().__init__(message)
        self.retry_after = retry_after


def disk_full(error: BaseException | None) -> bool:
    """Whether ``error``, or an error it was raised from, says a disk is full. A match's error
    comes from a worker process as text, so its words count as much as an errno."""
    for _ in range(8):  # a chain of causes is short; a cycle is not followed for ever
        if error is None:
            return False
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(words in str(error) for words in FULL_WORDS):
            return True
        error = error.__cause__ or error.__context__
    return False


def approx_size(n: int) -> str:
    """A number of bytes for a person: 95.0 MiB, 1.2 GiB, 800 bytes."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


@dataclass(frozen=True)
class Space:
    """What one of the arena's folders has free on its disk."""

    what: str  # "the match logs", ...
    path: Path
    free: int  # bytes an unprivileged writer may still use
    inodes: int  # files it may still make
    disk: int  # its device: two folders of one disk are looked at once

    def short_of(self, floor: int) -> str | None:
        """Why this disk is short (for the server's log: its path shown), or None."""
        where = f"the disk of {self.what} ({printable(str(self.path))})"
        if self.free < floor:
            return f"{where} has {approx_size(self.free)} free, under the floor of {approx_size(floor)}"
        if self.inodes < MIN_FREE_INODES:
            return f"{where} can hold only {self.inodes} more files"
        return None


def space_of(what: str, path: Path) -> Space | None:
    """The free space of the disk that holds ``path`` (a folder not made yet: its nearest parent);
    None if it cannot be looked at."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        st, device = os.statvfs(probe), os.stat(probe).st_dev
    except OSError:
        return None
    inodes = st.f_favail if st.f_files else MIN_FREE_INODES  # no inode count (btrfs): never short of them
    return Space(what, path, st.f_bavail * st.f_frsize, inodes, device)


class DiskWatch:
    """Whether the arena is paused for want of disk space (see the module's docstring).

    ``folders``: what each folder holds ("the match logs": its path, ...); ``free_space``: the
    floor (0: none, only a failed write pauses). Safe to ask from any thread."""

    def __init__(self, folders: Mapping[str, Path], free_space: int, *, clock: Callable[[], float] = time.monotonic):
        self.folders = dict(folders)
        self.floor = free_space
        self.clock = clock
        self._lock = threading.Lock()
        self._looked: float | None = None
        self._failed: tuple[float, str] | None = None  # when a write failed, and how
        self._why: str | None = None  # why the arena is paused (for the log), None: it is not

    def paused(self) -> str | None:
        """Why the arena is paused, in words for anyone (no path), or None: it is not."""
        with self._lock:
            now = self.clock()
            if self._looked is None or now - self._looked >= LOOK_SECONDS:
                self._looked = now
                self._set(self._look(now))
            return PAUSED if self._why is not None else None

    def failed(self, error: BaseException) -> None:
        """A write failed for want of space (``disk_full(error)``): paused at once."""
        first = printable(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)
        with self._lock:
            self._failed = (self.clock(), first)
            self._looked = None
            self._set(f"a write failed for want of space ({first})")

    def _look(self, now: float) -> str | None:
        need = self.floor if self._failed is None else max(self.floor, RESUME_BYTES)
        short = None
        seen: set[int] = set()
        for what, path in self.folders.items():
            space = space_of(what, path)
            if space is None or space.disk in seen:
                continue
            seen.add(space.disk)
            short = short or space.short_of(need)
        if self._failed is not None:
            at, how = self._failed
            if short is None and now - at >= RETRY_SECONDS:
                self._failed = None
            else:
                return f"a write failed for want of space ({how}); {short or 'waiting a moment before trying again'}"
        return short

    def _set(self, why: str | None) -> None:
        """Log the arena pausing and resuming, once each time."""
        if why is not None and self._why is None:
            log.warning("arena paused: %s; no new match, check or upload starts until space returns", why)
        elif why is None and self._why is not None:
            log.warning("arena resumed: its disks have room again")
        self._why = why
