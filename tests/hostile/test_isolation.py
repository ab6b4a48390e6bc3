"""Isolation with bubblewrap: what a sandboxed bot can and cannot reach; and the refusal to
play at all when a tournament asks for a sandbox this machine cannot build."""

from __future__ import annotations

import json
import logging
import os
import socket
import tempfile

import pytest

import arbiter.match.play as match_module
from arbiter.errors import ConfigError
from arbiter.match.blocking import play_bot_match
from arbiter.match.play import BotSpec
from arbiter.process import sandbox
from arbiter.process.limits import Limits
from arbiter.referee.loop import MatchSetup

from .conftest import BOTS, PY, RANDOM_BOT, SHORT, check, play


@pytest.fixture
def probe_env(monkeypatch):
    """A host file and a loopback port no bot should reach, and an arbiter-only variable. (The
    command names the file's folder, not the file: the folders of files a command names are
    shown to the sandbox, read-only.)"""
    folder = tempfile.mkdtemp(prefix="barbu-secret-")
    secret = os.path.join(folder, "secret.txt")
    with open(secret, "w") as f:
        f.write("the arbiter's secret")
    os.chmod(folder, 0o755)
    os.chmod(secret, 0o644)  # readable by anyone on the host: only a sandbox hides it
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    monkeypatch.setenv("BARBU_PROBE_ARBITER_ONLY", "database password")
    yield f"env BARBU_PROBE_PORT={listener.getsockname()[1]} BARBU_PROBE_SECRET={folder} BARBU_PROBE_ENV=BARBU_PROBE_ARBITER_ONLY"
    listener.close()
    os.unlink(secret)
    os.rmdir(folder)


def probed(played, seat: int = 2) -> dict:
    line = next(x for x in played.outputs[seat].read_text().splitlines() if x.startswith("probe: "))
    return json.loads(line.removeprefix("probe: "))


def test_a_sandboxed_bot_has_no_network_no_host_files_and_a_private_tmp(tmp_path, probe_env):
    played = play(tmp_path, "probe", f"{probe_env} {{py}} {BOTS / 'hostile_probe.py'}", mode="bubblewrap")
    check(played, kind=None)
    seen = probed(played)
    assert seen["network"].startswith("refused"), seen
    assert seen["secret"].startswith("unreadable"), seen
    assert seen["own_folder"].startswith("read-only"), seen
    assert seen["tmp"] == "writable", seen
    assert seen["processes"] <= 3, seen  # its own PID namespace: the sandbox's init, itself
    assert seen["arbiter_env"] == "absent", seen
    header = json.loads(played.log_path.read_text().splitlines()[0])
    assert header["isolation"] == "bubblewrap" and header["limits"]["memory"] == 2 << 30


def test_without_isolation_a_bot_sees_everything_and_the_log_says_so(tmp_path, probe_env, monkeypatch, caplog):
    """What isolation: none means (docs/security.md), shown rather than assumed."""
    monkeypatch.setattr(match_module, "_warned_unisolated", False)
    with caplog.at_level(logging.WARNING, logger="arbiter.match"):
        played = play(tmp_path, "open", f"{probe_env} {{py}} {BOTS / 'hostile_probe.py'}", mode="root")
    check(played, kind=None)
    seen = probed(played)
    assert seen["network"] == "connected" and seen["secret"] == "the arbiter's secret"
    assert seen["arbiter_env"] == "database password"
    assert "bots are not isolated" in caplog.text
    header = json.loads(played.log_path.read_text().splitlines()[0])
    assert header["isolation"] == "none" and header["limits"]["user"] is None


def test_a_bot_of_another_user_gets_a_clean_environment(tmp_path, probe_env):
    played = play(tmp_path, "env", f"{probe_env} {{py}} {BOTS / 'hostile_probe.py'}", mode="user")
    check(played, kind=None)
    seen = probed(played)
    assert seen["arbiter_env"] == "absent"
    assert seen["own_folder"].startswith("read-only")  # the repository is not its user's


def test_a_match_that_asks_for_a_sandbox_it_cannot_have_is_not_played(tmp_path, monkeypatch):
    """The refusal when bwrap cannot run (simulated: as if it were not installed)."""
    monkeypatch.setattr(sandbox, "bwrap_program", lambda: None)
    monkeypatch.setattr(sandbox, "_bwrap_checks", {})
    bots = [BotSpec(f"b{s}", f"{PY} {RANDOM_BOT}") for s in range(4)]
    with pytest.raises(ConfigError) as e:
        play_bot_match(bots, MatchSetup(SHORT, seed=1), tmp_path / "m.jsonl", isolation="bubblewrap")
    message = str(e.value)
    assert "isolation: bubblewrap was asked for, but bwrap cannot build a sandbox" in message
    assert (
        "the bwrap program is not installed" in message
        and "Bots are not isolated, so the match is not played" in message
    )
    assert os.listdir(tmp_path) == []  # no log, no half log, no output file: nothing was started


def test_isolation_needs_the_unix_socket(tmp_path):
    bots = [BotSpec(f"b{s}", f"{PY} {RANDOM_BOT}") for s in range(4)]
    with pytest.raises(ConfigError, match="no network"):
        play_bot_match(bots, MatchSetup(SHORT), tmp_path / "m.jsonl", isolation="bubblewrap", listen="127.0.0.1:0")


def test_a_bot_user_that_cannot_reach_the_program_is_a_clear_error(tmp_path):
    private = tempfile.mkdtemp(prefix="barbu-private-")  # mode 0700: other users may not enter
    try:
        script = os.path.join(private, "bot.py")
        open(script, "w").close()
        bots = [BotSpec(f"b{s}", f"/usr/bin/python3 {script}") for s in range(4)]
        with pytest.raises(ConfigError) as e:
            play_bot_match(bots, MatchSetup(SHORT), tmp_path / "m.jsonl", limits=Limits(user="2100000000-2100009999"))
        assert "cannot run as user" in str(e.value) and f"it cannot enter the folder {private}" in str(e.value)
    finally:
        os.unlink(script)
        os.rmdir(private)
