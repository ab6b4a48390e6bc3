"""Misbehaving bots (real programs in tests/bots/): each fault is named, the match completes,
the innocent seats' results stand, the log verifies, and no process is left behind."""

import json

import pytest
from barbu.matchlog import verify
from barbu.rules import make_ruleset

from arbiter.match.blocking import MatchOptions, play_bot_match
from arbiter.match.play import BotSpec
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.logfile import read_log_lines
from arbiter.referee.loop import MatchSetup
from arbiter.referee.timecontrol import TimeControl
from tests.timing import patient

from .conftest import BOTS, PY, RANDOM, leftover_processes

CASES = {
    # name: (bot command, extra env prefix, expected fault kind, forfeits?)
    "slow": (f"{PY} {BOTS / 'slow_bot.py'}", "timeout", False),
    "crash": (f"{PY} {BOTS / 'crash_bot.py'}", "crash", True),
    "illegal": (f"{PY} {BOTS / 'illegal_bot.py'}", "illegal", True),
    "garbage": (f"env BARBU_MODE=garbage {PY} {BOTS / 'raw_bot.py'}", "malformed", True),
    "wrong_id": (f"env BARBU_MODE=wrong_id {PY} {BOTS / 'raw_bot.py'}", "protocol", True),
    "flood": (f"env BARBU_MODE=flood {PY} {BOTS / 'raw_bot.py'}", "protocol", True),
    "never_connects": (f"{PY} {BOTS / 'never_connects_bot.py'}", "disconnect", True),
    "wrong_token": (f"{PY} {BOTS / 'wrong_token_bot.py'}", "protocol", True),
    "wrong_version": (f"env BARBU_WRONG=version {PY} {BOTS / 'wrong_token_bot.py'}", "protocol", True),
    "child_leaver": (f"{PY} {BOTS / 'child_leaver_bot.py'}", None, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_misbehaving_bot(tmp_path, case):
    command, kind, forfeits = CASES[case]
    bad_seat = 2
    commands = [RANDOM] * 4
    commands[bad_seat] = command
    bots = [BotSpec(f"bot{s}", c) for s, c in enumerate(commands)]
    control = TimeControl(per_decision=0.3, reserve=0.5, connect=patient(3.0))
    played = play_bot_match(
        bots,
        MatchSetup(make_ruleset(), seed=11, match_id=case),
        tmp_path / f"{case}.jsonl",
        MatchOptions(time_control=control, fault_policy=FaultPolicy(max_strikes=3)),
    )
    r = played.result
    assert r.status == "complete" and r.deals == 28
    assert sum(r.totals) == 0
    # The fault is recorded with the right kind, against the right seat only.
    assert {f.seat for f in r.faults} <= {bad_seat}
    if kind is None:
        assert r.faults == ()
    else:
        assert r.faults, "no fault recorded"
        assert r.faults[0].kind == kind, r.faults
        assert (bad_seat in r.forfeits) == forfeits
    # The log verifies and carries the same fault lines.
    report = verify(read_log_lines(played.log_path))
    assert report.valid and report.complete, report
    assert [(f["seat"], f["kind"]) for f in report.faults] == [(f.seat, f.kind.value) for f in r.faults]
    # No process is left behind (the child leaver's sleeps included: they carry the token).
    assert leftover_processes(played) == []


def test_a_chatty_bot_output_is_capped_not_buffered(tmp_path):
    from arbiter.process.limits import DEFAULT_OUTPUT_LIMIT

    commands = [RANDOM, RANDOM, f"{PY} {BOTS / 'chatty_bot.py'}", RANDOM]
    bots = [BotSpec(f"bot{s}", c) for s, c in enumerate(commands)]
    played = play_bot_match(bots, MatchSetup(make_ruleset(), seed=12), tmp_path / "chatty.jsonl")
    assert played.result.status == "complete" and played.result.faults == ()
    kept = played.outputs[2].read_bytes()
    assert DEFAULT_OUTPUT_LIMIT <= len(kept) < DEFAULT_OUTPUT_LIMIT + 200
    assert kept.rstrip().endswith(b"bytes of output were dropped]")
    assert leftover_processes(played) == []


def test_views_never_show_another_seats_unplayed_cards(tmp_path):
    spy_out = tmp_path / "views.jsonl"
    commands = [f"env BARBU_SPY_OUT={spy_out} {PY} {BOTS / 'spy_bot.py'}", RANDOM, RANDOM, RANDOM]
    bots = [BotSpec(f"bot{s}", c) for s, c in enumerate(commands)]
    played = play_bot_match(bots, MatchSetup(make_ruleset(), seed=21), tmp_path / "spy.jsonl")
    assert played.result.faults == ()
    lines = [json.loads(x) for x in played.log_path.read_text().splitlines()]
    dealt, plays = {}, {}
    for o in lines:
        if o["type"] == "deal":
            dealt[o["deal"]] = o["hands"][0]
            plays[o["deal"]] = []
        elif o["type"] == "play" and o["card"]:
            plays[o["deal"]].append((o["seat"], o["card"]))
    views = [json.loads(x) for x in spy_out.read_text().splitlines()]
    assert len(views) > 100
    decision_views = [v for v in views if v.get("phase") in ("DECLARE", "DOUBLE", "PLAY", "DOMINO_PLAY")]
    assert len(decision_views) > 100
    for view in decision_views:
        deal = view.get("deal", 0)
        # cards on the table so far: Domino turns are in `plays`, trick play in `tricks`/`trick`
        n_played = sum(1 for p in view.get("plays", []) if p.get("card"))
        n_played += sum(len(t.get("cards", [])) for t in view.get("tricks", [])) + len(view.get("trick", []))
        public = {card for _, card in plays[deal][:n_played]}
        mine = set(dealt[deal]) - {c for s, c in plays[deal][:n_played] if s == 0}
        assert set(view.get("hand", [])) == mine
        shown = _cards_in({k: v for k, v in view.items() if k != "hand"})
        assert shown <= public, f"view of deal {deal} shows unplayed cards {shown - public}"


def _cards_in(obj) -> set[str]:
    """Every string in a JSON value that is a card name."""
    ranks, suits = "23456789TJQKA", "CDHS"
    if isinstance(obj, str):
        return {obj} if len(obj) == 2 and obj[0] in ranks and obj[1] in suits else set()
    if isinstance(obj, dict):
        return set().union(*map(_cards_in, obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*map(_cards_in, obj)) if obj else set()
    return set()
