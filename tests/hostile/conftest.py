"""The hostile-bot suite: real bot processes that attack the arbiter, its machine and the other
seats. Each test plays a real match and checks that it finishes, that the fault is named
correctly and charged to the attacker only, that the log verifies, and that the machine is left
clean: no process of the match alive (by pid, by seat token, and by uid when bots ran as users
of their own), no scratch folder left.

Bots that attack resources run where their limits bind: as unprivileged users of their own (a
uid range nobody has) or in bubblewrap, never as plain root (root could lift its limits, and the
process limit does not bind it). The hostile bots also refuse to attack when the limit they
would run into is missing (tests/bots/hostile_hog.py), so a broken arbiter fails the test, not
the machine.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import pytest
from barbu.matchlog import verify
from barbu.rules import make_ruleset

from arbiter.match.blocking import MatchOptions, play_bot_match
from arbiter.match.play import BotSpec
from arbiter.process.limits import Limits
from arbiter.process.procfs import processes_of_uid
from arbiter.process.sandbox import DEFAULT_UIDS, bubblewrap_problem
from arbiter.process.users import path_problem, resolve_user
from arbiter.referee.logfile import read_log_lines
from arbiter.referee.loop import MatchSetup
from arbiter.referee.timecontrol import TimeControl
from tests.timing import patient

from ..arbiter.conftest import leftover_processes

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
PY = sys.executable
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
UIDS = "2100000000-2100009999"  # uids no account has: each bot of a match gets one of its own
SHORT = make_ruleset("standard", {"contracts": ["barbu"]})  # 4 deals a match

# mode: (isolation, user)
MODES = {
    "root": ("none", None),  # the defaults: bots of the arbiter's own user, unsandboxed
    "user": ("none", UIDS),
    "bubblewrap": ("bubblewrap", None),
    "bubblewrap+user": ("bubblewrap", UIDS),
}


def other_user_python() -> str:
    """A command prefix that runs Python with the SDK as an unprivileged user.

    This interpreter if such a user may run it; else the system's interpreter of the same
    version with this environment's packages on PYTHONPATH (a virtual environment under a
    private home folder, e.g. pyenv's under /root, is out of other users' reach)."""
    user = resolve_user(UIDS.split("-")[0])
    site = sysconfig.get_paths()["purelib"]
    sdk = str(ROOT / "sdk" / "python")
    if all(path_problem(p, user, "x") is None for p in (PY, site, sdk)):
        return PY
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        candidate = os.path.join(folder, version)
        if os.path.isfile(candidate) and all(path_problem(p, user, "x") is None for p in (candidate, site, sdk)):
            return f"env PYTHONPATH={site}:{sdk} {candidate}"
    pytest.fail(
        f"no Python {sys.version_info.major}.{sys.version_info.minor} that an unprivileged user may run: "
        f"{PY} is out of reach and there is no /usr/bin/{version} (Debian: apt-get install {version})"
    )


def python_for(mode: str) -> str:
    return other_user_python() if MODES[mode][1] else PY


def need_bubblewrap(mode: str) -> None:
    isolation, user = MODES[mode]
    if isolation == "bubblewrap":
        problem = bubblewrap_problem(resolve_user(user))
        if problem:
            pytest.fail(f"{problem}: install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces")


class TaskWatch:
    """Samples, while a match runs, the most tasks (processes + threads) any uid of the range
    had at once: what RLIMIT_NPROC bounds."""

    def __init__(self, first: int, last: int):
        self.first, self.last = first, last
        self.peak: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            counts: dict[int, int] = {}
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    st = os.stat(f"/proc/{entry.name}")
                    if self.first <= st.st_uid <= self.last:
                        counts[st.st_uid] = counts.get(st.st_uid, 0) + len(os.listdir(f"/proc/{entry.name}/task"))
                except OSError:
                    continue
            for uid, n in counts.items():
                self.peak[uid] = max(self.peak.get(uid, 0), n)
            time.sleep(0.02)

    def __enter__(self) -> TaskWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def play(
    tmp_path: Path,
    name: str,
    bad_command: str,
    *,
    mode: str = "user",
    bad_seat: int = 2,
    limits: dict | None = None,
    control: TimeControl = TimeControl(per_decision=2.0, reserve=4.0, connect=patient(10.0), match_limit=patient(60.0)),
    max_strikes: int = 3,
    rules=SHORT,
    seed: int = 5,
):
    """A match of random bots with ``bad_command`` (``{py}`` is the mode's Python) in one seat."""
    from arbiter.referee.faults import FaultPolicy

    isolation, user = MODES[mode]
    need_bubblewrap(mode)
    py = python_for(mode)
    commands = [f"{py} {RANDOM_BOT}"] * 4
    commands[bad_seat] = bad_command.format(py=py, bots=BOTS)
    # The bots work in a folder of their own that their users may enter (pytest's are private).
    workdir = tempfile.mkdtemp(prefix="barbu-hostile-")
    os.chmod(workdir, 0o755)
    bots = [BotSpec(f"bot{s}", c, cwd=workdir) for s, c in enumerate(commands)]
    try:
        played = play_bot_match(
            bots,
            MatchSetup(rules, seed=seed, match_id=name),
            tmp_path / f"{name}.jsonl",
            MatchOptions(
                time_control=control,
                fault_policy=FaultPolicy(max_strikes=max_strikes),
                limits=Limits(user=user, **(limits or {})),
                isolation=isolation,
            ),
        )
        left = os.listdir(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert left == [], f"the bots left files in their folder: {left}"
    return played


def check(
    played, *, bad_seat: int = 2, kind: str | None, words: tuple[str, ...] = (), forfeits: bool = True, rules=SHORT
):
    """The match finished, only the attacker was charged (with ``kind``, the detail naming
    ``words``), the innocent seats' results stand, the log verifies, and nothing is left."""
    r = played.result
    details = [f"{f.seat}:{f.kind}:{f.detail}" for f in r.faults]
    assert r.status == "complete" and r.deals == rules.deals_per_match, (r.status, r.reason, details)
    assert {f.seat for f in r.faults} <= {bad_seat}, details
    assert set(r.forfeits) <= {bad_seat}
    if kind is None:
        assert r.faults == (), details
    else:
        assert r.faults, "no fault recorded"
        first = r.faults[0]
        assert first.kind == kind, details
        for w in words:
            assert w in first.detail, details
        assert (bad_seat in r.forfeits) == forfeits, details
    report = verify(read_log_lines(played.log_path))
    assert report.valid and report.complete, report
    assert [(f["seat"], f["kind"]) for f in report.faults] == [(f.seat, f.kind.value) for f in r.faults]
    assert_clean(played)


def assert_clean(played) -> None:
    """No process of the match left: by pid, by seat token, by uid (a bot's own uid)."""
    assert leftover_processes(played) == []
    for uid in set(played.uids):
        lo, hi = map(int, UIDS.split("-"))
        if lo <= uid <= hi or DEFAULT_UIDS[0] <= uid <= DEFAULT_UIDS[1]:
            assert processes_of_uid(uid) == [], f"processes of uid {uid} are left"
    for folder in played.scratch:
        assert not os.path.exists(folder), f"scratch folder {folder} is left"
