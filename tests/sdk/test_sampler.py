"""The hidden-hand sampler: exact, uniform, and consistent with the real history.

* Exactness: on late positions (at most 9 unseen cards) the sampler's count of consistent deals
  equals a brute-force enumeration in which the engine itself replays the public history on
  every possible split of the unseen cards; so no rule is missed (the count would be too high)
  and none is invented (too low).
* Uniformity: on positions with a few dozen to a few hundred consistent deals, the sampled
  frequencies pass a chi-square test against the uniform distribution (fixed seeds), and the
  same test rejects a sampler that is off by a little.
* Consistency: random matches under every preset (and the non-default switches that add
  inferences), sampled at random points; every sample replays the real history legally and
  gives back exactly the seat's view. Zero inconsistent samples.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest
from barbu.rules import (
    PRESETS,
    BarbuError,
    Contract,
    Phase,
    apply,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    observe,
    random_playout,
    shuffle_hands,
)
from barbu.rules.cards import FULL_DECK, SEVEN_OF_DIAMONDS, cards_of
from barbu.sampler import InconsistentView, Sampler, hand_constraints, replay
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Switches that add inferences the presets do not exercise (trump, K♥ and Domino rules).
EXTRA_RULES = [
    ("standard", {"trump_void_rule": "must_ruff_and_overruff"}),
    ("standard", {"kh_must_discard": "when_void_or_ace_in_trick", "early_end": "none"}),
    ("standard", {"kh_must_discard": "when_void", "barbu_lead": "kh_only_if_last_card"}),
    ("standard", {"domino_must_play": False, "domino_ace": "low"}),
    ("standard", {"domino_ace_replay": True, "declarer_rotation": "per_deal"}),
    ("standard", {"redouble_window": "extra_round", "domino_start": "fixed_rank:A"}),
    ("seed_de_fr", {"undoubled_negative": "split"}),
]
ALL_RULES = [(name, {}) for name in PRESETS] + EXTRA_RULES


def _unseen(view) -> int:
    played = 0
    for _, c in view.plays:
        if c is not None:
            played |= 1 << c
    return FULL_DECK & ~played & ~view.hand


def enumerate_deals(view) -> list[tuple[int, ...]]:
    """Every split of the unseen cards that the engine accepts for the view's history."""
    me = view.seat
    cards = cards_of(_unseen(view))
    others = [s for s in range(4) if s != me]
    sizes = [view.hand_sizes[s] for s in others]
    out = []
    for first in itertools.combinations(cards, sizes[0]):
        rest = [c for c in cards if c not in first]
        for second in itertools.combinations(rest, sizes[1]):
            third = [c for c in rest if c not in second]
            hands = [0, 0, 0, 0]
            hands[me] = view.hand
            for s, part in zip(others, (first, second, third), strict=True):
                hands[s] = sum(1 << c for c in part)
            try:
                state = replay(view, hands)
            except BarbuError:
                continue
            assert observe(state, me) == view
            out.append(tuple(hands))
    return out


def late_positions(rules, seed: int, count: int, low: int = 3, high: int = 9):
    """Views of random seats in random matches with ``low``..``high`` unseen cards."""
    rng = random.Random(seed)
    state = new_match(rules, first_declarer=seed % 4)
    found = []
    while len(found) < count and not state.is_over:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        if state.phase in (Phase.PLAY, Phase.DOMINO) and rng.random() < 0.4:
            view = observe(state, rng.randrange(4))
            if low <= _unseen(view).bit_count() <= high:
                found.append(view)
        actions = legal_actions(state)
        apply(state, actions[rng.randrange(len(actions))])
    return found


@pytest.mark.parametrize("preset,overrides", ALL_RULES, ids=[f"{p}-{'-'.join(o) or 'preset'}" for p, o in ALL_RULES])
def test_count_equals_brute_force_enumeration(preset, overrides):
    rules = make_ruleset(preset, overrides)
    views = late_positions(rules, seed=len(preset) * 7 + len(overrides), count=5)
    assert len(views) == 5
    for view in views:
        deals = enumerate_deals(view)
        sampler = Sampler(view)
        assert sampler.count == len(deals), (view.contract, view.phase)
        constraints = sampler.constraints
        assert all(constraints.allows(d) for d in deals)


