"""The Go sample bot (sample_bots/go/), built offline from Debian's packages, as a real process
over real gRPC.

The fixture runs sample_bots/go/build.sh (apt-get installs Debian's Go, protoc and grpc-go
packages when missing; protoc generates the code; go builds in GOPATH mode; a no-op when the
executable is up to date) under a file lock, so parallel test workers build at most once.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from arbiter.compliance.checkbot import check_bot
from tests.polyglot import play_checked_match

ROOT = Path(__file__).resolve().parents[2]
GO_DIR = ROOT / "sample_bots" / "go"
GO_BOT = GO_DIR / "bot"
PY = sys.executable


def build(*args: str, folder: Path = GO_DIR) -> subprocess.CompletedProcess[str]:
    """``folder``'s build.sh (the sample bot's, or a copy in a new-bot folder), one at a time."""
    lock = Path(tempfile.gettempdir()) / "barbu-build-go.lock"
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            return subprocess.run(
                ["bash", str(folder / "build.sh"), *args], capture_output=True, text=True, timeout=900
            )
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def go_bot() -> str:
    built = build()
    assert built.returncode == 0, built.stderr
    assert os.access(GO_BOT, os.X_OK)
    return str(GO_BOT)


def test_the_strategy_unit_tests_pass(go_bot):
    tested = build("--test")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.startswith("ok "), tested.stdout


def test_the_generated_code_comes_from_the_proto_and_is_not_committed(go_bot):
    generated = GO_DIR / "gen" / "src" / "barbu" / "barbupb"
    assert sorted(p.name for p in generated.iterdir()) == ["arbiter.pb.go", "arbiter_grpc.pb.go"]
    assert "source: barbu/v1/arbiter.proto" in (generated / "arbiter.pb.go").read_text()
    tracked = subprocess.run(
        ["git", "ls-files", "sample_bots/go"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "sample_bots/go/main.go" in tracked
    assert [
        p for p in tracked if p.endswith(".pb.go") or p.startswith("sample_bots/go/gen/") or p.endswith("/bot")
    ] == []


@pytest.mark.parametrize("listen", [None, "127.0.0.1:0"], ids=["unix-socket", "tcp"])
def test_the_go_bot_passes_check_bot(go_bot, listen):
    # Debian's grpc-go 1.33 has no unix: resolver: the bot's own dialer handles both forms.
    report = check_bot([go_bot], seed=5, listen=listen)
    assert report.ok, report.render()
    assert "'go-heuristic'" in report.step("hello").detail


def test_a_match_against_the_python_sample_bots_plays_end_to_end_and_its_log_verifies(go_bot, tmp_path):
    commands = [
        go_bot,
        f"env BARBU_SEED=3 {PY} {ROOT / 'sample_bots' / 'random_bot.py'}",
        f"{PY} {ROOT / 'sample_bots' / 'heuristic_bot.py'}",
        go_bot,
    ]
    played = play_checked_match(commands, "go", tmp_path, seed=17)
    # The Go bots log to stderr, which the arbiter keeps beside the match log.
    assert "match go: seat 0, 28 deals" in played.outputs[0].read_text()
    assert "match go: seat 3, 28 deals" in played.outputs[3].read_text()


def test_the_go_bot_exit_codes(go_bot):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BARBU_")}
    missing = subprocess.run([go_bot], env=env, capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and "BARBU_ARBITER" in missing.stderr
    unreachable = subprocess.run(
        [go_bot], env={**env, "BARBU_ARBITER": "unix:/nonexistent/arbiter.sock", "BARBU_TOKEN": "0.x"},
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert unreachable.returncode == 1 and "cannot reach the arbiter" in unreachable.stderr


def test_the_polyglot_tournament_file_enters_the_go_node_and_python_bots(go_bot):
    from arbiter.tournament.config import load_config

    config = load_config(ROOT / "tournaments" / "polyglot.yaml")  # checks every command exists
    commands = {e.name: e.launch for e in config.entrants}
    assert commands["go-heuristic"] == "../sample_bots/go/bot"
    assert "node ../sample_bots/node/bot.js" in commands.values()
    assert any("random_bot.py" in c for c in commands.values())
    assert any("heuristic_bot.py" in c for c in commands.values())
    assert config.rules.to_json() == {"preset": "standard"}
