"""Checking uploads (arbiter/arena/checking.py): real bots, uploaded as archives into a real store,
run through check-bot as real processes in the sandbox the arena uses (bubblewrap: CI installs it
with scripts/setup_sandbox.sh; the isolation test fails, never skips, where it cannot run)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arbiter.arena.archive import UploadLimits, open_archive
from arbiter.arena.checking import check_submission
from arbiter.compliance.checkbot import STEP_NAMES
from arbiter.process.limits import Limits
from arbiter.process.sandbox import bubblewrap_problem, strongest_isolation

from .test_archive import ENTRANT, RANDOM_BOT, tar_gz

ROOT = Path(__file__).resolve().parents[2]
ILLEGAL_BOT = (ROOT / "tests" / "bots" / "illegal_bot.py").read_bytes()
TCP_BOT = (ROOT / "tests" / "bots" / "tcp_only_bot.py").read_bytes()
# A random bot that refuses to play where it sees a host folder's files: it passes only in a sandbox.
PROBE_BOT = RANDOM_BOT.replace(
    b'if __name__ == "__main__":\n',
    b'if __name__ == "__main__":\n    if os.path.exists(os.environ["BARBU_HOST_FOLDER"] + "/file.txt"):\n        raise SystemExit(3)\n',
)
assert PROBE_BOT != RANDOM_BOT


def upload(store: Path, entrant: bytes, *files: tuple[str, bytes]):
    return open_archive(tar_gz(("entrant.yaml", entrant), *files), store, UploadLimits())


def test_a_sample_bot_passes_and_its_report_is_json_with_the_text(tmp_path):
    bot = upload(tmp_path / "store", ENTRANT, ("random_bot.py", RANDOM_BOT))
    passed, report = check_submission(
        bot.folder, bot.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
    )
    assert passed, report
    data = json.loads(report)
    assert data["ok"] is True and [s["name"] for s in data["steps"]] == list(STEP_NAMES)
    assert all(s["ok"] for s in data["steps"])
    assert data["text"].startswith("check-bot: python random_bot.py\n") and "ok: all" in data["text"]


def test_a_failing_bot_is_reported_with_the_step_it_breaks(tmp_path):
    bot = upload(tmp_path / "store", b"name: bad\ncommand: python illegal_bot.py\n", ("illegal_bot.py", ILLEGAL_BOT))
    passed, report = check_submission(
        bot.folder, bot.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
    )
    assert not passed
    data = json.loads(report)
    steps = {s["name"]: s for s in data["steps"]}
    assert data["ok"] is False and not steps["legal-actions"]["ok"]
    assert "not one of the" in steps["legal-actions"]["detail"]
    assert "FAIL  legal-actions" in data["text"]


def test_the_bot_runs_with_the_isolation_and_limits_it_is_given(tmp_path):
    problem = bubblewrap_problem()
    if problem:
        pytest.fail(f"{problem}: install bubblewrap (scripts/setup_sandbox.sh) and allow user namespaces")
    host = tmp_path / "host"
    host.mkdir()
    (host / "file.txt").write_text("the arbiter's")
    # The test's own command may name a host folder (an upload may not: test_archive.py): the
    # sandbox shows a bot the folders of the files its command names, not those of folders.
    bot = upload(tmp_path / "store", b"name: probe\ncommand: python probe_bot.py\n", ("probe_bot.py", PROBE_BOT))
    command = f"env BARBU_HOST_FOLDER={host} {bot.command}"
    sandboxed, report = check_submission(bot.folder, command, isolation="bubblewrap", limits=Limits(), time_limit=2)
    assert sandboxed, report  # it could not see the host's file
    open_, report = check_submission(bot.folder, command, isolation="none", limits=Limits(), time_limit=2)
    assert not open_ and "exited with code 3" in report
    assert str(bot.folder) not in report  # the author is not shown where the arena keeps bots
    # A memory limit no Python starts under: the limits reach the bot.
    small = Limits(memory=16 << 20)
    starved, report = check_submission(bot.folder, command, isolation="bubblewrap", limits=small, time_limit=2)
    assert not starved
    assert not {s["name"]: s["ok"] for s in json.loads(report)["steps"]}["hello"]


def test_an_entrant_yaml_s_transport_tcp_is_what_its_check_hands_the_bot(tmp_path):
    """A bot that dials TCP only passes in the sandbox once its entrant.yaml says ``transport: tcp``."""
    tcp_bot = ("tcp_only_bot.py", TCP_BOT)
    unix = upload(tmp_path / "a", b"name: tcp\ncommand: python tcp_only_bot.py\n", tcp_bot)
    refused, report = check_submission(
        unix.folder, unix.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
    )
    assert not refused and "cannot dial a Unix socket" in report
    tcp = upload(tmp_path / "b", b"name: tcp\ncommand: python tcp_only_bot.py\ntransport: tcp\n", tcp_bot)
    passed, report = check_submission(
        tcp.folder, tcp.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
    )
    assert passed, report


def test_the_arena_s_connect_time_is_the_check_s_and_a_rejection_gives_the_line_that_reproduces_it(tmp_path):
    """A bot that takes 2 s to start is rejected by an arena whose ``time_control.connect`` is 1 s
    (not a fixed 10 s); the report ends with the ``arbiter check-bot`` line that, run in the bot's
    folder, checks it the same way and fails the same step; with 10 s it passes."""
    slow = RANDOM_BOT.replace(
        b'if __name__ == "__main__":\n', b'if __name__ == "__main__":\n    import time\n\n    time.sleep(2)\n'
    )
    bot = upload(tmp_path / "store", b"name: slow\ncommand: python slow.py\n", ("slow.py", slow))
    limits = Limits(memory=3 << 30)
    isolation = strongest_isolation()
    refused, report = check_submission(
        bot.folder, bot.command, isolation=isolation, limits=limits, time_limit=2, connect=1
    )
    data = json.loads(report)
    assert not refused and "did not connect and say hello within 1s" in data["text"]
    line = data["reproduce"]
    assert line == (
        f"arbiter check-bot --isolation {isolation} --time-per-decision 2 --connect 1 "
        f"--limit memory={3 << 30} -- python slow.py"
    )
    assert data["text"].endswith(f"the same check, in your bot's folder:\n  {line}")
    again = subprocess.run(
        [sys.executable, "-m", *shlex.split(line)], cwd=bot.folder, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 1 and "FAIL  hello" in again.stdout
    assert "did not connect and say hello within 1s" in again.stdout, again.stdout
    passed, report = check_submission(
        bot.folder, bot.command, isolation=isolation, limits=limits, time_limit=2, connect=10
    )
    assert passed, report
    hello = next(s for s in json.loads(report)["steps"] if s["name"] == "hello")
    took = float(re.search(r"within (\d+\.\d+)s", hello["detail"]).group(1))
    assert 2.0 <= took < 10, hello  # the hello time as measured: the 2 s start and a little


def test_the_report_never_shows_where_the_arena_keeps_the_bot(tmp_path):
    """Finding: the bot's output in its report showed the store's folder (its working folder, as
    the bot printed it): only paths inside it, with a slash after, were shortened."""
    script = b"import os, sys\nprint('in', os.getcwd(), os.path.dirname(os.getcwd()), file=sys.stderr)\nsys.exit(3)\n"
    bot = upload(tmp_path / "store", b"name: where\ncommand: python where.py\n", ("where.py", script))
    passed, report = check_submission(
        bot.folder, bot.command, isolation=strongest_isolation(), limits=Limits(), time_limit=2
    )
    assert not passed and "output: in . <store>/" in report, report
    assert str(tmp_path) not in report and "/files" not in report


def test_the_checker_takes_the_authors_in_turn(tmp_path):
    """Finding: one author's two slow bots kept the single checker ~429 s each, and the next
    author's bot waited 861 s: checks were first come, first served. Now the authors take turns:
    alice's second submission waits until bob's first is checked."""
    from arbiter.arena.config import parse_arena
    from arbiter.arena.serve import Checker
    from arbiter.storage import open_database
    from arbiter.storage.arena import ArenaStore
    from arbiter.storage.credentials import AuthorTokens

    arena = parse_arena(f"name: ladder\nstore: {tmp_path / 'store'}\n", base_dir=tmp_path)
    engine = open_database(f"sqlite:///{tmp_path / 'arena.db'}")
    store = ArenaStore(engine)
    for author in ("alice", "bob"):
        AuthorTokens(store.engine).issue(author)
    order = []
    for author, name in (("alice", "a1"), ("alice", "a2"), ("bob", "b1")):  # in this order, while none is checked
        bot = open_archive(
            tar_gz(("entrant.yaml", f"name: {name}\ncommand: python random_bot.py\n".encode()),
                   ("random_bot.py", RANDOM_BOT)),
            arena.store, UploadLimits(),
        )  # fmt: skip
        order.append(store.open_submission("ladder", author, name, bot.digest, bot.command, house=()).id)
    decided: list[int] = []
    checker = Checker(arena, store, lambda: decided.append(len(decided)))
    checker.start()  # takes up the submissions waiting, as after a restart
    try:
        deadline = time.monotonic() + 300
        while len(decided) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        checker.stop()
    rows = [store.submission(i) for i in order]
    assert all(r is not None and r.status == "active" for r in rows), rows
    by_time = sorted(rows, key=lambda r: r.decided_at)
    assert [r.entrant for r in by_time] == ["a1", "b1", "a2"]
    engine.dispose()
