"""A recorded match's log, as the database points to it: the one way to read one (the report,
the A/B test's per-contract scores, the arena's pages and API).

The database keeps no per-deal data, so the contract and doubling statistics come from the logs
(each deal's facts: :class:`arbiter.replay.facts.Facts`). A log that is missing, unreadable
or changed since it was recorded is a :class:`LogState` to show, never an exception.

The database is input too: anyone who can write to it could point ``matches.log_path`` at any
file (``/etc/shadow``, ``../../etc/passwd``). So a path is read only when it is a log of the
tournament's log folder (a file named as the tournament's logs are, beside the folder's marker
``NAME.database.json`` that a run writes), and its text is kept only when its bytes have the
recorded SHA-256: anything else is ``missing`` or ``changed``, and nothing of it is shown.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

from arbiter.files import FileTooLarge, human_size, read_bounded
from arbiter.referee.logfile import MAX_LOG_BYTES, line_problem
from arbiter.text import printable
from arbiter.tournament.logfolder import MARKER_SUFFIX, log_name_pattern

__all__ = ["LogState", "read_match_log"]


@dataclass
class LogState:
    """What became of a match's log: ``ok``, ``missing``, ``unreadable``, ``invalid``, ``changed``.

    ``lines`` holds the log's text only for a log of the tournament's folder with the recorded
    SHA-256 (``ok``, and ``invalid`` once verified); otherwise it is empty."""

    status: str
    path: Path | None = None
    note: str = ""
    lines: list[str] = field(default_factory=list, repr=False)


def _log_candidates(stored: str, db_url: str, tournament: str) -> list[Path]:
    """The stored path, then the same file name where a moved project would have it."""
    out: list[Path] = []
    if stored:
        p = Path(stored)
        out.append(p if p.is_absolute() else Path.cwd() / p)
        if db_url.startswith("sqlite:///"):
            db_dir = Path(db_url[len("sqlite:///") :]).parent
            out += [db_dir / tournament / p.name, db_dir / p.name]
        out.append(Path.cwd() / "logs" / tournament / p.name)
    return list(dict.fromkeys(out))


def in_log_folder(path: Path, tournament: str, fmt: str) -> bool:
    """Whether ``path`` (links followed) is a finished log of ``tournament`` in a folder that a
    run of it claimed (its marker is there)."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return (
        bool(log_name_pattern(tournament, fmt).fullmatch(real.name))
        and not real.name.endswith(".part")
        and (real.parent / f"{tournament}{MARKER_SUFFIX}").is_file()
    )


def read_match_log(stored_path: str, sha256: str, db_url: str, tournament: str, fmt: str) -> LogState:
    """Find and read a match's log; never raises for a missing, foreign or unreadable file."""
    if not stored_path:
        return LogState("missing", None, "no log recorded")
    shown = printable(stored_path)
    candidates = [c for c in _log_candidates(stored_path, db_url, tournament) if c.is_file()]
    found = next((c for c in candidates if in_log_folder(c, tournament, fmt)), None)
    if found is None:
        if candidates:
            return LogState("missing", None, f"not a log of the tournament's log folder, not read: {shown}")
        return LogState("missing", Path(stored_path), f"log missing: {shown}")
    try:
        data = read_bounded(found.resolve(), MAX_LOG_BYTES)
    except FileTooLarge:
        return LogState("unreadable", found, f"the log is larger than {human_size(MAX_LOG_BYTES)}")
    except OSError as e:
        return LogState("unreadable", found, f"cannot read the log: {e.strerror}")
    if not sha256:
        return LogState("changed", found, "no SHA-256 recorded for the log: not shown")
    if hashlib.sha256(data).hexdigest() != sha256:
        return LogState("changed", found, "the log differs from the one recorded (SHA-256): not shown")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return LogState("unreadable", found, "the log is not UTF-8 text")
    lines = io.StringIO(text, newline="").readlines()  # as the replay reads a log
    problem = next((p for p in map(line_problem, lines) if p), None)
    if problem:
        return LogState("unreadable", found, f"the log holds {problem}")
    return LogState("ok", found, "", lines)
