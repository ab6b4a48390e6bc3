"""``arbiter report``: one self-contained HTML page about a tournament.

The page shows, from the results database and the match logs it points to:

* the **standings**, the very numbers of ``arbiter standings`` (:func:`arbiter.ratings.standings`);
* the **rating history**: μ of every entrant after each rated game (the ``rating_history``
  table), as an inline SVG line chart;
* the **average deal score per contract** of each entrant (who is good at what), over all deals
  and over the deals it declared. The database keeps no per-deal data, so these come from the
  match logs: each ``declare`` line gives the contract, each ``deal_end`` line the seats' deal
  scores; an entrant's score in a deal is the mean of its seats' (copies are one entrant, as in
  the standings);
* **doubling**: per entrant, the doubles and redoubles it made and the net settlement those
  pairs brought it, ``m(L)·(raw_self − raw_other)`` per pair (``barbu.rules.scoring``);
* **faults** by kind per entrant (the ``faults`` table) and forfeits;
* **every match**: seats, totals, status, and a link to its replay page. With ``--replays``
  (the default) each match's page is written next to the report, in ``OUT_replays/``, by the
  replay viewer (:mod:`arbiter.web.page`), and linked relatively, so the folder can be moved or
  served as it is. A log that is missing, unreadable, invalid or changed since it was recorded is
  said so in the list (and left out of the per-deal statistics); it never stops the report.

Only complete matches whose log verifies and still has its recorded SHA-256 feed the per-deal
statistics (aborted matches are not rated either). The page holds its CSS, JavaScript, SVG and
data inline and makes no network request. Its data are also embedded as JSON
(``<script id="report-data">``) for tools and tests.

Everything here only reads the database.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from barbu.rules import BarbuError

from arbiter.errors import ReportError
from arbiter.files import write_text_atomic

if TYPE_CHECKING:  # pragma: no cover
    from barbu.rules.ruleset import Ruleset

    from arbiter.tournament.ratings import Standing
    from arbiter.tournament.storage.models import Match, Tournament

DATA_VERSION = 1
# Distinct line colours; the first four are the replay viewer's seat colours.
PALETTE = (
    "#2f6fdd", "#e0771b", "#1e9e55", "#8e44ad", "#d62728", "#0fa3b1",
    "#8c564b", "#e377c2", "#6b7280", "#a4a614", "#1b3a8a", "#f2a900",
)  # fmt: skip
DASHES = ("", "6 3", "2 3", "8 3 2 3")  # beyond the palette: the same colours, dashed




# ---- reading one match log ----------------------------------------------------------------
@dataclass
class DealFacts:
    """One finished deal of a log: its contract, declarer, raw and deal scores, doubled pairs."""

    deal: int
    contract: str
    declarer: int
    raw: list[int]
    scores: list[int]
    # (i, j) with i < j -> (level, the seat that doubled, the seat that redoubled or None)
    pairs: dict[tuple[int, int], tuple[int, int, int | None]] = field(default_factory=dict)
    settled: bool = True  # raw + the pairs' transfers give the logged scores


def deal_facts(objs: Iterable[dict[str, Any]], rules: Ruleset) -> list[DealFacts]:
    """The finished deals of a verified log's lines (header first or not), in order.

    A ``double`` target that had already doubled the seat is a redouble, any other a double
    (spec: match-log.md). Each deal's settlement is recomputed with
    :func:`barbu.rules.scoring.settle` and compared with the logged ``scores``.
    """
    from barbu.rules.scoring import settle

    out: list[DealFacts] = []
    current: dict[str, Any] | None = None
    doubled: list[set[int]] = [set(), set(), set(), set()]
    pairs: dict[tuple[int, int], tuple[int, int, int | None]] = {}
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


def pair_transfer(double_scoring: str, level: int, raw_self: int, raw_other: int) -> int:
    """What a doubled pair's settlement moves to one of its seats: m(L)·(raw_self − raw_other)."""
    from barbu.rules.scoring import MULTIPLIERS

    return MULTIPLIERS[double_scoring][level] * (raw_self - raw_other)


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
    seen: set[Path] = set()
    return [c for c in out if not (c in seen or seen.add(c))]


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


# ---- gathering the tournament -------------------------------------------------------------
@dataclass
class Gathered:
    tournament: Tournament
    db_url: str
    entrants: list[str]  # in the database's order
    standings: list[Standing]
    history: list[Any]  # RatingRow
    rows: list[Match]
    seat_results: dict[int, list[Any]]  # match id -> SeatResult rows by seat
    faults: list[tuple[str, str]]  # (entrant, kind)
    fault_details: dict[int, list[dict[str, Any]]]  # match id -> faults


