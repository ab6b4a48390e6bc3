"""The confidence interval of a mean (Student's t, exact quantile): one function for the
standings (arbiter.tournament.ratings) and the A/B test (arbiter.verdict). Standard library only."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist


def _t_central(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4, exact)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2 == 0:
        term = total = 1.0
        for k in range(1, (df - 2) // 2 + 1):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total
    if df == 1:
        return 2.0 * theta / math.pi
    term = total = math.cos(theta)
    for k in range(1, (df - 3) // 2 + 1):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + math.sin(theta) * total)


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """Quantile p (0.5 < p < 1) of Student's t: exact inversion to df 30, Cornish-Fisher above."""
    if not 0.5 < p < 1.0 or df < 1:
        raise ValueError(f"need 0.5 < p < 1 and df >= 1, got {p}, {df}")
    if df > 30:  # A&S 26.7.5, error below 1e-6 here
        z = NormalDist().inv_cdf(p)
        g1 = (z**3 + z) / 4
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
        g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
        return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
    target = 2.0 * p - 1.0
    low, high = 0.0, 1.0
    while _t_central(high, df) < target:
        low, high = high, 2.0 * high
    for _ in range(100):
        mid = 0.5 * (low + high)
        if _t_central(mid, df) < target:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def mean_ci(n: int, mean: float, sd: float, level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of a mean from n ≥ 2 values with sample SD ``sd``."""
    if n < 2:
        raise ValueError("a confidence interval needs at least 2 values")
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


@dataclass(frozen=True)
class Moments:
    """What a mean and its 95% interval need, kept one value at a time (Welford): the count, the
    sum (the mean is sum / count, as a pass over the values gives it) and the sum of squared
    deviations from the mean. Kept as data (the standings table), so a mean over a long history
    costs one step per new value, never a pass over the history."""

    n: int = 0
    total: float = 0.0
    m2: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    def add(self, x: float) -> Moments:
        delta = x - self.mean
        n, total = self.n + 1, self.total + x
        return Moments(n, total, self.m2 + delta * (x - total / n))

    def mean_ci(self) -> tuple[float | None, tuple[float, float] | None]:
        """The mean (None without values) and its 95% interval (None under 2 values)."""
        if self.n == 0:
            return None, None
        if self.n < 2:
            return self.mean, None
        return self.mean, mean_ci(self.n, self.mean, math.sqrt(max(self.m2, 0.0) / (self.n - 1)))

    def merge(self, other: Moments) -> Moments:
        """The moments of both sets of values together (Chan et al.'s pairwise update)."""
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        return Moments(n, self.total + other.total, self.m2 + other.m2 + delta * delta * self.n * other.n / n)

    def to_list(self) -> list[float]:
        return [self.n, self.total, self.m2]

    @staticmethod
    def from_list(values: list[float]) -> Moments:
        n, total, m2 = values
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"a count must be a whole number >= 0, not {n!r}")
        return Moments(n, float(total), float(m2))
