"""``arbiter replay --verify [--json]`` and ``arbiter selfplay`` as a user meets them: a real
process, its exit code, stdout and stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from barbu.matchlog import dumps
from barbu.rules import make_ruleset

from ..rules.kit import play_random_match

ARBITER = str(Path(sys.executable).with_name("arbiter"))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([ARBITER, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def good_log(tmp_path_factory):
    state, lines, _ = play_random_match(make_ruleset("seed_fi"), 11)
    path = tmp_path_factory.mktemp("logs") / "good.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path, state, lines


def assert_one_line_error(proc: subprocess.CompletedProcess, pattern: str) -> None:
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert "\n" not in err and "Traceback" not in proc.stderr
    assert err.startswith("error: ") and pattern in err, err


def test_replay_json_good_log(good_log):
    path, state, _ = good_log
    proc = run("replay", str(path), "--verify", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert set(report) == {"valid", "complete", "deals", "totals", "places"}
    assert report == {"valid": True, "complete": True, "deals": 28, "totals": state.totals, "places": state.places()}


def test_replay_text_good_log(good_log):
    path, state, _ = good_log
    proc = run("replay", str(path), "--verify")
    assert proc.returncode == 0
    assert proc.stdout.startswith("valid: complete, 28 deals") and str(state.totals) in proc.stdout


def test_replay_json_bad_log(good_log, tmp_path):
    path, _, lines = good_log
    objs = [json.loads(line) for line in lines]
    i = next(i for i, o in enumerate(objs) if o["type"] == "deal_end" and o["deal"] == 3)
    objs[i]["raw"] = [0, 0, 0, 0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(dumps(o) + "\n" for o in objs), encoding="utf-8")
    proc = run("replay", str(bad), "--verify", "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert set(report) == {"valid", "line", "error"}
    assert report["valid"] is False and report["line"] == i + 1 and "raw" in report["error"]
    text = run("replay", str(bad), "--verify")
    assert text.returncode == 1 and text.stdout.startswith(f"invalid: line {i + 1}: ")


def test_replay_json_truncated_log(good_log, tmp_path):
    path, _, _ = good_log
    data = path.read_text(encoding="utf-8")
    cut = tmp_path / "cut.jsonl.part"
    cut.write_text(data[: len(data) // 2], encoding="utf-8")
    proc = run("replay", str(cut), "--verify", "--json")
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert report["valid"] is True and report["complete"] is False and 0 < report["deals"] < 28


def test_replay_missing_file(tmp_path):
    assert_one_line_error(run("replay", str(tmp_path / "nope.jsonl"), "--verify", "--json"), "no such match log")


def test_replay_a_folder(tmp_path):
    assert_one_line_error(run("replay", str(tmp_path), "--verify"), "is a folder")


def test_replay_binary_file(tmp_path):
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\xff\xfe\x00garbage")
    assert_one_line_error(run("replay", str(junk), "--verify"), "not a UTF-8")


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (["--rules", "bogus"], "unknown rules preset 'bogus'"),
        (["--set", "domino_ace=middle"], "rules switch 'domino_ace': 'middle' is not one of high, low"),
        (["--set", "no_such_switch=1"], "unknown rules switch 'no_such_switch'"),
        (["--set", "double_quota=lots"], "double_quota"),
        (["--set", "domino_payouts=50,20,5,0"], "add up to 65"),
        (["--set", "contracts=barbu,whist"], "unknown contract 'whist'"),
        (["--set", "domino_ace"], "expected switch=value"),
    ],
    ids=["preset", "value", "name", "quota", "payouts", "contracts", "form"],
)
def test_selfplay_bad_rules(tmp_path, args, pattern):
    out = tmp_path / "m.jsonl"
    proc = run("selfplay", "--seed", "1", "--out", str(out), *args)
    assert_one_line_error(proc, pattern)
    assert not out.exists()
