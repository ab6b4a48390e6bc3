"""Property tests: random playouts under every preset and random switch combinations.

Each example plays a whole match with uniformly random legal actions and checks, as it goes,
the invariants of docs/rules.md §9 (I1-I6), that no card is played twice or from the wrong hand,
that ``observe`` never shows a seat another seat's unplayed cards, the Domino no-block bound
(F7), and that the match log written along the way verifies with the same result.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from barbu.matchlog import MatchLogWriter, verify
from barbu.rules import (
    PASS,
    PRESETS,
    Contract,
    Phase,
    apply,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    observe,
    ruleset_from_json,
    shuffle_hands,
)
from barbu.rules.cards import HEARTS_MASK, KING_OF_HEARTS, QUEENS
from barbu.rules.scoring import places, settle, split_raw_scores
from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as Stage
from hypothesis import strategies as st

from .kit import switch_table

TABLE = switch_table()
PRESET_NAMES = list(TABLE["presets"])
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A whole match per example: shrinking one would take minutes, and the failing seed and
# switches that Hypothesis prints are already a reproducible example.
MATCH_SETTINGS = dict(SETTINGS, phases=[Stage.explicit, Stage.reuse, Stage.generate])

switch_overrides = st.fixed_dictionaries(
    {}, optional={name: st.sampled_from(values) for name, values in TABLE["switches"].items()}
)


# ---- the checker ----------------------------------------------------------------------------
def walk(value):
    """Every scalar inside a view: dataclasses, tuples, lists and dicts, recursively."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is int or v is None or t is str or t is bool:
            yield v
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif dataclasses.is_dataclass(v):
            stack.extend(getattr(v, f.name) for f in dataclasses.fields(v))
        else:
            yield v


CHECKED_FIELDS = ("hand", "layout", "plays", "tricks", "trick", "legal", "results", "rules")


def check_view(state, seat: int) -> None:
    """observe(state, seat) shows the seat's own hand and public facts, never a hidden card."""
    view = observe(state, seat)
    assert view.hand == state.hands[seat]
    hidden = 0
    for s in range(4):
        if s != seat:
            hidden |= state.hands[s]
    shown = view.layout | view.hand
    for _, c in view.plays:
        if c is not None:
            shown |= 1 << c
    for trick in view.tricks:
        for c in trick.cards:
            shown |= 1 << c
    for c in view.trick:
        shown |= 1 << c
    for action in view.legal:
        if type(action) is int:
            assert view.hand >> action & 1
    assert shown & hidden == view.hand & hidden == 0
    # No field anywhere holds another seat's hand or dealt hand as a mask. (Masks below 2**13
    # are skipped: they collide with scores and seat numbers; the card fields are checked above.)
    secrets = {state.dealt[s] for s in range(4) if s != seat}
    secrets |= {state.hands[s] for s in range(4) if s != seat and state.hands[s] >= 1 << 13}
    secrets.discard(view.hand)
    # The card fields were checked above; past results are scanned once per deal (check_deal).
    for f in dataclasses.fields(view):
        if f.name not in CHECKED_FIELDS:
            for value in walk(getattr(view, f.name)):
                assert not (type(value) is int and value in secrets), f"view.{f.name} leaks another seat's cards"


def expected_trick_end(rules, contract, tricks) -> tuple[int, str]:
    """(number of tricks, reason) the deal must last under docs/rules.md I6 / C-END."""
    captured = 0
    for i, trick in enumerate(tricks):
        for c in trick.cards:
            captured |= 1 << c
        if i == 12:
            return 13, "all_tricks"
        if rules.early_end == "none":
            continue
        if contract is Contract.NO_QUEENS and captured & QUEENS == QUEENS:
            return i + 1, "all_queens"
        if contract is Contract.BARBU and captured & KING_OF_HEARTS:
            return i + 1, "king_taken"
        if rules.early_end == "extended" and contract is Contract.NO_HEARTS and captured & HEARTS_MASK == HEARTS_MASK:
            return i + 1, "all_hearts"
    return 13, "all_tricks"


def expected_double_targets(rules, state) -> set[int]:
    """docs/rules.md X3-X8 re-derived from the public doubling record: the seats the one to act may target."""
    seat, declarer, contract = state.turn, state.declarer, state.contract
    actions = observe(state, seat).doubles
    first_round = len(actions) < 4
    doubled_me = {a for a, targets in actions if seat in targets}
    level = {t: sum(1 for a, ts in actions if (a == seat and t in ts) or (a == t and seat in ts)) for t in range(4)}
    out = set()
    for t in range(4):
        if t == seat or level[t] >= 2:
            continue
        if t in doubled_me or (
            first_round  # a new double
            and seat != declarer
            and (
                rules.double_targets == "any"
                or t == declarer
                or (rules.double_targets == "standard" and not contract.is_positive)
            )
        ):  # a redouble, in either round
            out.add(t)
    return out


