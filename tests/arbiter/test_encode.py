"""The arbiter's request encoder (arbiter/transport/encode.py) against the reference path: the
bytes it writes parse to the very message ``view_to_proto(observe(...))`` builds, on every
decision of random matches of every preset, Domino and doubling included."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from barbu import wire
from barbu.rules import PRESETS, Phase, make_ruleset, new_match, observe, shuffle_hands
from barbu.v1 import arbiter_pb2 as pb

from arbiter.transport.encode import RequestEncoder


def reference(state, seat, request_id, decision, reserve) -> pb.ArbiterMessage:
    view = observe(state, seat)
    return pb.ArbiterMessage(
        request=pb.DecisionRequest(
            request_id=request_id,
            view=wire.view_to_proto(replace(view, results=())),
            legal=wire.legal_to_proto(view.legal),
            decision_seconds=decision,
            reserve_seconds=reserve,
        )
    )


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("seed", [1, 2])
def test_every_request_of_a_match_parses_to_the_reference_message(preset, seed):
    rng = random.Random(seed)
    state = new_match(make_ruleset(preset), first_declarer=seed % 4)
    encoder = RequestEncoder()
    asked = 0
    while state.phase is not Phase.OVER:
        if state.phase is Phase.DEAL:
            state.deal(shuffle_hands(rng))
            continue
        legal = state.legal_actions()
        seat = state.turn
        decision, reserve = rng.choice([(1.0, 10.0), (0.5, 0.0), (2.0, 3.25)])
        data = encoder.request(state, seat, asked + 1, decision, reserve)
        got = pb.ArbiterMessage.FromString(data)
        want = reference(state, seat, asked + 1, decision, reserve)
        assert got == want, (preset, state.deal_index, state.phase, seat)
        asked += 1
        state.apply(rng.choice(legal))
        if state.phase in (Phase.DEAL, Phase.OVER):  # a deal was scored: its DealEnd to every seat
            for s in range(4):
                got = pb.ArbiterMessage.FromString(encoder.deal_end(state, s))
                assert got == pb.ArbiterMessage(deal_end=pb.DealEnd(view=wire.view_to_proto(observe(state, s))))
    assert asked > 500


def test_one_encoder_follows_a_new_match():
    encoder = RequestEncoder()
    for seed in (3, 4):
        rng = random.Random(seed)
        state = new_match(make_ruleset(), 0)
        state.deal(shuffle_hands(rng))
        for _ in range(40):
            seat = state.turn
            assert pb.ArbiterMessage.FromString(encoder.request(state, seat, 7, 1.0, 0.0)) == reference(
                state, seat, 7, 1.0, 0.0
            )
            state.apply(rng.choice(state.legal_actions()))
