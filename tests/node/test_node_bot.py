"""The Node.js sample bot (sample_bots/node/), as a real `node` process over real gRPC.

Node.js 18+ and npm must be installed; the fixture runs scripts/setup_node.sh (npm ci from the
committed lock file, a no-op when node_modules is up to date) under a file lock, so parallel
test workers install at most once.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from barbu.rules import make_ruleset

from arbiter.compliance.checkbot import check_bot
from arbiter.match.blocking import play_bot_match
from arbiter.match.play import BotSpec
from arbiter.referee.loop import MatchSetup
from tests.polyglot import play_checked_match

ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = ROOT / "sample_bots" / "node" / "bot.js"
PY = sys.executable


@pytest.fixture(scope="session")
def node() -> str:
    path = shutil.which("node")
    assert path, "Node.js is not installed: the Node sample bot needs node and npm (see scripts/setup_node.sh)"
    lock = Path(tempfile.gettempdir()) / "barbu-setup-node.lock"
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            setup = subprocess.run(
                ["bash", str(ROOT / "scripts" / "setup_node.sh")], capture_output=True, text=True, timeout=300
            )
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    assert setup.returncode == 0, setup.stderr
    return path


def test_strategy_unit_tests(node):
    out = subprocess.run([node, "--test", str(ROOT / "tests" / "node")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "# fail 0" in out.stdout


def test_the_node_bot_passes_check_bot(node):
    # Over TCP (host:port); the polyglot match below uses the default Unix socket.
    report = check_bot([node, str(NODE_BOT)], seed=5, listen="127.0.0.1:0")
    assert report.ok, report.render()
    assert "'node-heuristic'" in report.step("hello").detail


def test_a_polyglot_match_plays_end_to_end_and_its_log_verifies(node, tmp_path):
    heuristic = ROOT / "sample_bots" / "heuristic_bot.py"
    if not heuristic.exists():  # another engineer's bot, possibly not there yet
        heuristic = ROOT / "sample_bots" / "random_bot.py"
    commands = [
        f"{node} {NODE_BOT}",
        f"env BARBU_SEED=3 {PY} {ROOT / 'sample_bots' / 'random_bot.py'}",
        f"{PY} {heuristic}",
        f"{node} {NODE_BOT}",
    ]
    played = play_checked_match(commands, "polyglot", tmp_path, seed=17)
    # The Node bots log to stderr, which the arbiter keeps beside the match log.
    assert "match polyglot: seat 0, 28 deals" in played.outputs[0].read_text()
    assert "match polyglot: seat 3, 28 deals" in played.outputs[3].read_text()


def test_the_node_bot_plays_well_enough_to_beat_random_bots(node, tmp_path):
    # Seeded random bots and a deterministic Node bot on seeded deals: the same match every run.
    bots = [BotSpec("node", f"{node} {NODE_BOT}")] + [
        BotSpec(f"random{s}", f"env BARBU_SEED={s} {PY} {ROOT / 'sample_bots' / 'random_bot.py'}") for s in (1, 2, 3)
    ]
    played = play_bot_match(bots, MatchSetup(make_ruleset(), seed=23), tmp_path / "vs-random.jsonl")
    assert played.result.faults == ()
    totals = played.result.totals
    assert totals[0] == max(totals) and totals[0] > 0, totals


def test_the_node_bot_exit_codes(node):
    bot = [node, str(NODE_BOT)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BARBU_")}
    missing = subprocess.run(bot, env=env, capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and "BARBU_ARBITER" in missing.stderr
    unreachable = subprocess.run(
        bot, env={**env, "BARBU_ARBITER": "unix:/nonexistent/arbiter.sock", "BARBU_TOKEN": "0.x"},
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert unreachable.returncode == 1 and "cannot reach the arbiter" in unreachable.stderr
