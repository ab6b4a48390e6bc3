"""Sequential probability ratio test on the mean of per-deal-set score differences (B − A).

H0: δ ≤ δ0 against H1: δ ≥ δ1, δ in points per match. Wald's bounds A = ln(β/(1−α)) and
B = ln((1−β)/α); the test stops at the first crossing after ``min_sets`` sets.

The variance is estimated as the test goes, with the normal approximations of fishtest
(official-stockfish/fishtest, server/fishtest/stats/LLRcalc.py, by Michel Van den Bergh):

* ``"linear"``: ``LLR_alt2``, n·(δ1−δ0)·(2x̄−δ0−δ1)/(2s²), from "GSPRT approximation"
  (https://www.cantate.be/Fishtest/GSPRT_approximation.pdf). fishtest uses it over thousands of
  games; over tens of sets the 1/s² term blows up whenever s² comes out small, and false
  positives reached 7% at α = 5% (bench/sprt.py).
* ``"profile"``: ``LLR_alt``, (n/2)·ln[(s² + (x̄−δ0)²)/(s² + (x̄−δ1)²)], the Gaussian likelihood
  ratio with the variance fitted under each hypothesis; the form of fishtest's normalized SPRT
  (``LLR_normalized_alt``, section 4.2 of https://www.cantate.be/Fishtest/normalized_elo_practical.pdf).
  It holds α and β, but a difference far beyond δ1 fits neither point: heuristic against random
  (1054 points, SD 196) took 106 sets instead of 8.
* ``"mixture"`` (default): the profile likelihood of a weighted set of points, δ1 (weight
  0.95) and δ1 + k·(δ1−δ0) for k = 2^j − 1 (weight 0.05/(j(j+1)), j ≥ 1) against the mirror image
  below δ0. A mixture of likelihoods is still a likelihood ratio against the null point
  (Robbins' method of mixtures), so Wald's bounds keep α and β, and a rout is decided at
  ``min_sets``.

In the LLR, s² = SS/(n − 2), SS the sum of squared deviations: the evidence goes as 1/s², which
the sample variance (n − 1) overstates over the first tens of sets (α measured 5.2-5.7%);
(n − 3)/SS, the unbiased estimate of 1/σ², overcorrects (α 4.0-4.2%, a rout needs an extra set).
The CI uses the sample variance (n − 1). Left-skewed differences still lift α a little (5.7% at
the skew measured on real play, β 4.0%): the mean and the variance of a skewed stream move together.
Expected sample numbers from theory are Wald's approximations for a normal mean with known σ.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, NamedTuple

from arbiter.stats import mean_ci, t_quantile  # the one confidence interval, shared with the standings

__all__ = [
    "DEFAULT_MIN_SETS",
    "LLR_DDOF",
    "UNATTRIBUTED",
    "FixedConfig",
    "LlrModel",
    "Observation",
    "Point",
    "SprtConfig",
    "SprtState",
    "Verdict",
    "llr",
    "llr_linear",
    "llr_mixture",
    "llr_profile",
    "mean_ci",
    "t_quantile",
    "wald_asn",
    "wald_oc",
]

DEFAULT_MIN_SETS = 8
"""No verdict before this many sets: below it s² is too noisy to scale the evidence by."""

LLR_DDOF = 2
"""s² = SS/max(n − LLR_DDOF, 1) in the LLR (see the module doc for why not n − 1)."""

UNATTRIBUTED = "unattributed"
"""Contract key for sets fed without a breakdown, so the contributions still add up to the mean."""

VARIANCE_FLOOR = 1e-3
"""s is floored at this fraction of δ1 − δ0: a stream with no spread gives a finite LLR."""

MIXTURE_FAR_WEIGHT = 0.05
MIXTURE_POINTS = tuple((2**j - 1, MIXTURE_FAR_WEIGHT / (j * (j + 1))) for j in range(1, 61))
"""Far points of the mixture as (k, weight): δ1 + k·(δ1 − δ0) and δ0 − k·(δ1 − δ0), k = 2^j − 1,
weight ε/(j(j+1)), which sums to ε (MIXTURE_FAR_WEIGHT) and favours the nearer points."""

LlrModel = Literal["mixture", "profile", "linear"]
Observation = tuple[float, Mapping[str, float] | None]
"""One deal set: the difference B − A in points per match and optionally its per-contract split."""


class Verdict(StrEnum):
    CONTINUE = "continue"
    H0 = "H0"  # B is not better by δ1: δ ≤ δ0 accepted
    H1 = "H1"  # B is better: δ ≥ δ1 accepted
    MAX_REACHED = "max reached"  # the set budget ran out (fixed-count mode: the count is played)


@dataclass(frozen=True)
class SprtConfig:
    """The test's design. ``max_sets`` None: no budget, the test runs until a bound is crossed."""

    delta0: float
    delta1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_sets: int = DEFAULT_MIN_SETS
    max_sets: int | None = None
    model: LlrModel = "mixture"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.delta0) and math.isfinite(self.delta1) and self.delta0 < self.delta1):
            raise ValueError(f"need finite delta0 < delta1, got {self.delta0}, {self.delta1}")
        if not (0.0 < self.alpha < 1.0 and 0.0 < self.beta < 1.0 and self.alpha + self.beta < 1.0):
            raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1, got {self.alpha}, {self.beta}")
        if self.min_sets < 2:
            raise ValueError(f"min_sets must be at least 2 (a variance needs 2 sets), got {self.min_sets}")
        if self.max_sets is not None and self.max_sets < 1:
            raise ValueError(f"max_sets must be positive, got {self.max_sets}")
        if self.model not in ("mixture", "profile", "linear"):
            raise ValueError(f"unknown LLR model {self.model!r}")

    @property
    def lower(self) -> float:
        """Wald's lower bound A = ln(β/(1−α)): at or below it H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Wald's upper bound B = ln((1−β)/α): at or above it H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True)
class FixedConfig:
    """Fixed-count mode: no test, just the mean and its CI after ``sets`` sets."""

    sets: int

    def __post_init__(self) -> None:
        if self.sets < 1:
            raise ValueError(f"sets must be positive, got {self.sets}")


class Point(NamedTuple):
    """One step of the run, for plotting: the LLR (None in fixed-count mode) and the 95% CI."""

    n: int
    llr: float | None
    mean: float
    ci_low: float | None
    ci_high: float | None


class SprtState(NamedTuple):
    """The test after ``n`` sets; ``add`` returns the next state and leaves this one unchanged.

    A NamedTuple rather than a frozen dataclass: simulations create millions of them, and a
    tuple is built several times faster.

    The first bound crossed (or the budget reached) is final: sets that finish afterwards, such
    as matches still in flight, enter the estimate but cannot reverse the verdict. Replaying
    the stored sets in their order through ``extend`` rebuilds the same state (resume).
    """

    config: SprtConfig | FixedConfig
    n: int = 0
    mean: float = 0.0
    ss: float = 0.0  # sum of squared deviations from the mean (Welford)
    contract_sums: tuple[tuple[str, float], ...] = ()
    decision: Verdict | None = None
    decided_at: int | None = None
    history: tuple[Point, ...] = ()

    def __repr__(self) -> str:
        return f"SprtState(n={self.n}, mean={self.mean!r}, llr={self.llr!r}, verdict={self.verdict.value!r})"

    @classmethod
    def start(cls, config: SprtConfig | FixedConfig) -> SprtState:
        """The state before the first set."""
        return cls(config)

    def add(self, diff: float, contracts: Mapping[str, float] | None = None) -> SprtState:
        """Feed one set's difference B − A; ``contracts`` must sum to ``diff`` when given."""
        x = float(diff)
        if not math.isfinite(x):
            raise ValueError(f"difference must be finite, got {diff!r}")
        sums = self._contract_sums_with(x, contracts)
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        ss = max(0.0, self.ss + delta * (x - mean))
        config = self.config
        now = _llr_of(config, n, mean, ss)
        low = high = None
        if n >= 2:
            low, high = mean_ci(n, mean, math.sqrt(ss / (n - 1)))
        decision, decided_at = self.decision, self.decided_at
        if decision is None:
            decision = _decide(config, n, now)
            decided_at = n if decision is not None else None
        point = Point(n, now, mean, low, high)
        return SprtState(config, n, mean, ss, sums, decision, decided_at, self.history + (point,))

    def _contract_sums_with(self, x: float, contracts: Mapping[str, float] | None) -> tuple[tuple[str, float], ...]:
        if contracts is None:
            if not self.contract_sums:
                return ((UNATTRIBUTED, x),)
            if len(self.contract_sums) == 1 and self.contract_sums[0][0] == UNATTRIBUTED:
                return ((UNATTRIBUTED, self.contract_sums[0][1] + x),)
            contracts = {UNATTRIBUTED: x}
        else:
            total = math.fsum(contracts.values())
            if not math.isclose(total, x, rel_tol=1e-9, abs_tol=1e-6):
                raise ValueError(f"per-contract differences sum to {total}, not to the set's {x}")
        sums = dict(self.contract_sums)
        for name, value in contracts.items():
            sums[name] = sums.get(name, 0.0) + float(value)
        return tuple(sums.items())

    def extend(self, observations: Iterable[float | Observation]) -> SprtState:
        """Feed several sets in order: plain differences or (difference, contracts) pairs."""
        state = self
        for item in observations:
            state = state.add(*item) if isinstance(item, tuple) else state.add(item)
        return state

    def run(self, stream: Iterable[float]) -> SprtState:
        """Feed from ``stream`` until a verdict; for simulations (the stream may be endless)."""
        state = self
        for x in stream:
            if state.done:
                break
            state = state.add(x)
        return state

    @property
    def verdict(self) -> Verdict:
        return self.decision or Verdict.CONTINUE

    @property
    def done(self) -> bool:
        return self.decision is not None

    @property
    def variance(self) -> float | None:
        """Sample variance (n − 1) of the differences; None below 2 sets."""
        return self.ss / (self.n - 1) if self.n >= 2 else None

    @property
    def sd(self) -> float | None:
        var = self.variance
        return math.sqrt(var) if var is not None else None

    @property
    def llr(self) -> float | None:
        """The log-likelihood ratio now: 0.0 below 2 sets, None in fixed-count mode."""
        return _llr_of(self.config, self.n, self.mean, self.ss)

    @property
    def bounds(self) -> tuple[float, float] | None:
        """(lower, upper) = (A, B); None in fixed-count mode."""
        config = self.config
        return None if isinstance(config, FixedConfig) else (config.lower, config.upper)

    @property
    def ci95(self) -> tuple[float, float] | None:
        """95% CI of the mean difference, Student's t with n − 1 df; None below 2 sets."""
        sd = self.sd
        return None if sd is None else mean_ci(self.n, self.mean, sd)

    def contract_means(self) -> dict[str, float]:
        """Each contract's contribution to the mean difference; they add up to ``mean``."""
        if self.n == 0:
            return {}
        return {name: total / self.n for name, total in self.contract_sums}

    def summary(self, with_history: bool = False) -> dict[str, Any]:
        """JSON-ready report of the state (``--json``)."""
        config = self.config
        ci = self.ci95
        out: dict[str, Any] = {
            "verdict": self.verdict.value,
            "decided_at": self.decided_at,
            "sets": self.n,
            "mean": self.mean if self.n else None,
            "sd": self.sd,
            "ci95": list(ci) if ci is not None else None,
            "ci_method": "student-t",
            "contracts": self.contract_means(),
        }
        if isinstance(config, FixedConfig):
            out["mode"] = "fixed"
            out["target_sets"] = config.sets
        else:
            out.update(
                mode="sprt",
                llr=self.llr,
                lower=config.lower,
                upper=config.upper,
                delta0=config.delta0,
                delta1=config.delta1,
                alpha=config.alpha,
                beta=config.beta,
                min_sets=config.min_sets,
                max_sets=config.max_sets,
                model=config.model,
            )
        if with_history:
            out["history"] = [[p.n, p.llr, p.mean, p.ci_low, p.ci_high] for p in self.history]
        return out


