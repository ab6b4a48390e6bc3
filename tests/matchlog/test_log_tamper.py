"""The verifier against tampered logs: each change is rejected at the exact line that first
contradicts the rules, with a message naming the problem. A log cut short is not invalid.

The base log is a real 28-deal match written by MatchLogWriter while the engine played it.
"""

from __future__ import annotations

import json
import re

import pytest
from barbu.matchlog import dumps, verify
from barbu.rules import make_ruleset

from ..rules.kit import play_random_match

SEED = 7


@pytest.fixture(scope="module")
def base():
    """(lines, parsed objects, forced double line numbers) of a real standard match."""
    state, lines, forced = play_random_match(make_ruleset("standard"), SEED)
    objs = [json.loads(line) for line in lines]
    report = verify(line + "\n" for line in lines)
    assert report.valid and report.complete and report.totals == state.totals
    return lines, objs, forced


def as_file(lines: list[str]) -> list[str]:
    return [line + "\n" for line in lines]


def rejected(lines: list[str], line: int, message: str) -> None:
    report = verify(as_file(lines))
    assert not report.valid, "the tampered log was accepted"
    assert report.line == line, f"rejected at line {report.line} ({report.error}), expected line {line}"
    assert re.search(message, report.error), report.error
    assert report.to_json() == {"valid": False, "line": line, "error": report.error}


def find(objs, kind: str, start: int = 0, **fields) -> int:
    """0-based index of the first line of type ``kind`` at or after ``start`` matching ``fields``."""
    for i in range(start, len(objs)):
        o = objs[i]
        if o["type"] == kind and all(o.get(k) == v for k, v in fields.items()):
            return i
    raise LookupError(f"no {kind} line with {fields}")


def edited(lines, objs, i: int, **changes) -> list[str]:
    out = list(lines)
    out[i] = dumps({**objs[i], **changes})
    return out


def deal_contract(objs, deal: int) -> str:
    return objs[find(objs, "declare", deal=deal)]["contract"]


# ---- decisions --------------------------------------------------------------------------------
def test_card_not_in_hand(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=3)
    seat = objs[i]["seat"]
    hands = objs[find(objs, "deal", deal=3)]["hands"]
    foreign = hands[(seat + 1) % 4][0]
    rejected(edited(lines, objs, i, card=foreign), i + 1, rf"{foreign} is not in your hand")


def test_card_that_does_not_follow_suit(base):
    """A card the seat holds, but of another suit while it could follow."""
    lines, objs, _ = base
    for i, o in enumerate(objs):
        if o["type"] != "play" or deal_contract(objs, o["deal"]) == "domino":
            continue
        first = find(objs, "play", deal=o["deal"])
        trick_start = first + ((i - first) // 5) * 5  # 4 plays and a trick line per trick
        led = objs[trick_start]["card"]
        if i == trick_start or o["card"][1] != led[1]:
            continue  # a lead, or the seat was void
        played_before = {objs[j]["card"] for j in range(first, i) if objs[j]["type"] == "play"}
        hand = objs[find(objs, "deal", deal=o["deal"])]["hands"][o["seat"]]
        other = [c for c in hand if c[1] != led[1] and c not in played_before]
        if other:
            rejected(edited(lines, objs, i, card=other[0]), i + 1, r"does not follow the led suit")
            return
    pytest.fail("no suitable play line in the base log")


def test_play_out_of_turn(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=5)
    wrong = (objs[i]["seat"] + 2) % 4
    rejected(edited(lines, objs, i, seat=wrong), i + 1, rf"it is seat {objs[i]['seat']}'s turn")


def test_illegal_double_target(base):
    lines, objs, _ = base
    i = find(objs, "double", deal=4)
    seat = objs[i]["seat"]
    rejected(edited(lines, objs, i, targets=[seat]), i + 1, r"may not double itself")


def test_changed_but_legal_double_target_is_caught_by_the_scores(base):
    """Dropping a double that was legal changes no decision, only the settlement: the log
    fails at that deal's deal_end line. The dropped double is a fresh one (not a redouble)
    on a non-declarer who does not redouble it later, between two different raw scores."""
    lines, objs, _ = base
    for deal in range(28):
        if deal_contract(objs, deal) in ("trumps", "domino"):
            continue
        end = find(objs, "deal_end", deal=deal)
        declarer = objs[find(objs, "deal", deal=deal)]["declarer"]
        raw = objs[end]["raw"]
        doubles = [i for i in range(find(objs, "double", deal=deal), end) if objs[i]["type"] == "double"]
        for i in doubles:
            seat = objs[i]["seat"]
            for t in objs[i]["targets"]:
                answered = any(objs[j]["seat"] == t and seat in objs[j]["targets"] for j in doubles if j != i)
                if t != declarer and not answered and raw[seat] != raw[t]:
                    targets = [x for x in objs[i]["targets"] if x != t]
                    rejected(edited(lines, objs, i, targets=targets), end + 1, r"deal_end 'scores' is")
                    return
    pytest.fail("no suitable double line in the base log")


def test_missing_forced_double(base):
    lines, objs, forced = base
    assert forced, "the quota forced no double in the base log"
    i = forced[0] - 1
    assert objs[i]["type"] == "double"
    rejected(edited(lines, objs, i, targets=[]), i + 1, r"must double the declarer .* quota")


def test_contract_declared_twice(base):
    lines, objs, _ = base
    first = objs[find(objs, "declare", deal=0)]
    i = find(objs, "declare", deal=1)
    assert objs[i]["seat"] == first["seat"]  # same block, same declarer
    changed = {k: v for k, v in first.items() if k not in ("deal", "ms", "auto")}
    out = list(lines)
    out[i] = dumps({**changed, "deal": 1})
    rejected(out, i + 1, rf"already declared {first['contract']}")


def test_trump_missing(base):
    lines, objs, _ = base
    i = next(i for i, o in enumerate(objs) if o["type"] == "declare" and o["contract"] == "trumps")
    out = list(lines)
    out[i] = dumps({k: v for k, v in objs[i].items() if k != "trump"})
    rejected(out, i + 1, r"'trump' goes with the trumps contract")


# ---- derived lines ------------------------------------------------------------------------------
def test_changed_score_in_deal_end(base):
    lines, objs, _ = base
    i = find(objs, "deal_end", deal=2)
    scores = list(objs[i]["scores"])
    scores[0] += 1
    rejected(edited(lines, objs, i, scores=scores), i + 1, r"deal_end 'scores' is")


def test_changed_trick_winner(base):
    lines, objs, _ = base
    i = find(objs, "trick")
    rejected(edited(lines, objs, i, winner=(objs[i]["winner"] + 1) % 4), i + 1, r"trick 'winner' is")


def test_changed_match_end_totals(base):
    lines, objs, _ = base
    totals = list(objs[-1]["totals"])
    totals[1] -= 2
    rejected(edited(lines, objs, len(lines) - 1, totals=totals), len(lines), r"match_end totals")


# ---- structure and order -------------------------------------------------------------------------
def test_two_play_lines_swapped(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=6)
    out = list(lines)
    out[i], out[i + 1] = out[i + 1], out[i]
    rejected(out, i + 1, rf"it is seat {objs[i]['seat']}'s turn, not seat {objs[i + 1]['seat']}'s")


def test_declare_and_double_swapped(base):
    lines, objs, _ = base
    i = find(objs, "declare", deal=9)
    out = list(lines)
    out[i], out[i + 1] = out[i + 1], out[i]
    rejected(out, i + 1, r"expected a 'declare' line here, got 'double'")


def test_play_before_the_doubling_is_over(base):
    lines, objs, _ = base
    i = find(objs, "declare", deal=11) + 4  # the declarer's (last) double line
    assert objs[i]["type"] == "double"
    out = lines[:i] + lines[i + 1 :]
    rejected(out, i + 1, r"expected a 'double' line here, got 'play'")


def test_a_deal_missing(base):
    lines, objs, _ = base
    start, end = find(objs, "deal", deal=12), find(objs, "deal_end", deal=12)
    out = lines[:start] + lines[end + 1 :]
    rejected(out, start + 1, r"expected deal 12, got 13")


def test_duplicated_card_in_deal_line(base):
    lines, objs, _ = base
    i = find(objs, "deal", deal=8)
    hands = [list(h) for h in objs[i]["hands"]]
    hands[0][0] = hands[1][0]
    rejected(edited(lines, objs, i, hands=hands), i + 1, r"repeats")


def test_deal_line_with_a_short_hand(base):
    lines, objs, _ = base
    i = find(objs, "deal", deal=8)
    hands = [list(h) for h in objs[i]["hands"]]
    hands[2] = hands[2][:12]
    rejected(edited(lines, objs, i, hands=hands), i + 1, r"seat 2 has 12 cards")


def test_swapped_cards_between_hands(base):
    """Two hands exchange two cards of one suit: still a partition, and nobody's voids change
    (a No Tricks deal has no rank-dependent rule), so the log fails at the first play of
    either card, by the seat that no longer holds it."""
    lines, objs, _ = base
    deal = next(o["deal"] for o in objs if o["type"] == "declare" and o["contract"] == "no_tricks")
    i = find(objs, "deal", deal=deal)
    hands = [list(h) for h in objs[i]["hands"]]
    x = hands[0][0]
    y = next(c for c in hands[1] if c[1] == x[1])
    hands[0][0], hands[1][hands[1].index(y)] = y, x
    first = find(objs, "play", deal=deal)
    end = find(objs, "deal_end", deal=deal)
    j = next(j for j in range(first, end) if objs[j]["type"] == "play" and objs[j]["card"] in (x, y))
    rejected(edited(lines, objs, i, hands=hands), j + 1, rf"{objs[j]['card']} is not in your hand")


def test_wrong_declarer(base):
    lines, objs, _ = base
    i = find(objs, "deal", deal=7)
    right = objs[i]["declarer"]
    rejected(edited(lines, objs, i, declarer=(right + 1) % 4), i + 1, rf"deal 7's declarer is seat {right}")


def test_unknown_line_type(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=1) + 2
    out = lines[:i] + [dumps({"type": "chat", "deal": 1, "text": "hello"})] + lines[i:]
    rejected(out, i + 1, r"unknown line type 'chat'")


@pytest.mark.parametrize("junk", ['{"type":"play","deal":1,', "[1, 2, 3]", "", "not json"])
def test_bad_json_in_the_middle(base, junk):
    lines, objs, _ = base
    i = find(objs, "trick", deal=1)
    out = list(lines)
    out[i] = junk
    rejected(out, i + 1, r"not a JSON object")


def test_line_after_match_end(base):
    lines, _, _ = base
    rejected(lines + [lines[-1]], len(lines) + 1, r"after match_end")


def test_first_line_must_be_the_match_line(base):
    lines, _, _ = base
    rejected(lines[1:], 1, r"first line must be the 'match' line")


def test_unknown_rules_switch_in_header(base):
    lines, objs, _ = base
    rules = {**objs[0]["rules"], "domino_ace": "middle"}
    rejected(edited(lines, objs, 0, rules=rules), 1, r"domino_ace")


def test_unknown_key_in_header_rules(base):
    lines, objs, _ = base
    rules = {**objs[0]["rules"], "house_rule": True}
    rejected(edited(lines, objs, 0, rules=rules), 1, r"unknown rules switch 'house_rule'")


def test_empty_log_is_invalid():
    report = verify([])
    assert not report.valid and report.line == 1


# ---- what the verifier must accept --------------------------------------------------------------
def test_unknown_keys_are_ignored(base):
    lines, objs, _ = base
    out = [dumps({**o, "x_note": "ignored"}) for o in objs]
    report = verify(as_file(out))
    assert report.valid and report.complete


def test_fault_lines_are_accepted_and_checked(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=2)
    fault = {"type": "fault", "deal": 2, "seat": objs[i]["seat"], "kind": "timeout", "detail": "slow",
             "action": "substituted"}  # fmt: skip
    good = lines[:i] + [dumps(fault)] + lines[i:]
    report = verify(as_file(good))
    assert report.valid and report.complete and report.faults == [fault]
    bad = lines[:i] + [dumps({**fault, "kind": "sulking"})] + lines[i:]
    rejected(bad, i + 1, r"fault kind 'sulking'")


def test_final_line_without_newline_is_complete(base):
    lines, _, _ = base
    report = verify(as_file(lines)[:-1] + [lines[-1]])
    assert report.valid and report.complete


# ---- logs cut short --------------------------------------------------------------------------------
def test_truncated_mid_line_is_valid_but_incomplete(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=10) + 3  # a play line in the middle of deal 10
    cut = as_file(lines[:i]) + [lines[i][: len(lines[i]) // 2]]
    report = verify(cut)
    assert report.valid and not report.complete
    assert report.deals == 10
    assert report.totals == objs[find(objs, "deal_end", deal=9)]["totals"]
    assert report.to_json()["complete"] is False


def test_truncated_at_a_line_end_is_valid_but_incomplete(base):
    lines, objs, _ = base
    i = find(objs, "deal_end", deal=20)
    report = verify(as_file(lines[: i + 1]))
    assert report.valid and not report.complete and report.deals == 21


def test_truncated_in_the_last_line(base):
    lines, objs, _ = base
    cut = as_file(lines[:-1]) + [lines[-1][:-5]]  # match_end cut off
    report = verify(cut)
    assert report.valid and not report.complete and report.deals == 28
    assert report.totals == objs[-1]["totals"]


def test_truncated_deal_end_counts_the_deal(base):
    """The deal_end line is derived: cut inside it, the deal's decisions are all there and the
    verifier counts the deal (docs/rulings.md, 'logs cut short')."""
    lines, objs, _ = base
    i = find(objs, "deal_end", deal=4)
    report = verify(as_file(lines[:i]) + [lines[i][:20]])
    assert report.valid and not report.complete and report.deals == 5
    assert report.totals == objs[i]["totals"]


def test_a_cut_line_that_is_not_last_is_an_error(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=10)
    out = list(lines)
    out[i] = lines[i][:10]
    rejected(out, i + 1, r"not a JSON object")


# ---- JSON types: seats, deals and scores are integers (true and 1.0 are not 1) -----------------
def test_boolean_seat(base):
    lines, objs, _ = base
    i = next(i for i, o in enumerate(objs) if o["type"] == "play" and o["seat"] == 1)
    rejected(edited(lines, objs, i, seat=True), i + 1, r"not seat True's")


def test_float_deal_number(base):
    lines, objs, _ = base
    i = find(objs, "play", deal=1)
    rejected(edited(lines, objs, i, deal=1.0), i + 1, r"expected deal 1, got 1.0")


def test_boolean_declarer(base):
    lines, objs, _ = base
    i = next(i for i, o in enumerate(objs) if o["type"] == "deal" and o["declarer"] == 1)
    rejected(edited(lines, objs, i, declarer=True), i + 1, r"declarer is seat 1, not True")


def test_float_scores_in_deal_end(base):
    lines, objs, _ = base
    i = find(objs, "deal_end", deal=0)
    raw = [float(x) for x in objs[i]["raw"]]
    rejected(edited(lines, objs, i, raw=raw), i + 1, r"deal_end 'raw' is")


def test_boolean_trick_winner(base):
    lines, objs, _ = base
    i = next(i for i, o in enumerate(objs) if o["type"] == "trick" and o["winner"] == 1)
    rejected(edited(lines, objs, i, winner=True), i + 1, r"trick 'winner' is True")


def test_float_match_end_totals(base):
    lines, objs, _ = base
    totals = [float(x) for x in objs[-1]["totals"]]
    rejected(edited(lines, objs, len(lines) - 1, totals=totals), len(lines), r"match_end totals")


def test_boolean_version(base):
    lines, objs, _ = base
    rejected(edited(lines, objs, 0, version=True), 1, r"unsupported match-log version True")