def quota_forces(rules, state) -> bool:
    """docs/rules.md X7 from the results so far: must the seat to act include the declarer?"""
    seat, declarer = state.turn, state.declarer
    if seat == declarer or len(state.double_actions) >= 4:
        return False
    if rules.quota_enforcement != "forced" or rules.double_quota == 0:
        return False
    earlier = [r for r in state.results if r.declarer == declarer]
    k = len(rules.contracts) - len(earlier)
    d = sum(1 for r in earlier if r.levels[seat][declarer] > 0)
    return rules.double_quota - d >= k


def expected_next_turn(rules, before_turn: int, action, state) -> int:
    """Who moves after ``action`` (P1, F3, domino_ace_replay), from public facts only."""
    if state.phase is Phase.PLAY:
        if state.trick:
            return (before_turn + 1) % 4
        return state.tricks[-1].winner
    seat = before_turn  # Domino
    if action is not None and action % 13 == 12 and rules.domino_ace_replay and state.hands[seat]:
        return seat
    nxt = (seat + 1) % 4
    while not state.hands[nxt]:
        nxt = (nxt + 1) % 4
    return nxt


def play_and_check(rules, seed: int, first_declarer: int) -> None:
    rng = random.Random(seed)
    lines: list[str] = []
    state = new_match(rules, first_declarer)
    writer = MatchLogWriter(
        lines.append, rules=rules, first_declarer=first_declarer, seed=seed,
        seats=[{"seat": s, "entrant": f"random-{s}"} for s in range(4)],
    )  # fmt: skip
    decisions = 0
    while not state.is_over:
        assert state.phase is Phase.DEAL
        deal(state, shuffle_hands(rng))
        writer.dealt(state)
        dealt = list(state.hands)
        played = 0
        passes = 0  # consecutive Domino passes
        while state.phase not in (Phase.DEAL, Phase.OVER):
            legal = legal_actions(state)
            assert legal, f"no legal action in {state.phase.name} (I5)"
            who = state.turn
            if decisions % 3 == 0:
                check_view(state, who)
                check_view(state, (who + 1 + decisions % 3) % 4)
            decisions += 1
            action = rng.choice(legal)
            if state.phase is Phase.DOUBLE:
                targets = expected_double_targets(rules, state)
                assert set(legal[-1]) == targets and all(set(a) <= targets for a in legal)
                if quota_forces(rules, state):
                    assert all(state.declarer in a for a in legal)
                else:
                    assert () in legal
            if state.phase in (Phase.PLAY, Phase.DOMINO):
                cards = [a for a in legal if a is not PASS]
                assert all(state.hands[who] >> c & 1 for c in cards)
                if state.phase is Phase.DOMINO and rules.domino_must_play:
                    assert (PASS in legal) == (not cards)
                if action is PASS:
                    passes += 1
                    in_play = sum(1 for h in state.hands if h)
                    if rules.domino_must_play:
                        assert passes <= in_play - 1, "Domino blocked (F7)"
                else:
                    passes = 0
                    assert not played >> action & 1, "a card was played twice"
                    played |= 1 << action
            phase = state.phase
            apply(state, action)
            writer.acted(state, who, action)
            if phase is state.phase and phase in (Phase.PLAY, Phase.DOMINO):
                assert state.turn == expected_next_turn(rules, who, action, state)
        check_deal(rules, state, dealt, played)
        for s in range(4):
            check_view(state, s)
    check_match(rules, state)
    report = verify(line + "\n" for line in lines)
    assert report.valid, f"line {report.line}: {report.error}"
    assert report.complete and report.deals == rules.deals_per_match
    assert report.totals == state.totals and report.places == places(state.totals)


def check_deal(rules, state, dealt, played) -> None:
    result = state.results[-1]
    for value in walk(result):  # a deal result carries no hand (as a mask)
        assert not (type(value) is int and value in dealt)
    contract = result.declaration.contract
    # I1: deal scores and raw scores both add up to the contract total
    assert sum(result.raw) == sum(result.scores) == rules.contract_total(contract)
    assert list(result.scores) == settle(rules, list(result.raw), [list(r) for r in result.levels])
    # every card played came from its holder's dealt hand, once; the rest are still held
    for s in range(4):
        assert state.hands[s] | (dealt[s] & played) == dealt[s]
        assert state.hands[s] & played == 0
    if result.reason == "split":
        assert rules.undoubled_negative == "split" and not contract.is_positive
        assert not any(any(r) for r in result.levels) and played == 0
        assert list(result.raw) == split_raw_scores(rules, contract, result.declarer)
    elif contract is Contract.DOMINO:
        assert result.reason == "domino_done"
        assert sorted(state.finished) == [0, 1, 2, 3]
        assert all(state.hands[s] == 0 for s in state.finished[:3]) and state.hands[state.finished[3]]
        assert [result.raw[s] for s in state.finished] == list(rules.domino_payouts)
    else:  # I6
        n, reason = expected_trick_end(rules, contract, state.tricks)
        assert (len(state.tricks), result.reason) == (n, reason)
        assert played.bit_count() == 4 * n