def _llr_of(config: SprtConfig | FixedConfig, n: int, mean: float, ss: float) -> float | None:
    if isinstance(config, FixedConfig):
        return None
    if n < 2:
        return 0.0
    return _LLR_MODELS[config.model](n, mean, ss / max(n - LLR_DDOF, 1), config.delta0, config.delta1)


def _decide(config: SprtConfig | FixedConfig, n: int, now: float | None) -> Verdict | None:
    if isinstance(config, FixedConfig):
        return Verdict.MAX_REACHED if n >= config.sets else None
    if now is not None and n >= config.min_sets:
        if now >= config.upper:
            return Verdict.H1
        if now <= config.lower:
            return Verdict.H0
    if config.max_sets is not None and n >= config.max_sets:
        return Verdict.MAX_REACHED
    return None


# --- the log-likelihood ratio ---------------------------------------------------------------


def _floored(variance: float, delta0: float, delta1: float) -> float:
    return max(variance, (VARIANCE_FLOOR * (delta1 - delta0)) ** 2)


def llr_linear(n: int, mean: float, variance: float, delta0: float, delta1: float) -> float:
    """fishtest's LLR_alt2: n·(δ1−δ0)·(2x̄−δ0−δ1)/(2s²)."""
    var = _floored(variance, delta0, delta1)
    return n * (delta1 - delta0) * (2.0 * mean - delta0 - delta1) / (2.0 * var)


