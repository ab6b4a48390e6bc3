"""The whole report: gather, read each match's log, analyse, write the replay pages and the page.

Only complete matches whose log verifies and still has its recorded SHA-256 feed the per-deal
statistics (aborted matches are not rated either). The report's data are one JSON object, the
one the page embeds (``<script id="report-data">``) and :class:`ReportResult` returns.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from barbu.rules import BarbuError

from arbiter.errors import ReportError
from arbiter.files import write_text_atomic
from arbiter.replay.facts import DealFacts, Facts
from arbiter.tournament.formats import format_of, plays_duplicate_sets
from arbiter.tournament.recorded import read_match_log
from arbiter.web.report.gather import Gathered, Ranking, gather
from arbiter.web.report.render import Colours, chart, render_page
from arbiter.web.report.stats import Analysis, contract_stats, doubling_stats, fault_counts, rating_series

if TYPE_CHECKING:  # pragma: no cover
    from barbu.matchlog import Verification
    from barbu.rules.ruleset import Ruleset

    from arbiter.replay.model import Replay
    from arbiter.storage.models import Match, Tournament

DATA_VERSION = 1
# One colour per entrant, on the report and on the replay pages it links (arbiter.web.viewer);
# the first four are the viewer's own seat colours.
PALETTE = (
    "#2f6fdd",
    "#e0771b",
    "#1e9e55",
    "#8e44ad",
    "#d62728",
    "#0fa3b1",
    "#8c564b",
    "#e377c2",
    "#6b7280",
    "#a4a614",
    "#1b3a8a",
    "#f2a900",
)
DASHES = ("", "6 3", "2 3", "8 3 2 3")  # beyond the palette: the same colours, dashed


@dataclass
class ReportResult:
    out: Path
    tournament: str
    matches: int
    replays: int
    log_problems: dict[str, int]
    data: dict[str, Any] = field(repr=False, default_factory=dict)
    light: bool = False  # written without its replay pages


def build_report(
    db: str | None,
    tournament: str | None,
    out: str | os.PathLike[str],
    *,
    replays: bool | None = True,
    ranking: Ranking | None = None,
) -> ReportResult:
    """Gather, analyse, write the replay pages (``OUT_replays/``) and the report; returns a summary.
    ``replays=None``: a tournament's, not a ladder's (whose matches keep coming: its report stays
    light, and its arena serves each replay at /matches/ID). ``ranking``: what orders the
    tournament's standings and when an entrant stops being provisional (default: TrueSkill's μ,
    the default count)."""
    from arbiter.files import output_folder

    out = _writable(Path(out))
    g = gather(db, tournament, ranking)
    t = g.tournament
    if replays is None:
        replays = not format_of(t.format).growing
        if replays:
            output_folder(out.with_name(f"{out.stem}_replays"), "the replays folder")
    rules_json, rules = _rules(t)
    order = [s.name for s in g.standings]
    colours = {e: (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]) for i, e in enumerate(order)}
    replay_dir = out.parent / f"{out.stem}_replays" if replays else None  # (None: a light report)
    analysis = Analysis()
    matches = [_match(row, g, rules, analysis, replay_dir, colours) for row in g.rows]
    data = _report_data(g, rules_json, rules, order, colours, analysis, matches)
    series = data["history"]["series"]
    x_max = max([p[0] for s in series.values() for p in s] + [0])
    page = render_page(
        data, g.standings, colours, chart(series, order, colours, x_max), f"Barbu tournament report — {t.name}"
    )
    try:
        write_text_atomic(out, page)
    except OSError as e:
        raise ReportError(f"cannot write the report {out}: {e.strerror or e}") from None
    problems: dict[str, int] = {}
    for m in matches:
        if m["log"] != "ok":
            problems[m["log"]] = problems.get(m["log"], 0) + 1
    written = sum(1 for m in matches if m["replay"] is not None)
    return ReportResult(out, t.name, len(g.rows), written, problems, data, light=not replays)


def _writable(out: Path) -> Path:
    """Before the work: a page that cannot be written is one clear line, at once."""
    if out.is_dir():
        raise ReportError(f"--html {out} is a folder; give the report's file name, e.g. {out / 'report.html'}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot write the report {out}: {e.strerror or e}") from None
    return out


def _rules(t: Tournament) -> tuple[dict[str, Any], Ruleset]:
    """The tournament's rules, as stored (JSON) and as the engine's ruleset."""
    from barbu.rules import ruleset_from_json

    try:
        rules_json = json.loads(t.rules)
        return rules_json, ruleset_from_json(rules_json)
    except (ValueError, BarbuError) as e:
        raise ReportError(f"tournament {t.name!r} has rules the report cannot read: {e}") from None


# ---- one match ------------------------------------------------------------------------------
@dataclass
class _Log:
    """A match's log as the report sees it: its state, and what a sound reading of it gave."""

    status: str
    note: str
    replay: Replay | None = None
    verification: Verification | None = None
    deals: list[DealFacts] = field(default_factory=list)


