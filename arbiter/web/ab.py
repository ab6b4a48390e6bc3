"""The A/B test's page (``arbiter ab --html OUT``): one self-contained HTML file.

It shows the verdict, the LLR's path between its two bounds, the mean difference B − A with its
95% confidence interval narrowing set by set, and what each contract contributed, as inline SVG
(no script or font is fetched: the page works offline and from ``file://``). The data are the
JSON of ``arbiter ab --json`` with its history (:meth:`arbiter.verdict.ab.AbResult.to_json`),
plain values: this module does not import the verdict layer, its sibling. The data are also
embedded in the page (``<script id="ab-data">``) for tools and tests.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter.errors import ReportError
from arbiter.files import write_text_atomic
from arbiter.web.chart import Axes, axes, nice_step
from arbiter.web.html import json_for_script, render

__all__ = ["render_ab_page", "write_ab_page"]

VERDICTS = {
    "H1": ("B is better", "accepted H1: δ ≥ δ1", "good"),
    "H0": ("B is not better", "accepted H0: δ ≤ δ0", "bad"),
    "max reached": ("no verdict", "the budget ran out before a bound was crossed", "open"),
    "continue": ("no verdict yet", "the test goes on: run the same command again to continue", "open"),
}
FIXED = ("fixed count", "no test: the mean difference and its interval after the sets played", "open")
CONTRACT_LABELS = {
    "no_tricks": "no tricks",
    "no_hearts": "no hearts",
    "no_queens": "no queens",
    "no_kings_jacks": "no kings & jacks",
    "no_last_two": "no last two",
    "barbu": "barbu",
    "trumps": "trumps",
    "domino": "domino",
    "unattributed": "unattributed",
}


# ---- chart geometry ------------------------------------------------------------------------------
def _label(x: float) -> str:
    return f"{x:g}".replace("-", "−")


@dataclass
class Rule:
    """A horizontal line across the chart: a bound, δ0, δ1, zero."""

    y: str
    label: str
    kind: str  # css class: upper, lower, delta0, delta1, zero


@dataclass
class Plot:
    """One chart, coordinates already formatted: the template only places them."""

    axes: Axes
    rules: list[Rule] = field(default_factory=list)
    line: str = ""  # polyline points
    band: str = ""  # polygon points (the CI)
    dots: list[tuple[str, str, str]] = field(default_factory=list)  # (x, y, tooltip)
    end: tuple[str, str] | None = None
    decided: tuple[str, str] | None = None  # (x, label) of the set where the verdict came


def _frame(values: list[float], x_max: int) -> tuple[Plot, Any, Any]:
    lo, hi = (min(values), max(values)) if values else (-1.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    pad = (hi - lo) * 0.05
    a = axes(lo - pad, hi + pad, x_max, (760, 300), (56, 96, 14, 36), _label)
    return Plot(a), a.x, a.y


def llr_plot(history: list[list[Any]], lower: float, upper: float, decided_at: int | None) -> Plot:
    """The LLR after each set, between Wald's bounds."""
    points = [(h[0], h[1]) for h in history if h[1] is not None]
    x_max = max([n for n, _ in points] + [1])
    p, X, Y = _frame([v for _, v in points] + [lower, upper, 0.0], x_max)
    p.rules = [
        Rule(f"{Y(upper):.1f}", f"H1 {_label(round(upper, 2))}", "upper"),
        Rule(f"{Y(0.0):.1f}", "0", "zero"),
        Rule(f"{Y(lower):.1f}", f"H0 {_label(round(lower, 2))}", "lower"),
    ]
    p.line = " ".join(f"{X(n):.1f},{Y(v):.1f}" for n, v in [(0, 0.0), *points])
    p.dots = [(f"{X(n):.1f}", f"{Y(v):.1f}", f"after {n} set{'s' * (n != 1)}: LLR {v:+.3f}") for n, v in points]
    if points:
        p.end = (f"{X(points[-1][0]):.1f}", f"{Y(points[-1][1]):.1f}")
    if decided_at:
        p.decided = (f"{X(decided_at):.1f}", f"set {decided_at}")
    return p


def ci_plot(history: list[list[Any]], rules: list[tuple[float, str, str]], decided_at: int | None) -> Plot:
    """The mean difference after each set, with its 95% interval as a band. The first intervals
    (2 or 3 sets: Student's t is wide there) do not set the scale; the band is clipped."""
    x_max = max([h[0] for h in history] + [1])
    with_ci = [h for h in history if h[3] is not None and h[4] is not None]
    scaled = [h for h in with_ci if h[0] >= 4] or with_ci
    values = [h[2] for h in history] + [v for h in scaled for v in (h[3], h[4])] + [r[0] for r in rules]
    p, X, Y = _frame(values, x_max)
    p.rules = [Rule(f"{Y(v):.1f}", label, kind) for v, label, kind in rules]
    p.line = " ".join(f"{X(h[0]):.1f},{Y(h[2]):.1f}" for h in history)
    if with_ci:
        upper = [f"{X(h[0]):.1f},{Y(h[4]):.1f}" for h in with_ci]
        lower = [f"{X(h[0]):.1f},{Y(h[3]):.1f}" for h in reversed(with_ci)]
        p.band = " ".join(upper + lower)
    p.dots = [
        (
            f"{X(h[0]):.1f}",
            f"{Y(h[2]):.1f}",
            f"after {h[0]} set{'s' * (h[0] != 1)}: mean {h[2]:+.1f}"
            + (f", 95% CI {h[3]:+.1f} … {h[4]:+.1f}" if h[3] is not None and h[4] is not None else ""),
        )
        for h in history
    ]
    if history:
        p.end = (f"{X(history[-1][0]):.1f}", f"{Y(history[-1][2]):.1f}")
    if decided_at:
        p.decided = (f"{X(decided_at):.1f}", f"set {decided_at}")
    return p


