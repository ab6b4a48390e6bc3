"""The arbiter's own failures are never charged to a bot: a stopped (paused) arbiter, and a full
disk under its own files. Real `arbiter` processes, real bots, a real full file system."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.arbiter.conftest import PY, RANDOM, ROOT

ARBITER = str(ROOT / ".venv" / "bin" / "arbiter")

STEADY = """\
import sys, time
from barbu.bot import Bot
from barbu.runner import run

class Steady(Bot):
    asked = 0
    def decide(self, view):
        time.sleep(0.05)
        self.asked += 1
        if self.asked == 8:
            print("halfway", file=sys.stderr, flush=True)
        return view.legal[0]

run(Steady())
"""


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def _stopped(arbiter: subprocess.Popen, ready, what: str, seconds: float) -> tuple[str, str]:
    """SIGSTOP ``arbiter`` once ``ready()`` holds (``what`` if it never does), for ``seconds``;
    then its output once it has ended (it is killed if the test fails meanwhile)."""
    try:
        assert _wait_for(ready, 60), what
        os.kill(arbiter.pid, signal.SIGSTOP)
        time.sleep(seconds)
        os.kill(arbiter.pid, signal.SIGCONT)
        return arbiter.communicate(timeout=120)
    finally:
        if arbiter.poll() is None:
            os.kill(arbiter.pid, signal.SIGCONT)
            arbiter.kill()


def test_a_paused_arbiter_charges_no_bot_and_says_so_in_the_log(tmp_path):
    """SIGSTOP the arbiter (not its bots) mid-match for 3 s, four times its decision limit: the
    bots answered in time, so no fault is charged; the log says the arbiter was stalled."""
    steady = tmp_path / "steady.py"
    steady.write_text(STEADY)
    log = tmp_path / "m.jsonl"
    bots = [a for _ in range(4) for a in ("--bot", f"{PY} {steady}")]
    command = [ARBITER, "match", *bots, "--log", str(log), "--json", "--set", "contracts=barbu,no_tricks"]
    arbiter = subprocess.Popen(
        [*command, "--time-per-decision", "0.75", "--reserve", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    output = tmp_path / "m.seat0.stderr"
    out, err = _stopped(
        arbiter, lambda: output.exists() and "halfway" in output.read_text(), "the match never started", 3
    )
    assert arbiter.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "complete" and result["faults"] == [] and result["forfeits"] == []
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    stalled = [line["stalled_ms"] for line in lines if "stalled_ms" in line]
    assert len(stalled) == 1 and stalled[0] > 2000, stalled
    assert not any(line["type"] == "fault" for line in lines)
    assert "the arbiter did not run for" in err


IMPATIENT = """\
import random, time
import barbu.runner
from barbu.bot import Bot

# A bot whose gRPC gives up on a connection that says nothing for 1 s (gRPC's own default is 20 s).
barbu.runner.CHANNEL_OPTIONS += (("grpc.min_reconnect_backoff_ms", 1000), ("grpc.initial_reconnect_backoff_ms", 1000))

class Impatient(Bot):
    def decide(self, view):
        return random.choice(view.legal)

time.sleep(1.0)  # the arbiter is stopped meanwhile
raise SystemExit(barbu.runner.run(Impatient()))
"""


def test_an_arbiter_stalled_while_the_bots_connect_charges_no_bot(tmp_path):
    """SIGSTOP the arbiter right after it launched its bots, for longer than they wait to
    connect: they give up and exit; the arbiter sees that it stalled, seats them afresh, and the
    match is played with no fault."""
    impatient = tmp_path / "impatient.py"
    impatient.write_text(IMPATIENT)
    bots = [a for _ in range(4) for a in ("--bot", f"{PY} {impatient}")]
    command = [ARBITER, "match", *bots, "--log", str(tmp_path / "m.jsonl"), "--json", "--set", "contracts=barbu"]
    arbiter = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = _stopped(arbiter, lambda: len(_processes_running(str(impatient))) >= 4, "the bots never started", 4)
    assert arbiter.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "complete" and result["faults"] == [] and result["forfeits"] == [], result
    assert "while the bots of match" in err and "no bot is charged, they start again" in err, err


def _processes_running(needle: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and needle.encode() in Path(f"/proc/{entry.name}/cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.fixture
def full_disk(tmp_path):
    """A real file system of 64 KiB (tmpfs, mounted as root): a match log does not fit in it."""
    folder = tmp_path / "full"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    assert mounted.returncode == 0, f"cannot mount a small tmpfs here: {mounted.stderr!r}"
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _one_error_line(proc: subprocess.CompletedProcess, path: Path) -> None:
    errors = [line for line in proc.stderr.splitlines() if not line.startswith(("WARNING", "warning:"))]
    assert proc.returncode == 2, proc.stderr
    assert errors == [f"error: cannot write match log {path}: No space left on device"], proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout and "forfeit" not in proc.stdout


def test_selfplay_on_a_full_disk_stops_with_one_error_and_leaves_nothing(full_disk):
    log = full_disk / "m.jsonl"
    proc = subprocess.run([ARBITER, "selfplay", "--out", str(log)], capture_output=True, text=True, timeout=120)
    _one_error_line(proc, log)
    assert list(full_disk.iterdir()) == []


def test_a_match_on_a_full_disk_blames_no_bot_and_leaves_nothing(full_disk):
    log = full_disk / "m.jsonl"
    bots = [a for _ in range(4) for a in ("--bot", RANDOM)]
    proc = subprocess.run([ARBITER, "match", *bots, "--log", str(log)], capture_output=True, text=True, timeout=120)
    _one_error_line(proc, log)
    assert list(full_disk.iterdir()) == []  # no .part, no empty .stderr files
