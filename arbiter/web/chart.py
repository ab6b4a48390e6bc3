"""Axis arithmetic shared by the pages' SVG charts (the report's ratings, the A/B test's paths)."""

from __future__ import annotations

import math


def nice_step(span: float, target: int = 6) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``target`` ticks."""
    if span <= 0:
        return 1.0
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag
