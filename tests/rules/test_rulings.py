"""The readings of docs/rulings.md, where docs/rules.md or docs/match-log.md leaves a gap.

Data: ``tests/data/rulings.json``. Each test names the ruling it pins down.
"""

from __future__ import annotations

import json
import random

import pytest
from barbu.matchlog import dumps, verify
from barbu.rules import (
    PASS,
    Contract,
    IllegalActionError,
    Phase,
    RulesError,
    apply,
    deal,
    legal_actions,
    make_ruleset,
    new_match,
    observe,
    parse_card,
    shuffle_hands,
)
from barbu.rules.cards import SUITS
from barbu.rules.scoring import split_raw_scores

from .kit import (
    DATA,
    cards,
    declaration,
    hands_of,
    names,
    play_random_match,
    play_scenario,
    reach_position,
    rules_of,
    seat,
    seats_of,
)
from .test_vectors_legality import assert_exact_legal_cards

with open(DATA / "rulings.json", encoding="utf-8") as f:
    RULINGS = json.load(f)


# ---- salad -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "expectation"),
    [
        pytest.param(p, e, id=f"{i}-{','.join(f'{k}={v}' for k, v in e['rules'].items()) or 'default'}")
        for i, p in enumerate(RULINGS["salad"]["lead_positions"])
        for e in p["expect"]
    ],
)
def test_salad_uses_the_no_hearts_lead_rule_and_no_kh_rule(spec, expectation):
    state = reach_position(rules_of(RULINGS["salad"]["rules"], **expectation["rules"]), spec)
    assert_exact_legal_cards(state, cards(expectation["legal"]))


@pytest.mark.parametrize("expectation", RULINGS["salad"]["deal"]["expect"], ids=lambda e: str(e["rules"]))
def test_salad_scores_all_five_and_plays_13_tricks(expectation):
    scenario = RULINGS["salad"]["deal"]
    rules = rules_of(RULINGS["salad"]["rules"], **expectation["rules"])
    state = play_scenario(rules, scenario)
    result = state.results[-1]
    assert len(state.tricks) == 13 and result.reason == "all_tricks"
    assert list(result.raw) == scenario["raw"]
    assert sum(result.raw) == rules.contract_total(Contract.SALAD) == -130


def test_salad_split():
    spec = RULINGS["salad"]["split"]
    rules = rules_of(spec["rules"])
    assert split_raw_scores(rules, Contract.SALAD, 0) == spec["raw"]
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(3)))
    apply(state, declaration({"contract": "salad"}))
    while state.phase is Phase.DOUBLE:
        apply(state, ())
    assert state.results[-1].reason == "split" and list(state.results[-1].raw) == spec["raw"]


# ---- Domino -----------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["replay", "no_replay"])
def test_domino_ace_replay_turns(variant):
    """A seat that plays an ace (and still holds cards) moves again; with no playable card
    it passes that extra turn itself (a pass line), then the turn moves on."""
    spec = RULINGS["domino_ace_replay"]
    case = spec[variant]
    state = play_scenario(rules_of(case["rules"]), spec)
    for step in case["steps"]:
        assert state.turn == seat(step["to_act"])
        legal = cards(step["legal"])
        if legal:
            assert_exact_legal_cards(state, legal)
        else:
            assert list(legal_actions(state)) == [PASS]
        if "then" in step:
            apply(state, None if step["then"] == "-" else parse_card(step["then"]))


@pytest.mark.parametrize("case", RULINGS["domino_rows"], ids=lambda c: c["case"])
def test_domino_row_ends(case):
    rules = rules_of(case["rules"])
    state = new_match(rules)
    one_suit_each = {letter: " ".join(r + s for r in "23456789TJQKA") for letter, s in zip("ABCD", SUITS, strict=True)}
    deal(state, hands_of(one_suit_each))
    apply(state, declaration({"contract": "domino", "start_rank": case["start_rank"]}))
    while state.phase is Phase.DOUBLE:
        apply(state, ())
    assert names(legal_actions(state)) == [case["after"]]
    apply(state, parse_card(case["after"]))
    while state.turn != 0:  # B, C, D open their own suits
        apply(state, legal_actions(state)[0])
    assert sorted(names(legal_actions(state))) == sorted(case["frontier_in_suit"])