def llr_profile(n: int, mean: float, variance: float, delta0: float, delta1: float) -> float:
    """fishtest's LLR_alt: (n/2)·ln[(s² + (x̄−δ0)²)/(s² + (x̄−δ1)²)]."""
    var = _floored(variance, delta0, delta1)
    return 0.5 * n * math.log((var + (mean - delta0) ** 2) / (var + (mean - delta1) ** 2))


def _mixture_side(half_n: float, var: float, gap: float, width: float) -> float:
    """ln Σ w_k·(s² + (gap − k·width)²)^(−n/2), relative terms only where they count."""
    base = -half_n * math.log(var + gap * gap)
    total = 1.0 - MIXTURE_FAR_WEIGHT
    for k, weight in MIXTURE_POINTS:
        e = gap - k * width
        rel = -half_n * math.log(var + e * e) - base
        if rel > -36.0:  # weight·e^-36 < 1e-17: nothing next to the main term's 0.95
            total += weight * math.exp(rel)
        elif e < 0.0:
            break  # the points left are farther still
    return base + math.log(total)


def llr_mixture(n: int, mean: float, variance: float, delta0: float, delta1: float) -> float:
    """Profile likelihood mixed over δ1 + k·(δ1−δ0) against δ0 − k·(δ1−δ0) (weights in the module doc)."""
    width = delta1 - delta0
    var = max(variance, (VARIANCE_FLOOR * width) ** 2)
    return _mixture_side(0.5 * n, var, mean - delta1, width) - _mixture_side(0.5 * n, var, delta0 - mean, width)


