"""The property: no sequence of runs, kills and reruns against one log folder ever changes a
recorded log.

Hypothesis draws sequences of in-process runs of one small tournament against one log folder,
with two databases taking turns, the schedule growing, and kills at any match: in the middle of
a match (a ``.part`` is left), or between a log getting its final name and its row being
committed (a finished, unrecorded log is left), sometimes leaving the lease to a holder that is
gone as ``kill -9`` would. After every step, every log any database ever recorded still has the
SHA-256 it was first recorded with, and every run ended in a summary, a one-line ArbiterError,
or the simulated kill: never anything else. (tests/hostile/test_crash_safety.py kills real
``arbiter run`` processes with SIGKILL and checks the same of their logs.)
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from arbiter.errors import ArbiterError
from arbiter.storage import open_database
from arbiter.storage.lease import TABLE, me
from arbiter.tournament.config import override
from arbiter.tournament.loop import run_tournament

from ..tournament import inproc
from .conftest import count_case, recorded, sha256
from .test_log_folder import KILL, Killed, config, play_or_die

GONE_PID = 4_194_304 + 99  # above any pid_max: a holder that is no more

step = st.fixed_dictionaries(
    {
        "db": st.sampled_from(["a", "b"]),
        "rounds": st.sampled_from([1, 1, 2]),
        "kill": st.one_of(
            st.none(),
            st.tuples(st.sampled_from(["mid_match", "after_rename"]), st.integers(0, 3)),
        ),
        "leave_lease": st.booleans(),
    }
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=5))
def test_no_sequence_of_runs_kills_and_reruns_changes_a_recorded_log(steps):
    folder = Path(tempfile.mkdtemp(prefix="barbu-prop-"))
    base = config(folder, name="p", third=False)  # 2 entrants: 2 matches a round
    seen: dict[str, str] = {}  # log path -> the SHA-256 it was first recorded with
    try:
        for s in steps:
            cfg = override(base, rounds=s["rounds"])
            url = f"sqlite:///{folder / (s['db'] + '.db')}"
            KILL.clear()
            if s["kill"] is not None:
                KILL[s["kill"][1]] = s["kill"][0]
            outcome = "done"
            try:
                run_tournament(cfg, database=url, executor=inproc.in_process(play_or_die))
            except Killed:
                outcome = "killed"
                if s["leave_lease"]:  # as after kill -9: the lease still names the dead run
                    engine = open_database(url)
                    try:
                        with engine.begin() as conn:
                            conn.execute(update(TABLE).values(owner="gone", node=me().node, pid=GONE_PID))
                    finally:
                        engine.dispose()
            except ArbiterError as e:
                outcome = "refused"
                assert "\n" not in str(e)
            except BaseException as e:  # pragma: no cover - what the property forbids
                count_case("property step", traceback=True)
                raise AssertionError(f"a run ended in {type(e).__name__}: {e}") from e
            finally:
                KILL.clear()
            changed = 0
            for name in ("a", "b"):
                for path, sha in recorded(folder / f"{name}.db").items():
                    first = seen.setdefault(path, sha)
                    now = sha256(path) if Path(path).is_file() else None
                    changed += first != sha or now != sha
            count_case(f"property step ({outcome})", changed=changed)
            assert changed == 0, f"a recorded log changed after {steps}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
