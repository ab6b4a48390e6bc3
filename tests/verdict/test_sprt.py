"""The sequential test of arbiter.verdict, proved on simulated streams and on edge cases.

The simulations feed SprtState itself (no cards): streams with a known mean and SD 96 per set,
the spread measured per duplicate set in issue 14. "Card-like" streams have the shape measured on
392 sets of real play (heuristic against a heuristic playing 10% random moves, heuristic field):
skewness −0.25, excess kurtosis 0.3; here a normal plus a reversed exponential, skewness −0.25,
excess kurtosis 0.375. Seeds are fixed, so the figures are the same on every run. The allowance
is 2.5 binomial SEs over the nominal rate; bench/sprt.py measures with 4000 runs (card-like α 5.7%).
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import statistics
from collections.abc import Callable

import pytest

from arbiter.verdict.sprt import (
    UNATTRIBUTED,
    FixedConfig,
    SprtConfig,
    SprtState,
    Verdict,
    llr_linear,
    llr_mixture,
    llr_profile,
    mean_ci,
    t_quantile,
    wald_asn,
    wald_oc,
)

SD = 96.0
RUNS = 2000
CONFIG = SprtConfig(0.0, 30.0, alpha=0.05, beta=0.05, max_sets=5000)

Draw = Callable[[random.Random], float]


def normal(mean: float, sd: float = SD) -> Draw:
    return lambda rng: rng.gauss(mean, sd)


def card_like(mean: float, sd: float = SD, skew: float = -0.25) -> Draw:
    """a·Z − b·(E − 1), Z normal, E exponential: mean 0, SD 1, skewness −2b³, excess kurtosis 6b⁴."""
    b = (abs(skew) / 2.0) ** (1.0 / 3.0)
    a = math.sqrt(1.0 - b * b)
    sign = -1.0 if skew < 0 else 1.0
    return lambda rng: mean + sd * (a * rng.gauss(0.0, 1.0) + sign * b * (rng.expovariate(1.0) - 1.0))


def simulate(config: SprtConfig, draw: Draw, runs: int, seed: int) -> tuple[float, float, int]:
    """Fraction of runs accepting H1, mean sets per run, runs that hit max_sets."""
    rng = random.Random(seed)
    h1 = sets = capped = 0
    for _ in range(runs):
        state = SprtState.start(config).run(iter(lambda: draw(rng), None))
        h1 += state.verdict is Verdict.H1
        capped += state.verdict is Verdict.MAX_REACHED
        sets += state.n
    return h1 / runs, sets / runs, capped


def allowed(rate: float, runs: int) -> float:
    """The nominal rate plus 2.5 binomial standard errors of a simulation of ``runs``."""
    return rate + 2.5 * math.sqrt(rate * (1.0 - rate) / runs)


# --- error rates and sample numbers on simulated streams ---------------------------------------


@pytest.mark.parametrize("shape", [normal, card_like], ids=["normal", "card-like"])
def test_false_positive_rate_at_delta0(shape: Callable[[float], Draw]) -> None:
    accepted_h1, asn, capped = simulate(CONFIG, shape(CONFIG.delta0), RUNS, seed=14)
    theory = wald_asn(CONFIG, CONFIG.delta0, SD)
    assert capped == 0
    assert accepted_h1 <= allowed(CONFIG.alpha, RUNS), f"alpha measured {accepted_h1:.3f}"
    assert accepted_h1 >= CONFIG.alpha / 3, f"alpha measured {accepted_h1:.3f}: far too cautious"
    assert abs(asn / theory - 1.0) <= 0.25, f"ASN {asn:.1f} vs {theory:.1f} from theory"


@pytest.mark.parametrize("shape", [normal, card_like], ids=["normal", "card-like"])
def test_false_negative_rate_at_delta1(shape: Callable[[float], Draw]) -> None:
    accepted_h1, asn, capped = simulate(CONFIG, shape(CONFIG.delta1), RUNS, seed=41)
    theory = wald_asn(CONFIG, CONFIG.delta1, SD)
    assert capped == 0
    assert 1.0 - accepted_h1 <= allowed(CONFIG.beta, RUNS), f"beta measured {1.0 - accepted_h1:.3f}"
    assert 1.0 - accepted_h1 >= CONFIG.beta / 3, f"beta measured {1.0 - accepted_h1:.3f}: far too cautious"
    assert abs(asn / theory - 1.0) <= 0.25, f"ASN {asn:.1f} vs {theory:.1f} from theory"


def test_a_rout_is_decided_at_min_sets() -> None:
    """Heuristic against random measured −1054 points per match, SD 196 per set: no need for 50 sets."""
    for mean, verdict in ((1054.0, Verdict.H1), (-1054.0, Verdict.H0)):
        rng = random.Random(7)
        sets = []
        for _ in range(200):
            state = SprtState.start(CONFIG).run(iter(lambda: rng.gauss(mean, 196.0), None))  # noqa: B023
            assert state.verdict is verdict
            sets.append(state.n)
        assert max(sets) <= CONFIG.min_sets + 3 and statistics.fmean(sets) < CONFIG.min_sets + 0.2


def test_the_profile_llr_alone_is_slow_on_a_rout() -> None:
    """Why the mixture: fitted to δ1 alone, a huge difference fits neither point well."""
    n, mean, var = CONFIG.min_sets, 1054.0, 196.0**2
    assert llr_profile(n, mean, var, 0.0, 30.0) < 1.0 < CONFIG.upper < llr_mixture(n, mean, var, 0.0, 30.0)
    assert llr_linear(n, mean, var, 0.0, 30.0) > CONFIG.upper


def test_the_three_llrs_agree_near_the_hypotheses_with_many_sets() -> None:
    for mean in (0.0, 15.0, 30.0):
        a, b, c = (f(400, mean, SD**2, 0.0, 30.0) for f in (llr_linear, llr_profile, llr_mixture))
        assert b == pytest.approx(a, abs=0.05 * abs(a) + 0.1)
        assert c == pytest.approx(b, abs=0.1)


# --- edge cases -------------------------------------------------------------------------------


def test_nothing_fed_and_one_set() -> None:
    state = SprtState.start(CONFIG)
    assert (state.n, state.llr, state.verdict, state.done) == (0, 0.0, Verdict.CONTINUE, False)
    assert state.variance is None and state.sd is None and state.ci95 is None
    assert state.contract_means() == {} and state.history == ()
    one = state.add(500.0)
    assert (one.n, one.mean, one.llr, one.verdict) == (1, 500.0, 0.0, Verdict.CONTINUE)
    assert one.variance is None and one.ci95 is None
    assert one.history[-1] == (1, 0.0, 500.0, None, None)
    json.dumps(state.summary(with_history=True))
    json.dumps(one.summary(with_history=True))


def test_no_verdict_before_min_sets_however_strong() -> None:
    state = SprtState.start(CONFIG)
    for i in range(CONFIG.min_sets - 1):
        state = state.add(1000.0 + i)
        assert state.verdict is Verdict.CONTINUE
    assert state.llr is not None and state.llr > CONFIG.upper
    state = state.add(1000.0)
    assert state.verdict is Verdict.H1 and state.decided_at == CONFIG.min_sets


@pytest.mark.parametrize(
    ("value", "verdict"),
    [(0.0, Verdict.H0), (-40.0, Verdict.H0), (30.0, Verdict.H1), (60.0, Verdict.H1), (1e6, Verdict.H1)],
)
def test_a_constant_stream_has_a_finite_llr_and_a_verdict_at_min_sets(value: float, verdict: Verdict) -> None:
    """No spread at all (a deterministic bot against itself): no division by zero."""
    state = SprtState.start(CONFIG).extend([value] * CONFIG.min_sets)
    assert state.variance == 0.0 and state.ci95 == (value, value)
    assert state.llr is not None and math.isfinite(state.llr)
    assert state.verdict is verdict and state.decided_at == CONFIG.min_sets


def test_a_constant_stream_at_the_midpoint_runs_to_the_budget() -> None:
    config = dataclasses.replace(CONFIG, max_sets=20)
    state = SprtState.start(config).extend([15.0] * 25)
    assert state.llr == pytest.approx(0.0, abs=1e-9)
    assert state.verdict is Verdict.MAX_REACHED and state.decided_at == 20 and state.n == 25


def test_negative_differences_accept_h0_and_keep_their_sign() -> None:
    rng = random.Random(3)
    diffs = [rng.gauss(-80.0, SD) for _ in range(200)]
    state = SprtState.start(CONFIG).run(iter(diffs))
    assert state.verdict is Verdict.H0 and state.llr is not None and state.llr <= CONFIG.lower
    seen = diffs[: state.n]
    assert state.mean == pytest.approx(statistics.fmean(seen))
    assert state.mean < 0 and state.ci95 is not None and state.ci95[0] < state.mean < state.ci95[1]
    assert state.contract_means() == {UNATTRIBUTED: pytest.approx(state.mean)}


def test_per_contract_contributions_add_up_to_the_mean() -> None:
    rng = random.Random(5)
    names = ["no_tricks", "no_hearts", "no_queens", "barbu", "no_last_two", "trumps", "domino"]
    state = SprtState.start(CONFIG)
    feed: list[tuple[float, dict[str, float] | None]] = []
    for i in range(40):
        split = {c: rng.gauss(-5.0, 30.0) for c in rng.sample(names, 5)}
        if i % 10 == 9:
            feed.append((rng.gauss(0.0, SD), None))  # a set stored without its breakdown
        else:
            feed.append((math.fsum(split.values()), split))
    for diff, split in feed:
        state = state.add(diff, split)
    means = state.contract_means()
    assert set(means) <= set(names) | {UNATTRIBUTED} and UNATTRIBUTED in means
    assert math.fsum(means.values()) == pytest.approx(state.mean, abs=1e-9)
    for name in names:
        expected = sum(split.get(name, 0.0) for _, split in feed if split) / len(feed)
        assert means.get(name, 0.0) == pytest.approx(expected, abs=1e-9)
    assert SprtState.start(CONFIG).extend(feed) == state  # replaying the stored sets resumes


def test_a_breakdown_that_does_not_add_up_is_refused() -> None:
    state = SprtState.start(CONFIG)
    with pytest.raises(ValueError, match="sum to"):
        state.add(10.0, {"barbu": -20.0, "domino": 25.0})
    with pytest.raises(ValueError, match="finite"):
        state.add(math.nan)


def test_states_are_immutable_and_the_verdict_is_final() -> None:
    start = SprtState.start(CONFIG)
    decided = start.extend([200.0, 210.0, 190.0, 205.0, 195.0, 200.0, 202.0, 198.0])
    assert start.n == 0 and decided.verdict is Verdict.H1 and decided.decided_at == 8
    with pytest.raises(AttributeError):
        decided.n = 3  # type: ignore[misc]
    later = decided.extend([-500.0] * 30)  # matches still in flight when the bound was crossed
    assert later.verdict is Verdict.H1 and later.decided_at == 8
    assert later.n == 38 and later.mean < 0 and len(later.history) == 38


def test_history_records_llr_mean_and_ci_at_every_set() -> None:
    rng = random.Random(9)
    state = SprtState.start(CONFIG).extend(rng.gauss(10.0, SD) for _ in range(30))
    assert [p.n for p in state.history] == list(range(1, 31))
    last = state.history[-1]
    assert (last.llr, last.mean, (last.ci_low, last.ci_high)) == (state.llr, state.mean, state.ci95)
    widths = [p.ci_high - p.ci_low for p in state.history if p.ci_high is not None and p.ci_low is not None]
    assert len(widths) == 29 and widths[-1] < widths[0]


def test_the_budget_ends_an_undecided_test() -> None:
    config = SprtConfig(0.0, 30.0, max_sets=10)
    rng = random.Random(1)
    state = SprtState.start(config).run(iter(lambda: rng.gauss(15.0, 10 * SD), None))
    assert state.verdict is Verdict.MAX_REACHED and state.n == 10


def test_fixed_count_mode_is_a_mean_and_a_t_interval() -> None:
    rng = random.Random(2)
    diffs = [rng.gauss(20.0, SD) for _ in range(12)]
    state = SprtState.start(FixedConfig(sets=10)).run(iter(diffs))
    assert state.n == 10 and state.verdict is Verdict.MAX_REACHED
    assert state.llr is None and state.bounds is None and state.history[-1].llr is None
    assert state.mean == pytest.approx(statistics.fmean(diffs[:10]))
    assert state.sd == pytest.approx(statistics.stdev(diffs[:10]))
    half = 2.262157 * statistics.stdev(diffs[:10]) / math.sqrt(10)  # t(0.975, 9)
    assert state.ci95 == pytest.approx((state.mean - half, state.mean + half), abs=1e-3)
    summary = state.summary()
    assert summary["mode"] == "fixed" and summary["verdict"] == "max reached"
    json.dumps(summary)


def test_summary_of_a_test() -> None:
    state = SprtState.start(CONFIG).extend([(12.0, {"barbu": 20.0, "domino": -8.0}), (-4.0, None)])
    summary = state.summary(with_history=True)
    assert summary["mode"] == "sprt" and summary["verdict"] == "continue" and summary["sets"] == 2
    assert (summary["lower"], summary["upper"]) == state.bounds == (CONFIG.lower, CONFIG.upper)
    assert summary["contracts"] == {"barbu": 10.0, "domino": -4.0, UNATTRIBUTED: -2.0}
    assert len(summary["history"]) == 2
    json.dumps(summary)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"delta0": 10.0, "delta1": 10.0},
        {"delta0": 0.0, "delta1": math.inf},
        {"delta0": 0.0, "delta1": 5.0, "alpha": 0.0},
        {"delta0": 0.0, "delta1": 5.0, "alpha": 0.6, "beta": 0.5},
        {"delta0": 0.0, "delta1": 5.0, "min_sets": 1},
        {"delta0": 0.0, "delta1": 5.0, "max_sets": 0},
        {"delta0": 0.0, "delta1": 5.0, "model": "bayesian"},
    ],
)
def test_bad_designs_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SprtConfig(**kwargs)  # type: ignore[arg-type]


def test_fixed_count_needs_a_positive_count() -> None:
    with pytest.raises(ValueError):
        FixedConfig(0)


# --- the numbers the test is built from -------------------------------------------------------


def test_wald_bounds() -> None:
    config = SprtConfig(0.0, 1.0, alpha=0.05, beta=0.1)
    assert config.lower == pytest.approx(math.log(0.1 / 0.95))
    assert config.upper == pytest.approx(math.log(0.9 / 0.05))


def test_wald_oc_and_asn() -> None:
    config = SprtConfig(-10.0, 10.0, alpha=0.05, beta=0.05)
    a, b = config.lower, config.upper
    assert wald_oc(config, -10.0) == pytest.approx(0.95)
    assert wald_oc(config, 10.0) == pytest.approx(0.05)
    assert wald_oc(config, 0.0) == pytest.approx(b / (b - a))
    assert wald_oc(config, 1e6) == pytest.approx(0.0, abs=1e-12)
    assert wald_oc(config, -1e6) == pytest.approx(1.0)
    drift = 20.0**2 / (2 * SD**2)  # E[Z] at δ1, per set
    assert wald_asn(config, 10.0, SD) == pytest.approx((0.05 * a + 0.95 * b) / drift)
    assert wald_asn(config, -10.0, SD) == pytest.approx(wald_asn(config, 10.0, SD))
    assert wald_asn(config, 0.0, SD) == pytest.approx(-a * b / (20.0**2 / SD**2))
    assert wald_asn(config, 1e-9, SD) == pytest.approx(wald_asn(config, 0.0, SD), rel=1e-6)
    assert wald_asn(config, 0.0, SD) > wald_asn(config, 10.0, SD) > wald_asn(config, 100.0, SD)


@pytest.mark.parametrize(
    ("df", "expected"),
    [(1, 12.7062), (2, 4.3027), (3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423), (31, 2.0395), (120, 1.9799)],
)
def test_t_quantile_matches_the_tables(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-4)


def test_t_quantile_is_continuous_where_the_method_changes() -> None:
    for p in (0.9, 0.975, 0.995):
        exact = t_quantile(p, 30)
        expansion = t_quantile(p, 31)
        assert 0 < exact - expansion < 0.01


def test_mean_ci_needs_two_values() -> None:
    assert mean_ci(4, 1.0, 2.0) == pytest.approx((1.0 - 3.1824, 1.0 + 3.1824), abs=1e-4)
    with pytest.raises(ValueError):
        mean_ci(1, 1.0, 0.0)
