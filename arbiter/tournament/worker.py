"""The worker side of a run: a worker process's set-up and the function that plays one task in it.

A worker process (the local pool's, or a Dask worker's match process) is set up once by
:func:`_worker_init` (signals, parent-death watch, a private temporary folder, logging) and then
plays task after task through :func:`run_task`, every match through its one long-lived arbiter
(:func:`_match_host`).
"""

from __future__ import annotations

import ctypes
import logging
import os
import resource
import shutil
import signal
import tempfile
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from arbiter.process.procfs import children_of
from arbiter.referee.logfile import keep_existing_logs

if TYPE_CHECKING:
    from arbiter.tournament.runner import MatchOutcome, MatchTask

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


_worker_tmp: str | None = None  # this worker's temporary folder (the matches' Unix sockets)
_host: Any = None  # this worker's arbiter (arbiter.match.play.MatchHost), made at its first match


def _match_host() -> Any:
    """The worker's long-lived arbiter, or None outside a worker (no _worker_init)."""
    global _host
    if _worker_tmp is None:
        return None
    if _host is None:
        from multiprocessing.util import Finalize

        from arbiter.match.play import MatchHost

        _host = MatchHost(reuse=True)
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


def _worker_init(parent_pid: int, log_file: str) -> None:
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
    try:  # Linux: SIGTERM us when the parent dies (kill -9, power cut of the parent alone)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before the watch was set
        os._exit(1)
    logging.basicConfig(
        filename=log_file, level=logging.WARNING, format="%(asctime)s %(process)d %(name)s %(levelname)s: %(message)s"
    )
    keep_existing_logs(True)  # a log that exists is somebody's record: commit only under a new name


def _worker_terminated(signum, frame) -> None:  # pragma: no cover - runs in a dying worker
    """Kill the bots of the match in progress (each is its own process group) and leave now."""
    me = os.getpid()
    for pid in children_of(me):
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    if _worker_tmp:
        shutil.rmtree(_worker_tmp, ignore_errors=True)
    os._exit(1)


def run_task(play: Callable[[MatchTask], MatchOutcome], task: MatchTask) -> MatchOutcome:
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
