"""A tournament's log folder, tied to its results database: nothing recorded is ever overwritten.

The database keeps each match's log path and SHA-256: the logs are the audit trail. So a run
only writes logs where it may:

* **One run per folder and tournament.** The run holds a lock on the folder's marker file,
  ``NAME.database.json``, for as long as it plays (besides the database's lease, which it holds
  first: see :mod:`arbiter.storage.lease`).
* **The folder belongs to one database.** The marker names the database whose records the
  folder's logs of tournament NAME are (its lease row's ``folder_key``). A run of another
  database (another file, an empty one, a deleted and re-made one) finds logs that are not its
  records and refuses at once, naming the folder and the first such log: it never plays a match
  into a name that another database recorded. With no log of the tournament in the folder yet,
  the marker is simply (re)written.
* **A finished log nobody recorded is reconciled, not replaced.** A worker renames its log into
  place when the match ends; the parent then commits the row. A kill between the two leaves a
  finished log that the database does not hold. On the next start, such a log of a pending
  match is verified and, if it is that match (the tournament's match id, seats, seed and rules),
  recorded from the log as it is (:func:`arbiter.execution.play.logged_result`); anything else under a match's name
  is an error for a person to look at, never a target.
* Workers commit a log only under a name nobody holds (:class:`arbiter.referee.logfile.AtomicLogFile`
  never replaces a file unless told to).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arbiter.errors import ConfigError
from arbiter.files import FileTooLarge, lock_exclusive, output_folder, output_path, read_bounded
from arbiter.text import printable
from arbiter.tournament.formats import format_of

MARKER_SUFFIX = ".database.json"


def log_name_pattern(tournament: str, fmt: str) -> re.Pattern[str]:
    """Names of the match logs (finished, or ``.part``) of a tournament of format ``fmt`` in its folder."""
    return re.compile(re.escape(tournament) + f"-({format_of(fmt).key_pattern})" + r"\.jsonl(\.part)?")


class LogFolder:
    """The claim of one run on a tournament's log folder (release it at the end)."""

    def __init__(self, folder: Path, tournament: str, fmt: str, key: str, database: str):
        self.folder = folder
        self.tournament = tournament
        self.format = fmt
        self.key = key
        self.database = database  # shown in messages and in the marker (password hidden)
        self.marker = folder / f"{tournament}{MARKER_SUFFIX}"
        self._fd: int | None = None

    # -- the claim
    def claim(self, recorded: dict[str, str], sha256: Callable[[Path], str]) -> None:
        """Lock the folder for this run and check it is this database's (``recorded``: the
        database's log file name -> SHA-256 of the tournament's matches; ``sha256(path)`` hashes)."""
        shown = printable(str(self.folder))
        output_folder(self.folder, "log_folder")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot create log folder {shown}: {e.strerror}") from None
        output_path(self.marker, "the log folder's marker")
        try:
            fd = os.open(self.marker, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise ConfigError(f"cannot use log folder {shown}: {printable(self.marker.name)}: {e.strerror}") from None
        try:
            locked = lock_exclusive(fd)
        except OSError as e:
            raise ConfigError(f"cannot lock {printable(str(self.marker))}: {e.strerror}") from None
        if not locked:
            raise ConfigError(
                f"another run is writing tournament {self.tournament!r}'s logs in {shown} (it holds "
                f"{printable(self.marker.name)}); one run per log folder and tournament"
            )
        self._fd = fd
        try:
            mark = self._read_marker()
            if mark.get("key") == self.key:
                return
            self._check_strangers(recorded, sha256, mark)
            self._write_marker()
        except BaseException:
            self.release()
            raise

    def _read_marker(self) -> dict[str, Any]:
        assert self._fd is not None
        os.lseek(self._fd, 0, os.SEEK_SET)
        data = os.read(self._fd, 1 << 16)
        try:
            mark = json.loads(data.decode("utf-8")) if data.strip() else {}
        except (ValueError, UnicodeDecodeError, RecursionError):
            mark = {}  # cut short by a crash while written: as good as none
        return mark if isinstance(mark, dict) else {}

    def _write_marker(self) -> None:
        assert self._fd is not None
        text = json.dumps(
            {
                "tournament": self.tournament,
                "database": self.database,
                "key": self.key,
                "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "note": "the logs of this tournament in this folder are that database's records; "
                "another database's run refuses to write here",
            },
            indent=1,
        )
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, (text + "\n").encode())
        os.fsync(self._fd)

    def _check_strangers(self, recorded: dict[str, str], sha256: Callable[[Path], str], mark: dict[str, Any]) -> None:
        """With no marker of this database: every log of the tournament already in the folder
        must be one of this database's records, unchanged."""
        strangers = [
            path for path in self.logs() if path.name.endswith(".part") or recorded.get(path.name) != sha256(path)
        ]
        if not strangers:
            return
        whose = ""
        if mark.get("database"):
            whose = f"; they are the records of database {printable(str(mark['database']))} (says {printable(self.marker.name)})"
        raise ConfigError(
            f"log folder {printable(str(self.folder))} already holds {len(strangers)} log(s) of tournament "
            f"{self.tournament!r} that this database ({printable(self.database)}) does not record, e.g. "
            f"{printable(strangers[0].name)}{whose}; a run never writes over another database's logs: give this "
            "run its own log_folder, or run it with that database"
        )

    def logs(self) -> list[Path]:
        """The tournament's logs in the folder (finished and ``.part``), by name."""
        pattern = log_name_pattern(self.tournament, self.format)
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return []
        return [self.folder / n for n in names if pattern.fullmatch(n)]

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with it
            self._fd = None


def owner_of(folder: Path) -> str | None:
    """Whose log folder ``folder`` is ("tournament T of database D", from its marker), or None
    when no run has claimed it. No command but that database's run writes there."""
    try:
        markers = sorted(n for n in os.listdir(folder) if n.endswith(MARKER_SUFFIX))
    except OSError:
        return None
    if not markers:
        return None
    try:
        mark = json.loads(read_bounded(folder / markers[0], 1 << 16).decode("utf-8"))
    except (OSError, FileTooLarge, ValueError, RecursionError):
        mark = None
    database = mark.get("database") if isinstance(mark, dict) else None
    tournament = markers[0][: -len(MARKER_SUFFIX)]
    return f"tournament {printable(repr(tournament))} of database {printable(str(database or '(unreadable marker)'))}"