def gather(db: str | None, tournament: str | None) -> Gathered:
    """Read everything the report needs from the database (read only)."""
    from sqlalchemy.exc import SQLAlchemyError
    from sqlmodel import select

    from arbiter.tournament.ratings import standings
    from arbiter.tournament.storage import Repo, open_database
    from arbiter.tournament.storage.db import first_line
    from arbiter.tournament.storage.models import Entrant, Fault, Match, SeatResult

    engine = open_database(db, create=False)
    try:
        repo = Repo(engine)
        t = repo.require_tournament(tournament)
        try:
            entrants = repo.entrant_names(t.id)
            records = repo.matches(t.id)
            table = standings(entrants, records, t.format == "duplicate")
            history = repo.rating_history(t.id)
            rows = repo.match_rows(t.id)
            with repo.session() as s:
                names = {e.id: e.name for e in s.exec(select(Entrant).where(Entrant.tournament_id == t.id))}
                seat_results: dict[int, list[Any]] = {}
                query = (
                    select(SeatResult)
                    .join(Match, SeatResult.match_id == Match.id)
                    .where(Match.tournament_id == t.id)
                    .order_by(SeatResult.match_id, SeatResult.seat)
                )
                for sr in s.exec(query):
                    seat_results.setdefault(sr.match_id, []).append(sr)
                faults = []
                details: dict[int, list[dict[str, Any]]] = {}
                query = select(Fault).join(Match, Fault.match_id == Match.id).where(Match.tournament_id == t.id)
                for f in s.exec(query.order_by(Fault.id)):
                    faults.append((names.get(f.entrant_id, "?"), f.kind))
                    details.setdefault(f.match_id, []).append(
                        {"seat": f.seat, "deal": f.deal, "kind": f.kind, "detail": f.detail, "action": f.action}
                    )
        except SQLAlchemyError as e:
            raise ReportError(f"cannot read tournament {t.name!r}: {first_line(e)}") from None
        return Gathered(t, str(engine.url), entrants, table, history, rows, seat_results, faults, details)
    finally:
        engine.dispose()


