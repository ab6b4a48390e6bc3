"""The arbiter itself killed with SIGKILL at random moments of a tournament, then resumed.

After every kill: each recorded match's log exists, has the recorded SHA-256, and verifies as
a complete match; every other log in the folder is a ``.part`` (a match cut short, played
again on resume) or a finished but unrecorded log (the short window between a worker renaming
its log and the parent committing the row, see the note below); no process of the run is
left. After the final, uninterrupted run: every match is recorded exactly once, every log is
recorded, and no ``.part`` is left.

Note (arbiter/tournament/loop.py): a worker renames ``NAME.part`` to ``NAME`` when its match
ends, and the parent then commits the row with the log's path and hash. A kill between the two
leaves a finished log that the database does not hold; the database never refers to a missing
or partial log, and the resumed run records that match from its log as it is (it never plays
it again over the file: arbiter/tournament/logfolder.py). The test counts such logs instead of
pretending they cannot happen, and checks that no log, once recorded, ever changes.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from barbu.matchlog import verify

from arbiter.referee.logfile import read_log_lines

from ..conftest import processes_tagged

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
MATCHES = 10  # 2 entrants: 2 seat rotations a round, 5 rounds


def tournament(folder: Path, tag: str) -> Path:
    bot = ROOT / "sample_bots" / "random_bot.py"
    path = folder / "crash.yaml"
    path.write_text(
        "name: crash\n"
        "entrants:\n"
        f"  - {{name: a, command: env BARBU_SEED=1 BARBU_TEST_TAG={tag} python {bot}}}\n"
        f"  - {{name: b, command: env BARBU_SEED=2 BARBU_TEST_TAG={tag} python {bot}}}\n"
        "rules: standard\n"  # 28 deals: long enough for the kills to land mid-run, even on a quiet machine
        "rounds: 5\nseed: 3\nparallelism: 2\ndatabase: results.db\nlog_folder: logs\n"
        "time_control: {per_decision: 1, reserve: 2, connect: 10, match_limit: 60}\n"
    )
    return path


def recorded(folder: Path) -> dict[str, tuple[str, str]]:
    """log path -> (sha256, status) of every recorded match."""
    if not (folder / "results.db").exists():
        return {}
    with sqlite3.connect(folder / "results.db", timeout=10) as c:
        try:
            rows = c.execute("select log_path, log_sha256, status from matches").fetchall()
        except sqlite3.OperationalError:  # killed before the tables were made
            return {}
    return {path: (sha, status) for path, sha, status in rows}


def check_consistent(folder: Path) -> tuple[int, int, int]:
    """The invariants after a kill; returns (recorded, cut short, finished but unrecorded)."""
    rows = recorded(folder)
    for path, (sha, status) in rows.items():
        assert os.path.isfile(path), f"a recorded match's log is missing: {path}"
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == sha, f"the recorded hash of {path} is wrong"
        report = verify(read_log_lines(path))
        assert report.valid and report.complete and status == "complete", (path, report)
    parts = orphans = 0
    for entry in (folder / "logs").iterdir() if (folder / "logs").exists() else []:
        name = entry.name
        if name.endswith(".jsonl.part"):
            parts += 1
            if entry.stat().st_size:  # empty until the first buffered lines reach it
                report = verify(read_log_lines(entry))
                assert report.valid, (name, report)  # a prefix of a match: verifies as far as it goes
        elif name.endswith(".jsonl"):
            if str(entry) not in rows:
                orphans += 1
                report = verify(read_log_lines(entry))
                assert report.valid and report.complete, (name, report)  # never a half log
        else:
            assert name.endswith(".stderr") or name in ("arbiter.log", "crash.database.json"), name
    return len(rows), parts, orphans


def test_sigkill_at_random_moments_loses_nothing_recorded(tmp_path):
    tag = uuid.uuid4().hex
    config = tournament(tmp_path, tag)
    # The workers' temporary folders (sockets, scratch): a worker killed with SIGKILL cannot
    # remove its own, so they go in a folder of this test's (short: a socket path is short).
    scratch = tempfile.mkdtemp(prefix="barbu-crash-")
    env = {**os.environ, "BARBU_TEST_TAG": tag, "PYTHONPATH": str(ROOT), "TMPDIR": scratch}
    command = [PY, "-m", "arbiter", "run", str(config), "--json"]
    rng = random.Random(20241)
    history = []
    seen: dict[str, str] = {}  # log path -> the SHA-256 it was first recorded with
    try:
        for k in range(4):
            proc = subprocess.Popen(
                command,
                env=env,
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            time.sleep(rng.uniform(0.8, 4.0))
            if k % 2 == 0:
                os.kill(proc.pid, signal.SIGKILL)  # the arbiter alone: its workers see it die
            else:
                os.killpg(
                    proc.pid, signal.SIGKILL
                )  # the arbiter and its workers at once (bots have sessions of their own)
            proc.wait(timeout=30)
            deadline = time.monotonic() + 20
            while processes_tagged(tag) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert processes_tagged(tag) == [], f"after kill {k}, processes of the run are left"
            history.append(check_consistent(tmp_path))
            for path, (sha, _) in recorded(tmp_path).items():  # once recorded, a log never changes
                assert seen.setdefault(path, sha) == sha, f"recorded log {path} changed"
        done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        for path, (sha, _) in recorded(tmp_path).items():
            assert seen.setdefault(path, sha) == sha, f"recorded log {path} changed"
    finally:
        for pid in processes_tagged(tag):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(scratch, ignore_errors=True)
    rows, parts, orphans = check_consistent(tmp_path)
    assert (rows, parts, orphans) == (MATCHES, 0, 0), history
    assert len(list((tmp_path / "logs").glob("*.jsonl"))) == MATCHES
    assert history[-1][0] < MATCHES, f"the kills all came too late to interrupt anything: {history}"
    print("after each kill (recorded, cut short, finished but unrecorded):", history)