_LLR_MODELS = {"mixture": llr_mixture, "profile": llr_profile, "linear": llr_linear}


def llr(n: int, mean: float, variance: float, delta0: float, delta1: float, model: LlrModel = "mixture") -> float:
    """The LLR of ``model`` for n sets with mean x̄ and variance estimate s² (SprtState: SS/(n − 3))."""
    return _LLR_MODELS[model](n, mean, variance, delta0, delta1)


# --- theory: Wald's approximations for a normal mean with known sigma ------------------------


def wald_oc(config: SprtConfig, delta: float) -> float:
    """Probability of accepting H0 when the true mean is ``delta`` (no overshoot; σ drops out)."""
    a, b = config.lower, config.upper
    h = (config.delta0 + config.delta1 - 2.0 * delta) / (config.delta1 - config.delta0)
    if abs(h) < 1e-9:
        return b / (b - a)
    if h > 0:  # the forms below keep every exponent negative
        return -math.expm1(-h * b) / -math.expm1(h * (a - b))
    return (math.exp(h * (b - a)) - math.exp(-h * a)) / math.expm1(h * (b - a))


def wald_asn(config: SprtConfig, delta: float, sigma: float) -> float:
    """Wald's expected number of sets at true mean ``delta`` and per-set SD ``sigma``.

    E[N] = (L·A + (1−L)·B)/E[Z] with Z = (δ1−δ0)(2X−δ0−δ1)/(2σ²) the per-set LLR, and
    −A·B/Var(Z) at the midpoint. Ignores overshoot, min_sets and max_sets: a lower estimate.
    """
    if sigma <= 0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    a, b = config.lower, config.upper
    width = config.delta1 - config.delta0
    drift = width * (delta - (config.delta0 + config.delta1) / 2.0) / sigma**2
    if abs(delta - (config.delta0 + config.delta1) / 2.0) < 1e-6 * width:  # the limit, no cancellation
        return -a * b / (width**2 / sigma**2)
    oc = wald_oc(config, delta)
    return (oc * a + (1.0 - oc) * b) / drift
