"""docs/rules.md §12, the legality vectors: TV5-TV9, TV12, TV13.

Every position is reached by dealing designed hands and playing real cards through the engine
(see ``kit.py``); the expected legal sets come from the data files in ``tests/data/vectors``.
"""

from __future__ import annotations

import random

import pytest
from barbu.rules import (
    PASS,
    Contract,
    IllegalActionError,
    Phase,
    apply,
    deal,
    legal_actions,
    new_match,
    parse_hand,
    shuffle_hands,
)
from barbu.rules.cards import RANKS, SUITS

from .kit import (
    SEATS,
    cards,
    declaration,
    hands_of,
    load,
    play_scenario,
    reach_position,
    rules_of,
    seat,
    seats_of,
)


def expect_cases(*files: str):
    """(file, position, expectation) for every expectation of every position, with readable ids."""
    out = []
    for name in files:
        vector = load(name)
        for i, position in enumerate(vector["positions"]):
            spec = {"declare": vector.get("declare"), **position}
            for e in position["expect"]:
                switches = ",".join(f"{k}={v}" for k, v in e["rules"].items()) or "default"
                out.append(pytest.param(spec, e, id=f"{vector['vector']}-{i + 1}-{switches}"))
    return out


def assert_exact_legal_cards(state, expected: list[int], may_pass: bool = False) -> None:
    """The legal set is exactly ``expected`` (in the fixed ascending order); every other card
    of the hand is refused by ``apply``, every legal one accepted."""
    assert list(legal_actions(state)) == sorted(expected) + ([PASS] if may_pass else [])
    hand = [c for c in range(52) if state.hands[state.turn] >> c & 1]
    for c in hand:
        probe = state.clone()
        if c in expected:
            apply(probe, c)
        else:
            with pytest.raises(IllegalActionError):
                apply(probe, c)


# ---- TV6, TV7, TV8: trick-play legality ------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "expectation"), expect_cases("tv06_trumps_legality", "tv07_leads", "tv08_kh_shedding")
)
def test_trick_legality(spec, expectation):
    rules = rules_of(expectation["rules"])
    state = reach_position(rules, spec)
    assert_exact_legal_cards(state, cards(expectation["legal"]))


def test_tv7_positions_separate_broken_from_unbroken_hearts():
    """The 'no heart played yet' positions really have no heart played; the others really have."""
    vector = load("tv07_leads")
    for position in vector["positions"]:
        state = reach_position(rules_of({}), position)
        played = [c for t in state.tricks for c in t.cards]
        hearts_played = any(c // 13 == SUITS.index("H") for c in played)
        assert hearts_played == ("no heart played yet" not in position["case"]), position["case"]


# ---- TV5: Domino ------------------------------------------------------------------------------
def _layout_mask(rows: dict) -> int:
    mask = 0
    for suit, row in rows.items():
        if row is None:
            continue
        low, high = (RANKS.index(card[0]) for card in row)
        for rank in range(low, high + 1):
            mask |= 1 << (SUITS.index(suit) * 13 + rank)
    return mask


@pytest.mark.parametrize(
    "expectation",
    load("tv05_domino_legality")["layout"]["expect"],
    ids=lambda e: ",".join(f"{k}={v}" for k, v in e["rules"].items()) or "default",
)
def test_tv5_domino_layout(expectation):
    vector = load("tv05_domino_legality")["layout"]
    state = play_scenario(rules_of(expectation["rules"]), vector)
    assert state.phase is Phase.DOMINO
    assert state.layout == _layout_mask(vector["rows"])
    assert state.turn == seat(vector["to_act"])
    assert state.hands[state.turn] == parse_hand(vector["hand"].split())
    may_pass = expectation.get("may_pass", False)
    assert_exact_legal_cards(state, cards(expectation["legal"]), may_pass=may_pass)
    probe = state.clone()
    if may_pass:
        apply(probe, PASS)  # domino_must_play=false: passing with a playable card is allowed
        assert probe.turn != state.turn
    else:
        with pytest.raises(IllegalActionError, match="may not pass"):
            apply(probe, PASS)


def test_tv5_domino_opening():
    vector = load("tv05_domino_legality")["opening"]
    state = play_scenario(rules_of({}), vector)
    for step in vector["steps"]:
        assert state.turn == seat(step["to_act"])
        legal = cards(step["legal"])
        if legal:
            assert_exact_legal_cards(state, legal)
        else:  # no playable card: the only action is the pass, and no card is accepted
            assert list(legal_actions(state)) == [PASS]
            for c in range(52):
                if state.hands[state.turn] >> c & 1:
                    with pytest.raises(IllegalActionError):
                        apply(state.clone(), c)
        if "then" in step:
            who, _, action = step["then"].partition(":")
            assert state.turn == seat(who)
            apply(state, None if action == "-" else cards(action)[0])


def test_tv5_seven_of_diamonds_opens():
    vector = load("tv05_domino_legality")["opening"]
    sod = vector["seven_of_diamonds"]
    rules = rules_of(sod["rules"])
    state = new_match(rules)
    deal(state, hands_of(sod["hands"]))
    domino = [d for d in legal_actions(state) if d.contract is Contract.DOMINO]
    assert [RANKS[d.start_rank] for d in domino] == sod["declarations"]
    apply(state, domino[0])
    while state.phase is Phase.DOUBLE:
        apply(state, ())
    assert state.turn == seat(sod["first_to_act"]) != state.declarer
    assert_exact_legal_cards(state, cards(sod["legal"]))


# ---- TV9: early end -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("scenario", "expectation"),
    [
        pytest.param(d, e, id=f"{d['declare']['contract']}-{e['rules'].get('early_end', 'standard')}")
        for d in load("tv09_early_end")["deals"]
        for e in d["expect"]
    ],
)
def test_tv9_early_end(scenario, expectation):
    rules = rules_of(expectation["rules"])
    n = expectation["tricks"]
    state = play_scenario(rules, {**scenario, "plays": scenario["plays"][:n]})
    assert len(state.tricks) == n
    assert state.phase is Phase.DEAL, "the deal must be over after the stated trick"
    result = state.results[-1]
    assert result.reason == expectation["reason"]
    assert list(result.raw) == scenario["raw"]
    assert sum(h.bit_count() for h in state.hands) == expectation["unplayed"]
    if n < 13:  # the next scripted card is refused: the hand is over
        next_card = cards(scenario["plays"][n].split()[0].split(":")[1])[0]
        with pytest.raises(IllegalActionError):
            apply(state, next_card)