@dataclass
class Bar:
    contract: str
    label: str
    value: float
    ci: list[float] | None
    x0: str
    x1: str  # the bar from x0 to x1 (x0 < x1)
    y: str
    whisker: tuple[str, str] | None
    text_x: str
    text: str


@dataclass
class Bars:
    width: int
    height: int
    left: int
    zero: str
    bars: list[Bar]
    ticks: list[tuple[str, str]]


def contract_bars(contracts: dict[str, float], cis: dict[str, list[float] | None]) -> Bars:
    """Each contract's contribution (points per match), with its 95% CI as a whisker."""
    order = sorted(contracts, key=lambda c: -contracts[c])
    W, L, R, row = 760, 150, 60, 28
    H = 30 + row * max(1, len(order))
    values = [0.0] + [contracts[c] for c in order] + [v for c in order for v in (cis.get(c) or [])]
    lo, hi = min(values), max(values)
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    step = nice_step(hi - lo, 6)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step

    def X(x: float) -> float:
        return L + (W - L - R) * (x - lo) / (hi - lo)

    bars = []
    for i, c in enumerate(order):
        v = contracts[c]
        ci = cis.get(c)
        y = 8 + i * row
        a, b = sorted((X(0.0), X(v)))
        bars.append(
            Bar(
                contract=c,
                label=CONTRACT_LABELS.get(c, c.replace("_", " ")),
                value=v,
                ci=list(ci) if ci else None,
                x0=f"{a:.1f}",
                x1=f"{max(b, a + 1):.1f}",
                y=f"{y:.1f}",
                whisker=(f"{X(ci[0]):.1f}", f"{X(ci[1]):.1f}") if ci else None,
                text_x=f"{W - R + 6:.1f}",
                text=f"{v:+.1f}".replace("-", "−"),
            )
        )
    ticks = []
    x = lo
    while x <= hi + step * 1e-6:
        ticks.append((f"{X(x):.1f}", _label(round(x, 10))))
        x += step
    return Bars(W, H, L, f"{X(0.0):.1f}", bars, ticks)


# ---- the page ------------------------------------------------------------------------------------
def _fmt(x: float | None, digits: int = 1, sign: bool = True) -> str:
    if x is None:
        return "–"
    return (f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}").replace("-", "−")


def _entrants(data: dict[str, Any]) -> list[tuple[str, str, dict[str, str] | None]]:
    """(name, command as written, what was started: ``{"command", "cwd"}`` or None) per entrant.

    As written, ``python sample_bots/heuristic_bot.py`` names a path relative to a folder the
    reader may not be in; ``launched`` (when the data carry it) says what ran, and where."""
    launched = data.get("launched") or {}
    out = []
    for name, command in (data.get("entrants") or {}).items():
        ran = launched.get(name)
        out.append((name, command, ran if isinstance(ran, dict) else None))
    return out


def render_ab_page(data: dict[str, Any]) -> str:
    """The page for one A/B test's data (``arbiter ab --json`` with ``history``)."""
    history = data.get("history") or []
    fixed = data.get("mode") == "fixed"
    verdict = FIXED if fixed else VERDICTS.get(data["verdict"], (data["verdict"], "", "open"))
    decided_at = data.get("decided_at") if data["verdict"] in ("H0", "H1") else None
    llr = None if fixed else llr_plot(history, data["lower"], data["upper"], decided_at)
    rules: list[tuple[float, str, str]] = [(0.0, "0", "zero")]
    if not fixed:
        d0, d1 = float(data["delta0"]), float(data["delta1"])
        rules = [r for r in rules if r[0] not in (d0, d1)]  # δ0 = 0 is the zero line itself
        rules += [(d0, f"δ0 {_label(d0)}", "delta0"), (d1, f"δ1 {_label(d1)}", "delta1")]
    ci = ci_plot(history, rules, decided_at)
    bars = contract_bars(data.get("contracts") or {}, data.get("contracts_ci95") or {})
    title = f"Barbu A/B test — {data['name']}"
    return render(
        "ab.html",
        d=data,
        entrants=_entrants(data),
        data_json=json_for_script(data),
        title=title,
        verdict=verdict,
        fixed=fixed,
        llr=llr,
        ci=ci,
        bars=bars,
        fmt=_fmt,
        labels=CONTRACT_LABELS,
        rules_text=json.dumps(data.get("rules"), ensure_ascii=False),
    )


def write_ab_page(out: str | os.PathLike[str], data: dict[str, Any]) -> Path:
    """Write the page to ``out`` (atomically); returns its path."""
    path = Path(out)
    if path.is_dir():
        raise ReportError(f"--html {path} is a folder; give the page's file name, e.g. {path / 'ab.html'}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, render_ab_page(data))
    except OSError as e:
        raise ReportError(f"cannot write the page {path}: {e.strerror or e}") from None
    return path
