"""The safety suite (issue 11): nothing recorded is ever overwritten, every input gets one line.

Most cases run the real ``arbiter`` command in a subprocess, as a user would, and check the
answer's shape: the exit code, exactly one ``error:`` line on stderr, never a traceback, never a
hang (every call has a timeout; a timeout fails the test). :func:`arbiter` keeps count: with
``BARBU_SAFETY_STATS=FILE`` set, each case appends one JSON line (command, exit code, traceback,
hang) to FILE, which is how the counts in the closing note of issue 11 were made.

The PostgreSQL fixtures are the tournament suite's (a throwaway server started by initdb/pg_ctl).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import processes_tagged
from tests.tournament.conftest import pg_url, postgres_server  # noqa: F401 - fixtures reused here

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
BOTS = ROOT / "tests" / "bots"


def _stat(entry: dict) -> None:
    path = os.environ.get("BARBU_SAFETY_STATS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(entry) + "\n")


def count_case(name: str, *, traceback: bool = False, hang: bool = False, changed: int = 0) -> None:
    """Count an in-process case (the property test's runs) in the statistics file."""
    _stat({"case": name, "traceback": traceback, "hang": hang, "changed": changed})


def env_for(tmp: Path | None = None, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk" / "python")])}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    env.update(extra)
    return env


def arbiter(
    *args: str | bytes, cwd: Path, timeout: float = 60, env: dict[str, str] | None = None, stdin=None
) -> subprocess.CompletedProcess:
    """``arbiter ARGS`` in a subprocess; fails the test on a hang (the timeout) or a traceback."""
    argv = [PY, "-m", "arbiter", *args]  # an argument may be bytes (not UTF-8)
    try:
        r = subprocess.run(
            argv, cwd=cwd, env=env or env_for(), capture_output=True, timeout=timeout, stdin=stdin or subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        _stat({"case": " ".join(map(str, args))[:200], "hang": True, "traceback": False})
        pytest.fail(f"arbiter {args!r} did not finish within {timeout}s (a hang)")
    out = subprocess.CompletedProcess(
        r.args, r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    )
    out.raw_stdout, out.raw_stderr = r.stdout, r.stderr  # type: ignore[attr-defined]
    traceback = "Traceback" in out.stderr or "Traceback" in out.stdout
    _stat(
        {
            "case": " ".join(a if isinstance(a, str) else repr(a) for a in args)[:200],
            "code": r.returncode,
            "traceback": traceback,
            "hang": False,
        }
    )
    assert not traceback, f"a traceback from arbiter {args!r}:\n{out.stderr[-3000:]}"
    return out


def arbiter_cases(
    cases: list[tuple[list[str | bytes], Path]], timeout: float = 60
) -> list[subprocess.CompletedProcess]:
    """Many ``arbiter`` command lines, each (argv, cwd) a process of its own (forked by
    tests/safety/forkrun.py after one import of the arbiter: real processes, cheaply). Fails the
    test on a hang or a traceback, like :func:`arbiter`."""
    import base64

    def arg(a: str | bytes):
        return {"b64": base64.b64encode(a).decode()} if isinstance(a, bytes) else a

    payload = json.dumps([{"argv": [arg(a) for a in argv], "cwd": str(cwd), "timeout": timeout} for argv, cwd in cases])
    driver = subprocess.run(
        [PY, str(Path(__file__).with_name("forkrun.py"))],
        input=payload.encode(),
        capture_output=True,
        env=env_for(),
        timeout=timeout * len(cases) + 120,
    )
    assert driver.returncode == 0, driver.stderr.decode()[-3000:]
    out = []
    for (argv, _), r in zip(cases, json.loads(driver.stdout), strict=True):
        stdout, stderr = base64.b64decode(r["stdout"]), base64.b64decode(r["stderr"])
        result = subprocess.CompletedProcess(
            argv, r["code"], stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace")
        )
        result.raw_stdout, result.raw_stderr = stdout, stderr  # type: ignore[attr-defined]
        shown = " ".join(a if isinstance(a, str) else repr(a) for a in argv)[:200]
        traceback = "Traceback" in result.stderr or "Traceback" in result.stdout
        _stat({"case": shown, "code": r["code"], "traceback": traceback, "hang": r["hang"]})
        assert not r["hang"], f"arbiter {shown} did not finish within {timeout}s (a hang)"
        assert not traceback, f"a traceback from arbiter {shown}:\n{result.stderr[-3000:]}"
        out.append(result)
    return out


def problem_lines(stderr: str) -> list[str]:
    """stderr without the arbiter's warnings (e.g. 'bots are not isolated')."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith(("warning: ", "info: "))]


def assert_one_error(r: subprocess.CompletedProcess, code: int = 2, *words: str) -> str:
    """Exactly one ``error:`` line on stderr, the exit code, and the words in that line."""
    lines = problem_lines(r.stderr)
    assert r.returncode == code, (r.returncode, r.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert "\x1b" not in r.stderr
    return lines[0]


def tournament_file(
    folder: Path,
    name: str = "t",
    *,
    rounds: int = 1,
    extra: str = "",
    tag: str = "",
    bots: tuple[str, str] | None = None,
) -> Path:
    """A small real tournament: two random bots, one contract (4 deals a match), 2 matches a round."""
    prefix = f"env BARBU_TEST_TAG={tag} " if tag else ""
    a, b = bots or (f"{prefix}python {RANDOM_BOT}", f"{prefix}python {RANDOM_BOT}")
    path = folder / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        "entrants:\n"
        f"  - {{name: a, command: {a}}}\n"
        f"  - {{name: b, command: {b}}}\n"
        "rules: {contracts: [barbu]}\n"
        f"rounds: {rounds}\nseed: 3\nparallelism: 2\ndatabase: results.db\nlog_folder: logs\n"
        "time_control: {per_decision: 2, reserve: 4, connect: 20, match_limit: 120}\n" + extra
    )
    return path


GATE_BOT = """
import os, random, time
from barbu.bot import Bot
from barbu.runner import run


class Gate(Bot):
    name = "gate"

    def decide(self, view):
        deadline = time.monotonic() + 120
        while not os.path.exists("go") and time.monotonic() < deadline:  # the test opens the gate
            time.sleep(0.05)
        return random.choice(view.legal)


raise SystemExit(run(Gate()))
"""


def gated_tournament(folder: Path, **kw) -> Path:
    """:func:`tournament_file` whose bots wait at each decision until ``folder/go`` exists."""
    (folder / "gate_bot.py").write_text(GATE_BOT)
    return tournament_file(folder, bots=("python gate_bot.py", "python gate_bot.py"), **kw)


def sha256(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def recorded(db: Path) -> dict[str, str]:
    """log path -> SHA-256 of every match the SQLite database records."""
    if not db.exists():
        return {}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as c:
        try:
            return dict(c.execute("select log_path, log_sha256 from matches").fetchall())
        except sqlite3.OperationalError:
            return {}


def assert_recorded_logs_intact(db: Path) -> int:
    """Every recorded log exists with its recorded hash; returns how many there are."""
    rows = recorded(db)
    for path, sha in rows.items():
        assert os.path.isfile(path), f"recorded log {path} is missing"
        assert sha256(path) == sha, f"recorded log {path} changed"
    return len(rows)


def wait_gone(tag: str, seconds: float = 20) -> list[int]:
    deadline = time.monotonic() + seconds
    while processes_tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_tagged(tag)


def kill_tagged(tag: str) -> None:
    for pid in processes_tagged(tag):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"waited {seconds}s for {what}")


def lease_owner(db: Path) -> str:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as c:
            row = c.execute("select owner from tournament_leases").fetchone()
    except sqlite3.Error:
        return ""
    return row[0] if row else ""


def count_matches(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as c:
            return c.execute("select count(*) from matches").fetchone()[0]
    except sqlite3.Error:
        return 0