# ---- uniformity ---------------------------------------------------------------------------------
def chi_square_sf(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable: the regularized upper incomplete gamma Q(dof/2, x/2)."""
    a, z = dof / 2.0, x / 2.0
    if z <= 0:
        return 1.0
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:  # series for P, then Q = 1 - P
        term = total = 1.0 / a
        n = a
        while term > total * 1e-15:
            n += 1
            term *= z / n
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    # continued fraction for Q (Lentz)
    tiny = 1e-300
    b = z + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    i = 1
    while True:
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
        i += 1
    return math.exp(log_front) * h


def test_chi_square_helper():
    # known values: chi2(1) at 3.841 -> 0.05; chi2(10) at 18.307 -> 0.05; chi2(100) at 124.342 -> 0.05
    for x, dof in ((3.841459, 1), (18.307038, 10), (124.342113, 100)):
        assert chi_square_sf(x, dof) == pytest.approx(0.05, abs=1e-4)


def chi_square_p(counts: Counter, support: list, n: int) -> float:
    expected = n / len(support)
    stat = sum((counts.get(d, 0) - expected) ** 2 / expected for d in support)
    return chi_square_sf(stat, len(support) - 1)


def uniformity_positions():
    """Positions with 20..400 consistent deals, at least two classes of constrained cards."""
    out = []
    for i, (preset, overrides) in enumerate(ALL_RULES[:6]):
        rules = make_ruleset(preset, overrides)
        for view in late_positions(rules, seed=100 + i, count=40, low=6, high=9):
            sampler = Sampler(view)
            if 20 <= sampler.count <= 400 and len(sampler._classes) >= 2:
                out.append(view)
                break
    return out


def test_samples_are_uniform_over_consistent_deals():
    views = uniformity_positions()
    assert len(views) >= 5
    for k, view in enumerate(views):
        deals = enumerate_deals(view)
        sampler = Sampler(view)
        assert sampler.count == len(deals)
        n = 60 * len(deals)
        rng = random.Random(k)
        counts = Counter(tuple(sampler.sample(rng)) for _ in range(n))
        assert set(counts) <= set(deals)  # never an inconsistent deal
        assert set(counts) == set(deals)  # and every consistent one turns up
        p = chi_square_p(counts, deals, n)
        assert p > 1e-3, (k, p)


def test_chi_square_detects_a_slightly_biased_sampler():
    """The test has power: favouring one deal in 20 by 1.5x is rejected."""
    view = uniformity_positions()[0]
    deals = enumerate_deals(view)
    rng = random.Random(99)
    favoured = set(deals[::20])
    n = 60 * len(deals)
    counts: Counter = Counter()
    while sum(counts.values()) < n:
        d = rng.choice(deals)
        if d not in favoured and rng.random() < 1 / 1.5:
            continue
        counts[d] += 1
    assert chi_square_p(counts, deals, n) < 1e-3


# ---- consistency under every preset -------------------------------------------------------------
def check_samples(state, seat: int, rng: random.Random, samples: int = 3) -> int:
    """Sample from ``seat``'s view; every sample must replay the real history. Returns the count."""
    view = observe(state, seat)
    sampler = Sampler(view)
    k = sampler.constraints
    assert state.hands[seat] == view.hand
    assert k.allows(state.hands)  # the real deal is one of the consistent ones
    for _ in range(samples):
        hands = sampler.sample(rng)
        assert k.allows(hands)
        assert sum(hands[s].bit_count() for s in range(4)) == sum(view.hand_sizes)
        rebuilt = replay(view, hands)  # raises if any real action is illegal with these hands
        assert observe(rebuilt, seat) == view
        det = sampler.determinize(hands)
        assert det.hands == hands
        assert observe(det, seat) == view
        if state.turn == seat:
            assert tuple(legal_actions(det)) == tuple(legal_actions(state)) == view.legal
    return samples


@pytest.mark.parametrize("preset,overrides", ALL_RULES, ids=[f"{p}-{'-'.join(o) or 'preset'}" for p, o in ALL_RULES])
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_samples_replay_the_real_history(preset, overrides, seed):
    rules = make_ruleset(preset, overrides)
    rng = random.Random(seed)
    state = new_match(rules, first_declarer=seed % 4)
    checked = 0
    while not state.is_over:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        if rng.random() < 0.04:
            checked += check_samples(state, rng.randrange(4), rng)
        actions = legal_actions(state)
        apply(state, actions[rng.randrange(len(actions))])
    assert checked > 0


def test_seven_of_diamonds_holder_moves_first():
    rules = make_ruleset("seed_de_fr")
    rng = random.Random(5)
    state = new_match(rules)
    deal(state, shuffle_hands(rng))
    domino = next(a for a in legal_actions(state) if a.contract is Contract.DOMINO)
    apply(state, domino)
    while state.phase is Phase.DOUBLE:
        apply(state, legal_actions(state)[0])
    holder = state.turn
    seat = (holder + 1) % 4
    sampler = Sampler(observe(state, seat))
    for _ in range(50):
        assert sampler.sample(rng)[holder] >> SEVEN_OF_DIAMONDS & 1


def test_determinized_state_plays_to_the_end():
    rules = make_ruleset("standard")
    rng = random.Random(8)
    state = new_match(rules)
    random_playout(state, rng, to_deal_end=True)
    deal(state, shuffle_hands(rng))
    for _ in range(30):  # into the second deal's play
        apply(state, legal_actions(state)[rng.randrange(len(legal_actions(state)))])
    sampler = Sampler(observe(state, state.turn))
    for _ in range(20):
        det = sampler.determinize(sampler.sample(rng))
        random_playout(det, rng, to_deal_end=True)
        assert len(det.results) == 2
        assert sum(det.results[-1].raw) == rules.contract_total(det.results[-1].declaration.contract)


def test_impossible_views_are_refused():
    rules = make_ruleset("standard")
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(1)))
    view = observe(state, 0)
    from dataclasses import replace

    with pytest.raises(InconsistentView):
        Sampler(replace(view, hand_sizes=(13, 13, 13, 12)))
    with pytest.raises(ValueError):
        hand_constraints(replace(view, phase=Phase.DEAL))