def test_domino_fixed_rank_is_the_only_declaration():
    rules = make_ruleset("standard", {"domino_start": "fixed_rank:9"})
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(5)))
    domino = [d for d in legal_actions(state) if d.contract is Contract.DOMINO]
    assert [d.start_rank for d in domino] == [7]  # rank index of the 9
    with pytest.raises(IllegalActionError, match="fix the domino start rank"):
        apply(state.clone(), declaration({"contract": "domino", "start_rank": "7"}))
    with pytest.raises(IllegalActionError, match="needs a start rank"):
        apply(state.clone(), declaration({"contract": "domino"}))


def test_domino_without_must_play_may_pass_until_a_round_of_passes():
    rules = make_ruleset("standard", {"domino_must_play": False})
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(8)))
    apply(state, declaration({"contract": "domino", "start_rank": "7"}))
    while state.phase is Phase.DOUBLE:
        apply(state, ())
    for _ in range(4):  # a whole round may pass, each pass offered last
        actions = legal_actions(state)
        assert actions[-1] is PASS
        apply(state, PASS)
    assert not state.layout
    # Now whoever can play must (with seed 8 the seat to act holds a 7): no pass on offer.
    actions = legal_actions(state)
    assert actions and PASS not in actions
    with pytest.raises(IllegalActionError, match="may not pass"):
        apply(state.clone(), PASS)
    apply(state, actions[0])
    assert state.layout and legal_actions(state)[-1] is PASS  # the pass is free again


def test_domino_without_must_play_always_terminates():
    """A player who passes whenever allowed cannot stall the deal (F7 with a one-round delay)."""
    rules = make_ruleset("standard", {"domino_must_play": False, "contracts": ["domino"]})
    for seed in range(5):
        state = new_match(rules)
        rng = random.Random(seed)
        while state.phase is not Phase.OVER:
            if state.phase is Phase.DEAL:
                deal(state, shuffle_hands(rng))
                continue
            actions = legal_actions(state)
            apply(state, PASS if PASS in actions else actions[0])
        assert all(r.reason == "domino_done" for r in state.results)


# ---- doubling ---------------------------------------------------------------------------------
def test_extra_round_redoubles_only_level_one_doubles():
    spec = RULINGS["extra_round"]
    rules = rules_of(spec["rules"])
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(2)))
    apply(state, declaration(spec["declare"]))
    for who, targets in spec["round1"]:
        assert state.turn == seat(who)
        apply(state, seats_of(targets))
    assert state.phase is Phase.DOUBLE, "the extra round follows"
    illegal = [(w, seats_of(t)) for w, t in spec["illegal_in_round2"]]
    for who, targets in spec["round2"]:
        assert state.turn == seat(who)
        allowed = seats_of(spec["round2_targets"][who])
        assert legal_actions(state)[-1] == allowed and () in legal_actions(state)
        for w, action in illegal:
            if w == who:
                with pytest.raises(IllegalActionError):
                    apply(state.clone(), action)
        apply(state, seats_of(targets))
    assert state.phase is Phase.PLAY
    expected = [[0] * 4 for _ in range(4)]
    for pair, level in spec["levels"].items():
        i, j = seat(pair[0]), seat(pair[1])
        expected[i][j] = expected[j][i] = level
    assert state.levels == expected


def test_doubling_targets_are_a_set():
    """The engine takes targets in any order (the log writes them sorted); a repeat is refused."""
    state = new_match(make_ruleset("standard"))
    deal(state, shuffle_hands(random.Random(4)))
    apply(state, declaration({"contract": "no_tricks"}))
    apply(state, [3, 0])  # B doubles D and A
    assert state.double_actions[-1] == (1, (0, 3))
    with pytest.raises(IllegalActionError, match="listed twice"):
        apply(state.clone(), [0, 0])


