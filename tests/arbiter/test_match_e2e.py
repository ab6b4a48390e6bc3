"""Full matches between real bot processes over real gRPC sockets."""

import json
import subprocess
import sys

import pytest
from barbu.matchlog import dumps, verify
from barbu.rules import PRESETS, make_ruleset

from arbiter.match.blocking import play_bot_match
from arbiter.match.play import BotSpec
from arbiter.process.command import BotCommand
from arbiter.referee.logfile import read_log_lines
from arbiter.referee.loop import MatchSetup

from .conftest import HEURISTIC, RANDOM, ROOT, leftover_processes

RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def _play(tmp_path, commands, preset="standard", seed=1):
    bots = [BotSpec(f"bot{s}", cmd) for s, cmd in enumerate(commands)]
    setup = MatchSetup(make_ruleset(preset), seed=seed, match_id=f"t-{preset}-{seed}")
    return play_bot_match(bots, setup, tmp_path / f"{preset}-{seed}.jsonl")


def test_four_random_bots_play_a_full_match_that_verifies(tmp_path):
    played = _play(tmp_path, [RANDOM] * 4)
    r = played.result
    assert r.status == "complete" and r.deals == 28
    assert r.faults == () and r.forfeits == ()
    assert sum(r.totals) == 0
    report = verify(read_log_lines(played.log_path))
    assert report.valid and report.complete
    assert tuple(report.totals) == r.totals and tuple(report.places) == r.places
    assert not (tmp_path / "standard-1.jsonl.part").exists()
    assert leftover_processes(played) == []


@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "standard"])
def test_a_full_match_under_each_preset(tmp_path, preset):
    played = _play(tmp_path, [RANDOM] * 4, preset=preset, seed=3)
    assert played.result.status == "complete" and played.result.faults == ()
    report = verify(read_log_lines(played.log_path))
    assert report.valid and report.complete
    header = json.loads(played.log_path.read_text().splitlines()[0])
    assert header["rules"]["preset"] == preset


def test_heuristic_against_random_bots(tmp_path):
    played = _play(tmp_path, [HEURISTIC, RANDOM, RANDOM, RANDOM], seed=5)
    assert played.result.status == "complete" and played.result.faults == ()
    assert verify(read_log_lines(played.log_path)).complete


def test_every_decision_time_is_logged(tmp_path):
    played = _play(tmp_path, [RANDOM] * 4, seed=9)
    lines = played.log_path.read_text().splitlines()
    assert [dumps(json.loads(line)) for line in lines] == lines  # every line in the one JSON form
    asked = [json.loads(line) for line in lines]
    decisions = [o for o in asked if o["type"] in ("declare", "double", "play")]
    assert all("ms" in o or o.get("auto") for o in decisions)
    assert sum(1 for o in decisions if "ms" in o) == played.result.decisions


def test_cli_match_json(tmp_path):
    log = tmp_path / "cli.jsonl"
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "arbiter"), "match", *sum((["--bot", RANDOM] for _ in range(4)), []),
         "--seed", "4", "--log", str(log), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result) >= {"totals", "places", "faults", "log"}
    assert result["faults"] == [] and result["log"] == str(log)
    check = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "arbiter"), "replay", str(log), "--verify", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert check.returncode == 0 and json.loads(check.stdout)["totals"] == result["totals"]


def test_cli_match_rejects_a_missing_bot_program_in_one_line(tmp_path):
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "arbiter"), "match", "--bot", "/no/such/bot", *sum((["--bot", RANDOM] for _ in range(3)), []),
         "--log", str(tmp_path / "x.jsonl")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "/no/such/bot" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_bare_python_after_env_options_is_the_arbiters_own(tmp_path):
    """``env -u NAME python bot.py`` is checked as the arbiter's Python (it has the SDK) and
    launched as it (the launcher once ran whatever `python` the PATH had, or none)."""
    command = BotCommand.parse(f"env -u HOME BARBU_SEED=3 python {RANDOM_BOT}")
    assert command.program == "python" and command.launch_words[4] == sys.executable
    assert command.scripts == [str(RANDOM_BOT)]
    played = _play(tmp_path, [f"env -u HOME python {RANDOM_BOT}"] + [RANDOM] * 3)
    assert played.result.complete and played.result.faults == (), played.result.faults
