"""Bots that start once (arbiter.match.play.MatchHost with reuse): a bot that said multi_match
is kept after a clean match and handed the next one on the same process and stream, never one
that shares a deal with what it has seen; a fault, a death or a deal it saw means a fresh
process; every match keeps its own log, output files and tokens; nothing is left at the end."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import time

import pytest
from barbu.matchlog import verify
from barbu.rules import make_ruleset

from arbiter.errors import ConfigError
from arbiter.match.blocking import BlockingHost, MatchOptions, run_blocking
from arbiter.match.play import BotSpec
from arbiter.process.bot import QUIET_SECONDS, BotProcess
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.logfile import read_log_lines
from arbiter.referee.loop import MatchSetup
from arbiter.referee.timecontrol import TimeControl
from tests.conftest import descendants
from tests.safety.conftest import wait_for

from .conftest import BOTS, PY, RANDOM, live

SHORT = make_ruleset("standard", {"contracts": ["barbu"]})  # 4 deals a match
MULTI = f"{PY} {BOTS / 'multi_bot.py'}"
CONTROL = TimeControl(per_decision=2.0, reserve=5.0, connect=20.0, match_limit=120.0)


@pytest.fixture
def host():
    h = BlockingHost(reuse=True)
    yield h
    h.close()


def play(host, tmp_path, name, bots, seed=None, deals=None):
    setup = MatchSetup(SHORT, seed=seed or 0, match_id=name, deals=deals)
    played = host.play(
        [BotSpec(f"bot{s}", c) for s, c in enumerate(bots)],
        setup,
        tmp_path / f"{name}.jsonl",
        MatchOptions(time_control=CONTROL, fault_policy=FaultPolicy(max_strikes=3)),
    )
    report = verify(read_log_lines(played.log_path))
    assert report.valid and report.complete, report
    return played


def header(played) -> dict:
    return json.loads(played.log_path.read_text().splitlines()[0])


def test_kept_bots_play_the_next_match_and_never_a_deal_they_saw(host, tmp_path):
    first = play(host, tmp_path, "m1", [RANDOM] * 4, seed=1)
    assert first.reused == [] and first.kept == [0, 1, 2, 3] and "reused" not in header(first)
    second = play(host, tmp_path, "m2", [RANDOM] * 4, seed=2)
    assert second.result.faults == ()
    assert second.reused == [0, 1, 2, 3] and second.pids == first.pids
    assert header(second)["reused"] == [{"seat": s, "matches_before": 1} for s in range(4)]
    assert set(second.tokens[:4]).isdisjoint(first.tokens[:4])  # every match has tokens of its own
    # Each match has its own output files: the kept process's second match went to the new ones.
    for s in range(4):
        assert b"in match m1 at" in first.outputs[s].read_bytes()
        assert b"in match m2 at" in second.outputs[s].read_bytes()
        assert b"in match m1 at" not in second.outputs[s].read_bytes()
    # Seed 1 again: the same deals. No process that saw them plays them again, from any seat.
    third = play(host, tmp_path, "m3", [RANDOM] * 4, seed=1)
    assert third.reused == [] and set(third.pids).isdisjoint(first.pids)
    # A kept process may play a match whose deals it never saw, whoever saw them before.
    fourth = play(host, tmp_path, "m4", [RANDOM] * 4, seed=2)
    assert fourth.reused == [0, 1, 2, 3] and set(fourth.pids) == set(third.pids)
    pids = set(first.pids) | set(third.pids)
    host.close()
    assert live(pids) == []


def test_what_a_kept_bot_prints_at_match_end_is_in_that_match_s_file(host, tmp_path):
    """A line printed right after MatchEnd belongs to the match that ended, not to the next one
    (the host hands the process its next match at once)."""
    first = play(host, tmp_path, "e1", [MULTI] * 4, seed=1)
    second = play(host, tmp_path, "e2", [MULTI] * 4, seed=2)
    third = play(host, tmp_path, "e3", [MULTI] * 4, seed=3)
    assert third.reused == [0, 1, 2, 3]
    for s in range(4):
        for n, played in enumerate((first, second, third), start=1):
            text = played.outputs[s].read_text()
            assert f"starts its match {n} " in text, (s, n, text)
            assert n == 3 or f"ends its match {n}\n" in text, (s, n, text)  # the 3rd: not handed on yet
            assert f"ends its match {n - 1}\n" not in text, (s, n, text)


LATE_PRINTER = """
import os, sys, time
print("early", file=sys.stderr, flush=True)
while not os.path.exists("go"):
    time.sleep(0.005)
