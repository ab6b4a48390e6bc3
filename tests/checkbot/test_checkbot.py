"""`arbiter check-bot`: real bot processes through the conformance sessions.

The sample bots pass every step; each misbehaving bot of tests/bots/ fails, and the report
names the step that failed with the reason. No process outlives a check.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arbiter.cli import app as arbiter_app
from arbiter.compliance.checkbot import STEP_NAMES, check_bot

from ..arbiter.conftest import live

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
PY = sys.executable
RANDOM = [PY, str(ROOT / "sample_bots" / "random_bot.py")]
HEURISTIC = [PY, str(ROOT / "sample_bots" / "heuristic_bot.py")]


def _assert_complete(report) -> None:
    assert [s.name for s in report.steps] == list(STEP_NAMES)
    assert all(s.detail for s in report.steps)
    assert live(report.pids) == []


def test_the_random_bot_passes_every_step():
    report = check_bot(RANDOM, seed=3)
    _assert_complete(report)
    assert report.ok, report.render()
    # Coverage was observed, not assumed: the details say what the bot was asked.
    assert "declared all 7 contracts" in report.step("declare-contracts").detail
    assert report.step("double-forced-by-quota").detail.startswith("answered")
    assert "passed" in report.step("domino-pass").detail
    assert report.seconds < 30
    # It says multi_match: the quota match was handed to the same process, on the same stream.
    assert report.step("multi-match").detail.startswith("declared: played the quota match on the same process")
    assert len(set(report.pids)) == 1


def test_multi_match_is_optional_but_a_declared_one_must_hold():
    plain = check_bot([PY, str(BOTS / "crash_bot.py")])  # an SDK bot without the capability
    assert plain.step("multi-match").ok and "not declared" in plain.step("multi-match").detail
    liar = check_bot(["env", "BARBU_MODE=quit_after_match", PY, str(BOTS / "multi_bot.py")])
    _assert_complete(liar)
    step = liar.step("multi-match")
    assert not step.ok and "declared, but" in step.detail, step.detail


def test_the_heuristic_bot_passes_every_step(tmp_path):
    report = check_bot(HEURISTIC, logs=tmp_path)
    _assert_complete(report)
    assert report.ok, report.render()
    # --logs keeps both matches' logs and the bot's output, and the logs verify.
    from barbu.matchlog import verify

    from arbiter.referee.logfile import read_log_lines

    for name in ("check-bot-standard.jsonl", "check-bot-quota.jsonl"):
        verification = verify(read_log_lines(tmp_path / name))
        assert verification.valid and verification.complete, verification
    assert (tmp_path / "check-bot-standard.seat0.stderr").exists()


# name: (command, keyword arguments, the step that must fail, words its detail must contain)
MISBEHAVING = {
    "slow": ([PY, str(BOTS / "slow_bot.py")], {"time_limit": 0.4}, "time-limit", "timeout"),
    "crash": ([PY, str(BOTS / "crash_bot.py")], {}, "informational-messages", "exited with code 3"),
    "illegal": ([PY, str(BOTS / "illegal_bot.py")], {}, "legal-actions", "not one of the"),
    "garbage": (["env", "BARBU_MODE=garbage", PY, str(BOTS / "raw_bot.py")], {}, "legal-actions", "malformed"),
    "wrong_id": (["env", "BARBU_MODE=wrong_id", PY, str(BOTS / "raw_bot.py")], {}, "request-ids", "unknown request id"),
    "flood": (["env", "BARBU_MODE=flood", PY, str(BOTS / "raw_bot.py")], {}, "request-ids", "protocol"),
    "never_connects": ([PY, str(BOTS / "never_connects_bot.py")], {"connect_timeout": 1.5}, "hello", "within 1.5s"),
    "wrong_token": ([PY, str(BOTS / "wrong_token_bot.py")], {}, "hello", "token"),
    "wrong_version": (["env", "BARBU_WRONG=version", PY, str(BOTS / "wrong_token_bot.py")], {}, "hello", "version 99"),
}


@pytest.mark.parametrize("case", sorted(MISBEHAVING))
def test_a_misbehaving_bot_fails_the_step_it_breaks(case):
    command, kwargs, step, words = MISBEHAVING[case]
    report = check_bot(command, **kwargs)
    _assert_complete(report)
    assert not report.ok
    failed = report.step(step)
    assert not failed.ok, report.render()
    assert words in failed.detail, failed.detail
    # The text report names the failed step and says why.
    text = report.render()
    assert f"FAIL  {step}" in text and "FAILED:" in text


def test_a_bot_that_cannot_start_fails_the_start_step():
    report = check_bot(["/no/such/bot"])
    assert not report.ok
    assert not report.step("start").ok and "No such file" in report.step("start").detail
    assert report.step("hello").detail.startswith("not reached")


def test_a_bot_that_never_exits_after_match_end_fails_clean_exit(tmp_path):
    lingerer = tmp_path / "lingerer.py"
    lingerer.write_text(
        "import random, time\n"
        "from barbu.bot import Bot\n"
        "from barbu.runner import run\n"
        "class B(Bot):\n"
        "    def decide(self, view):\n"
        "        return random.choice(view.legal)\n"
        "run(B())\n"
        "time.sleep(60)\n"
    )
    report = check_bot([PY, str(lingerer)], exit_grace=0.5)
    _assert_complete(report)
    exit_step = report.step("clean-exit")
    assert not exit_step.ok and "still running" in exit_step.detail
    assert [s.name for s in report.failed] == ["clean-exit"]


def test_cli_json_passes_with_exit_0():
    result = CliRunner().invoke(arbiter_app, ["check-bot", "--json", "--time-per-decision", "1", "--", *RANDOM])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert set(out) == {"ok", "steps", "output"} and out["ok"] is True
    assert [s["name"] for s in out["steps"]] == list(STEP_NAMES)
    assert all(set(s) == {"name", "ok", "detail"} and s["ok"] for s in out["steps"])


def test_cli_text_names_the_failed_step_with_exit_1():
    command = [PY, str(BOTS / "wrong_token_bot.py")]
    result = CliRunner().invoke(arbiter_app, ["check-bot", "--", *command])
    assert result.exit_code == 1
    assert "FAIL  hello" in result.stdout and "unknown or already used token" in result.stdout
    json_result = CliRunner().invoke(arbiter_app, ["check-bot", "--json", "--", *command])
    assert json_result.exit_code == 1
    out = json.loads(json_result.stdout)
    assert out["ok"] is False
    assert {s["name"]: s["ok"] for s in out["steps"]}["hello"] is False


def test_cli_without_a_command_is_a_usage_error():
    result = CliRunner().invoke(arbiter_app, ["check-bot", "--json"])
    assert result.exit_code == 2


def test_the_arbiter_cli_runs_check_bot_if_registered():
    import subprocess

    from arbiter.cli import app

    names = {c.name for c in app.registered_commands}
    assert "check-bot" in names
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "arbiter"), "check-bot", "--json", "--", *RANDOM],
        capture_output=True, text=True, timeout=120, env={**os.environ},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["ok"] is True


def test_cli_with_a_folder_for_a_command_is_one_error_line(tmp_path):
    result = CliRunner().invoke(arbiter_app, ["check-bot", "--", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {tmp_path} is a folder, not a program: give the bot's command, e.g. -- python mybot.py"
    ]


def test_a_crash_shows_the_first_and_the_last_line_of_the_bots_output(tmp_path):
    """A Go panic says its cause first and ends with a stack line; a Python traceback says it
    last: both ends of the output are shown (bounded and escaped)."""
    panicking = tmp_path / "panic.py"
    panicking.write_text(
        "import sys\n"
        "print('panic: runtime error: invalid memory address or nil pointer dereference', file=sys.stderr)\n"
        "print('[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2e4e]', file=sys.stderr)\n"
        "print('goroutine 1 [running]:\\nmain.main()', file=sys.stderr)\n"
        "print('\\t/home/me/bot/main.go:46 +0x46e\\x1b[0m', file=sys.stderr)\n"
        "sys.exit(2)\n"
    )
    report = check_bot([PY, str(panicking)])
    detail = report.step("hello").detail
    assert "exited with code 2" in detail
    assert "first output: panic: runtime error: invalid memory address" in detail, detail
    assert detail.endswith("last output: /home/me/bot/main.go:46 +0x46e\\x1b[0m"), detail
    traceback = tmp_path / "traceback.py"
    traceback.write_text("import sys\nsys.stderr.write('starting\\n')\nraise ValueError('the real cause')\n")
    detail = check_bot([PY, str(traceback)]).step("hello").detail
    assert "first output: starting" in detail and detail.endswith("last output: ValueError: the real cause")
