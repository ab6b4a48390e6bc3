"""Margin ratings: strengths recovered from duplicate score differences, opponents adjusted for,
with an uncertainty that matches the spread it claims."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from arbiter.tournament.margins import DEFAULT_SHRINKAGE, margin_ratings

STRENGTH = {"a": 120.0, "b": 40.0, "c": 0.0, "d": -60.0, "e": -100.0}  # sums to 0


def noisy_sets(strength, count, noise, rng, size=4):
    names = list(strength)
    sets = []
    for _ in range(count):
        table = rng.sample(names, size)
        level = rng.uniform(-500, 500)  # what the deals were worth to everyone
        sets.append({n: level + strength[n] + rng.gauss(0, noise) for n in table})
    return sets


def test_noiseless_sets_give_the_strengths_back():
    rng = random.Random(1)
    sets = noisy_sets(STRENGTH, 40, 0.0, rng)
    table = margin_ratings(STRENGTH, sets, shrinkage=1e-9)
    for name, value in STRENGTH.items():
        assert table.ratings[name].rating == pytest.approx(value, abs=1e-4)
    assert table.noise_sd == pytest.approx(0.0, abs=1e-4)
    assert table.order() == ["a", "b", "c", "d", "e"]
    # The prior draws every rating a little towards the field's average, never past it.
    shrunk = margin_ratings(STRENGTH, sets)
    for name, value in STRENGTH.items():
        assert abs(shrunk.ratings[name].rating) < abs(value) or value == 0
        assert shrunk.ratings[name].rating == pytest.approx(value, rel=0.05, abs=1.0)


def test_only_the_differences_within_a_set_count():
    rng = random.Random(2)
    sets = noisy_sets(STRENGTH, 30, 50.0, rng)
    moved = [{n: s + 1000.0 * k for n, s in scores.items()} for k, scores in enumerate(sets)]
    a, b = margin_ratings(STRENGTH, sets), margin_ratings(STRENGTH, moved)
    for name in STRENGTH:
        assert a.ratings[name].rating == pytest.approx(b.ratings[name].rating)
        assert a.ratings[name].sd == pytest.approx(b.ratings[name].sd)


def test_opponents_are_adjusted_for():
    """x meets only strong opponents and loses to them; y meets only weak ones and beats them.
    Their raw margins say y > x; the strengths (x 50, y 30) say x > y, and so do the ratings."""
    strength = {"x": 50.0, "y": 30.0, "s1": 200.0, "s2": 180.0, "s3": 160.0, "w1": -160.0, "w2": -180.0, "w3": -200.0}
    tables = [("x", "s1", "s2", "s3"), ("y", "w1", "w2", "w3"), ("s1", "s2", "w1", "w2"), ("s3", "w3", "s1", "w1")]
    sets = [{n: strength[n] for n in table} for table in tables * 3]  # the last two link both groups
    raw = {n: statistics.fmean(s[n] - statistics.fmean(s.values()) for s in sets if n in s) for n in ("x", "y")}
    assert raw["y"] > raw["x"]
    table = margin_ratings(strength, sets, shrinkage=1e-9)
    assert table.ratings["x"].rating > table.ratings["y"].rating
    assert table.ratings["x"].rating - table.ratings["y"].rating == pytest.approx(20.0, abs=1e-4)


def test_the_uncertainty_matches_the_spread_of_the_ratings():
    """Over many fields of noisy sets, each rating's error spreads as its sd says (within 15%),
    and the noise is estimated."""
    rng = random.Random(3)
    errors, sds, noises = [], [], []
    for _ in range(300):
        table = margin_ratings(STRENGTH, noisy_sets(STRENGTH, 20, 60.0, rng), shrinkage=1e-6)
        errors.append(table.ratings["c"].rating - STRENGTH["c"])
        sds.append(table.ratings["c"].sd)
        noises.append(table.noise_sd)
    assert statistics.stdev(errors) == pytest.approx(statistics.fmean(sds), rel=0.15)
    assert statistics.fmean(noises) == pytest.approx(60.0, rel=0.05)
    assert abs(statistics.fmean(errors)) < 3 * statistics.stdev(errors) / math.sqrt(len(errors))


def test_more_sets_narrow_the_uncertainty():
    rng = random.Random(4)
    sets = noisy_sets(STRENGTH, 160, 60.0, rng)
    few, many = margin_ratings(STRENGTH, sets[:20]), margin_ratings(STRENGTH, sets)
    for name in STRENGTH:
        assert many.ratings[name].sd < few.ratings[name].sd
        assert many.ratings[name].sets > few.ratings[name].sets


def test_an_entrant_without_sets_rates_the_field_average():
    rng = random.Random(5)
    names = [*STRENGTH, "newcomer"]
    table = margin_ratings(names, noisy_sets(STRENGTH, 20, 60.0, rng))
    assert table.ratings["newcomer"].rating == pytest.approx(0.0, abs=1e-9)
    assert table.ratings["newcomer"].sets == 0
    assert table.ratings["newcomer"].sd > max(table.ratings[n].sd for n in STRENGTH)
    assert sum(r.rating for r in table.ratings.values()) == pytest.approx(0.0, abs=1e-6)


def test_no_residual_yet_means_no_noise_estimate():
    """One set of four: three differences, three ratings to fit: nothing left to estimate the
    noise from, so the uncertainty is unknown (and the order by rating − k·sd falls back on the
    rating)."""
    table = margin_ratings("abcd", [{"a": 30.0, "b": 10.0, "c": -10.0, "d": -30.0}])
    assert table.noise_sd is None
    assert all(math.isinf(r.sd) for r in table.ratings.values())
    assert table.order() == table.order(k=3) == ["a", "b", "c", "d"]
    assert margin_ratings("ab", []).order() == ["a", "b"]  # nothing played: ties by name


def test_copies_and_lone_sets():
    """A set of two entrants (A B A B) rates; a set of one says nothing and is skipped."""
    table = margin_ratings("ab", [{"a": 25.0, "b": -25.0}, {"a": 5.0, "b": -5.0}, {"a": 99.0}])
    assert table.ratings["a"].rating > 0 > table.ratings["b"].rating
    assert table.ratings["a"].sets == 2
    assert table.noise_sd == pytest.approx(20.0, rel=0.1)  # residuals ±10 per entrant, 1 degree of freedom left


def test_order_by_rating_less_k_sd():
    rng = random.Random(6)
    sets = noisy_sets(STRENGTH, 30, 60.0, rng)
    sets += [{"c": 500.0, "newcomer": 750.0}]  # one lucky set: high rating, wide uncertainty
    table = margin_ratings([*STRENGTH, "newcomer"], sets)
    assert table.order()[0] == "newcomer"
    assert table.order(k=3).index("newcomer") > 0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="'z', which is not an entrant"):
        margin_ratings("ab", [{"a": 1.0, "z": 2.0}])
    with pytest.raises(ValueError, match="shrinkage must be positive"):
        margin_ratings("ab", [], shrinkage=0.0)
    assert DEFAULT_SHRINKAGE > 0


def test_a_field_without_sets_has_no_noise_estimate():
    from arbiter.tournament.margins import solve

    for table in (margin_ratings(["a"], []), solve(["a", "b"], {})):
        assert table.noise_sd is None and all(r.rating == 0 and math.isinf(r.sd) for r in table.ratings.values())
