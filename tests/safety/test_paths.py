"""Output goes only to a regular file or a new path: a device, a folder, a pipe or an empty name
is refused with one line, before any work; a stopped match leaves no socket or folder behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from .conftest import (
    PY,
    RANDOM_BOT,
    arbiter,
    arbiter_cases,
    assert_one_error,
    env_for,
    processes_tagged,
    wait_for,
    wait_gone,
)

BOT = f"python {RANDOM_BOT}"


@pytest.fixture
def places(tmp_path):
    """A folder, a named pipe, a regular log and a regular file in tmp_path."""
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    r = arbiter("selfplay", "--out", str(tmp_path / "log.jsonl"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "file.txt").write_text("x")
    return tmp_path


CASES = [
    # (arguments, words of the one error line); {t}: the test's folder
    (["selfplay", "--out", "/dev/full"], ["--out /dev/full is a character device, not a regular file"]),
    (["selfplay", "--out", "/dev/null"], ["is a character device"]),
    (["selfplay", "--out", "{t}/folder"], ["is a folder, not a file"]),
    (["selfplay", "--out", "{t}/folder/"], ["is a folder, not a file"]),
    (["selfplay", "--out", ""], ["--out: the file name is empty"]),
    (["selfplay", "--out", "{t}/pipe"], ["is a named pipe, not a regular file"]),
    (["selfplay", "--out", "{t}/file.txt/x.jsonl"], ["cannot be made: {t}/file.txt is not a folder"]),
    (["match", "--log", "{t}/folder", *["--bot", BOT] * 4], ["--log {t}/folder is a folder, not a file"]),
    (["match", "--log", "", *["--bot", BOT] * 4], ["--log: the file name is empty"]),
    (["match", "--log", "/dev/full", *["--bot", BOT] * 4], ["is a character device"]),
    (["replay", "{t}/log.jsonl", "--html", ""], ["--html: the file name is empty"]),
    (["replay", "{t}/log.jsonl", "--html", "{t}/folder"], ["is a folder, not a file"]),
    (["replay", "{t}/log.jsonl", "--html", "/dev/full"], ["is a character device"]),
    (["report", "--html", "", "--db", "{t}/none.db"], ["--html: the file name is empty"]),
    (["report", "--html", "{t}/folder", "--db", "{t}/none.db"], ["is a folder, not a file"]),
    (["report", "--html", "/dev/full", "--db", "{t}/none.db"], ["is a character device"]),
    (
        ["check-bot", "--logs", "{t}/file.txt", "--", "python", str(RANDOM_BOT)],
        ["--logs {t}/file.txt is a file, not a folder"],
    ),
    (["check-bot", "--logs", "/dev/null", "--", "python", str(RANDOM_BOT)], ["is a character device, not a folder"]),
    (["check-bot", "--logs", "", "--", "python", str(RANDOM_BOT)], ["--logs: the folder name is empty"]),
]


def test_output_only_to_a_regular_file_or_a_new_path(places):
    t = str(places)
    before = {p: os.stat(p) for p in ("/dev/full", "/dev/null")}
    results = arbiter_cases([([a.format(t=t) for a in args], places) for args, _ in CASES])
    for (_, words), r in zip(CASES, results, strict=True):
        assert_one_error(r, 2, *[w.format(t=t) for w in words])
    for p, st in before.items():  # the devices are still the devices
        now = os.stat(p)
        assert stat.S_ISCHR(now.st_mode) and now.st_rdev == st.st_rdev
    assert stat.S_ISFIFO(os.stat(places / "pipe").st_mode)
    assert (places / "file.txt").read_text() == "x"
    assert sorted(os.listdir(places / "folder")) == []


def test_a_stopped_match_leaves_no_socket_folder_or_bot(tmp_path, second=signal.SIGINT):
    """SIGTERM during a match: the bots are killed, the socket's and seats' temporary folders
    removed, no log is left; a second signal during that clean-up changes nothing but the
    message. Exit 143."""
    scratch = Path(tempfile.mkdtemp(prefix="barbu-stop-"))  # short: it holds a Unix socket
    tag = uuid.uuid4().hex
    bot = f"env BARBU_TEST_TAG={tag} BARBU_SLEEP=30 python {tmp_path}/sleepy.py"
    (tmp_path / "sleepy.py").write_text(_SLEEPY)
    proc = subprocess.Popen(
        [PY, "-m", "arbiter", "match", "--log", str(tmp_path / "m.jsonl"), "--time-per-decision", "60",
         "--isolation", "none", *["--bot", bot] * 4],  # none: the bots mark this folder when they sleep
        cwd=tmp_path, env=env_for(scratch), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: len(processes_tagged(tag)) >= 4 and (tmp_path / "sleeping").exists(), 60, "the bots to play")
        assert any(n.startswith("barbu-") for n in os.listdir(scratch))  # the socket's folder, the seats'
        proc.send_signal(signal.SIGTERM)
        # The second signal once the first is taken (the bots are being killed): two signals that
        # both wait for a process the machine has not scheduled meanwhile are taken lowest number
        # first, by the kernel and by Python, whatever order they were sent in.
        wait_for(lambda: proc.poll() is not None or len(processes_tagged(tag)) < 4, 60, "the stop to begin")
        proc.send_signal(second)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "interrupted" in err
    assert wait_gone(tag) == []
    assert os.listdir(scratch) == []
    os.rmdir(scratch)
    assert not (tmp_path / "m.jsonl").exists() and not (tmp_path / "m.jsonl.part").exists()


_SLEEPY = '''
"""Plays legally; at its third decision says so (a file) and sleeps BARBU_SLEEP seconds."""
import os, random, time
from pathlib import Path
from barbu.bot import Bot
from barbu.runner import run


class Sleepy(Bot):
    name = "sleepy"

    def __init__(self):
        self.asked = 0

    def decide(self, view):
        self.asked += 1
        if self.asked == 3:
            Path("sleeping").touch()
            time.sleep(float(os.environ.get("BARBU_SLEEP", "1")))
        return random.choice(view.legal)


if __name__ == "__main__":
    raise SystemExit(run(Sleepy()))
'''


def test_a_deep_temporary_folder_still_gives_a_socket(tmp_path):
    """A Unix socket's path has at most 107 bytes: under a $TMPDIR deeper than that, the match's
    socket goes in /tmp instead of failing to bind."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    r = subprocess.run(
        [PY, "-m", "arbiter", "match", "--isolation", "none", "--log", str(tmp_path / "m.jsonl"), *["--bot", BOT] * 4],
        cwd=tmp_path, env={**os.environ, "TMPDIR": str(deep)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.jsonl").is_file() and not any(deep.iterdir())
