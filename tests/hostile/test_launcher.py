"""The launcher's limits on real (non-bot) processes: how each kernel limit shows in the fault's
detail, how limits are set without util-linux prlimit, how users are switched without setpriv."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from arbiter.process import bot as launcher
from arbiter.process import users
from arbiter.process.bot import BotProcess
from arbiter.process.limits import Limits

from .conftest import UIDS, need_bubblewrap


def run(tmp_path, command: str, limits: Limits = Limits(), isolation: str = "none", wait: float = 20) -> BotProcess:
    token = f"9.{secrets.token_hex(8)}"  # unique: the clean-up kills whatever carries it
    p = BotProcess(
        command,
        {"BARBU_TOKEN": token},
        tmp_path / f"out-{token}.txt",
        cwd=str(tmp_path),
        limits=limits,
        isolation=isolation,
    )
    deadline = time.monotonic() + wait
    while p.exit_code() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return p


@pytest.fixture
def folder():
    """A folder other users may enter (pytest's own are private)."""
    path = tempfile.mkdtemp(prefix="barbu-launcher-")
    os.chmod(path, 0o755)
    yield Path(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("isolation", ["none", "bubblewrap"])
def test_a_program_killed_by_sigxfsz_is_named(folder, isolation):
    if isolation == "bubblewrap":
        need_bubblewrap("bubblewrap")
    # dd does not ignore SIGXFSZ (Python does): it dies of it at the 1 MiB limit.
    p = run(
        folder,
        "sh -c 'exec dd if=/dev/zero of=$TMPDIR/fill bs=64k count=100 2>/dev/null'",
        Limits(file_size=1 << 20),
        isolation,
    )
    try:
        assert p.exit_signal() == 25
        assert p.describe_exit().startswith("the bot process was killed by SIGXFSZ (file size limit: 1 MiB)")
    finally:
        p.kill()


def test_a_program_over_its_cpu_limit_is_named(folder):
    p = run(folder, "sh -c 'while :; do :; done'", Limits(cpu=1))
    try:
        assert p.exit_signal() == 24
        # the kernel charges CPU by ticks: under load the process may be stopped short of 1 s (0.8 s seen)
        assert re.search(
            r"killed by SIGXCPU \(CPU time limit: 1 s per process after (0\.[5-9]|1\.\d) s of CPU", p.describe_exit()
        )
    finally:
        p.kill()


def test_a_program_that_ignores_sigxcpu_is_killed_at_the_hard_limit(folder):
    p = run(folder, "sh -c 'trap \"\" XCPU; while :; do :; done'", Limits(cpu=1))
    try:
        assert p.exit_signal() == 9
        assert "killed by SIGKILL (SIGKILL: the 3 s hard CPU limit" in p.describe_exit()
    finally:
        p.kill()


def test_limits_are_set_without_prlimit_too(folder, monkeypatch):
    monkeypatch.setattr(launcher, "prlimit_program", lambda: None)
    p = run(folder, "sleep 5", Limits(memory=256 << 20, open_files=64, cpu=30), wait=0.3)
    try:
        limits = Path(f"/proc/{p.pid}/limits").read_text()
        rows = {
            " ".join(line.split()[:-1]) if line.split()[-1] in ("bytes", "files", "seconds") else line
            for line in limits.splitlines()
        }
        assert "Max data size 268435456 268435456" in rows
        assert "Max open files 64 64" in rows
        assert "Max cpu time 30 32" in rows
        assert "Max core file size 0 0" in rows
    finally:
        p.kill()


@pytest.mark.parametrize("setpriv", [True, False])
def test_a_bot_of_a_uid_range_runs_as_a_uid_of_its_own(folder, monkeypatch, setpriv):
    if not setpriv:
        monkeypatch.setattr(users, "setpriv_program", lambda: None)  # subprocess's user=/group= instead
    p = run(folder, "sleep 5", Limits(user=UIDS, processes=40), wait=0.3)
    q = run(folder, "sleep 5", Limits(user=UIDS, processes=40), wait=0.3)
    try:
        status = Path(f"/proc/{p.pid}/status").read_text()
        uid = p.user.uid
        assert f"Uid:\t{uid}\t{uid}\t{uid}\t{uid}" in status and f"Gid:\t{uid}\t{uid}\t{uid}\t{uid}" in status
        assert [line.split() for line in status.splitlines() if line.startswith("Groups:")] == [
            ["Groups:"]
        ]  # no supplementary group
        assert q.user.uid != uid  # another bot, another uid
        assert "Max processes 40 40 processes" in " ".join(Path(f"/proc/{p.pid}/limits").read_text().split())
        assert os.stat(p.scratch).st_uid == uid  # its TMPDIR is its own
    finally:
        p.kill()
        q.kill()
    assert launcher.processes_of_uid(uid) == [] and not os.path.exists(p.scratch)


def test_the_process_limit_is_not_applied_to_the_arbiters_own_user(folder):
    p = run(folder, "sleep 5", Limits(processes=40), wait=0.3)
    try:
        assert "Max processes 40" not in " ".join(Path(f"/proc/{p.pid}/limits").read_text().split())
    finally:
        p.kill()


def test_a_missing_program_is_a_clear_error_not_a_crash(folder):
    from arbiter.errors import ConfigError

    with pytest.raises(ConfigError, match="cannot start bot '/no/such/bot': No such file or directory"):
        BotProcess("/no/such/bot", {}, folder / "o.txt")
    with pytest.raises(ConfigError, match="cannot start bot 'nosuchprogram-x': No such file or directory"):
        BotProcess("nosuchprogram-x", {}, folder / "o.txt")
