"""Isolation with bubblewrap: what a sandboxed bot can and cannot reach; and the refusal to
play at all when a tournament asks for a sandbox this machine cannot build."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import tempfile

import pytest

import arbiter.match.play as match_module
from arbiter.errors import ConfigError
from arbiter.match.blocking import MatchOptions, play_bot_match
from arbiter.match.play import BotSpec
from arbiter.process import cgroup, sandbox
from arbiter.process.limits import Limits
from arbiter.referee.loop import MatchSetup

from ..arbiter.conftest import live
from ..safety.conftest import arbiter, tournament_file
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
        play_bot_match(bots, MatchSetup(SHORT, seed=1), tmp_path / "m.jsonl", MatchOptions(isolation="bubblewrap"))
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
        play_bot_match(
            bots, MatchSetup(SHORT), tmp_path / "m.jsonl", MatchOptions(isolation="bubblewrap"), listen="127.0.0.1:0"
        )


def test_a_bot_user_that_cannot_reach_the_program_is_a_clear_error(tmp_path):
    private = tempfile.mkdtemp(prefix="barbu-private-")  # mode 0700: other users may not enter
    try:
        script = os.path.join(private, "bot.py")
        open(script, "w").close()
        bots = [BotSpec(f"b{s}", f"/usr/bin/python3 {script}") for s in range(4)]
        with pytest.raises(ConfigError) as e:
            play_bot_match(
                bots, MatchSetup(SHORT), tmp_path / "m.jsonl", MatchOptions(limits=Limits(user="2100000000-2100009999"))
            )
        assert "cannot run as user" in str(e.value) and f"it cannot enter the folder {private}" in str(e.value)
    finally:
        os.unlink(script)
        os.rmdir(private)


@pytest.mark.parametrize("mode", ["root", "user"])
def test_a_grandchild_that_left_the_session_and_cleared_its_environment_dies_with_the_match(
    tmp_path, mode, monkeypatch
):
    """Neither its process group, nor the seat's token, finds it: the bot's cgroup does (as the
    arbiter's user); for a bot of a uid of its own without a cgroup, its uid does."""
    if mode == "user":
        monkeypatch.setattr(cgroup, "hierarchies", lambda: ())  # the fallback: the uid
    else:
        assert cgroup.hierarchies(), "no cgroup is writable here: nothing finds such a grandchild"
    drop = tempfile.mkdtemp(prefix="barbu-escape-")
    os.chmod(drop, 0o777)  # the bot's user writes its grandchild's pid there
    pid_file = os.path.join(drop, "pid")
    try:
        command = f"env ESCAPE_PID_FILE={pid_file} {{py}} {BOTS / 'setsid_escaper_bot.py'}"
        played = play(tmp_path, "escape", command, mode=mode)
        check(played, kind=None)
        with open(pid_file) as f:
            grandchild = int(f.read())
    finally:
        shutil.rmtree(drop, ignore_errors=True)
    assert grandchild not in played.pids
    assert live([grandchild]) == [], f"the grandchild {grandchild} outlived its match"
    for hierarchy in cgroup.hierarchies():
        assert not [n for n in os.listdir(hierarchy.parent) if n.startswith(f"barbu-{os.getpid()}-")]


def test_under_the_default_a_bot_reaches_no_record(tmp_path):
    """A real `arbiter run` of a file that names no isolation: the bots run in bubblewrap here, and
    one that tries cannot read or append to the results database, another tournament's logs,
    or its own tournament's log folder."""
    first = tournament_file(tmp_path, "other")
    assert arbiter("run", str(first), cwd=tmp_path, timeout=300).returncode == 0
    database = tmp_path / "results.db"
    other_log = sorted((tmp_path / "logs").glob("other-*.jsonl"))[0]
    before = {other_log: other_log.read_bytes()}
    folder = tmp_path / "second"
    folder.mkdir()
    paths = ":".join(str(p) for p in (database, other_log, tmp_path / "logs", folder / "logs"))
    probe = f"env BARBU_PROBE_PATHS={paths} python {BOTS / 'record_probe_bot.py'}"
    second = tournament_file(folder, "t", bots=(probe, f"python {RANDOM_BOT}"))
    second.write_text(second.read_text().replace("database: results.db", f"database: {database}"))
    assert "isolation" not in second.read_text()
    r = arbiter("run", str(second), cwd=folder, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    outputs = sorted((folder / "logs").glob("t-*.seat*.stderr"))
    lines = [x for p in outputs for x in p.read_text().splitlines() if x.startswith("reach: ")]
    assert lines, [p.name for p in outputs]
    for line in lines:
        for path, seen in json.loads(line.removeprefix("reach: ")).items():
            assert seen["read"].startswith("refused"), (path, seen)  # a folder is not read: refused too
    # what it appended went to the sandbox's private /tmp, if anywhere: never to the host's files
    assert other_log.read_bytes() == before[other_log]
    assert b"planted-by-record-probe" not in database.read_bytes()
    assert not list(tmp_path.rglob("planted.jsonl"))
    header = json.loads(sorted((folder / "logs").glob("t-*.jsonl"))[0].read_text().splitlines()[0])
    assert header["isolation"] == "bubblewrap"


def test_a_bots_own_folder_is_shown_whole_and_any_other_working_folder_only_in_what_the_command_names(tmp_path):
    """A folder with an entrant.yaml (a submission, a new-bot folder) is the bot's: its runtime's
    libraries are found whatever the command names (a jlink image's lib/ beside its bin/java).
    A tournament's folder, shared by its entrants, stays hidden but for the named files' folders."""
    user = sandbox.sandbox_user(sandbox.bot_user(None, "bubblewrap"))
    for name, marked in (("bot", True), ("tournament", False)):
        folder = tmp_path / name
        (folder / "jre" / "bin").mkdir(parents=True)
        (folder / "jre" / "lib").mkdir()
        (folder / "jre" / "bin" / "java").write_text("#!/bin/sh\n")
        if marked:
            (folder / "entrant.yaml").write_text("name: bot\ncommand: jre/bin/java -jar bot.jar\n")
        argv = sandbox.bubblewrap_argv(
            ["jre/bin/java", "-jar", "bot.jar"], cwd=str(folder), socket=None, user=user, tmp_size=None
        )
        binds = {argv[i + 1] for i, word in enumerate(argv) if word == "--ro-bind"}
        real = os.path.realpath(folder)
        assert (real in binds) is marked, (name, sorted(binds))
        assert os.path.join(real, "jre", "bin") in binds or real in binds
