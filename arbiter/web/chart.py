"""The axes shared by the pages' SVG charts (the report's ratings, the A/B test's paths): the
plot area, its scales and its ticks. The templates draw them with the ``axes`` macro of
``templates/_chart.html``; each chart adds its own lines."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field


def nice_step(span: float, target: int = 6) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``target`` ticks."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag: float = 10 ** math.floor(math.log10(raw))  # an int from 1 up: ticks print without '.0'
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


@dataclass
class Axes:
    """A chart's geometry (pixels; ``right`` and ``bottom`` are margins), the value range on the
    y axis and the last x value, and the ticks with their coordinates already formatted."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    lo: float
    hi: float
    x_max: int
    y_ticks: list[tuple[str, str, str]] = field(default_factory=list)  # (y, the label's y, label)
    x_ticks: list[tuple[str, int]] = field(default_factory=list)  # (x, label)

    @property
    def plot_right(self) -> int:
        return self.width - self.right

    @property
    def plot_bottom(self) -> int:
        return self.height - self.bottom

    def x(self, value: float) -> float:
        return self.left + (self.plot_right - self.left) * value / self.x_max

    def y(self, value: float) -> float:
        return self.top + (self.plot_bottom - self.top) * (self.hi - value) / (self.hi - self.lo)


def axes(
    lo: float,
    hi: float,
    x_max: int,
    size: tuple[int, int],
    margins: tuple[int, int, int, int],
    label: Callable[[float], str] = lambda v: f"{v:g}",
) -> Axes:
    """Axes for y values from ``lo`` to ``hi`` (widened to whole ticks, about six of them) and x
    from 0 to ``x_max`` (about eight ticks); ``margins`` are left, right, top, bottom."""
    step = nice_step(hi - lo, 6)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    a = Axes(*size, *margins, lo=lo, hi=hi, x_max=max(1, x_max))
    y = lo
    while y <= hi + step * 1e-6:
        a.y_ticks.append((f"{a.y(y):.1f}", f"{a.y(y) + 4:.1f}", label(round(y, 10))))
        y += step
    xstep = max(1, int(nice_step(a.x_max, 8)))
    a.x_ticks = [(f"{a.x(x):.1f}", x) for x in range(0, a.x_max + 1, xstep)]
    return a
