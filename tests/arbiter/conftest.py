import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "bots"
PY = sys.executable


def bot(path: Path | str) -> str:
    """A bot command line running ``path`` with this interpreter."""
    return f"{PY} {path}"


RANDOM = bot(ROOT / "sample_bots" / "random_bot.py")
HEURISTIC = bot(ROOT / "sample_bots" / "heuristic_bot.py")


@pytest.fixture
def fast_control():
    from arbiter.referee.timecontrol import TimeControl

    return TimeControl(per_decision=0.5, reserve=1.0, connect=10.0)


def leftover_processes(played) -> list[int]:
    """Live (non-zombie) processes of a finished match: its bots, or anything carrying a seat token."""
    from arbiter.process.procfs import processes_with_token

    suspects = set(played.pids)
    for token in played.tokens:
        suspects.update(processes_with_token(token))
    return live(suspects)


def live(pids) -> list[int]:
    """The pids among ``pids`` of processes still running (zombies count as gone)."""
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if not f.read().rsplit(") ", 1)[1].startswith("Z"):
                    alive.append(pid)
        except OSError:
            continue
    return alive
