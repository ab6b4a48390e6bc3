"""docs/rules.md §12, the scoring vectors: TV1-TV4, TV10, TV11, TV14, TV15.

Each vector is checked twice: on the settlement functions with the vector's raw scores and
levels, and by play, where the doubling sequence is applied through the engine (checking every
seat's legal targets and the resulting levels) and a real deal is played to the deal scores.
"""

from __future__ import annotations

import itertools
import random

import pytest
from barbu.rules import (
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
from barbu.rules.cards import ACE_OF_HEARTS, HEARTS_MASK
from barbu.rules.scoring import domino_raw_scores, settle, split_raw_scores, trick_raw_scores

from .kit import SEATS, declaration, hands_of, load, play_scenario, rules_of, seat, seats_of

SCORINGS = ("pagat", "multiplier")
DOUBLING_VECTORS = ("tv01_no_queens", "tv02_no_hearts_redoubles", "tv03_trumps", "tv04_domino_payouts", "tv11_doubling")


def levels_matrix(pairs: dict[str, int]) -> list[list[int]]:
    m = [[0] * 4 for _ in range(4)]
    for pair, level in pairs.items():
        i, j = seat(pair[0]), seat(pair[1])
        m[i][j] = m[j][i] = level
    return m


def playout(ref) -> dict:
    """A playout given inline, or by reference: ``"tv03_trumps"`` or ``"tv10_plain_scoring#1"``."""
    if isinstance(ref, dict):
        return ref
    name, _, index = ref.partition("#")
    data = load(name)
    return data["deals"][int(index)]["playout"] if index else data["playout"]


def settlement_cases():
    """(raw, levels, scoring, expected) for every settlement a vector states."""
    for name in ("tv01_no_queens", "tv02_no_hearts_redoubles", "tv03_trumps", "tv11_doubling"):
        v = load(name)
        for variant in [v, *v.get("variants", [])]:
            for scoring, scores in variant["scores"].items():
                yield pytest.param(v["raw"], variant["levels"], scoring, scores, id=f"{v['vector']}-{scoring}")
    v = load("tv04_domino_payouts")
    for table in v["tables"]:
        for scoring, scores in table.get("scores", {}).items():
            yield pytest.param(table["raw"], v["levels"], scoring, scores, id=f"TV4-{table['payouts']}-{scoring}")


@pytest.mark.parametrize(("raw", "levels", "scoring", "expected"), list(settlement_cases()))
def test_settlement(raw, levels, scoring, expected):
    scores = settle(rules_of({"double_scoring": scoring}), raw, levels_matrix(levels))
    assert scores == expected
    assert sum(scores) == sum(raw)  # settlement is a transfer (I1)


# ---- doubling through the engine --------------------------------------------------------------
def all_subsets(targets: tuple[int, ...]) -> set[tuple[int, ...]]:
    return {s for n in range(len(targets) + 1) for s in itertools.combinations(targets, n)}


def start_doubling(vector: dict, **switches):
    rules = rules_of(vector.get("rules"), **switches)
    state = new_match(rules)
    deal(state, hands_of(playout(vector["playout"])["hands"]))
    apply(state, declaration(vector["declare"]))
    assert state.phase is Phase.DOUBLE
    return state


@pytest.mark.parametrize("name", DOUBLING_VECTORS)
def test_doubling_sequence_reaches_the_levels(name):
    vector = load(name)
    state = start_doubling(vector)
    for who, targets in vector["doubling"]:
        assert state.turn == seat(who)
        legal = legal_actions(state)
        allowed = seats_of(vector["targets"][who])
        assert set(legal) == all_subsets(allowed)  # deal 0: nobody is forced yet
        assert legal[-1] == allowed  # the 'maximum' is the last action in the fixed order
        if who in vector.get("maximum", []):
            assert seats_of(targets) == legal[-1]
        apply(state, seats_of(targets))
    assert state.phase in (Phase.PLAY, Phase.DOMINO)
    assert state.levels == levels_matrix(vector["levels"])


@pytest.mark.parametrize("name", ["tv01_no_queens"])
def test_doubling_variants(name):
    vector = load(name)
    for variant in vector["variants"]:
        state = start_doubling(vector)
        for who, targets in variant["doubling"]:
            assert state.turn == seat(who)
            apply(state, seats_of(targets))
        assert state.levels == levels_matrix(variant["levels"])


def test_tv3_target_restriction_in_trumps():
    vector = load("tv03_trumps")
    state = start_doubling(vector)
    legal = [(w, seats_of(t)) for w, t in vector["legal"]]
    illegal = [(w, seats_of(t)) for w, t in vector["illegal"]]
    checked = 0
    for who, targets in vector["doubling"]:
        for w, action in legal:
            if w == who:
                apply(state.clone(), action)
                checked += 1
        for w, action in illegal:
            if w == who:
                with pytest.raises(IllegalActionError):
                    apply(state, action)
                assert state.turn == seat(who)  # a refused action changes nothing
                checked += 1
        apply(state, seats_of(targets))
    assert checked == len(legal) + len(illegal)


def test_tv11_illegal_doubling_actions():
    vector = load("tv11_doubling")
    state = start_doubling(vector)
    tried = 0
    for who, targets in vector["doubling"]:
        for bad in vector["illegal"]:
            if bad["seat"] == who:
                before = [row[:] for row in state.levels]
                action = tuple(seat(t) for t in bad["targets"])  # as given: unsorted, repeats kept
                with pytest.raises(IllegalActionError):
                    apply(state, action)
                assert state.turn == seat(who) and state.levels == before
                tried += 1
        apply(state, seats_of(targets))
    assert tried == len(vector["illegal"])
    assert state.levels == levels_matrix(vector["levels"])


# ---- whole deals by play ------------------------------------------------------------------------
def by_play_cases():
    for name in ("tv01_no_queens", "tv02_no_hearts_redoubles", "tv03_trumps", "tv11_doubling"):
        v = load(name)
        for scoring in v["scores"]:
            yield pytest.param(name, {"double_scoring": scoring}, v["raw"], v["scores"][scoring],
                               id=f"{v['vector']}-{scoring}")  # fmt: skip
    v = load("tv04_domino_payouts")
    for table in v["tables"]:
        for scoring in SCORINGS:
            switches = {"domino_payouts": table["payouts"], "double_scoring": scoring}
            yield pytest.param("tv04_domino_payouts", switches, table["raw"], table.get("scores", {}).get(scoring),
                               id=f"TV4-{table['payouts']}-{scoring}")  # fmt: skip


@pytest.mark.parametrize(("name", "switches", "raw", "scores"), list(by_play_cases()))
def test_vector_deal_by_play(name, switches, raw, scores):
    vector = load(name)
    rules = rules_of(vector.get("rules"), **switches)
    scenario = {**playout(vector["playout"]), "declare": vector["declare"], "doubling": vector["doubling"]}
    state = play_scenario(rules, scenario)
    assert state.phase is Phase.DEAL, "the scripted play must complete the deal"
    result = state.results[-1]
    assert list(result.raw) == raw
    assert sum(result.raw) == rules.contract_total(Contract(vector["declare"]["contract"]))
    assert result.levels == tuple(tuple(r) for r in levels_matrix(vector["levels"]))
    if scores is not None:
        assert list(result.scores) == scores
    assert sum(result.scores) == sum(raw)


def test_tv2_captured_hearts():
    vector = load("tv02_no_hearts_redoubles")
    state = play_scenario(rules_of({}), {**vector["playout"], "declare": vector["declare"]})
    counts = {SEATS[s]: (state.won[s] & HEARTS_MASK).bit_count() for s in range(4)}
    assert counts == vector["captured_hearts"]
    assert state.won[seat(vector["ace_of_hearts"])] & ACE_OF_HEARTS


def test_tv3_trick_counts():
    vector = load("tv03_trumps")
    state = play_scenario(rules_of({}), {**vector["playout"], "declare": vector["declare"]})
    assert state.tricks_won == vector["tricks"]
    assert [5 * t for t in vector["tricks"]] == vector["raw"]


def test_tv4_finishing_order():
    vector = load("tv04_domino_payouts")
    state = play_scenario(rules_of({}), {**vector["playout"], "declare": vector["declare"]})
    assert state.finished == [seat(x) for x in vector["finish"]]
    assert state.results[-1].reason == "domino_done"
    last = state.finished[-1]
    assert state.hands[last] and not any(state.hands[s] for s in state.finished[:3])  # F5
    for table in vector["tables"]:
        assert domino_raw_scores(rules_of({"domino_payouts": table["payouts"]}), state.finished) == table["raw"]


# ---- TV10 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", load("tv10_plain_scoring")["deals"], ids=lambda c: c["case"])
def test_tv10_plain_contracts_by_play(case):
    state = play_scenario(rules_of({}), case["playout"])
    assert len(state.tricks) == 13
    raw = list(state.results[-1].raw)
    if "tricks" in case:
        assert state.tricks_won == case["tricks"]
    if "last_two" in case:
        assert [state.tricks[11].winner, state.tricks[12].winner] == [seat(x) for x in case["last_two"]]
    if case.get("ace_alone"):
        (taker,) = [s for s in range(4) if state.won[s] & HEARTS_MASK == ACE_OF_HEARTS]
        assert raw[taker] == -6
        assert sum(raw) == -30
    else:
        assert raw == case["raw"]


@pytest.mark.parametrize("case", load("tv10_plain_scoring")["captured"], ids=lambda c: c["case"])
def test_tv10_no_hearts_scoring_of_captured_cards(case):
    won = [parse_hand(case["won"].get(x, "").split()) for x in SEATS]
    raw = trick_raw_scores(rules_of({}), Contract(case["contract"]), won, [0, 0, 0, 0], None)
    assert raw == case["raw"]


# ---- TV14 ---------------------------------------------------------------------------------------
def test_tv14_block_adds_up_to_zero_by_play():
    vector = load("tv14_block_zero")
    rules = rules_of(vector["rules"])
    state = new_match(rules)
    for number, d in enumerate(vector["deals"]):
        scenario = playout(d["playout"])
        if "declare" not in scenario:  # a reference to another vector's deal
            scenario = {**scenario, "declare": load(d["playout"].partition("#")[0]).get("declare")}
        play_scenario(rules, scenario, state=state)
        result = state.results[-1]
        assert result.declarer == 0 and result.declaration.contract.short == d["contract"]
        assert list(result.raw) == d["raw"] == list(result.scores)  # no doubles
        assert len(state.results) == number + 1
    assert state.totals == vector["totals"]
    assert sum(state.totals) == 0
    assert {r.declaration.contract for r in state.results} == set(rules.contracts)


def test_tv14_raw_table_adds_up():
    vector = load("tv14_block_zero")
    columns = [sum(d["raw"][s] for d in vector["deals"]) for s in range(4)]
    assert columns == vector["totals"] and sum(columns) == 0


# ---- TV15 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("row", load("tv15_split")["rows"], ids=lambda r: r["contract"])
def test_tv15_split_scores(row):
    vector = load("tv15_split")
    rules = rules_of(vector["rules"])
    expected = [row["declarer"], row["others"], row["others"], row["others"]]
    contract = Contract(row["contract"])
    assert split_raw_scores(rules, contract, 0) == expected
    assert sum(expected) == vector["totals"][row["contract"]] == rules.contract_total(contract)


@pytest.mark.parametrize("row", load("tv15_split")["rows"], ids=lambda r: r["contract"])
def test_tv15_split_by_play(row):
    vector = load("tv15_split")
    expected = [row["declarer"], row["others"], row["others"], row["others"]]
    hands = shuffle_hands(random.Random(15))

    def doubled_deal(rules, targets_of_b=()):
        state = new_match(rules)
        deal(state, hands)
        apply(state, declaration({"contract": row["contract"]}))
        apply(state, targets_of_b)
        while state.phase is Phase.DOUBLE:
            apply(state, ())
        return state

    state = doubled_deal(rules_of(vector["rules"]))
    assert state.phase is Phase.DEAL and not state.tricks  # the hand is not played
    result = state.results[-1]
    assert result.reason == "split" and list(result.raw) == expected == list(result.scores)
    assert doubled_deal(rules_of({})).phase is Phase.PLAY  # default: the hand is played
    assert doubled_deal(rules_of(vector["rules"]), (0,)).phase is Phase.PLAY  # a double: played


@pytest.mark.parametrize("contract", ["trumps", "domino"])
def test_tv15_split_never_applies_to_positive_contracts(contract):
    rules = rules_of(load("tv15_split")["rules"])
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(1)))
    decl = next(d for d in legal_actions(state) if d.contract.value == contract)
    apply(state, decl)
    while state.phase is Phase.DOUBLE:
        apply(state, ())
    assert state.phase in (Phase.PLAY, Phase.DOMINO)
