"""random_playout: the Monte-Carlo inner loop plays legal, complete, reproducible matches."""

import random
from collections import Counter

import pytest
from barbu.rules import (
    PASS,
    PRESETS,
    MatchState,
    Phase,
    apply,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    random_playout,
    shuffle_hands,
)
from barbu.rules.playout import _CARD_BITS


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_playouts_finish_matches_by_the_rules(preset):
    rules = make_ruleset(preset)
    for seed in range(8):
        state = new_match(rules, seed % 4)
        decisions = random_playout(state, random.Random(seed))
        assert state.phase is Phase.OVER and len(state.results) == 28
        assert sum(state.totals) == 0  # I2 over the match
        assert decisions > 28 * 30
        for r in state.results:  # I1
            assert sum(r.scores) == rules.contract_total(r.declaration.contract)


def test_a_playout_can_stop_at_the_end_of_the_deal():
    state = new_match(make_ruleset())
    rng = random.Random(4)
    deal(state, shuffle_hands(rng))
    random_playout(state, rng, to_deal_end=True)
    assert state.phase is Phase.DEAL and len(state.results) == 1


def test_playouts_are_reproducible_and_work_on_clones():
    rules = make_ruleset("standard", {"domino_must_play": False, "domino_ace_replay": True})
    base = new_match(rules)
    rng = random.Random(9)
    deal(base, shuffle_hands(rng))
    a, b = base.clone(), base.clone()
    random_playout(a, random.Random(1))
    random_playout(b, random.Random(1))
    assert a.totals == b.totals and a.results == b.results
    assert base.phase is Phase.DECLARE and not base.results  # the original is untouched


def test_card_choices_are_uniform_over_the_legal_cards():
    """From one position, the first card drawn is each legal card about equally often."""
    state = new_match(make_ruleset())
    deal(state, shuffle_hands(random.Random(2)))
    while state.phase is not Phase.PLAY:
        state.apply(legal_actions(state)[0])
    legal = legal_actions(state)
    counts = Counter()
    for seed in range(len(legal) * 300):
        trial = state.clone()
        random_playout(trial, random.Random(seed), to_deal_end=True)
        counts[trial.tricks[0].cards[0] if trial.tricks else None] += 1
    assert set(counts) == set(legal)
    expected = 300
    assert all(abs(n - expected) < 75 for n in counts.values()), counts  # > 4 sigma apart


def test_shuffle_hands_deals_as_random_shuffle_does():
    for seed in range(50):
        rng = random.Random(seed)
        deck = list(_CARD_BITS)
        rng.shuffle(deck)
        expected = [sum(deck[0:13]), sum(deck[13:26]), sum(deck[26:39]), sum(deck[39:52])]
        assert shuffle_hands(random.Random(seed)) == expected


# ---- the playout's one-loop card play against the engine stepped one action at a time ----
# every field of a state: its slots, which a compiled class lists under another name
STATE_FIELDS = getattr(MatchState, "__slots__", None) or MatchState.__mypyc_attrs__
VARIANTS = {  # each preset, and the switches that change what random play draws or how a deal ends
    **{name: {} for name in PRESETS},
    "free_domino_passes": {"domino_must_play": False, "domino_ace_replay": True},
    "barbu_discards": {"kh_must_discard": "when_void_or_ace_in_trick", "barbu_lead": "kh_only_if_last_card"},
    "no_early_end": {"early_end": "none", "trump_void_rule": "must_ruff_and_overruff"},
    "extended_end_salad": {"early_end": "extended", "contracts": ["no_hearts", "trumps", "salad"]},
    "split": {"undoubled_negative": "split", "redouble_window": "extra_round"},
}


def snapshot(state):
    """Every field of a state, for comparing two states value by value."""
    return {name: getattr(state, name) for name in STATE_FIELDS}


def stepwise_playout(state, rng, to_deal_end=False):
    """``random_playout`` as the public API plays it, one action at a time: the same draws
    (``Random._randbelow`` is the playout's ``_below``), a Domino pass drawn before the card."""
    decisions, deals = 0, len(state.results)
    while state.phase is not Phase.OVER:
        if state.phase is Phase.DEAL:
            if to_deal_end and len(state.results) > deals:
                break
            deal(state, shuffle_hands(rng))
            continue
        actions = legal_actions(state)
        cards = [a for a in actions if a is not None]
        if state.phase is Phase.DOMINO and (not cards or (PASS in actions and not rng._randbelow(len(cards) + 1))):
            apply(state, PASS)
        elif state.phase in (Phase.PLAY, Phase.DOMINO):
            apply(state, cards[rng._randbelow(len(cards))] if len(cards) > 1 else cards[0])
        else:
            apply(state, actions[rng._randbelow(len(actions))])
        decisions += 1
        if to_deal_end and len(state.results) > deals:
            break
    return decisions


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_playouts_end_in_the_state_the_stepwise_engine_reaches(variant):
    """Whole matches, then single deals from every card of a deal in progress (mid-trick
    too): the same decisions, draws, results and final state, field by field."""
    rules = make_ruleset("standard", VARIANTS[variant]) if variant not in PRESETS else make_ruleset(variant)
    for seed in range(3):
        fast, slow = new_match(rules, seed % 4), new_match(rules, seed % 4)
        fast_rng, slow_rng = random.Random(seed), random.Random(seed)
        assert random_playout(fast, fast_rng) == stepwise_playout(slow, slow_rng)
        assert snapshot(fast) == snapshot(slow) and fast_rng.getstate() == slow_rng.getstate()
    for seed in range(2 * len(rules.contracts)):
        base, rng = new_match(rules, seed % 4), random.Random(seed)
        deal(base, shuffle_hands(rng))
        contract = rules.contracts[seed % len(rules.contracts)]
        declarations = [d for d in legal_actions(base) if d.contract is contract]
        apply(base, declarations[rng._randbelow(len(declarations))])
        step = 0
        while base.phase is not Phase.DEAL and base.phase is not Phase.OVER:
            if step % 3 == 0:
                fast, slow = base.clone(), base.clone()
                made = random_playout(fast, random.Random(step), to_deal_end=True)
                assert made == stepwise_playout(slow, random.Random(step), to_deal_end=True)
                assert snapshot(fast) == snapshot(slow), (contract, step)
            actions = legal_actions(base)
            apply(base, actions[rng._randbelow(len(actions))])
            step += 1