# ---- the statistics -----------------------------------------------------------------------
def _mean_ci(values: Sequence[float]) -> tuple[float | None, list[float] | None]:
    from arbiter.tournament.ratings import mean_ci

    mean, ci = mean_ci(values)
    return mean, None if ci is None else [ci[0], ci[1]]


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def contract_stats(
    samples: dict[str, dict[str, list[float]]], entrants: Sequence[str], contracts: Sequence[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{entrant: {contract: {mean, n, ci95}}} (and an ``all`` pseudo-contract)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for e in entrants:
        per = samples.get(e, {})
        row: dict[str, dict[str, Any]] = {}
        for c in [*contracts, "all"]:
            values = per.get(c, []) if c != "all" else [v for k in contracts for v in per.get(k, [])]
            mean, ci = _mean_ci(values)
            row[c] = {"mean": _r(mean), "n": len(values), "ci95": None if ci is None else [_r(ci[0]), _r(ci[1])]}
        out[e] = row
    return out


@dataclass
class Analysis:
    contracts_all: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    contracts_declarer: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    doubles: dict[str, dict[str, Any]] = field(default_factory=dict)
    matches: int = 0
    deals: int = 0
    unsettled: int = 0  # deals whose recomputed settlement differs from the log (should be 0)


def _doubling_row() -> dict[str, Any]:
    return {"doubles": 0, "redoubles": 0, "acted": [], "passive": []}


def analyse_match(analysis: Analysis, seats: Sequence[str], facts: Sequence[DealFacts], double_scoring: str) -> None:
    """Add one match's deals to the per-contract and doubling statistics."""
    analysis.matches += 1
    by_entrant: dict[str, list[int]] = {}
    for s, name in enumerate(seats):
        by_entrant.setdefault(name, []).append(s)
    for d in facts:
        analysis.deals += 1
        if not d.settled:
            analysis.unsettled += 1
        for name, own in by_entrant.items():
            score = sum(d.scores[s] for s in own) / len(own)
            analysis.contracts_all.setdefault(name, {}).setdefault(d.contract, []).append(score)
        decl = seats[d.declarer]
        analysis.contracts_declarer.setdefault(decl, {}).setdefault(d.contract, []).append(float(d.scores[d.declarer]))
        for (i, j), (level, by, redo) in d.pairs.items():
            if seats[i] == seats[j]:
                continue  # an entrant's copies doubling each other: nothing won or lost
            for me, other in ((i, j), (j, i)):
                row = analysis.doubles.setdefault(seats[me], _doubling_row())
                gain = pair_transfer(double_scoring, level, d.raw[me], d.raw[other])
                if by == me:
                    row["doubles"] += 1
                    row["acted"].append(gain)
                elif redo == me:
                    row["redoubles"] += 1
                    row["acted"].append(gain)
                else:
                    row["passive"].append(gain)


def doubling_stats(analysis: Analysis, entrants: Sequence[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for e in entrants:
        row = analysis.doubles.get(e, _doubling_row())
        acted, passive = row["acted"], row["passive"]
        mean, ci = _mean_ci(acted)
        pmean, _ = _mean_ci(passive)
        out[e] = {
            "doubles": row["doubles"],
            "redoubles": row["redoubles"],
            "pairs": len(acted),
            "won": sum(1 for g in acted if g > 0),
            "lost": sum(1 for g in acted if g < 0),
            "net": sum(acted),
            "mean": _r(mean),
            "ci95": None if ci is None else [_r(ci[0]), _r(ci[1])],
            "doubled_pairs": len(passive),
            "doubled_mean": _r(pmean),
        }
    return out


# ---- the page ------------------------------------------------------------------------------
def _static(name: str) -> str:
    from importlib import resources

    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def _json_for_script(obj: Any) -> str:
    from arbiter.web.viewer import _json_for_script as dumps

    return dumps(obj)


def _safe_name(key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", key).strip(".") or "match"
    return name[:120]


def _when(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _num(x: float | None, digits: int = 1, sign: bool = False) -> str:
    if x is None:
        return "–"
    text = f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
    return text.replace("-", "−")


def _pm(mean: float | None, ci: Sequence[float] | None) -> str:
    """As ``arbiter standings`` prints it: +12.3 ±4.5."""
    if mean is None:
        return "–"
    if ci is None:
        return _num(mean, 1, sign=True)
    return f"{_num(mean, 1, sign=True)} <small>±{(ci[1] - ci[0]) / 2:.1f}</small>"


def _cls(x: float | None) -> str:
    return "" if x is None or abs(x) < 1e-9 else ("neg" if x < 0 else "pos")


def _dot(colour: str, dash: str = "") -> str:
    style = (
        f"background:{colour}"
        if not dash
        else f"background:repeating-linear-gradient(90deg,{colour} 0 4px,transparent 4px 6px)"
    )
    return f'<i class="dot" style="{style}"></i>'


def _nice_step(span: float, target: int = 6) -> float:
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def rating_series(history: Sequence[Any], entrants: Sequence[str], mu0: float) -> dict[str, list[list[float]]]:
    """Per entrant: [[matches played, μ, σ], ...] from the start (0, μ₀) through every rated game."""
    from arbiter.tournament.ratings import SIGMA

    series: dict[str, list[list[float]]] = {e: [[0, mu0, round(SIGMA, 4)]] for e in entrants}
    for r in history:
        series.setdefault(r.entrant, [[0, mu0, round(SIGMA, 4)]]).append(
            [r.match_number + 1, round(r.mu, 4), round(r.sigma, 4)]
        )
    return series


def chart_svg(
    series: dict[str, list[list[float]]], order: Sequence[str], colours: dict[str, tuple[str, str]], x_max: int
) -> str:
    """The rating history: one polyline per entrant, μ after each rated game."""
    W, H, L, R, T, B = 760, 320, 46, 14, 14, 38
    values = [p[1] for e in order for p in series.get(e, [])]
    lo, hi = (min(values), max(values)) if values else (20.0, 30.0)
    if hi - lo < 2:
        lo, hi = lo - 1, hi + 1
    step = _nice_step(hi - lo, 6)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    x_max = max(1, x_max)

    def X(x: float) -> float:
        return L + (W - L - R) * x / x_max

    def Y(y: float) -> float:
        return T + (H - T - B) * (hi - y) / (hi - lo)

    parts = [
        (
            f'<svg id="rating-chart" viewBox="0 0 {W} {H}" role="img" aria-labelledby="rating-chart-title" '
            'xmlns="http://www.w3.org/2000/svg">'
        ),
        '<title id="rating-chart-title">TrueSkill μ of each entrant after each rated game</title>',
        f'<rect class="plot" x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}"/>',
    ]
    y = lo
    while y <= hi + 1e-9:
        parts.append(f'<line class="grid" x1="{L}" x2="{W - R}" y1="{Y(y):.1f}" y2="{Y(y):.1f}"/>')
        label = f"{y:g}"
        parts.append(f'<text class="ylab" x="{L - 6}" y="{Y(y) + 4:.1f}">{label}</text>')
        y += step
    xstep = max(1, int(_nice_step(x_max, 8)))
    x = 0
    while x <= x_max:
        parts.append(f'<line class="xtick" x1="{X(x):.1f}" x2="{X(x):.1f}" y1="{H - B}" y2="{H - B + 4}"/>')
        parts.append(f'<text class="xlab" x="{X(x):.1f}" y="{H - B + 16}">{x}</text>')
        x += xstep
    parts.append(f'<text class="axis" x="{(L + W - R) / 2:.0f}" y="{H - 4}">matches played (schedule order)</text>')
    parts.append(f'<text class="axis" transform="translate(12 {(T + H - B) / 2:.0f}) rotate(-90)">μ</text>')
    mu0 = next((s[0][1] for s in series.values() if s), None)
    if mu0 is not None and lo <= mu0 <= hi:  # where everyone starts
        parts.append(f'<line class="mu0" x1="{L}" x2="{W - R}" y1="{Y(mu0):.1f}" y2="{Y(mu0):.1f}"/>')
    # the leader last, so it is drawn on top
    for e in reversed(order):
        pts = series.get(e, [])
        colour, dash = colours[e]
        coords = " ".join(f"{X(p[0]):.1f},{Y(p[1]):.1f}" for p in pts)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        last = pts[-1] if pts else [0, 0, 0]
        parts.append(
            f'<polyline class="mu" data-entrant="{escape(e)}" stroke="{colour}"{dash_attr} points="{coords}">'
            f"<title>{escape(e)}: μ {last[1]:.2f} (σ {last[2]:.2f}) after {len(pts) - 1} rated games</title></polyline>"
        )
        if pts:
            parts.append(
                f'<circle class="end" data-entrant="{escape(e)}" cx="{X(last[0]):.1f}" cy="{Y(last[1]):.1f}" r="3.2" fill="{colour}"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def _entrant(name: str, colours: dict[str, tuple[str, str]]) -> str:
    colour, dash = colours.get(name, ("#888", ""))
    return f'<span class="ent" data-entrant="{escape(name)}">{_dot(colour, dash)}{escape(name)}</span>'


def _heat(value: float | None, values: Sequence[float]) -> str:
    """A cell's background: green above the column's mean, red below, by z-score."""
    if value is None or len(values) < 2:
        return ""
    mean = sum(values) / len(values)
    spread = max(abs(v - mean) for v in values)
    if spread < 1e-9:
        return ""
    z = max(-1.0, min(1.0, (value - mean) / spread))
    alpha = 0.10 + 0.38 * abs(z)
    rgb = "30,158,85" if z >= 0 else "214,39,40"
    return f' style="background:rgba({rgb},{alpha:.2f})"'


def _contract_table(stats: dict[str, dict[str, dict[str, Any]]], order: Sequence[str], contracts: Sequence[str],
                    labels: dict[str, str], colours, view: str, hidden: bool) -> str:  # fmt: skip
    head = "".join(f"<th>{escape(labels.get(c, c))}</th>" for c in contracts)
    rows = []
    for e in order:
        cells = []
        for c in [*contracts, "all"]:
            cell = stats[e][c]
            column = [stats[o][c]["mean"] for o in order if stats[o][c]["mean"] is not None]
            ci = cell["ci95"]
            tip = f"{e} · {labels.get(c, c)}: {cell['n']} deal{'s' * (cell['n'] != 1)}"
            if ci:
                tip += f", 95% CI {ci[0]:+.1f} … {ci[1]:+.1f}"
            text = _num(cell["mean"], 1, sign=True) if cell["n"] else "–"
            klass = "all" if c == "all" else ""
            cells.append(
                f'<td class="{klass}" data-contract="{c}" data-n="{cell["n"]}" title="{escape(tip)}"'
                f"{_heat(cell['mean'], column)}>{text}</td>"
            )
        rows.append(f"<tr><td class='left'>{_entrant(e, colours)}</td>{''.join(cells)}</tr>")
    hide = " hidden" if hidden else ""
    return (
        f'<table class="grid-table heat" id="contracts-{view}" data-view="{view}"{hide}><thead><tr><th class="left">entrant</th>'
        f'{head}<th class="all">all</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def render_body(data: dict[str, Any], standings_rows: Sequence[Standing], colours: dict[str, tuple[str, str]]) -> str:
    t = data["tournament"]
    order = data["entrants"]
    duplicate = t["format"] == "duplicate"
    out: list[str] = []
    state = "complete" if t["complete"] else "in progress"
    meta = (
        f"{escape(t['format'].replace('_', ' '))} · {t['recorded']}/{t['total_matches']} matches · "
        f"{len(order)} entrants · seed {t['seed']} · rules {escape(t['rules_text'])}"
    )
    out.append(
        f'<header id="top"><div class="brand"><h1>{escape(t["name"])}</h1><span class="sub">tournament report</span>'
        f'<span id="meta">{meta}</span></div><div id="state" class="{"ok" if t["complete"] else "partial"}">{state}</div></header>'
    )
    # summary strip
    leader = standings_rows[0] if standings_rows else None
    a = data["analysis"]
    chips = []
    if leader is not None and t["recorded"]:
        chips.append(
            f'<div class="stat"><b>{_entrant(leader.name, colours)}</b><span>leads, μ−3σ {leader.rating:.2f}</span></div>'
        )
    chips.append(f'<div class="stat"><b>{t["recorded"]}</b><span>of {t["total_matches"]} matches recorded</span></div>')
    chips.append(f'<div class="stat"><b>{a["deals"]}</b><span>deals analysed from {a["matches"]} logs</span></div>')
    total_faults = sum(sum(v.values()) for v in data["faults"]["by_entrant"].values())
    chips.append(f'<div class="stat"><b>{total_faults}</b><span>fault{"s" * (total_faults != 1)}</span></div>')
    problems = sum(1 for m in data["matches"] if m["log"] != "ok")
    if problems:
        chips.append(
            f'<div class="stat warn"><b>{problems}</b><span>log{"s" * (problems != 1)} missing or unusable</span></div>'
        )
    out.append(f'<section id="summary">{"".join(chips)}</section>')

    # standings + chart
    out.append('<section class="row two">')
    head = (
        ["#", "entrant", "μ", "σ", "μ−3σ", "matches", "score ±95%"]
        + (["vs field ±95%"] if duplicate else [])
        + ["faults"]
    )
    ths = "".join(
        f'<th class="{"left" if h == "entrant" else "greek" if "μ" in h or "σ" in h else ""}">{h}</th>' for h in head
    )
    body = []
    for r in standings_rows:
        cells = [
            f"<td>{r.rank}</td>",
            f"<td class='left'>{_entrant(r.name, colours)}</td>",
            f"<td>{r.mu:.2f}</td>",
            f"<td>{r.sigma:.2f}</td>",
            f"<td class='strong'>{r.rating:.2f}</td>",
            f"<td>{r.matches}</td>",
            f"<td class='{_cls(r.mean_score)}'>{_pm(r.mean_score, r.ci95)}</td>",
        ]
        if duplicate:
            cells.append(f"<td class='{_cls(r.duplicate_diff)}'>{_pm(r.duplicate_diff, r.duplicate_ci95)}</td>")
        fault_text = str(r.faults) + (f" <span class='forfeit'>({r.forfeits} forfeited)</span>" if r.forfeits else "")
        cells.append(f"<td class='{'bad' if r.faults else 'muted'}'>{fault_text}</td>")
        body.append(f'<tr data-entrant="{escape(r.name)}">{"".join(cells)}</tr>')
    out.append(
        '<div class="panel" id="standings"><h2>Standings</h2>'
        f'<table class="grid-table"><thead><tr>{ths}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        '<p class="note">Ranked by the conservative rating μ−3σ (TrueSkill), as <code>arbiter standings</code>. '
        "score: mean total per match with its 95% confidence interval"
        + ("; vs field: mean difference per match to the others holding the same cards." if duplicate else ".")
        + "</p></div>"
    )
    legend = "".join(
        f'<span class="key" data-entrant="{escape(e)}">{_dot(*colours[e])}{escape(e)}</span>' for e in order
    )
    history_note = (
        "No rated game yet."
        if not data["history"]["games"]
        else f"μ after each of the {data['history']['games']} rated games (the rating history); every entrant starts at μ₀ = 25."
    )
    out.append(
        '<div class="panel" id="chart"><h2>Rating history</h2>'
        f'{data["_chart"]}<div class="legend">{legend}</div><p class="note">{history_note}</p></div>'
    )
    out.append("</section>")

    # contracts + doubling
    c = data["contracts"]
    labels = c["labels"]
    tables = _contract_table(c["all"], order, c["order"], labels, colours, "all", False) + _contract_table(
        c["declarer"], order, c["order"], labels, colours, "declarer", True
    )
    out.append('<section class="row two">')
    out.append(
        '<div class="panel" id="contracts"><h2>Average deal score by contract</h2>'
        '<div class="tabs" role="tablist"><button type="button" class="on" data-view="all">all deals</button>'
        '<button type="button" data-view="declarer">as declarer</button></div>'
        f"{tables}"
        '<p class="note">Mean deal score (after doubling) per deal of each contract; hover a cell for the number of '
        "deals and the 95% interval. Green: better than the other entrants on that contract, red: worse. An entrant "
        "in several seats (copies) scores the mean of its seats. <em>As declarer</em>: the deals it declared. "
        "From the logs of complete matches.</p></div>"
    )
    rows = []
    for e in order:
        d = data["doubling"][e]
        rate = f" <small>{100 * d['won'] / d['pairs']:.0f}%</small>" if d["pairs"] else ""
        rows.append(
            f"<tr data-entrant='{escape(e)}'><td class='left'>{_entrant(e, colours)}</td>"
            f"<td>{d['doubles']} <small>/ {d['redoubles']}</small></td><td>{d['won']}–{d['lost']}{rate}</td>"
            f"<td class='{_cls(d['net'])}'>{_num(d['net'], 0, sign=True)}</td>"
            f"<td class='{_cls(d['mean'])} strong'>{_pm(d['mean'], d['ci95'])}</td>"
            f"<td class='sep'>{d['doubled_pairs']}</td><td class='{_cls(d['doubled_mean'])}'>{_num(d['doubled_mean'], 1, sign=True)}</td></tr>"
        )
    out.append(
        '<div class="panel" id="doubling"><h2>Doubling</h2>'
        '<table class="grid-table"><thead>'
        '<tr class="group"><th></th><th colspan="4">pairs it doubled or redoubled</th><th colspan="2" class="sep">doubled by others</th></tr>'
        '<tr><th class="left">entrant</th><th title="doubles / redoubles it made">doubles / re</th>'
        '<th title="pairs that gained / lost, and the share that gained">won–lost</th>'
        '<th title="sum of the settlements of the pairs it doubled or redoubled">net</th><th>per pair ±95%</th>'
        '<th class="sep" title="pairs in which another entrant doubled it and it did not redouble">pairs</th>'
        '<th title="mean settlement per such pair">per pair</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        "<p class='note'>Each doubled pair settles m(L)·(own raw score − other's raw score), m = "
        f"{escape(c['multipliers'])} for a double / redouble. <em>Doubled by others</em>: pairs in which another "
        "entrant doubled it and it did not redouble. Copies doubling each other are left out.</p></div>"
    )
    out.append("</section>")

    # faults
    seen = {k for counts in data["faults"]["by_entrant"].values() for k, n in counts.items() if n}
    kinds = [k for k in data["faults"]["kinds"] if k in seen]
    unseen = [k for k in data["faults"]["kinds"] if k not in seen]
    rows = []
    for e in order:
        counts = data["faults"]["by_entrant"].get(e, {})
        cells = "".join(f"<td class='{'bad' if counts.get(k) else 'muted'}'>{counts.get(k, 0)}</td>" for k in kinds)
        total = sum(counts.values())
        forfeits = data["faults"]["forfeits"].get(e, 0)
        rows.append(
            f"<tr data-entrant='{escape(e)}'><td class='left'>{_entrant(e, colours)}</td>{cells}"
            f"<td class='{'bad' if total else 'muted'} strong'>{total}</td><td class='{'bad' if forfeits else 'muted'}'>{forfeits}</td></tr>"
        )
    kh = "".join(f"<th>{escape(k)}</th>" for k in kinds)
    note = "Faults of each entrant's seats by kind (the faults table); forfeits: matches forfeited."
    if unseen:
        note += f" None of kind {', '.join(unseen)}." if kinds else " No fault of any kind."
    out.append(
        '<section class="row two"><div class="panel" id="faults"><h2>Faults</h2>'
        f'<table class="grid-table"><thead><tr><th class="left">entrant</th>{kh}<th>total</th><th>forfeits</th></tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table><p class="note">{note}</p></div>'
    )
    complete = sum(1 for m in data["matches"] if m["status"] == "complete")
    wall = sum(m["wall_seconds"] for m in data["matches"])
    facts = [
        ("format", escape(t["format"].replace("_", " ")) + f", {t['rounds']} round{'s' * (t['rounds'] != 1)}"),
        (
            "matches",
            f"{t['recorded']} of {t['total_matches']} recorded: {complete} complete, {t['recorded'] - complete} aborted",
        ),
        ("rules", escape(t["rules_text"])),
        ("seed", str(t["seed"])),
        ("created", escape(t["created"] or "–")),
        ("finished", escape(t["finished"] or "not yet")),
        ("play time", f"{wall / 60:.1f} min of match wall time" if wall else "–"),
        ("database", f"<code>{escape(data['database'])}</code>"),
    ]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    out.append(f'<div class="panel" id="about"><h2>Tournament</h2><dl>{dl}</dl></div></section>')

    # matches
    rows = []
    for m in data["matches"]:
        seats = []
        for s in range(4):
            name = m["seats"][s] if s < len(m["seats"]) else "?"
            total = m["totals"][s] if s < len(m["totals"]) else None
            place = m["places"][s] if s < len(m["places"]) else None
            flags = ""
            if s in m["forfeited"]:
                flags = " <span class='forfeit' title='forfeited'>F</span>"
            win = " win" if place == 1 and m["status"] == "complete" else ""
            seats.append(
                f"<td class='seat{win}'>{_entrant(name, colours)}<b class='{_cls(total)}'>{'' if total is None else _num(total, 0, sign=True)}</b>{flags}</td>"
            )
        status = escape(m["status"]) + (f": {escape(m['reason'])}" if m.get("reason") else "")
        if m["faults"]:
            tip = "\n".join(
                f"deal {f['deal']}, seat {f['seat']}: {f['kind']} ({f['detail']}) → {f['action']}"
                for f in m["fault_list"]
            )
            status += (
                f" · <span class='faulted' title='{escape(tip)}'>{m['faults']} fault{'s' * (m['faults'] != 1)}</span>"
            )
        log = m["log"]
        if m["replay"]:
            link = f"<a class='replay' href='{escape(m['replay'])}'>replay ▸</a>"
            if log != "ok":
                link += f" <span class='warn' title='{escape(m['log_note'])}'>{escape(_short_log(m))}</span>"
        elif log == "ok":
            link = "<span class='muted'>log ok</span>"  # --no-replays
        else:
            link = f"<span class='missing' title='{escape(m['log_note'])}'>{escape(_short_log(m))}</span>"
        klass = "aborted" if m["status"] != "complete" else ""
        rows.append(
            f"<tr class='{klass}' data-key='{escape(m['key'])}' data-entrants='{escape(json.dumps(sorted(set(m['seats']))))}'>"
            f"<td>{m['number'] + 1}</td><td class='left key'>{escape(m['key'])}</td>{''.join(seats)}"
            f"<td class='left status'>{status}</td><td class='left'>{link}</td></tr>"
        )
    if not rows:
        rows.append("<tr><td colspan='8' class='left muted'>No match recorded yet.</td></tr>")
    out.append(
        '<section class="row"><div class="panel" id="matches"><h2>Matches</h2>'
        '<div class="tools"><input id="filter" type="search" placeholder="filter: entrant or match" aria-label="Filter matches">'
        '<span id="shown"></span></div>'
        '<table class="grid-table" id="match-table"><thead><tr><th>#</th><th class="left">match</th>'
        "<th class='left'>seat 0</th><th class='left'>seat 1</th><th class='left'>seat 2</th><th class='left'>seat 3</th>"
        f'<th class="left">status</th><th class="left">replay</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div></section>'
    )
    notes = [f"Written by <code>arbiter report</code> on {escape(data['generated'])}"]
    if a["unsettled"]:
        notes.append(f"{a['unsettled']} deals whose settlement could not be recomputed from their doubles")
    out.append(f"<footer>{' · '.join(notes)}</footer>")
    return "\n".join(out)


def _short_log(m: dict[str, Any]) -> str:
    return {
        "missing": "log missing",
        "unreadable": "log unreadable",
        "invalid": "log invalid",
        "changed": "log changed",
    }.get(m["log"], m["log"])


# ---- the whole report ----------------------------------------------------------------------
@dataclass
class ReportResult:
    out: Path
    tournament: str
    matches: int
    replays: int
    log_problems: dict[str, int]
    data: dict[str, Any] = field(repr=False, default_factory=dict)


def build_report(
    db: str | None, tournament: str | None, out: str | os.PathLike[str], *, replays: bool = True
) -> ReportResult:
    """Gather, analyse, write the replay pages (``OUT_replays/``) and the report; returns a summary."""
    from barbu.matchlog import FAULT_KINDS, verify
    from barbu.rules import ruleset_from_json
    from barbu.rules.scoring import MULTIPLIERS

    from arbiter.replay.model import CONTRACT_NAMES, load_replay
    from arbiter.tournament.ratings import MU
    from arbiter.tournament.storage import shown
    from arbiter.web.viewer import write_html

    out = Path(out)
    if out.is_dir():
        raise ReportError(f"--html {out} is a folder; give the report's file name, e.g. {out / 'report.html'}")
    try:  # before the work: a page that cannot be written is one clear line, at once
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot write the report {out}: {e.strerror or e}") from None
    g = gather(db, tournament)
    t = g.tournament
    try:
        rules_json = json.loads(t.rules)
        rules = ruleset_from_json(rules_json)
    except (ValueError, BarbuError) as e:
        raise ReportError(f"tournament {t.name!r} has rules the report cannot read: {e}") from None
    contracts = [c.value for c in rules.contracts]
    double_scoring = rules.double_scoring
    order = [s.name for s in g.standings]
    colours = {e: (PALETTE[i % len(PALETTE)], DASHES[(i // len(PALETTE)) % len(DASHES)]) for i, e in enumerate(order)}
    replay_dir = out.parent / f"{out.stem}_replays"
    analysis = Analysis()
    matches: list[dict[str, Any]] = []
    problems: dict[str, int] = {}
    written = 0
    for row in g.rows:
        seats = json.loads(row.seats)
        srs = g.seat_results.get(row.id, [])
        entry: dict[str, Any] = {
            "number": row.number,
            "key": row.key,
            "round": row.round,
            "game": row.game,
            "seats": seats,
            "totals": json.loads(row.totals),
            "places": json.loads(row.places),
            "status": row.status,
            "reason": row.reason if row.status != "complete" else None,
            "deals": row.deals,
            "wall_seconds": round(row.wall_seconds, 2),
            "forfeited": [sr.seat for sr in srs if sr.forfeited],
            "faults": sum(sr.faults for sr in srs),
            "fault_list": g.fault_details.get(row.id, []),
            "log": "ok",
            "log_note": "",
            "replay": None,
        }
        state = read_match_log(row.log_path, row.log_sha256, g.db_url, t.name)
        entry["log"], entry["log_note"] = state.status, state.note
        replay = verification = None
        objs: list[dict[str, Any]] = []
        if state.lines:
            if replays:  # the viewer needs the states; its pass over the log gives the lines too
                replay = load_replay(state.lines)
                verification = replay.verification
                objs = [e.line for e in replay.events]
            else:
                verification = verify(state.lines, on_line=partial(_keep_line, objs))
            if not verification.valid:
                entry["log"] = "invalid"
                entry["log_note"] = f"the log is invalid at line {verification.line}: {verification.error}"
            elif state.status == "ok":
                header = verification.header or {}
                logged = (
                    [s.get("entrant") for s in header.get("seats", [])] if isinstance(header.get("seats"), list) else []
                )
                if logged and logged != seats:
                    entry["log"] = "changed"
                    entry["log_note"] = f"the log's seats {logged} are not the recorded {seats}"
        if replay is not None:
            name = _safe_name(row.key) + ".html"
            try:
                write_html(replay, replay_dir / name)
            except OSError as e:
                raise ReportError(f"cannot write replay page {replay_dir / name}: {e.strerror or e}") from None
            entry["replay"] = quote(f"{replay_dir.name}/{name}")
            written += 1
        if entry["log"] == "ok" and row.status == "complete" and verification is not None and verification.complete:
            analyse_match(analysis, seats, deal_facts(objs, rules), double_scoring)
        if entry["log"] != "ok":
            problems[entry["log"]] = problems.get(entry["log"], 0) + 1
        matches.append(entry)

    fault_kinds = list(FAULT_KINDS) + sorted({k for _, k in g.faults} - set(FAULT_KINDS))
    by_entrant: dict[str, dict[str, int]] = {e: {} for e in order}
    for e, kind in g.faults:
        by_entrant.setdefault(e, {})[kind] = by_entrant.setdefault(e, {}).get(kind, 0) + 1
    series = rating_series(g.history, order, MU)
    x_max = max([p[0] for s in series.values() for p in s] + [0])
    labels = {c.value: name for c, name in CONTRACT_NAMES.items()}
    mult = MULTIPLIERS[double_scoring]
    data: dict[str, Any] = {
        "version": DATA_VERSION,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "database": shown(g.db_url),
        "tournament": {
            "name": t.name,
            "format": t.format,
            "rounds": t.rounds,
            "total_matches": t.total_matches,
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
        "standings": [s.to_json(t.format == "duplicate") for s in g.standings],
        "history": {"games": len({r.game for r in g.history}), "series": series},
        "contracts": {
            "order": contracts,
            "labels": {c: labels.get(c, c) for c in contracts},
            "all": contract_stats(analysis.contracts_all, order, contracts),
            "declarer": contract_stats(analysis.contracts_declarer, order, contracts),
            "multipliers": f"{mult[1]} / {mult[2]} ({double_scoring})",
        },
        "doubling": doubling_stats(analysis, order),
        "faults": {
            "kinds": fault_kinds,
            "by_entrant": by_entrant,
            "forfeits": {s.name: s.forfeits for s in g.standings},
        },
        "analysis": {"matches": analysis.matches, "deals": analysis.deals, "unsettled": analysis.unsettled},
        "matches": matches,
    }
    chart = chart_svg(series, order, colours, x_max)
    data["_chart"] = chart
    body = render_body(data, g.standings, colours)
    del data["_chart"]
    page = _fill(
        _static("report.html"),
        {
            "/*__CSS__*/": _static("report.css"),
            "/*__JS__*/": _static("report.js"),
            "__DATA__": _json_for_script(data),
            "__TITLE__": escape(f"Barbu tournament report — {t.name}"),
            "<!--__BODY__-->": body,
        },
    )
    try:
        write_text_atomic(out, page)
    except OSError as e:
        raise ReportError(f"cannot write the report {out}: {e.strerror or e}") from None
    return ReportResult(out, t.name, len(g.rows), written, problems, data)


def _keep_line(objs: list[dict[str, Any]], _number: int, obj: dict[str, Any], _state: Any) -> None:
    objs.append(obj)


def _rules_text(rules: dict[str, Any]) -> str:
    parts = []
    for k, v in rules.items():
        if isinstance(v, list):
            v = ", ".join(str(x) for x in v)
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b}" for a, b in v.items())
        parts.append(v if k == "preset" else f"{k}: {v}")
    return "; ".join(str(p) for p in parts) or "standard"


def _fill(template: str, values: dict[str, str]) -> str:
    for p in values:
        if template.count(p) != 1:
            raise RuntimeError(f"report template: placeholder {p} must occur exactly once")
    # one pass, so inserted text is never scanned for placeholders
    return re.sub("|".join(re.escape(p) for p in values), lambda m: values[m.group(0)], template)


# ---- the command -----------------------------------------------------------------------------