time.sleep(0.05)  # the match is over: a late log line
print("late", file=sys.stderr, flush=True)
time.sleep(30)
"""


def test_a_bot_silent_through_its_match_still_has_its_late_line_in_that_match_s_file(tmp_path):
    """The quiet the host waits for counts from the match's end, not from the bot's last output:
    a bot that printed nothing in a long match may still print a line right after it."""
    (tmp_path / "late.py").write_text(LATE_PRINTER)
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    bot = BotProcess(f"{PY} late.py", {"BARBU_TOKEN": f"9.{secrets.token_hex(8)}"}, first, cwd=str(tmp_path))
    try:
        wait_for(lambda: "early" in first.read_text(), 20, "its first line")
        time.sleep(2 * QUIET_SECONDS)  # the match: nothing printed
        (tmp_path / "go").touch()
        asyncio.run(bot.settle_output(ended=time.monotonic()))
        bot.redirect_output(second)
        wait_for(lambda: "late" in first.read_text() + second.read_text(), 20, "its late line")
        assert "late" in first.read_text() and second.read_text() == ""
    finally:
        bot.kill()


def test_a_bot_that_cannot_start_ends_the_seats_had_before_it(host, tmp_path):
    """Seat 2's command is missing: seat 0's kept process and seat 1's new one, had before it,
    are let go with the match, not left running outside the host."""
    play(host, tmp_path, "k1", [MULTI] * 4, seed=1)
    kept = descendants(os.getpid())
    with pytest.raises(ConfigError, match="cannot start bot"):
        play(host, tmp_path, "k2", [MULTI, RANDOM, f"{tmp_path}/no-such-bot", MULTI], seed=2)
    assert live(descendants(os.getpid()) - kept) == []
    host.close()
    assert live(kept) == []


def test_fixed_deals_are_told_apart_deal_by_deal(host, tmp_path):
    import random

    from barbu.rules import shuffle_hands

    rng = random.Random(5)
    deals = [shuffle_hands(rng) for _ in range(8)]
    first = play(host, tmp_path, "d1", [RANDOM] * 4, deals=deals[:4])
    overlap = play(host, tmp_path, "d2", [RANDOM] * 4, deals=deals[3:7])  # deal 3 again
    assert overlap.reused == [] and set(overlap.pids).isdisjoint(first.pids)
    fresh = play(host, tmp_path, "d3", [RANDOM] * 4, deals=[deals[7], *deals[:0], deals[7], deals[7], deals[7]])
    assert fresh.reused == [0, 1, 2, 3]


def test_a_fault_a_death_or_no_capability_means_a_fresh_process(host, tmp_path):
    bots = [MULTI, f"env BARBU_MODE=illegal_first {MULTI}", f"{PY} {BOTS / 'illegal_bot.py'}", MULTI]
    first = play(host, tmp_path, "f1", bots, seed=1)
    assert {f.seat for f in first.result.faults} == {1, 2}
    assert first.kept == [0, 3]  # seat 1 faulted, seat 2's bot cannot play twice
    os.kill(first.pids[3], signal.SIGKILL)  # a kept bot dies between matches: charged to nobody
    deadline = time.monotonic() + 10
    while live([first.pids[3]]) and time.monotonic() < deadline:  # dead, not just signalled (a loaded machine)
        time.sleep(0.01)
    second = play(host, tmp_path, "f2", bots, seed=2)
    assert second.reused == [0]
    # Seat 1 has a fresh process, in its own first match again: it fouls again; seats 0, 3 do not.
    assert {f.seat for f in second.result.faults} == {1, 2}
    assert b"starts its match 1" in second.outputs[1].read_bytes()
    assert second.pids[0] == first.pids[0] and len(set(second.pids) & set(first.pids)) == 1
    assert b"starts its match 2" in second.outputs[0].read_bytes()


def test_the_verifier_accepts_the_reused_key_and_checks_its_shape(tmp_path):
    from arbiter.referee.logfile import AtomicLogFile
    from arbiter.referee.loop import Referee
    from arbiter.referee.players import RandomPlayer

    sink = AtomicLogFile(tmp_path / "s.jsonl")
    run_blocking(
        Referee(MatchSetup(SHORT, seed=3), [RandomPlayer(seed=s) for s in range(4)], sink, log_times=False).play()
    )
    lines = sink.commit().read_text().splitlines(keepends=True)

    def with_reused(value) -> list[str]:
        head = json.loads(lines[0])
        head["reused"] = value
        return [json.dumps(head) + "\n", *lines[1:]]

    assert verify(with_reused([{"seat": 1, "matches_before": 2}])).valid
    for bad in ([{"seat": 4, "matches_before": 1}], [{"seat": 1, "matches_before": 0}], {"seat": 1},
                [{"seat": 1, "matches_before": 1}, {"seat": 1, "matches_before": 3}]):  # fmt: skip
        report = verify(with_reused(bad))
        assert not report.valid and "reused" in str(report.error), bad
