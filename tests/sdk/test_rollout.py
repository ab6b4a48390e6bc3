"""The greedy playout (barbu.rollout): it ends the deal legally, repeatably, and plays as it says.

Legality needs no check of its own: every card goes through the engine's ``apply``, which
refuses an illegal one. The policy's own rules are checked where they are plain: ducking in the
negative contracts, a master trump drawing trumps, and a single legal card played at once.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from barbu.rollout import greedy_playout
from barbu.rules import PRESETS, Contract, MatchState, Phase, make_ruleset, new_match, shuffle_hands
from barbu.rules.cards import SUIT_MASKS


def positions(seed: int, every: int = 5) -> Iterator[MatchState]:
    """Copies of a random match's states at every ``every``-th decision after a declaration,
    under each preset in turn."""
    rng = random.Random(seed)
    for preset in sorted(PRESETS):
        state = new_match(make_ruleset(preset), first_declarer=seed % 4)
        step = 0
        while state.phase is not Phase.OVER:
            if state.phase is Phase.DEAL:
                state.deal(shuffle_hands(rng))
                continue
            if state.phase is not Phase.DECLARE and step % every == 0:
                yield state.clone()
            actions = state.legal_actions()
            state.apply(actions[rng.randrange(len(actions))])
            step += 1


def test_it_plays_the_deal_to_its_end_and_no_further():
    played = 0
    for state in positions(seed=1):
        deals = len(state.results)
        greedy_playout(state, played & 3)
        assert len(state.results) == deals + 1
        assert state.phase in (Phase.DEAL, Phase.OVER)
        played += 1
    assert played > 200


def test_the_same_position_and_offset_give_the_same_deal():
    for state in positions(seed=2, every=17):
        for offset in range(4):
            a, b = state.clone(), state.clone()
            greedy_playout(a, offset)
            greedy_playout(b, offset)
            assert a.results[-1] == b.results[-1]
            assert a.tricks == b.tricks and a.layout == b.layout


def test_a_finished_deal_is_left_as_it_is_and_a_declaration_is_needed():
    state = new_match(make_ruleset())
    greedy_playout(state)  # the deal phase: nothing to play
    assert state.phase is Phase.DEAL and not state.results
    state.deal(shuffle_hands(random.Random(3)))
    with pytest.raises(ValueError, match="declared contract"):
        greedy_playout(state)


def next_card(state: MatchState, offset: int = 0) -> int:
    """The card the policy plays for the seat to move."""
    copy = state.clone()
    done, trick = len(copy.tricks), len(copy.trick)
    greedy_playout(copy, offset)
    return copy.tricks[done].cards[trick]


def test_negative_contracts_duck_with_the_highest_card_that_does():
    checked = 0
    for state in positions(seed=4, every=3):
        if state.phase is not Phase.PLAY or state.contract in (Contract.TRUMPS, Contract.NO_LAST_TWO):
            continue
        if not state.trick:
            continue
        legal = state.legal_mask()
        below = legal & SUIT_MASKS[state.trick[0] // 13] & ((1 << state.best) - 1)
        if below and legal & (legal - 1):
            assert next_card(state) == below.bit_length() - 1
            checked += 1
    assert checked > 50


def test_the_master_trump_leads_to_draw_trumps():
    checked = 0
    for state in positions(seed=5, every=2):
        if state.phase is not Phase.PLAY or state.contract is not Contract.TRUMPS or state.trick:
            continue
        assert state.trump is not None
        trumps = SUIT_MASKS[state.trump]
        mine = state.legal_mask() & trumps
        theirs = 0
        for seat in range(4):
            if seat != state.turn:
                theirs |= state.hands[seat] & trumps
        if mine and theirs and mine.bit_length() > theirs.bit_length():
            assert next_card(state) == mine.bit_length() - 1
            checked += 1
    assert checked > 5
