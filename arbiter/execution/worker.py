"""The worker side: a worker process's set-up, and the job that plays a match in it.

Every worker process (arbiter.execution.processes: a local pool's, a Dask worker's, the arena's
checker) is first set up by :func:`worker_init` (signals, the parent-death watch, a private
temporary folder, logging). In such a process every match goes through the worker's one arbiter
(:func:`_host`: one event loop, one gRPC server, bot processes kept between matches for bots that
can play several), by :func:`play_in_worker`.

Imports nothing of the storage or the loop: workers start faster without them.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shutil
import signal
import tempfile
from typing import TYPE_CHECKING

from arbiter.execution.play import play_task
from arbiter.model import MatchOutcome, MatchTask
from arbiter.process.procfs import children_of
from arbiter.signals import STOP_SIGNALS, WORKER_STOP

if TYPE_CHECKING:
    from arbiter.match.blocking import BlockingHost

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1

_worker_tmp: str | None = None  # this worker's temporary folder (the matches' Unix sockets)
_worker_host: BlockingHost | None = None  # this worker's arbiter, made at its first match


def play_in_worker(task: MatchTask) -> MatchOutcome:
    """The job of a match: played on this worker's arbiter (a one-match arbiter outside a worker)."""
    from arbiter.match.blocking import BlockingHost

    if _worker_tmp is None:
        with BlockingHost() as host:
            return host.run(lambda h: play_task(h, task))
    return _host().run(lambda h: play_task(h, task))


def _host() -> BlockingHost:
    """The worker's long-lived arbiter."""
    global _worker_host
    if _worker_host is None:
        from multiprocessing.util import Finalize

        from arbiter.match.blocking import BlockingHost

        _worker_host = BlockingHost(reuse=True)
        # Before the temporary folder goes (exitpriority 0): kept bots retired, server stopped.
        Finalize(None, _close_host, exitpriority=10)
    return _worker_host


def _close_host() -> None:
    global _worker_host
    host, _worker_host = _worker_host, None
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
    # The stop signals are the parent's: it drains, then stops us with WORKER_STOP. Ignored here,
    # they are ignored by the bots we start too (an ignored signal stays ignored across exec), so a
    # signal to every process of the service (systemd's KillMode=control-group) cuts no match short;
    # the arbiter ends bots with SIGKILL, never asks them to leave by a signal.
    for stop in STOP_SIGNALS:
        signal.signal(stop, signal.SIG_IGN)
    signal.signal(WORKER_STOP, _worker_terminated)
    # Linux: WORKER_STOP us when the parent dies (kill -9, power cut of the parent alone)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, WORKER_STOP)
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
