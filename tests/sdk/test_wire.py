"""barbu.wire: exact round trips of views and actions, and clear errors for malformed messages."""

from __future__ import annotations

import itertools
import random

import pytest
from barbu.rules import (
    Contract,
    Declaration,
    IllegalActionError,
    Phase,
    apply,
    card_name,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    observe,
    parse_card,
    shuffle_hands,
)
from barbu.rules.errors import BarbuError
from barbu.wire import (
    PROTOCOL_VERSION,
    WireError,
    action_from_proto,
    action_to_proto,
    legal_from_proto,
    legal_to_proto,
    pb,
    phase_from_proto,
    phase_to_proto,
    view_from_proto,
    view_to_proto,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Rulesets that exercise every shape a view can take: Domino passes with cards in hand, ace
# replays, extra redouble rounds, split deals with no play at all, salad, per-deal declarers.
RULESETS = {
    "standard": make_ruleset("standard"),
    "seed_de_fr": make_ruleset("seed_de_fr"),
    "seed_pl": make_ruleset("seed_pl"),
    "seed_fi": make_ruleset("seed_fi"),
    "variants": make_ruleset(
        "standard",
        {
            "domino_must_play": False,
            "domino_ace_replay": True,
            "redouble_window": "extra_round",
            "early_end": "extended",
            "contracts": ["no_tricks", "barbu", "trumps", "domino", "salad"],
            "declarer_rotation": "per_deal",
        },
    ),
    "split": make_ruleset("standard", {"undoubled_negative": "split", "domino_start": "fixed_rank:9"}),
}


def wire_round_trip(view):
    """Through bytes, as on the wire: the view, then its legal actions."""
    msg = pb.View.FromString(view_to_proto(view).SerializeToString())
    legal_msgs = [pb.Action.FromString(a.SerializeToString()) for a in legal_to_proto(view.legal)]
    legal = legal_from_proto(legal_msgs, phase_from_proto(msg.phase))
    return view_from_proto(msg, view.rules, legal)


def play_and_check(rules, seed, stop_after=None, every_seat=True):
    """Play a random match; check the round trip of the views at every decision (and between
    deals, and at the end). Returns the number of views checked."""
    rng = random.Random(seed)
    state = new_match(rules, first_declarer=seed % 4)
    checked = 0
    steps = 0
    while True:
        seats = range(4) if every_seat else (state.turn if state.turn >= 0 else seed % 4,)
        for s in seats:
            v = observe(state, s)
            assert wire_round_trip(v) == v, f"seat {s}, deal {v.deal}, phase {v.phase.name}"
            checked += 1
        if state.is_over or (stop_after is not None and steps >= stop_after):
            return checked
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
        else:
            apply(state, rng.choice(legal_actions(state)))
        steps += 1


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_view_round_trip_over_a_whole_match(name):
    assert play_and_check(RULESETS[name], seed=sum(map(ord, name)), every_seat=False) > 28 * 20


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(RULESETS)),
    seed=st.integers(0, 2**32 - 1),
    stop_after=st.integers(0, 400),
)
def test_view_round_trip_at_random_points(name, seed, stop_after):
    play_and_check(RULESETS[name], seed, stop_after=stop_after, every_seat=True)


def test_view_fields_on_the_wire():
    """Spot checks of the protocol form itself (what a bot in another language reads)."""
    rules = make_ruleset("standard")
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(5)))
    apply(state, Declaration(Contract.NO_QUEENS))
    apply(state, (0,))  # seat 1 doubles the declarer
    apply(state, ())
    apply(state, (0, 1))  # seat 3 doubles both
    apply(state, (1, 3))  # the declarer redoubles
    lead = legal_actions(state)[0]
    apply(state, lead)
    v = observe(state, 1)
    msg = view_to_proto(v)
    assert msg.phase == pb.PLAY and msg.turn == 1 and msg.seat == 1
    assert list(msg.hand) == sorted(msg.hand, key=parse_card) and len(msg.hand) == 13
    assert msg.declaration == pb.Declare(contract=pb.NO_QUEENS)
    assert [(d.seat, list(d.targets)) for d in msg.doubles] == [(1, [0]), (2, []), (3, [0, 1]), (0, [1, 3])]
    assert [(p.a, p.b, p.level) for p in msg.levels] == [(0, 1, 2), (0, 3, 2), (1, 3, 1)]
    assert list(msg.trick) == [card_name(lead)]
    # Trick play travels in `trick`/`tricks` only; `plays` is for Domino turns.
    assert msg.trick_leader == 0 and list(msg.plays) == []
    assert view_from_proto(msg, rules, ()).plays == ((0, lead),)
    assert list(msg.hand_sizes) == [12, 13, 13, 13]
    assert [list(sc.contracts) for sc in msg.declared] == [[pb.NO_QUEENS], [], [], []]
    # Before the first deal: no declaration, turn -1, empty lists.
    start = view_to_proto(observe(new_match(rules), 2))
    assert start.phase == pb.DEAL and start.turn == -1 and not start.HasField("declaration")
    assert not start.hand and not start.levels and start.trick_leader == -1


