"""random_playout: the Monte-Carlo inner loop plays legal, complete, reproducible matches."""

import random
from collections import Counter

import pytest
from barbu.rules import PRESETS, Phase, deal, legal_actions, make_ruleset, new_match, random_playout, shuffle_hands
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
