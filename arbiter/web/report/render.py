"""The report page: ``templates/report.html`` filled with the report's data.

The template writes every element and escapes every value (:mod:`arbiter.web.html`); this module
only gives it what is not a plain lookup in the data: the rating chart's geometry, the number
formats of ``arbiter standings``, the heat map's colours and the match list's rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arbiter.web.chart import Axes, axes
from arbiter.web.html import json_for_script, render

if TYPE_CHECKING:  # pragma: no cover
    from arbiter.tournament.ratings import Standing

Colours = dict[str, tuple[str, str]]  # entrant -> (colour, dash pattern; "" for a solid line)

SHORT_LOG = {
    "missing": "log missing",
    "unreadable": "log unreadable",
    "invalid": "log invalid",
    "changed": "log changed",
}


# ---- formats -------------------------------------------------------------------------------
def num(x: float | None, digits: int = 1, sign: bool = False) -> str:
    """A number as the standings print it, with a true minus sign; "–" for none."""
    if x is None:
        return "–"
    text = f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
    return text.replace("-", "−")


def cls(x: float | None) -> str:
    """The class that colours a signed number: ``pos``, ``neg`` or none for zero."""
    return "" if x is None or abs(x) < 1e-9 else ("neg" if x < 0 else "pos")


def heat(value: float | None, values: Sequence[float]) -> str:
    """A cell's background: green above the column's mean, red below, by z-score ("" for none)."""
    if value is None or len(values) < 2:
        return ""
    mean = sum(values) / len(values)
    spread = max(abs(v - mean) for v in values)
    if spread < 1e-9:
        return ""
    z = max(-1.0, min(1.0, (value - mean) / spread))
    alpha = 0.10 + 0.38 * abs(z)
    rgb = "30,158,85" if z >= 0 else "214,39,40"
    return f"background:rgba({rgb},{alpha:.2f})"


def plural(n: int) -> str:
    return "s" if n != 1 else ""


# ---- the rating chart ------------------------------------------------------------------------
@dataclass
class ChartLine:
    entrant: str
    colour: str
    dash: str
    points: str  # "x,y x,y ..."
    band: str  # the polygon μ ± σ around the line: its uncertainty
    end: tuple[str, str] | None  # where the line ends (a dot), if it has a point
    mu: float  # the last μ, σ and the number of rated games, for its tooltip
    sigma: float
    games: int


@dataclass
class Chart:
    """The rating history, coordinates already formatted: the template only places them."""

    axes: Axes
    mu0: str | None  # y of the starting μ (TrueSkill's μ₀ = 25), where every entrant starts
    lines: list[ChartLine]  # the leader last, so it is drawn on top


def chart(series: dict[str, list[list[float]]], order: Sequence[str], colours: Colours, x_max: int) -> Chart:
    """The rating history: one polyline per entrant, μ after each rated game, in a band of ±σ;
    the dashed line at TrueSkill's starting μ₀ (always in range: everyone starts there)."""
    from arbiter.tournament.ratings import MU

    values = [p[1] for e in order for p in series.get(e, [])]
    ends = [series[e][-1] for e in order if len(series.get(e, [])) > 1]
    values += [p[1] + d * p[2] for p in ends for d in (-1, 1)]  # each line's band where it ends
    lo, hi = (min([*values, MU]), max([*values, MU])) if values else (20.0, 30.0)
    if hi - lo < 2:
        lo, hi = lo - 1, hi + 1
    a = axes(lo, hi, x_max, (760, 320), (46, 14, 14, 38))

    def y(value: float) -> float:  # a band's edge stays inside the plot
        return a.y(min(a.hi, max(a.lo, value)))

    lines = []
    for e in reversed(order):
        pts = series.get(e, [])
        colour, dash = colours[e]
        last = pts[-1] if pts else [0, 0, 0]
        upper = [f"{a.x(p[0]):.1f},{y(p[1] + p[2]):.1f}" for p in pts]
        lower = [f"{a.x(p[0]):.1f},{y(p[1] - p[2]):.1f}" for p in reversed(pts)]
        lines.append(
            ChartLine(
                entrant=e,
                colour=colour,
                dash=dash,
                points=" ".join(f"{a.x(p[0]):.1f},{a.y(p[1]):.1f}" for p in pts),
                band=" ".join(upper + lower) if len(pts) > 1 else "",
                end=(f"{a.x(last[0]):.1f}", f"{a.y(last[1]):.1f}") if pts else None,
                mu=last[1],
                sigma=last[2],
                games=len(pts) - 1,
            )
        )
    return Chart(a, f"{a.y(MU):.1f}" if a.lo <= MU <= a.hi else None, lines)


# ---- the match list --------------------------------------------------------------------------
@dataclass
class SeatCell:
    name: str
    total: int | None
    win: bool
    forfeited: bool


@dataclass
class MatchRow:
    """One line of the match list; ``m`` is the match's entry in the report's data."""

    m: dict[str, Any]
    seats: list[SeatCell]
    entrants: str  # JSON list, for the filter
    fault_tip: str
    short_log: str


def match_row(m: dict[str, Any]) -> MatchRow:
    seats = []
    for s in range(4):
        place = m["places"][s] if s < len(m["places"]) else None
        seats.append(
            SeatCell(
                name=m["seats"][s] if s < len(m["seats"]) else "?",
                total=m["totals"][s] if s < len(m["totals"]) else None,
                win=place == 1 and m["status"] == "complete",
                forfeited=s in m["forfeited"],
            )
        )
    tip = "\n".join(
        f"deal {f['deal']}, seat {f['seat']}: {f['kind']} ({f['detail']}) → {f['action']}" for f in m["fault_list"]
    )
    return MatchRow(m, seats, json.dumps(sorted(set(m["seats"]))), tip, SHORT_LOG.get(m["log"], m["log"]))


# ---- the page --------------------------------------------------------------------------------
def render_page(data: dict[str, Any], standings: Sequence[Standing], colours: Colours, chart: Chart, title: str) -> str:
    """The whole page; ``data`` is also embedded, as it is, for tools and tests."""
    order = data["entrants"]
    kinds = data["faults"]["kinds"]
    by_entrant = data["faults"]["by_entrant"]
    seen = {k for counts in by_entrant.values() for k, n in counts.items() if n}

    def column(stats: dict[str, dict[str, dict[str, Any]]], contract: str) -> list[float]:
        """The entrants' means for one contract: what a heat-map cell is compared with."""
        return [stats[e][contract]["mean"] for e in order if stats[e][contract]["mean"] is not None]

    return render(
        "report.html",
        title=title,
        data_json=json_for_script(data),
        d=data,
        t=data["tournament"],
        order=order,
        standings=standings,
        provisional_matches=data["tournament"]["provisional"],
        colours=colours,
        chart=chart,
        total_faults=sum(sum(counts.values()) for counts in by_entrant.values()),
        problems=sum(1 for m in data["matches"] if m["log"] != "ok"),
        complete=sum(1 for m in data["matches"] if m["status"] == "complete"),
        wall=sum(m["wall_seconds"] for m in data["matches"]),
        fault_kinds=[k for k in kinds if k in seen],
        unseen_kinds=[k for k in kinds if k not in seen],
        matches=[match_row(m) for m in data["matches"]],
        num=num,
        cls=cls,
        heat=heat,
        column=column,
        plural=plural,
    )