def _read_log(row: Match, seats: list[str], g: Gathered, rules: Ruleset, with_replay: bool) -> _Log:
    """Find, read and verify the log; with a replay page to write, the viewer's pass reads it."""
    from barbu.matchlog import read_log

    from arbiter.replay.model import load_replay

    state = read_match_log(row.log_path, row.log_sha256, g.db_url, g.tournament.name, g.tournament.format)
    log = _Log(state.status, state.note)
    if not state.lines:
        return log
    facts = Facts(rules)
    if with_replay:  # the viewer needs the states; its pass over the log gives the lines too
        log.replay = load_replay(state.lines)
        for e in log.replay.events:
            facts.visit(e.line, e.after)
        log.verification, log.deals = facts.end(log.replay.verification)
    else:
        log.verification, log.deals = read_log(state.lines, facts)
    v = log.verification
    if not v.valid:
        log.status, log.note = "invalid", f"the log is invalid at line {v.line}: {v.error}"
    elif state.status == "ok":
        header = v.header or {}
        logged = [s.get("entrant") for s in header.get("seats", [])] if isinstance(header.get("seats"), list) else []
        if logged and logged != seats:
            log.status, log.note = "changed", f"the log's seats {logged} are not the recorded {seats}"
    return log


def _write_replay(replay: Replay, folder: Path, key: str, colours: dict[str, str]) -> str:
    """Write the match's viewer page, each seat in its entrant's colour; returns its address
    relative to the report."""
    from arbiter.web.viewer import write_html

    name = _safe_name(key) + ".html"
    try:
        write_html(replay, folder / name, colours=colours)
    except OSError as e:
        raise ReportError(f"cannot write replay page {folder / name}: {e.strerror or e}") from None
    return quote(f"{folder.name}/{name}")


def _safe_name(key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", key).strip(".") or "match"
    return name[:120]


def _match(
    row: Match, g: Gathered, rules: Ruleset, analysis: Analysis, replay_dir: Path | None, colours: Colours
) -> dict[str, Any]:
    """The match's entry in the report's data; a sound, complete log is added to ``analysis``."""
    seats = row.seats
    srs = g.seat_results.get(row.id, []) if row.id is not None else []
    log = _read_log(row, seats, g, rules, replay_dir is not None)
    v = log.verification
    if log.status == "ok" and row.status == "complete" and v is not None and v.complete:
        analysis.add_match(seats, log.deals, rules.double_scoring)
    return {
        "number": row.number,
        "key": row.key,
        "round": row.round,
        "game": row.game,
        "seats": seats,
        "totals": row.totals,
        "places": row.places,
        "status": row.status,
        "reason": row.reason if row.status != "complete" else None,
        "deals": row.deals,
        "wall_seconds": round(row.wall_seconds, 2),
        "forfeited": [sr.seat for sr in srs if sr.forfeited],
        "faults": sum(sr.faults for sr in srs),
        "fault_list": g.fault_details.get(row.id, []) if row.id is not None else [],
        "log": log.status,
        "log_note": log.note,
        "replay": None
        if log.replay is None or replay_dir is None
        else _write_replay(log.replay, replay_dir, row.key, {e: c for e, (c, _) in colours.items()}),
    }


# ---- the report's data ------------------------------------------------------------------------
def _report_data(
    g: Gathered,
    rules_json: dict[str, Any],
    rules: Ruleset,
    order: list[str],
    colours: Colours,
    analysis: Analysis,
    matches: list[dict[str, Any]],
) -> dict[str, Any]:
    """Everything the page shows, as plain JSON (DATA_VERSION)."""
    from barbu.matchlog import FAULT_KINDS
    from barbu.rules.scoring import MULTIPLIERS

    from arbiter.replay.model import CONTRACT_NAMES
    from arbiter.storage.dburl import without_password
    from arbiter.tournament.ratings import MU

    t = g.tournament
    contracts = [c.value for c in rules.contracts]
    labels = {c.value: name for c, name in CONTRACT_NAMES.items()}
    mult = MULTIPLIERS[rules.double_scoring]
    return {
        "version": DATA_VERSION,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "database": without_password(g.db_url),
        "tournament": {
            "name": t.name,
            "format": t.format,
            "duplicate_sets": plays_duplicate_sets(t.format),
            "rounds": t.rounds,
            "total_matches": t.total_matches,
            "rating": g.rating,  # what orders the standings
            "provisional": g.provisional,  # fewer complete matches: a provisional standing
            "recorded": len(g.rows),
            "complete": t.finished_at is not None,
            "seed": t.seed,
            "rules": rules_json,
            "rules_text": _rules_text(rules_json),
            "created": _when(t.created_at),
            "finished": _when(t.finished_at),
        },
        "entrants": order,
        "colours": {e: colours[e][0] for e in order},
        "standings": [s.to_json(plays_duplicate_sets(t.format)) for s in g.standings],
        "history": {
            "games": len({r.game for r in g.history}),
            "series": rating_series(g.history, order, MU, joined=format_of(g.tournament.format).growing),
        },
        "contracts": {
            "order": contracts,
            "labels": {c: labels.get(c, c) for c in contracts},
            "all": contract_stats(analysis.contracts_all, order, contracts),
            "declarer": contract_stats(analysis.contracts_declarer, order, contracts),
            "multipliers": f"{mult[1]} / {mult[2]} ({rules.double_scoring})",
        },
        "doubling": doubling_stats(analysis, order),
        "faults": {
            "kinds": list(FAULT_KINDS) + sorted({k for _, k in g.faults} - set(FAULT_KINDS)),
            "by_entrant": fault_counts(g.faults, order),
            "forfeits": {s.name: s.forfeits for s in g.standings},
        },
        "analysis": {"matches": analysis.matches, "deals": analysis.deals, "unsettled": analysis.unsettled},
        "matches": matches,
    }


def _when(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _rules_text(rules: dict[str, Any]) -> str:
    parts = []
    for k, v in rules.items():
        if isinstance(v, list):
            v = ", ".join(str(x) for x in v)
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items())
        parts.append(v if k == "preset" else f"{k}: {v}")
    return "; ".join(str(p) for p in parts) or "standard"
