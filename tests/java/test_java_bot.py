"""The Java sample bot (sample_bots/java/), built offline from Debian's packages, as a real process
over real gRPC.

The fixture runs sample_bots/java/build.sh (apt-get installs Debian's OpenJDK, protoc, the
grpc-java plugin and jars when missing; protoc generates the code; javac compiles; jar packs; a
no-op when the bot is up to date) under a file lock, so parallel test workers build at most once.
Debian's grpc-java cannot dial a Unix socket (its netty has no native epoll library), so the
arbiter listens on loopback TCP here.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from barbu.rules import make_ruleset

from arbiter.compliance.checkbot import check_bot
from arbiter.match.blocking import MatchOptions, play_bot_match
from arbiter.match.play import BotSpec
from arbiter.process.sandbox import bubblewrap_problem
from arbiter.process.users import resolve_user
from arbiter.referee.loop import MatchSetup
from tests.polyglot import play_checked_match

ROOT = Path(__file__).resolve().parents[2]
JAVA_DIR = ROOT / "sample_bots" / "java"
JAVA_BOT = JAVA_DIR / "bot"
PY = sys.executable
TCP = "127.0.0.1:0"


def build(*args: str, folder: Path = JAVA_DIR) -> subprocess.CompletedProcess[str]:
    """``folder``'s build.sh (the sample bot's, or a copy in a new-bot folder), one at a time."""
    lock = Path(tempfile.gettempdir()) / "barbu-build-java.lock"
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            return subprocess.run(
                ["bash", str(folder / "build.sh"), *args], capture_output=True, text=True, timeout=900
            )
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def java_bot() -> str:
    built = build()
    assert built.returncode == 0, built.stderr
    assert os.access(JAVA_BOT, os.X_OK)
    return str(JAVA_BOT)


def test_the_strategy_unit_tests_pass(java_bot):
    tested = build("--test")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "[         8 tests successful      ]" in tested.stdout, tested.stdout
    assert "[         0 tests failed          ]" in tested.stdout, tested.stdout


def test_the_build_is_reproducible_from_a_clean_folder_and_then_does_nothing(java_bot, tmp_path):
    """The sources alone (as a checkout or a new-bot folder has them: its own copy of the .proto)
    build to a jar that names only Debian's jars; a second build leaves it as it is."""
    folder = tmp_path / "java bot"  # a space in the path, as an author's folder may have
    shutil.copytree(JAVA_DIR / "src", folder / "src")
    shutil.copy(JAVA_DIR / "build.sh", folder)
    (folder / "proto" / "barbu" / "v1").mkdir(parents=True)
    shutil.copy(ROOT / "proto" / "barbu" / "v1" / "arbiter.proto", folder / "proto" / "barbu" / "v1")
    first = build(folder=folder)
    assert first.returncode == 0, first.stderr
    jar = folder / "build" / "bot.jar"
    with zipfile.ZipFile(jar) as archive:
        manifest = archive.read("META-INF/MANIFEST.MF").decode().replace("\r\n ", "").replace("\n ", "")
        assert "bot/Main.class" in archive.namelist() and "barbu/v1/ArbiterGrpc.class" in archive.namelist()
    class_path = next(line for line in manifest.splitlines() if line.startswith("Class-Path:")).split()[1:]
    assert class_path and all(p.startswith("/usr/share/java/") and Path(p).is_file() for p in class_path)
    assert "/usr/share/java/grpc-netty.jar" in class_path
    assert not any("epoll" in p for p in class_path)  # no native library in Debian: NIO only
    built_at = jar.stat().st_mtime_ns
    again = build(folder=folder)
    assert again.returncode == 0 and again.stdout == "" and again.stderr == "", again
    assert jar.stat().st_mtime_ns == built_at
    missing = {k: v for k, v in os.environ.items() if not k.startswith("BARBU_")}
    ran = subprocess.run([str(folder / "bot")], env=missing, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 2 and "BARBU_ARBITER" in ran.stderr  # the launcher runs the jar


def test_the_generated_code_comes_from_the_proto_and_is_not_committed(java_bot):
    generated = JAVA_DIR / "build" / "gen" / "barbu" / "v1"
    assert sorted(p.name for p in generated.iterdir()) == ["ArbiterGrpc.java", "ArbiterOuterClass.java"]
    assert "source: barbu/v1/arbiter.proto" in (generated / "ArbiterOuterClass.java").read_text()
    tracked = subprocess.run(
        ["git", "ls-files", "sample_bots/java"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "sample_bots/java/src/bot/Main.java" in tracked
    assert [p for p in tracked if "/build/" in p or p.endswith((".jar", ".class", "/bot"))] == []


def test_the_java_bot_passes_check_bot_over_tcp(java_bot):
    report = check_bot([java_bot], seed=5, listen=TCP)
    assert report.ok, report.render()
    assert "'java-heuristic'" in report.step("hello").detail


def test_with_transport_tcp_it_passes_check_bot_in_the_sandbox_with_no_relay_of_its_own(java_bot):
    """The arbiter listens on its Unix socket as always; the bot, asking for ``transport: tcp``, is
    handed a port of the sandbox's own loopback (arbiter.process.tcp_relay) and dials it."""
    if problem := bubblewrap_problem(resolve_user(None)):
        pytest.fail(f"{problem}: install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces")
    report = check_bot([java_bot], seed=5, isolation="bubblewrap", transport="tcp")
    assert report.ok, report.render()
    assert "'java-heuristic'" in report.step("hello").detail


def test_on_a_unix_socket_it_says_why_it_cannot_connect_and_exits_2(java_bot):
    report = check_bot([java_bot], seed=5)
    assert not report.ok
    hello = report.step("hello").detail
    assert "exited with code 2" in hello and "Unix socket" in hello and "transport: tcp" in hello, hello


def test_a_match_against_the_python_sample_bots_plays_end_to_end_and_its_log_verifies(java_bot, tmp_path):
    commands = [
        java_bot,
        f"env BARBU_SEED=3 {PY} {ROOT / 'sample_bots' / 'random_bot.py'}",
        f"{PY} {ROOT / 'sample_bots' / 'heuristic_bot.py'}",
        java_bot,
    ]
    played = play_checked_match(commands, "java", tmp_path, seed=17, listen=TCP)
    # The Java bots log to stderr, which the arbiter keeps beside the match log.
    assert "match java: seat 0, 28 deals" in played.outputs[0].read_text()
    assert "match java: seat 3, 28 deals" in played.outputs[3].read_text()


def test_the_java_bot_exit_codes(java_bot):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BARBU_")}
    missing = subprocess.run([java_bot], env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "BARBU_ARBITER" in missing.stderr
    no_token = subprocess.run(
        [java_bot], env={**env, "BARBU_ARBITER": "127.0.0.1:1"}, capture_output=True, text=True, timeout=60
    )
    assert no_token.returncode == 2 and "BARBU_TOKEN" in no_token.stderr
    unreachable = subprocess.run(
        [java_bot], env={**env, "BARBU_ARBITER": "127.0.0.1:1", "BARBU_TOKEN": "0.x"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert unreachable.returncode == 1 and "cannot reach the arbiter at 127.0.0.1:1" in unreachable.stderr


def test_in_bubblewrap_the_jvm_runs_grpc_java_from_debian_s_jars_and_says_only_why_it_failed(java_bot, tmp_path):
    """The sandbox shows the JVM and /usr/share/java, and a default JVM starts under its limits.
    Pointed at a port of the sandbox's own loopback where nothing listens (it has no other
    network), the bot gets as far as netty's connect and says why in one line: netty's warning
    about a network without a hardware address is not there."""
    if problem := bubblewrap_problem(resolve_user(None)):
        pytest.fail(f"{problem}: install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces")
    commands = [f"env BARBU_ARBITER=127.0.0.1:1 {java_bot}"] + [f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"] * 3
    played = play_bot_match(
        [BotSpec(f"seat{s}", c) for s, c in enumerate(commands)],
        MatchSetup(make_ruleset("standard", {"contracts": ["barbu"]}), seed=1, match_id="java-sandboxed"),
        tmp_path / "java-sandboxed.jsonl",
        MatchOptions(isolation="bubblewrap"),
    )
    assert [(f.seat, f.kind.value) for f in played.result.faults] == [(0, "crash")], played.result.faults
    lines = played.outputs[0].read_text().splitlines()
    assert len(lines) == 1 and "cannot reach the arbiter at 127.0.0.1:1" in lines[0], lines
