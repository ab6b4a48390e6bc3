"""The report's per-deal source: the match logs the database points to.

The database keeps no per-deal data, so the contract and doubling statistics come from the logs:
each ``declare`` line gives the contract, each ``deal_end`` line the seats' raw and deal scores,
the ``double`` lines who doubled whom. A log that is missing, unreadable or changed since it was
recorded is a :class:`LogState` to show, never an exception.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from barbu.rules.ruleset import Ruleset

# (i, j) with i < j -> (level, the seat that doubled, the seat that redoubled or None)
Pairs = dict[tuple[int, int], tuple[int, int, int | None]]


@dataclass
class DealFacts:
    """One finished deal of a log: its contract, declarer, raw and deal scores, doubled pairs."""

    deal: int
    contract: str
    declarer: int
    raw: list[int]
    scores: list[int]
    pairs: Pairs = field(default_factory=dict)
    settled: bool = True  # raw + the pairs' transfers give the logged scores


def deal_facts(objs: Iterable[dict[str, Any]], rules: Ruleset) -> list[DealFacts]:
    """The finished deals of a verified log's lines (header first or not), in order.

    A ``double`` target that had already doubled the seat is a redouble, any other a double
    (docs/match-log.md). Each deal's settlement is recomputed with
    :func:`barbu.rules.scoring.settle` and compared with the logged ``scores``.
    """
    from barbu.rules.scoring import settle

    out: list[DealFacts] = []
    current: dict[str, Any] | None = None
    doubled: list[set[int]] = [set(), set(), set(), set()]
    pairs: Pairs = {}
    for o in objs:
        kind = o.get("type")
        if kind == "deal":
            current = {"deal": o["deal"], "declarer": o["declarer"], "contract": None}
            doubled = [set(), set(), set(), set()]
            pairs = {}
        elif current is None:
            continue
        elif kind == "declare":
            current["contract"] = o["contract"]
        elif kind == "double":
            seat = o["seat"]
            for t in o["targets"]:
                key = (min(seat, t), max(seat, t))
                if seat in doubled[t]:  # t doubled this seat before: a redouble
                    pairs[key] = (2, pairs[key][1], seat)
                else:
                    doubled[seat].add(t)
                    pairs[key] = (1, seat, None)
        elif kind == "deal_end":
            levels = [[0] * 4 for _ in range(4)]
            for (i, j), (level, _, _) in pairs.items():
                levels[i][j] = levels[j][i] = level
            raw, scores = list(o["raw"]), list(o["scores"])
            settled = settle(rules, raw, levels) == scores
            out.append(
                DealFacts(current["deal"], current["contract"], current["declarer"], raw, scores, pairs, settled)
            )
            current = None
    return out


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