# ---- the contracts switch --------------------------------------------------------------------
@pytest.mark.parametrize(("given", "canonical"), RULINGS["contracts_switch"]["accepted"])
def test_contracts_switch_accepts_any_non_empty_subset(given, canonical):
    rules = make_ruleset("standard", {"contracts": given})
    assert [c.value for c in rules.contracts] == canonical
    assert rules.deals_per_match == 4 * len(canonical)
    assert rules.zero_sum is False
    state = new_match(rules)
    deal(state, shuffle_hands(random.Random(1)))
    assert [d.contract.value for d in legal_actions(state) if d.contract is not Contract.TRUMPS][:1] == canonical[:1]


@pytest.mark.parametrize(("given", "message"), RULINGS["contracts_switch"]["rejected"])
def test_contracts_switch_rejects(given, message):
    with pytest.raises(RulesError, match=message):
        make_ruleset("standard", {"contracts": given})


def test_quota_larger_than_the_block_forces_every_deal():
    rules = make_ruleset("standard", {"contracts": ["barbu", "trumps"], "double_quota": 3})
    state, _, forced = play_random_match(rules, 21)
    assert len(forced) == 3 * rules.deals_per_match  # every non-declarer, every deal
    for r in state.results:
        assert all(r.levels[p][r.declarer] > 0 for p in range(4) if p != r.declarer)


# ---- the match log ------------------------------------------------------------------------------
def test_header_without_preset_means_standard():
    state, lines, _ = play_random_match(make_ruleset("standard", {"domino_ace": "low"}), 9)
    header = json.loads(lines[0])
    assert header["rules"] == {"preset": "standard", "domino_ace": "low"}
    header["rules"] = {"domino_ace": "low"}
    report = verify([dumps(header) + "\n"] + [line + "\n" for line in lines[1:]])
    assert report.valid and report.complete and report.totals == state.totals


def test_auto_and_ms_keys_do_not_matter_to_the_verifier():
    _, lines, _ = play_random_match(make_ruleset("standard"), 10)
    marked = []
    for line in lines:
        obj = json.loads(line)
        if obj["type"] in ("declare", "double", "play"):
            obj.update(ms=1.5, auto=True)
        marked.append(dumps(obj) + "\n")
    report = verify(marked)
    assert report.valid and report.complete


def test_aborted_match_end():
    state, lines, _ = play_random_match(make_ruleset("standard"), 12)
    objs = [json.loads(line) for line in lines]
    end = next(i for i, o in enumerate(objs) if o["type"] == "deal_end" and o["deal"] == 5)
    totals = objs[end]["totals"]
    abort = {"type": "match_end", "status": "aborted", "reason": "test", "totals": totals}
    report = verify([line + "\n" for line in lines[: end + 1]] + [dumps(abort) + "\n"])
    assert report.valid and not report.complete and report.status == "aborted" and report.deals == 6
    assert report.to_json()["status"] == "aborted"
    mid = [line + "\n" for line in lines[:end]] + [dumps(abort) + "\n"]  # deal_end still owed
    bad = verify(mid)
    assert not bad.valid and bad.line == end + 1 and "deal_end" in bad.error


def test_dealer_seat_is_a_label_only():
    plain = play_random_match(make_ruleset("standard"), 30)[0]
    labelled_rules = make_ruleset("standard", {"dealer_seat": "right_of_declarer"})
    labelled = play_random_match(labelled_rules, 30)[0]
    assert labelled.results == plain.results
    state = new_match(labelled_rules, first_declarer=2)
    deal(state, shuffle_hands(random.Random(0)))
    assert (state.declarer, state.dealer) == (2, 1)
    assert observe(state, 0).dealer == 1