# ---- TV12: quota forcing --------------------------------------------------------------------------
def _play_out(state) -> None:
    """Finish the current deal with the first legal action (doubling included)."""
    while state.phase not in (Phase.DEAL, Phase.OVER):
        apply(state, legal_actions(state)[0])


def _quota_block(rules, vector):
    """A's block, deal by deal (1-7): yields the state after each declaration."""
    rng = random.Random(vector["seed"])
    state = new_match(rules)
    for number in range(1, 8):
        deal(state, shuffle_hands(rng))
        apply(state, legal_actions(state)[0])  # contracts in canonical order
        yield number, state
        _play_out(state)


def _double_turns(state, doubles: dict):
    """Walk the doubling phase, yielding each non-declarer's turn before it acts."""
    while state.phase is Phase.DOUBLE:
        who = SEATS[state.turn]
        if state.turn != state.declarer:
            yield who
        targets = doubles.get(who, [])
        apply(state, seats_of(targets))


def test_tv12_quota_forcing():
    vector = load("tv12_quota")
    rules = rules_of({})
    checks = {c["deal"]: c for c in vector["checks"]}
    seen = set()
    for number, state in _quota_block(rules, vector):
        if number not in checks:
            for _ in _double_turns(state, vector["doubles"][str(number)]):
                pass
            continue
        check = checks[number]
        assert state.declarations_left(state.declarer) == check["k"]
        for who in _double_turns(state, check["play"]):
            actions = legal_actions(state)
            if who in check["forced"]:
                assert actions and all(0 in a for a in actions), f"{who} must double A at deal {number}"
                with pytest.raises(IllegalActionError, match="quota"):
                    apply(state.clone(), ())
            else:
                assert who in check["free"]
                assert () in actions
            seen.add((number, who))
    assert seen == {(6, "B"), (6, "C"), (6, "D"), (7, "B"), (7, "C"), (7, "D")}


def test_tv12_quota_enforcement_none_forces_nothing():
    vector = load("tv12_quota")
    rules = rules_of(vector["quota_enforcement_none"]["rules"])
    for number, state in _quota_block(rules, vector):
        doubles = vector["doubles"].get(str(number), {})
        for _ in _double_turns(state, doubles):
            assert () in legal_actions(state)


# ---- TV13: rotation --------------------------------------------------------------------------
@pytest.mark.parametrize("rotation", ["block7", "per_deal"])
def test_tv13_declarer_of(rotation):
    vector = load("tv13_rotation")
    rules = rules_of({"declarer_rotation": rotation})
    for n, declarer in vector["declarer_of"][rotation].items():
        assert rules.declarer_of(vector["first_declarer"], int(n)) == declarer


@pytest.mark.parametrize("rotation", ["block7", "per_deal"])
@pytest.mark.parametrize("first_declarer", [0, 1, 2, 3])
def test_tv13_declarers_in_a_real_match(rotation, first_declarer):
    """A whole match: each deal's declarer is the rotation's, for every first declarer."""
    rules = rules_of({"declarer_rotation": rotation})
    rng = random.Random(first_declarer)
    state = new_match(rules, first_declarer)
    seen = []
    while not state.is_over:
        deal(state, shuffle_hands(rng))
        seen.append(state.declarer)
        assert state.turn == state.declarer  # he declares first
        _play_out(state)
    step = (lambda n: n) if rotation == "per_deal" else (lambda n: n // 7)
    assert seen == [(first_declarer + step(n)) % 4 for n in range(28)]
    if first_declarer == 0:
        table = load("tv13_rotation")["declarer_of"][rotation]
        assert all(seen[int(n)] == d for n, d in table.items())


@pytest.mark.parametrize("first_lead", ["declarer", "left_of_declarer"])
@pytest.mark.parametrize("first_declarer", [0, 1, 2, 3])
def test_tv13_first_leader(first_lead, first_declarer):
    offset = load("tv13_rotation")["first_leader_offset"][first_lead]
    rules = rules_of({"first_lead": first_lead})
    state = new_match(rules, first_declarer)
    deal(state, shuffle_hands(random.Random(first_declarer)))
    apply(state, declaration({"contract": "no_tricks"}))
    while state.phase is Phase.DOUBLE:
        apply(state, ())
    assert state.phase is Phase.PLAY
    assert state.turn == (first_declarer + offset) % 4