def test_phase_mapping():
    assert [phase_to_proto(p) for p in Phase] == [pb.DEAL, pb.DECLARE, pb.DOUBLE, pb.PLAY, pb.DOMINO_PLAY, pb.OVER]
    assert [phase_from_proto(phase_to_proto(p)) for p in Phase] == list(Phase)
    with pytest.raises(WireError, match="PHASE_UNSPECIFIED"):
        phase_from_proto(pb.PHASE_UNSPECIFIED)
    with pytest.raises(WireError, match="99"):
        phase_from_proto(99)


def test_protocol_version():
    assert PROTOCOL_VERSION == 1
    assert issubclass(WireError, BarbuError)


# ---- actions ------------------------------------------------------------------------------
ALL_DECLARATIONS = (
    [Declaration(c) for c in Contract if c not in (Contract.TRUMPS, Contract.DOMINO)]
    + [Declaration(Contract.TRUMPS, trump=s) for s in range(4)]
    + [Declaration(Contract.DOMINO, start_rank=r) for r in range(13)]
)
ALL_TARGETS = [t for n in range(5) for t in itertools.combinations(range(4), n)]


def through_bytes(action):
    return pb.Action.FromString(action_to_proto(action).SerializeToString())


@pytest.mark.parametrize(
    "phase, actions",
    [
        (Phase.DECLARE, ALL_DECLARATIONS),
        (Phase.DOUBLE, ALL_TARGETS),
        (Phase.PLAY, list(range(52))),
        (Phase.DOMINO, list(range(52)) + [None]),
    ],
)
def test_action_round_trip(phase, actions):
    for a in actions:
        back = action_from_proto(through_bytes(a), phase)
        assert back == a and type(back) is type(a)
    assert legal_from_proto(legal_to_proto(actions), phase) == tuple(actions)


def test_action_wire_forms():
    assert action_to_proto(parse_card("TH")) == pb.Action(play=pb.Play(card="TH"))
    assert getattr(action_to_proto(None).play, "pass") is True and action_to_proto(None).play.card == ""
    assert action_to_proto(Declaration(Contract.DOMINO, start_rank=5)) == pb.Action(
        declare=pb.Declare(contract=pb.DOMINO, start_rank="7")
    )
    assert action_to_proto(Declaration(Contract.TRUMPS, trump=2)).declare.trump == "H"
    assert action_to_proto(Declaration("no_queens")).declare.contract == pb.NO_QUEENS
    # Any collection of seats; sent ascending.
    assert list(action_to_proto({3, 0}).double.targets) == [0, 3]
    assert list(action_to_proto([2, 1]).double.targets) == [1, 2]
    assert action_to_proto(()).WhichOneof("kind") == "double" and not action_to_proto(()).double.targets


def test_double_targets_come_back_ascending():
    msg = pb.Action(double=pb.Double(targets=[3, 0]))
    assert action_from_proto(msg, Phase.DOUBLE) == (0, 3)


def play(card="", pass_=False):
    return pb.Action(play=pb.Play(card=card, **{"pass": pass_}))