def check_match(rules, state) -> None:
    results = state.results
    assert len(results) == rules.deals_per_match
    contracts = set(rules.contracts)
    for d in range(4):
        mine = [r for r in results if r.declarer == d]
        # I3 (and M3): every contract exactly once per declarer
        assert Counter(r.declaration.contract for r in mine) == Counter(contracts)
        if rules.declarer_rotation == "block7":
            block = len(contracts)
            indices = [r.deal for r in mine]
            start = indices[0]
            assert indices == list(range(start, start + block)) and start % block == 0
        # I2: a declarer's deals add up to 0 when the rules are zero-sum
        if rules.zero_sum:
            assert sum(sum(r.raw) for r in mine) == 0
        # I4: the quota is met
        if rules.quota_enforcement == "forced" and rules.double_quota > 0:
            need = min(rules.double_quota, len(contracts))
            for p in range(4):
                if p != d:
                    assert sum(1 for r in mine if r.levels[p][d] > 0) >= need
    # M5: totals are the sums of the deal scores
    assert state.totals == [sum(r.scores[s] for r in results) for s in range(4)]


# ---- the properties -----------------------------------------------------------------------------
@pytest.mark.parametrize("preset", PRESET_NAMES)
@settings(max_examples=6, **MATCH_SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), first_declarer=st.integers(0, 3))
def test_random_matches_under_each_preset(preset, seed, first_declarer):
    play_and_check(make_ruleset(preset), seed, first_declarer)


@settings(max_examples=45, **MATCH_SETTINGS)
@given(
    preset=st.sampled_from(PRESET_NAMES),
    overrides=switch_overrides,
    seed=st.integers(0, 2**32 - 1),
    first_declarer=st.integers(0, 3),
)
def test_random_matches_under_switch_combinations(preset, overrides, seed, first_declarer):
    rules = make_ruleset(preset, overrides)
    assert ruleset_from_json(rules.to_json()) == rules  # the log's rules object round-trips
    play_and_check(rules, seed, first_declarer)


@settings(max_examples=200, **SETTINGS)
@given(
    raw=st.lists(st.integers(-130, 130), min_size=4, max_size=4),
    levels=st.lists(st.integers(0, 2), min_size=6, max_size=6),
    scoring=st.sampled_from(["pagat", "multiplier"]),
)
def test_settlement_is_a_pairwise_transfer(raw, levels, scoring):
    rules = make_ruleset("standard", {"double_scoring": scoring})
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    matrix = [[0] * 4 for _ in range(4)]
    for (i, j), level in zip(pairs, levels, strict=True):
        matrix[i][j] = matrix[j][i] = level
    scores = settle(rules, raw, matrix)
    assert sum(scores) == sum(raw)
    m = {"pagat": (0, 1, 2), "multiplier": (0, 2, 4)}[scoring]
    expected = list(raw)
    for (i, j), level in zip(pairs, levels, strict=True):  # S2: independent pairs, on raw differences
        expected[i] += m[level] * (raw[i] - raw[j])
        expected[j] -= m[level] * (raw[i] - raw[j])
    assert scores == expected


@settings(max_examples=200, **SETTINGS)
@given(totals=st.lists(st.integers(-50, 50), min_size=4, max_size=4))
def test_places_share_ties(totals):
    result = places(totals)
    for s, t in enumerate(totals):
        assert result[s] == 1 + sum(1 for u in totals if u > t)
    assert sorted(result)[0] == 1


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_presets_are_those_of_rules_md(preset):
    """The engine's preset = the standard ruleset with docs/rules.md's settings for that preset."""
    assert preset in PRESETS
    assert make_ruleset(preset) == make_ruleset("standard", TABLE["presets"][preset])
    assert make_ruleset(preset).to_json() == {"preset": preset}


def test_every_switch_value_of_rules_md_is_accepted():
    for name, values in TABLE["switches"].items():
        for value in values:
            rules = make_ruleset("standard", {name: value})
            assert ruleset_from_json(rules.to_json()) == rules


@pytest.mark.parametrize("contract", TABLE["contract_names"])
def test_contract_totals(contract):
    assert make_ruleset("standard").contract_total(Contract(contract)) == TABLE["contract_totals"][contract]
