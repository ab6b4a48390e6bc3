"""Bots that attack the machine's resources: each runs into a kernel limit the tournament set,
is charged a ``crash`` naming that limit, and takes nothing and no one else down with it."""

from __future__ import annotations

import os

import pytest

from arbiter.process.cgroup import per_bot_controllers
from arbiter.process.sandbox import DEFAULT_UIDS
from arbiter.referee.timecontrol import TimeControl
from tests.timing import patient

from .conftest import BOTS, UIDS, TaskWatch, check, play

HOG = "env BARBU_MODE={mode} {{py}} {{bots}}/hostile_hog.py"
# Long decisions: the bot attacks inside a decision and must die of its limit before any timeout.
PATIENT = TimeControl(per_decision=patient(8.0), reserve=4.0, connect=patient(10.0), match_limit=patient(60.0))


@pytest.mark.parametrize("mode", ["user", "bubblewrap"])
def test_a_memory_hog_dies_of_its_memory_limit(tmp_path, mode):
    played = play(tmp_path, "memory", HOG.format(mode="memory"), mode=mode, limits={"memory": 1 << 30}, control=PATIENT)
    check(played, kind="crash", words=("memory limit: 1 GiB",))


def test_a_bot_whose_processes_together_pass_the_memory_limit_dies_of_it(tmp_path):
    """Three children each under the per-process limit, together over it: the bot's own cgroup
    (the default sandbox, where the machine has a memory controller to give) bounds the whole."""
    assert "memory" in per_bot_controllers(), (
        "this machine gives bots no memory cgroup: nothing bounds a bot as a whole"
    )
    played = play(
        tmp_path,
        "memory_split",
        HOG.format(mode="memory_split"),
        mode="bubblewrap",
        limits={"memory": 512 << 20},
        control=PATIENT,
    )
    check(played, kind="crash", words=("memory limit: 512 MiB for the bot's processes together",))


@pytest.mark.parametrize("mode", ["user", "bubblewrap"])
def test_a_cpu_spinner_dies_of_its_cpu_limit(tmp_path, mode):
    played = play(tmp_path, "cpu", HOG.format(mode="cpu"), mode=mode, limits={"cpu": 2}, control=PATIENT)
    check(played, kind="crash", words=("SIGXCPU", "CPU time limit: 2 s per process"))


@pytest.mark.parametrize("mode", ["user", "bubblewrap"])
def test_a_disk_filler_stops_at_its_file_size_limit(tmp_path, mode):
    played = play(tmp_path, "disk", HOG.format(mode="disk"), mode=mode, limits={"file_size": 8 << 20}, control=PATIENT)
    check(played, kind="crash", words=("file size limit: 8 MiB", "File too large"))
    # Nothing it wrote is left: its scratch folder (or its sandbox's /tmp) is gone.
    assert not any(p.endswith("hostile-fill.bin") for p in os.listdir(tmp_path))


@pytest.mark.parametrize("mode", ["user", "bubblewrap", "bubblewrap+user"])
def test_a_fork_storm_is_bounded_by_the_process_limit(tmp_path, mode):
    """Safe by construction: the storm runs as a uid of its own under a small RLIMIT_NPROC (the
    bot refuses to storm otherwise), and the match watchdog bounds the whole match. Under the
    defaults ("bubblewrap": no limits.user), a root arbiter's bots get uids of their own too."""
    limit = 32
    first, last = DEFAULT_UIDS if mode == "bubblewrap" else map(int, UIDS.split("-"))
    control = TimeControl(per_decision=8.0, reserve=4.0, connect=10.0, match_limit=30.0)
    with TaskWatch(first, last) as watch:
        played = play(
            tmp_path, "fork", HOG.format(mode="fork"), mode=mode, limits={"processes": limit}, control=control
        )
    # It dies of a failed fork, or of gRPC failing to start a thread (SIGABRT): either way, the limit is named.
    check(played, kind="crash", words=(f"process limit: {limit} processes and threads",))
    bad_uid = played.uids[2]
    assert len(set(played.uids)) == 4  # each bot had a uid of its own: the storm starved no one else
    # A storm (the watch samples, so it may miss the very top), and never more than the quota.
    assert 8 <= watch.peak.get(bad_uid, 0) <= limit, watch.peak
    assert all(watch.peak.get(uid, 0) < 16 for uid in played.uids if uid != bad_uid), watch.peak


def test_the_kept_output_limit_is_the_tournaments(tmp_path):
    played = play(tmp_path, "chatty", f"{{py}} {BOTS / 'chatty_bot.py'}", mode="user", limits={"output": 64 << 10})
    check(played, kind=None)
    kept = played.outputs[2].read_bytes()
    assert 64 << 10 <= len(kept) < (64 << 10) + 200
    assert kept.rstrip().endswith(b"bytes of output were dropped]")


@pytest.mark.parametrize("mode", ["user", "bubblewrap"])
def test_an_escaped_process_without_the_token_is_still_killed(tmp_path, mode):
    """A child that left the session, lost its parent and cleared its environment (no seat
    token to find) dies with the match: by its uid (a uid of the bot's own), or with the
    sandbox's PID namespace. Without either, it would survive: docs/security.md."""
    marker = f"{os.getpid() % 1000}.{os.getpid() // 1000 % 100 + 13}"
    played = play(
        tmp_path, "escape", f"env BARBU_ESCAPE_SECONDS={marker} {{py}} {BOTS / 'hostile_escape.py'}", mode=mode
    )
    check(played, kind=None)
    assert b"escape: a process escaped" in played.outputs[2].read_bytes()
    survivors = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    if f.read() == f"sleep\0{marker}\0".encode():
                        survivors.append(int(entry.name))
            except OSError:
                continue
    assert survivors == []
