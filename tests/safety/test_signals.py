"""Signals: a second Ctrl-C or SIGTERM while a run shuts down changes nothing but a note; the
run exits 130 (Ctrl-C) or 143 (SIGTERM) without a traceback, says how many matches are recorded
(what the database holds), leaves no process or temporary folder, and the rerun finishes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from .conftest import (
    PY,
    arbiter,
    assert_recorded_logs_intact,
    count_matches,
    env_for,
    kill_tagged,
    tournament_file,
    wait_for,
    wait_gone,
)


@pytest.mark.parametrize(
    "first,second",
    [(signal.SIGTERM, signal.SIGTERM), (signal.SIGINT, signal.SIGINT)],
    ids=["term-term", "ctrl-c-twice"],
)
def test_a_second_signal_during_shutdown(tmp_path, first, second):
    tag = uuid.uuid4().hex
    scratch = Path(tempfile.mkdtemp(prefix="barbu-sig-"))  # short: it holds Unix sockets
    config = tournament_file(tmp_path, rounds=2, tag=tag)  # 4 matches
    proc = subprocess.Popen(
        [PY, "-m", "arbiter", "run", str(config)], cwd=tmp_path, env=env_for(scratch, BARBU_TEST_TAG=tag, PYTHONFAULTHANDLER="1"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(
            lambda: count_matches(tmp_path / "results.db") >= 1 or proc.poll() is not None, 120, "a recorded match"
        )
        assert proc.poll() is None, proc.communicate(timeout=60)
        send = os.killpg if first == signal.SIGINT else os.kill  # Ctrl-C reaches the whole foreground group
        send(proc.pid, first)
        time.sleep(0.05)
        send(proc.pid, second)
        try:
            out, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:  # a hang: its threads' stacks say where (PYTHONFAULTHANDLER)
            os.kill(proc.pid, signal.SIGABRT)
            out, err = proc.communicate(timeout=30)
            pytest.fail(f"the run did not exit after {first.name}, {second.name}:\n{err[-6000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
        leftover = wait_gone(tag)
        kill_tagged(tag)
    assert proc.returncode == 128 + first, (proc.returncode, err)
    assert "Traceback" not in err, err
    said = re.findall(r"interrupted: (\d+) of 4 matches are recorded; run the same command again to finish", err)
    recorded = count_matches(tmp_path / "results.db")
    assert said == [str(recorded)], err
    assert leftover == []  # workers and bots are gone
    assert os.listdir(scratch) == []  # and so are their temporary folders and sockets
    os.rmdir(scratch)
    assert assert_recorded_logs_intact(tmp_path / "results.db") == recorded
    if first == signal.SIGINT:
        return  # (the rerun is the same after either signal: once is enough)
    again = arbiter("run", str(config), "--json", cwd=tmp_path, timeout=240)
    assert again.returncode == 0, again.stderr[-2000:]
    summary = json.loads(again.stdout)
    assert summary["recorded_before"] + summary["reconciled"] == recorded or summary["recorded_before"] == recorded
    assert summary["complete"] and assert_recorded_logs_intact(tmp_path / "results.db") == 4
