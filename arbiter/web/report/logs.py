"""The report's per-deal source: the match logs the database points to.

The database keeps no per-deal data, so the contract and doubling statistics come from the logs
(each deal's facts: :func:`arbiter.replay.facts.deal_facts`). A log that is missing, unreadable
or changed since it was recorded is a :class:`LogState` to show, never an exception.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LogState", "read_match_log"]


@dataclass
class LogState:
    """What became of a match's log: ``ok``, ``missing``, ``unreadable``, ``invalid``, ``changed``."""

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


def read_match_log(stored_path: str, sha256: str, db_url: str, tournament: str) -> LogState:
    """Find and read a match's log; never raises for a missing or unreadable file."""
    if not stored_path:
        return LogState("missing", None, "no log recorded")
    found = next((c for c in _log_candidates(stored_path, db_url, tournament) if c.is_file()), None)
    if found is None:
        return LogState("missing", Path(stored_path), f"log missing: {stored_path}")
    try:
        data = found.read_bytes()
    except OSError as e:
        return LogState("unreadable", found, f"cannot read the log: {e.strerror}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return LogState("unreadable", found, "the log is not UTF-8 text")
    lines = text.splitlines(keepends=True)
    if sha256 and hashlib.sha256(data).hexdigest() != sha256:
        return LogState("changed", found, "the log differs from the one recorded (SHA-256)", lines)
    return LogState("ok", found, "", lines)