@pytest.mark.parametrize(
    "msg, phase, match",
    [
        (pb.Action(), Phase.PLAY, "expected a play action in the play phase, got an empty action"),
        (pb.Action(double=pb.Double()), Phase.PLAY, "expected a play action .* got a double action"),
        (play("TH"), Phase.DECLARE, "expected a declare action in the declare phase, got a play action"),
        (pb.Action(declare=pb.Declare(contract=pb.BARBU)), Phase.DOUBLE, "expected a double action"),
        (pb.Action(double=pb.Double()), Phase.DOMINO, "expected a play action in the domino phase"),
        (play("TH"), Phase.DEAL, "no action is taken in the deal phase"),
        (play("TH"), Phase.OVER, "no action is taken in the over phase"),
        (play("XX"), Phase.PLAY, "bad card 'XX'"),
        (play("10H"), Phase.PLAY, "bad card '10H'"),
        (play("th"), Phase.PLAY, "bad card 'th'"),
        (play(" TH"), Phase.DOMINO, "bad card ' TH'"),
        (play(), Phase.PLAY, "a play needs a card"),
        (play(), Phase.DOMINO, "a play needs a card"),
        (play("TH", True), Phase.DOMINO, "a card or a pass, not both"),
        (play("", True), Phase.PLAY, "a pass is a Domino action only"),
        (pb.Action(declare=pb.Declare()), Phase.DECLARE, "contract is unspecified"),
        (pb.Action(declare=pb.Declare(contract=42)), Phase.DECLARE, "unknown contract number 42"),
        (pb.Action(declare=pb.Declare(contract=pb.TRUMPS, trump="X")), Phase.DECLARE, "bad trump suit 'X'"),
        (pb.Action(declare=pb.Declare(contract=pb.TRUMPS, trump="HS")), Phase.DECLARE, "bad trump suit 'HS'"),
        (pb.Action(declare=pb.Declare(contract=pb.DOMINO, start_rank="1")), Phase.DECLARE, "bad start rank '1'"),
        (pb.Action(declare=pb.Declare(contract=pb.DOMINO, start_rank="10")), Phase.DECLARE, "bad start rank"),
        (pb.Action(double=pb.Double(targets=[1, 4])), Phase.DOUBLE, "double target 4 is not a seat 0-3"),
    ],
)
def test_malformed_actions_raise_wire_error(msg, phase, match):
    with pytest.raises(WireError, match=match):
        action_from_proto(pb.Action.FromString(msg.SerializeToString()), phase)


def test_well_formed_but_illegal_actions_are_left_to_the_referee():
    # A trump named with a contract that takes none, a seat listed twice, doubling oneself:
    # all well-formed; the engine (the referee) rejects them and says why.
    decl = action_from_proto(pb.Action(declare=pb.Declare(contract=pb.NO_TRICKS, trump="H")), Phase.DECLARE)
    assert decl == Declaration(Contract.NO_TRICKS, trump=2)
    assert action_from_proto(pb.Action(double=pb.Double(targets=[2, 2])), Phase.DOUBLE) == (2, 2)
    assert action_from_proto(pb.Action(declare=pb.Declare(contract=pb.SALAD)), Phase.DECLARE) == Declaration(
        Contract.SALAD
    )
    state = new_match(make_ruleset("standard"))
    deal(state, shuffle_hands(random.Random(1)))
    with pytest.raises(IllegalActionError, match="malformed"):
        apply(state, decl)
    with pytest.raises(IllegalActionError, match="not a contract of these rules"):
        apply(state, Declaration(Contract.SALAD))
    apply(state, Declaration(Contract.NO_TRICKS))
    with pytest.raises(IllegalActionError, match="listed twice"):
        apply(state, (2, 2))


@pytest.mark.parametrize(
    "action, match",
    [
        ("TH", "not an action"),
        (True, "not an action"),
        (52, "card 52 is not a card number"),
        (-1, "card -1 is not a card number"),
        ((0, 4), "double target 4 is not a seat"),
        ((-1,), "double target -1 is not a seat"),
        (("a",), "not an action"),
        (Declaration(Contract.TRUMPS, trump=4), "bad trump suit 4"),
        (Declaration(Contract.DOMINO, start_rank=13), "bad start rank 13"),
        (Declaration("whist"), "unknown contract 'whist'"),
    ],
)
def test_unsendable_actions_raise_wire_error(action, match):
    with pytest.raises(WireError, match=match):
        action_to_proto(action)


def test_malformed_views_raise_wire_error():
    rules = make_ruleset("standard")
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(2)))
    msg = view_to_proto(observe(state, 0))
    bad = pb.View()
    bad.CopyFrom(msg)
    bad.hand[0] = "ZZ"
    with pytest.raises(WireError, match="bad card 'ZZ'"):
        view_from_proto(bad, rules)
    bad.CopyFrom(msg)
    bad.phase = pb.PHASE_UNSPECIFIED
    with pytest.raises(WireError, match="PHASE_UNSPECIFIED"):
        view_from_proto(bad, rules)
    bad.CopyFrom(msg)
    bad.levels.add(a=0, b=7, level=1)
    with pytest.raises(WireError, match="7 is not a seat"):
        view_from_proto(bad, rules)


def test_view_round_trip_after_a_split_deal():
    # undoubled_negative=split: a deal without any double ends with no play at all.
    rules = RULESETS["split"]
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(3)))
    apply(state, Declaration(Contract.NO_HEARTS))
    for _ in range(4):
        apply(state, ())
    assert state.phase is Phase.DEAL and state.results[-1].reason == "split"
    for s in range(4):
        v = observe(state, s)
        assert wire_round_trip(v) == v
        assert view_to_proto(v).results[0].reason == "split"
