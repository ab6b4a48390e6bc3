"""An arena's uploads, taken within its quotas, and its bundle store, kept within them.

:class:`Uploads` is the write side of submissions: an author's upload is admitted, stored
(:func:`arbiter.arena.archive.open_archive`), recorded as a new version and queued for its
check, one upload at a time. Before anything is unpacked it is refused while the arena is short
of disk space (:class:`~arbiter.arena.disk.DiskFull`, 503) and over an author's quotas (the
arena file's ``quotas``, :class:`~arbiter.arena.config.Quotas`): more than ``uploads_per_hour``
uploads in the last hour, or ``queued`` submissions still waiting for their check
(:class:`TooManyUploads`, 429); then over the store's: the files the author's submissions keep
in the store beyond ``author_store``, or all of them beyond ``store`` (:class:`OverQuota`, 413).
Each refusal is one line naming the quota, its value and when to try again (``retry_after``:
the API's Retry-After).

:meth:`Uploads.sweep` keeps the store: it removes what uploads and unpacking cut short left
behind (``.upload-*``, ``.unpack-*``, ``.trash-*``: a kill -9 mid-upload) and the bundles
nobody needs any more: a bundle stays while a submission that uses it is checking or active, or
its version is seated in a match not yet recorded, and for ``keep_seconds`` after its last
rejected or retired submission was decided or retired (a bundle no submission uses: after its
folder was made). The arena sweeps at its start and then every :func:`sweep_seconds`. A store
belongs to one arena (its database: every arena of it counts); what is removed is only files,
never a submission's row, its report, its matches or its ratings.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arbiter.arena.archive import UPLOAD_PREFIX, open_archive
from arbiter.arena.config import Quotas, UploadLimits
from arbiter.arena.disk import DiskFull, DiskWatch, approx_size, disk_full
from arbiter.errors import ArbiterError
from arbiter.storage.arena import ACTIVE, CHECKING, ArenaStore, SubmissionRow

log = logging.getLogger(__name__)

HOUR = 3600.0
QUEUED_RETRY_SECONDS = 30.0  # a hint: a check takes some seconds to some minutes
LEFTOVERS = (UPLOAD_PREFIX, ".unpack-", ".trash-")  # archive.py's and bundle.py's temporary folders
DIGEST = re.compile(r"^[0-9a-f]{64}$")
DEFAULT_LIMITS, DEFAULT_QUOTAS = UploadLimits(), Quotas()


class OverQuota(ArbiterError):
    """An upload the store has no room for within the arena's quotas (HTTP 413); ``retry_after``:
    seconds until some of that room is freed, or None when nothing frees it by itself."""

    def __init__(self, message: str, retry_after: float | None):
        super().__init__(message)
        self.retry_after = retry_after


class TooManyUploads(ArbiterError):
    """An author over the uploads' pace: too many lately, or too many waiting for their check
    (HTTP 429, retry after ``retry_after`` seconds)."""

    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


def sweep_seconds(quotas: Quotas) -> float:
    """How often the store is swept: a quarter of ``keep_seconds``, between 1 s and a minute."""
    return min(60.0, max(1.0, quotas.keep_seconds / 4))


def duration(seconds: float) -> str:
    """``seconds`` for a person: 45 s, 12 min, 3 h."""
    if seconds < 120:
        return f"{max(1, round(seconds))} s"
    if seconds < 2 * HOUR:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / HOUR)} h"


class Uploads:
    """The arena's submissions as they arrive (see the module's docstring). ``enqueue`` queues a
    submission's check; ``in_play`` names the versions (``NAME@VERSION``) seated in matches not
    yet recorded; ``disk`` says whether the arena is short of disk space."""

    def __init__(
        self,
        arena: str,
        store: ArenaStore,
        folder: Path,
        *,
        enqueue: Callable[[int], None],
        house: Sequence[str] = (),
        limits: UploadLimits = DEFAULT_LIMITS,
        quotas: Quotas = DEFAULT_QUOTAS,
        disk: DiskWatch | None = None,
        in_play: Callable[[], Collection[str]] = lambda: (),
    ):
        self.arena, self.store, self.folder = arena, store, folder.resolve()
        self.enqueue, self.house, self.limits, self.quotas = enqueue, tuple(house), limits, quotas
        self.disk, self.in_play = disk, in_play
        self._lock = threading.Lock()  # one upload or sweep at a time: each may hold twice `unpacked`
        self._recent: dict[str, deque[float]] = {}  # each author's uploads in the last hour (monotonic)
        self._sizes: dict[str, int] = {}  # bytes of files of each bundle in the store, as far as seen

    # ---- an upload ---------------------------------------------------------------------------------
    def submit(self, author: str, data: bytes) -> SubmissionRow:
        """Store ``data`` (a .tar.gz) as a new version of its entrant by ``author``, within the
        quotas, and queue its check."""
        with self._lock:
            self._admit(author)
            sizes = self._bundle_sizes()
            self._check_room(author, sizes, None)  # full already: refused before anything is unpacked
            self._recent[author].append(time.monotonic())
            try:
                unpacked = open_archive(data, self.folder, self.limits)
            except DiskFull as e:
                self._disk_failed(e)
                raise
            digest = unpacked.digest
            new = digest not in sizes
            if new:
                self._sizes[digest] = files_bytes(unpacked.folder)
            try:
                self._check_room(author, self._sizes, digest)
                row = self.store.open_submission(
                    self.arena, author, unpacked.name, digest, unpacked.command, house=self.house
                )
            except BaseException as e:
                if new:
                    self._remove(digest)  # refused: its files go at once
                if isinstance(e, Exception) and disk_full(e):
                    self._disk_failed(e)
                    raise DiskFull("the arena's disk has no room for this upload now: try again later") from None
                raise
        log.info(
            "submission %d: %s@%d from %s, %s, queued for its check",
            row.id,
            row.entrant,
            row.version,
            author,
            approx_size(len(data)),
        )
        self.enqueue(row.id)
        return row

    def _admit(self, author: str) -> None:
        """Refuse at once while the disk is short or the author over the pace of uploads."""
        if self.disk is not None and self.disk.paused() is not None:
            raise DiskFull("the arena takes no upload now: its disk is short of space; try again later")
        q = self.quotas
        recent = self._recent.setdefault(author, deque())
        now = time.monotonic()
        while recent and now - recent[0] >= HOUR:
            recent.popleft()
        if len(recent) >= q.uploads_per_hour:
            wait = recent[0] + HOUR - now
            raise TooManyUploads(
                f"too many uploads: the arena takes {q.uploads_per_hour} an hour from each author "
                f"(quotas.uploads_per_hour): try again in {duration(wait)}",
                wait,
            )
        waiting = [r.id for r in self.store.checking(self.arena) if r.author == author]
        if len(waiting) >= q.queued:
            several = "s wait" if q.queued > 1 else " waits"
            raise TooManyUploads(
                f"submission {waiting[0]} is still waiting for its check: {q.queued} submission{several} per author "
                "(quotas.queued): try again once it is decided",
                QUEUED_RETRY_SECONDS,
            )

    def _check_room(self, author: str, sizes: dict[str, int], digest: str | None) -> None:
        """OverQuota if the author's bundles (with ``digest``, the upload's) or all of them are
        over the quotas; ``digest`` None: if they are at them already, before unpacking."""
        q = self.quotas
        rows = self.store.every()
        own = {r.bundle for r in rows if r.arena == self.arena and r.author == author} | {digest or ""}
        used, total = sum(sizes.get(d, 0) for d in own), sum(sizes.values())
        room = 0 if digest is not None else 1  # before unpacking: at the quota is over it already
        keep = "would keep" if digest is not None else "keep"
        adds = f" with this one's {approx_size(sizes.get(digest, 0))}" if digest is not None else ""
        if used + room > q.author_store:
            frees = self._frees_in(rows, sizes, own)
            raise OverQuota(
                f"your bots {keep} {approx_size(used)} in the arena's store{adds}; each author may keep "
                f"{approx_size(q.author_store)} (quotas.author_store), and the files of rejected and retired versions "
                f"go {duration(q.keep_seconds)} after their decision: "
                + (f"try again in {duration(frees)}" if frees is not None else "retire a version, then try again"),
                frees,
            )
        if total + room > q.store:
            frees = self._frees_in(rows, sizes, set(sizes))
            raise OverQuota(
                f"the arena's store is full: its bots {keep} {approx_size(total)}{adds}; it holds "
                f"{approx_size(q.store)} for all (quotas.store): "
                + (f"try again in {duration(frees)}" if frees is not None else "ask the arena's organiser"),
                frees,
            )

    def _frees_in(self, rows: Sequence[SubmissionRow], sizes: dict[str, int], digests: set[str]) -> float | None:
        """Seconds until the first of ``digests`` is swept away (None: none of them will be)."""
        ends = [at for d, at in self._expiries(rows, sizes).items() if d in digests and at is not None]
        if not ends:
            return None
        return max(1.0, (min(ends) - datetime.now(UTC)).total_seconds()) + sweep_seconds(self.quotas)

    def _disk_failed(self, error: BaseException) -> None:
        if self.disk is not None:
            self.disk.failed(error)

    # ---- the store -----------------------------------------------------------------------------------
    def sweep(self) -> list[str]:
        """Remove the leftovers of uploads cut short and the bundles nobody needs any more (see the
        module's docstring); the digests removed."""
        with self._lock:
            if not self.folder.is_dir():
                return []
            for entry in os.scandir(self.folder):
                if entry.name.startswith(LEFTOVERS):
                    remove_tree(Path(entry.path))  # no upload runs now: this one was cut short
            sizes = self._bundle_sizes()
            now = datetime.now(UTC)
            gone = [d for d, at in self._expiries(self.store.every(), sizes).items() if at is not None and at <= now]
            for digest in gone:
                self._remove(digest)
            return gone

    def _expiries(self, rows: Sequence[SubmissionRow], sizes: dict[str, int]) -> dict[str, datetime | None]:
        """When each bundle in the store may go (None: it is needed)."""
        in_play = set(self.in_play())
        keep = timedelta(seconds=self.quotas.keep_seconds)
        out: dict[str, datetime | None] = {}
        for r in rows:
            if r.bundle not in sizes or (r.bundle in out and out[r.bundle] is None):
                continue
            if r.status in (CHECKING, ACTIVE) or (r.arena == self.arena and r.versioned_name in in_play):
                out[r.bundle] = None
                continue
            at = (r.retired_at or r.decided_at or r.created_at) + keep
            earlier = out.get(r.bundle)
            out[r.bundle] = at if earlier is None else max(earlier, at)
        for digest in sizes.keys() - out.keys():  # no submission uses it (a kill -9 between unpacking and recording)
            try:
                made = datetime.fromtimestamp(os.stat(self.folder / digest).st_mtime, UTC)
            except OSError:
                continue
            out[digest] = made + keep
        return out

    def _bundle_sizes(self) -> dict[str, int]:
        """The bundles in the store and the bytes of their files (each measured once: a bundle is
        read-only)."""
        present = set()
        if self.folder.is_dir():
            present = {e.name for e in os.scandir(self.folder) if DIGEST.match(e.name)}
        for digest in self._sizes.keys() - present:
            del self._sizes[digest]
        for digest in present - self._sizes.keys():
            self._sizes[digest] = files_bytes(self.folder / digest / "files")
        return dict(self._sizes)

    def _remove(self, digest: str) -> None:
        """Take bundle ``digest`` out of the store: renamed aside first, so nobody finds half of it."""
        aside = self.folder / f".trash-{uuid.uuid4().hex}"
        try:
            os.rename(self.folder / digest, aside)
        except FileNotFoundError:
            pass
        else:
            remove_tree(aside)
        self._sizes.pop(digest, None)


def files_bytes(folder: Path) -> int:
    """The bytes of the files under ``folder`` (as the upload caps count them)."""
    total = 0
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def remove_tree(path: Path) -> None:
    """Remove ``path`` and everything in it, read-only folders and any depth alike: a folder at a
    time, without recursion (an upload cut short by an older arbiter may hold a path 1000 deep)."""
    folders: list[str] = []
    todo = [str(path)]
    while todo:
        folder = todo.pop()
        try:
            os.chmod(folder, 0o700)
            entries = list(os.scandir(folder))
        except OSError:
            continue
        folders.append(folder)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                todo.append(entry.path)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    for folder in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
