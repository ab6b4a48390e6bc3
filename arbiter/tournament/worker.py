"""The worker side: :func:`play_task` plays one match, wherever an executor runs it.

Every executor (arbiter.tournament.executors: this process, a local pool; the Dask cluster)
calls :func:`play_task`. A worker process is first set up by :func:`worker_init` (signals, the
parent-death watch, a private temporary folder, logging, logs never overwritten); in such a
worker every match goes through the worker's one arbiter (:func:`_match_host`: one event loop,
one gRPC server, bot processes kept between matches for bots that can play several).

Imports nothing of the storage or the loop: workers start faster without them.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import resource
import shutil
import signal
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from barbu.rules import ruleset_from_json

from arbiter.model import MatchOutcome, MatchTask
from arbiter.process.limits import Limits
from arbiter.process.procfs import children_of

if TYPE_CHECKING:
    from barbu.matchlog import MatchResult

    from arbiter.match.blocking import BlockingHost
    from arbiter.referee.faults import FaultPolicy
    from arbiter.referee.loop import MatchSetup

log = logging.getLogger(__name__)

PlayFunction = Callable[[MatchTask], MatchOutcome]
"""Plays one match: :func:`play_match`, or an in-process stand-in in tests (module level: a
spawned worker imports it by name)."""


def task_setup(task: MatchTask) -> tuple[MatchSetup, FaultPolicy]:
    """The referee's MatchSetup and FaultPolicy for a task."""
    from arbiter.referee.faults import FaultPolicy
    from arbiter.referee.loop import MatchSetup

    setup = MatchSetup(
        ruleset_from_json(task.rules),
        seed=task.seed,
        first_declarer=task.first_declarer,
        match_id=task.match_id,
        deals=[list(d) for d in task.deals] if task.deals is not None else None,
    )
    return setup, FaultPolicy(task.max_strikes)


def outcome_from_result(task: MatchTask, result: MatchResult, log_path: Path, wall: float) -> MatchOutcome:
    """The one conversion of a referee's MatchResult (and its finished log) into the model."""
    return MatchOutcome(task.number, result, str(log_path), file_sha256(log_path), wall_seconds=wall)


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def play_match(task: MatchTask) -> MatchOutcome:
    """The default per-match function: four bot processes over gRPC (arbiter.match)."""
    from arbiter.match.blocking import play_bot_match

    setup, policy = task_setup(task)
    bots = list(task.bots)
    sandbox: dict[str, Any] = {"isolation": task.isolation}
    if isinstance(task.limits, Limits):
        sandbox["limits"] = task.limits
    host = _match_host()
    log_path = Path(task.log_path)
    control = task.time_control
    if host is None:
        played = play_bot_match(bots, setup, log_path, time_control=control, fault_policy=policy, **sandbox)
    else:
        played = host.play(
            bots, setup, log_path, time_control=control, fault_policy=policy, reuse=task.reuse, **sandbox
        )
    outcome = outcome_from_result(task, played.result, played.log_path, played.wall_seconds)
    return replace(outcome, bots_cpu=played.bots_cpu)


def play_task(task: MatchTask, play: PlayFunction = play_match) -> MatchOutcome:
    """Play one task and measure the CPU it cost: this process (the arbiter) vs its children (bots)."""
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    outcome = play(task)
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    # A match between bot processes measures its bots itself (a bot kept for the next match is
    # not reaped, so it is not among this process's children yet).
    kids = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
    return replace(
        outcome,
        arbiter_cpu=(self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime),
        bots_cpu=outcome.bots_cpu or kids,
    )


# ---- a worker process ----------------------------------------------------------------------
_PR_SET_PDEATHSIG = 1

_worker_tmp: str | None = None  # this worker's temporary folder (the matches' Unix sockets)
_host: BlockingHost | None = None  # this worker's arbiter, made at its first match


def _match_host() -> BlockingHost | None:
    """The worker's long-lived arbiter, or None outside a worker (no worker_init)."""
    global _host
    if _worker_tmp is None:
        return None
    if _host is None:
        from multiprocessing.util import Finalize

        from arbiter.match.blocking import BlockingHost

        _host = BlockingHost(reuse=True)
        # Before the temporary folder goes (exitpriority 0): kept bots retired, server stopped.
        Finalize(None, _close_host, exitpriority=10)
    return _host


def _close_host() -> None:
    global _host
    host, _host = _host, None
    if host is not None:
        try:
            host.close()
        except Exception:  # pragma: no cover - a dying worker: its bots die with it anyway
            log.exception("closing the worker's arbiter failed")


def worker_init(parent_pid: int, log_file: str) -> None:
    """Runs first in every worker: signals, parent-death watch, a private temp folder, logging."""
    global _worker_tmp
    from multiprocessing.util import Finalize

    # A short path (a Unix socket path has at most 107 bytes) that a killed worker can remove.
    _worker_tmp = tempfile.mkdtemp(prefix=f"barbu-w{os.getpid()}-")
    tempfile.tempdir = _worker_tmp
    Finalize(None, shutil.rmtree, args=(_worker_tmp,), kwargs={"ignore_errors": True}, exitpriority=0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, _worker_terminated)
    signal.signal(signal.SIGHUP, _worker_terminated)  # the terminal closed under the whole group
    with contextlib.suppress(
        OSError, AttributeError
    ):  # Linux: SIGTERM us when the parent dies (kill -9, power cut of the parent alone)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent_pid:  # the parent died before the watch was set
        os._exit(1)
    logging.basicConfig(
        filename=log_file, level=logging.WARNING, format="%(asctime)s %(process)d %(name)s %(levelname)s: %(message)s"
    )


def _worker_terminated(signum: int, frame: object) -> None:  # pragma: no cover - runs in a dying worker
    """Kill the bots of the match in progress (each is its own process group) and leave now."""
    me = os.getpid()
    for pid in children_of(me):
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
    if _worker_tmp:
        shutil.rmtree(_worker_tmp, ignore_errors=True)
    os._exit(1)
