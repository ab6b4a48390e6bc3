"""A paused `arbiter run` (issue 20, item 6): a league whose arbiter and worker processes are
stopped (``kill -STOP``) for far longer than the time control, then continued, finishes as if it
had never been paused: no fault charged to any bot, the same standings as the same league played
without a pause, and the log says that the arbiter noticed its stall.

Real `arbiter run` processes with their spawned workers and real bot subprocesses. The bots are
deterministic (each plays from its own seed) and think 10 ms a decision, so that a pause almost
surely catches a worker waiting for a bot's answer; the time control is short (0.5 s a decision,
2 s of reserve, 4 s to connect) and each pause several times longer.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from arbiter.process.procfs import children_of
from tests.conftest import descendants
from tests.safety.conftest import PY, env_for, kill_tagged, wait_for

PACED_BOT = """\
import os, random, time
from pathlib import Path
from barbu.bot import Bot
from barbu.runner import run

MARKS = os.environ.get("PAUSE_MARKS")  # the paused run's folder of marks: the test watches them
if MARKS:
    Path(MARKS, f"started-{os.getpid()}").touch()
time.sleep(0.3)  # a start-up that takes a while, as real bots' do


class Paced(Bot):
    name = "paced"

    def __init__(self):
        self.rng = random.Random(int(os.environ["SEED"]))
        self.asked = 0

    def decide(self, view):
        time.sleep(0.01)
        self.asked += 1
        if MARKS and self.asked == 20:
            Path(MARKS, f"playing-{os.getpid()}").touch()
        return self.rng.choice(view.legal)


raise SystemExit(run(Paced()))
"""

PAUSE = 4.0  # seconds: eight times a decision's limit, longer than its limit with the whole reserve
START_PAUSE = 6.0  # seconds: longer than the connect limit


def league(folder: Path) -> Path:
    """A small league of two deterministic bots: 2 rounds of 2 matches, 4 deals each."""
    folder.mkdir()
    bot = folder / "paced_bot.py"
    bot.write_text(PACED_BOT)
    path = folder / "paused.yaml"
    path.write_text(
        "name: paused\n"
        "entrants:\n"
        f"  - {{name: one, command: env SEED=1 python {bot}}}\n"
        f"  - {{name: two, command: env SEED=2 python {bot}}}\n"
        "rules: {contracts: [barbu]}\n"
        "rounds: 2\nseed: 5\nparallelism: 2\nisolation: none\ndatabase: results.db\nlog_folder: logs\n"
        "time_control: {per_decision: 0.5, reserve: 2, connect: 4, match_limit: 300}\n"
    )
    return path


def record(folder: Path) -> tuple[list, list, list]:
    """What a run recorded: the standings (rounded), every match's totals, every fault."""
    shown = subprocess.run(
        [PY, "-m", "arbiter", "standings", str(folder / "paused.yaml"), "--json"],
        cwd=folder, env=env_for(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    standings = [
        (s["name"], round(s["mu"], 9), round(s["sigma"], 9), s["matches"], s["faults"])
        for s in json.loads(shown.stdout)
    ]
    with sqlite3.connect(f"file:{folder / 'results.db'}?mode=ro", uri=True) as db:
        totals = db.execute("select number, status, seats, totals from matches order by number").fetchall()
        faults = db.execute("select match_id, seat, kind, detail from faults").fetchall()
    return standings, totals, faults


@pytest.fixture(scope="module")
def unpaused(tmp_path_factory) -> tuple[list, list, list]:
    """The league played once without a pause: what every paused run must record too."""
    folder = tmp_path_factory.mktemp("unpaused") / "league"
    path = league(folder)
    run = subprocess.run(
        [PY, "-m", "arbiter", "run", str(path), "--json"],
        cwd=folder, env=env_for(), capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    standings, totals, faults = record(folder)
    assert faults == [] and len(totals) == 4 and all(status == "complete" for _, status, _, _ in totals)
    return standings, totals, faults


def stop(pids: list[int]) -> list[int]:
    """SIGSTOP each process still there; returns those stopped."""
    stopped = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
    return stopped


def paused_run(folder: Path, tag: str, ready: str, pause: float, *, bots_too: bool) -> subprocess.CompletedProcess:
    """Run the league in ``folder``; once a bot leaves a mark ``ready``-PID, stop the arbiter and
    its workers (and every bot of theirs with ``bots_too``) for ``pause`` seconds."""
    path = league(folder)
    marks = folder / "marks"
    marks.mkdir()
    run = subprocess.Popen(
        [PY, "-m", "arbiter", "run", str(path), "--json"], cwd=folder,
        env=env_for(BARBU_TEST_TAG=tag, PAUSE_MARKS=str(marks)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    stopped: list[int] = []
    try:
        wait_for(lambda: run.poll() is not None or any(p.name.startswith(ready) for p in marks.iterdir()), 120, ready)
        assert run.poll() is None, f"the run ended before any bot left a {ready} mark: {run.communicate(timeout=60)}"
        # The arbiter first (it starts no worker while stopped), then its workers (they start no
        # bot while stopped), then, for a whole machine's pause, every bot that is there by then.
        stopped = stop([run.pid])
        workers = children_of(run.pid)
        stopped += stop(workers)
        if bots_too:
            stopped += stop(sorted(set().union(*(descendants(w) for w in workers))))
        time.sleep(pause)
        for pid in reversed(stopped):  # the bots first, the arbiter last, as a machine wakes
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        stopped = []
        out, err = run.communicate(timeout=180)
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        if run.poll() is None:
            run.kill()
            run.wait(60)
        kill_tagged(tag)
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


def stalled_lines(folder: Path) -> list[dict]:
    """The decision lines of every recorded log that say the arbiter was stalled."""
    lines = []
    for log in sorted((folder / "logs").rglob("*.jsonl")):
        lines += [line for line in map(json.loads, log.read_text().splitlines()) if "stalled_ms" in line]
    return lines


def test_a_run_paused_in_play_charges_no_bot_and_rates_as_unpaused(tmp_path, unpaused):
    """The issue's probe: `arbiter run` and its workers stopped mid-match (the bots run on and
    answer meanwhile), then continued."""
    folder = tmp_path / "league"
    run = paused_run(folder, f"paused-play-{os.getpid()}", "playing-", PAUSE, bots_too=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    assert record(folder) == unpaused
    stalled = stalled_lines(folder)
    assert stalled and max(line["stalled_ms"] for line in stalled) > 0.75 * PAUSE * 1000, stalled
    assert "the arbiter did not run for" in (folder / "logs" / "arbiter.log").read_text()


def test_a_run_paused_while_its_bots_start_charges_no_bot_and_rates_as_unpaused(tmp_path, unpaused):
    """A suspended machine: the arbiter, its workers and their bots all stopped while the bots
    of the first matches start, for longer than the connect limit, then continued: no bot
    'never connected … timed out'."""
    folder = tmp_path / "league"
    run = paused_run(folder, f"paused-start-{os.getpid()}", "started-", START_PAUSE, bots_too=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    assert record(folder) == unpaused
    assert "the arbiter did not run for" in (folder / "logs" / "arbiter.log").read_text()
