"""``transport: tcp``: an entrant whose stack cannot dial a Unix socket is handed a loopback TCP
address (arbiter.process.tcp_relay), unsandboxed and in the bubblewrap sandbox, with the
handshake and token as they are. Real bot processes (tests/bots/tcp_only_bot.py exits 2 on a
``unix:`` address), the real command line in a subprocess."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arbiter.compliance.checkbot import check_bot
from arbiter.process.bot import BotProcess
from arbiter.process.sandbox import bubblewrap_problem
from arbiter.process.users import resolve_user

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
TCP_BOT = str(ROOT / "tests" / "bots" / "tcp_only_bot.py")
RANDOM_BOT = str(ROOT / "sample_bots" / "random_bot.py")
GIVEN = re.compile(r"tcp_only_bot: BARBU_ARBITER=127\.0\.0\.1:(\d+)$", re.M)


def need_bubblewrap() -> None:
    if problem := bubblewrap_problem(resolve_user(None)):
        pytest.fail(f"{problem}: install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces")


def arbiter(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arbiter", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("isolation", ["none", "bubblewrap"])
def test_check_bot_hands_a_tcp_entrant_a_loopback_address_and_it_passes(tmp_path, isolation):
    if isolation == "bubblewrap":
        need_bubblewrap()
    report = check_bot([PY, TCP_BOT], seed=3, isolation=isolation, transport="tcp", logs=tmp_path)
    assert report.ok, report.render()
    outputs = "".join(p.read_text() for p in tmp_path.glob("*.stderr"))
    assert GIVEN.search(outputs), outputs


def test_the_command_line_s_transport_option_and_what_a_unix_socket_does_to_the_same_bot(tmp_path):
    passed = arbiter("check-bot", "--transport", "tcp", "--", PY, TCP_BOT, cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "ok: all 22 steps passed" in passed.stdout
    failed = arbiter("check-bot", "--", PY, TCP_BOT, cwd=tmp_path)
    assert failed.returncode == 1 and "cannot dial a Unix socket" in failed.stdout, failed.stdout
    wrong = arbiter("check-bot", "--transport", "udp", "--", PY, TCP_BOT, cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stderr.strip() == "error: --transport udp: expected one of unix, tcp"


def test_a_tournament_plays_a_tcp_entrant_in_the_sandbox_with_no_forfeit(tmp_path):
    """A tournament file's ``transport: tcp``, under bubblewrap: the entrant gets a port of its own
    sandbox's loopback, its neighbours the Unix socket, and every match completes."""
    need_bubblewrap()
    (tmp_path / "t.yaml").write_text(
        "name: tcp\n"
        "entrants:\n"
        f"  - {{name: tcp, command: python {TCP_BOT}, transport: tcp}}\n"
        f"  - {{name: random, command: env BARBU_SEED=1 python {RANDOM_BOT}}}\n"
        "format: duplicate\nrounds: 1\nseed: 3\n"
        "rules: {preset: standard, contracts: [barbu]}\n"
        "isolation: bubblewrap\nparallelism: 1\n"
    )
    run = arbiter("run", "t.yaml", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["complete"] and summary["matches"] >= 1
    assert all(row["faults"] == 0 for row in summary["standings"]), summary["standings"]
    outputs = [p.read_text() for p in (tmp_path / "logs" / "tcp").glob("*.stderr")]
    tcp_seats = [o for o in outputs if "tcp_only_bot" in o]
    assert tcp_seats and all(GIVEN.search(o) for o in tcp_seats), tcp_seats


def test_a_tournament_file_s_transport_must_be_one_it_knows(tmp_path):
    (tmp_path / "t.yaml").write_text(
        f"name: bad\nentrants:\n  - {{name: a, command: python {RANDOM_BOT}, transport: quic}}\n"
        f"  - {{name: b, command: python {RANDOM_BOT}}}\n"
    )
    run = arbiter("run", "t.yaml", cwd=tmp_path)
    assert run.returncode == 2
    [line] = run.stderr.splitlines()
    assert line.startswith("error: ") and "'quic' is not a transport; use one of unix, tcp" in line, line


@pytest.mark.parametrize(("mode", "code", "sig"), [("exit7", 7, None), ("kill", -signal.SIGKILL, signal.SIGKILL)])
def test_the_relay_ends_as_the_bot_ends(tmp_path, mode, code, sig):
    """The arbiter reads the bot's own exit (its code, or the signal that killed it) through the relay."""
    env = {"BARBU_ARBITER": f"unix:{tmp_path}/none.sock", "BARBU_TOKEN": "t", "BARBU_MODE": mode}
    bot = BotProcess(f"{PY} {TCP_BOT}", env, tmp_path / "out.stderr", transport="tcp")
    deadline = time.monotonic() + 30
    while bot.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (bot.exit_code(), bot.exit_signal()) == (code, sig)
    bot.kill()
    assert GIVEN.search((tmp_path / "out.stderr").read_text())
