"""Where matches are played: one interface, whatever plays them.

An :class:`Executor` takes :class:`~arbiter.model.MatchTask` s and hands back futures of their
:class:`~arbiter.model.MatchOutcome` s; the tournament loop (arbiter.tournament.loop) neither
knows nor cares where. :class:`InProcessExecutor` plays in this process, one match at a time
(tests); :class:`LocalExecutor` on spawned worker processes (``spawn``: grpcio is not fork-safe);
the Dask cluster's executor is arbiter.tournament.cluster.DaskExecutor. All of them play a
match with :func:`arbiter.tournament.worker.play_task`. A future of a match that failed raises a
:class:`~arbiter.errors.TournamentError` naming the match.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Protocol

from arbiter.errors import ArbiterError, TournamentError
from arbiter.model import MatchOutcome, MatchTask
from arbiter.tournament.worker import PlayFunction, play_match, play_task, worker_init


class Executor(Protocol):
    slots: int  # matches it plays at once

    def submit(self, task: MatchTask) -> Future[MatchOutcome]: ...

    def close(self, *, cancel: bool) -> None:
        """Release the workers; ``cancel``: stop now, dropping queued matches and killing running ones."""


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class InProcessExecutor:
    """Plays each match in this process when it is submitted (tests of the loop)."""

    slots = 1

    def __init__(self, play: PlayFunction = play_match):
        self.play = play

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        future: Future[MatchOutcome] = Future()
        try:
            future.set_result(play_task(task, self.play))
        except Exception as e:  # a stop signal (KeyboardInterrupt...) is not the match's: it goes up
            future.set_exception(match_failed(task, e))
        return future

    def close(self, *, cancel: bool) -> None:
        pass  # nothing to release: every match ended in submit()


def typed_outcome(task: MatchTask, inner: Future[MatchOutcome]) -> Future[MatchOutcome]:
    """A future of ``inner``'s outcome whose failure is the match's typed error (:func:`match_failed`)."""
    typed: Future[MatchOutcome] = Future()

    def done(inner: Future[MatchOutcome]) -> None:
        if inner.cancelled():
            typed.cancel()
        elif (e := inner.exception()) is not None:
            typed.set_exception(match_failed(task, e))
        else:
            typed.set_result(inner.result())

    inner.add_done_callback(done)
    return typed


def match_failed(task: MatchTask, e: BaseException) -> TournamentError:
    """The typed error of a match whose worker raised ``e``."""
    if isinstance(e, TournamentError):
        return e
    if isinstance(e, BrokenProcessPool):
        return TournamentError(
            f"a worker process died while playing match {task.key}; run the same command again to resume"
        )
    if isinstance(e, ArbiterError):
        return TournamentError(f"match {task.key} could not be played: {e}")
    return TournamentError(f"match {task.key} failed in its worker: {type(e).__name__}: {e}")


class LocalExecutor:
    """``workers`` spawned processes of this machine, set up by :func:`worker_init`."""

    def __init__(self, workers: int, log_file: Path, play: PlayFunction = play_match):
        self.slots = workers
        self.play = play
        self.pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=worker_init,
            initargs=(os.getpid(), str(log_file)),
        )

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        return typed_outcome(task, self.pool.submit(play_task, task, self.play))

    def close(self, *, cancel: bool) -> None:
        if not cancel:
            self.pool.shutdown(wait=True)
            return
        # Stop now: queued matches are dropped, running ones end (their bots are killed).
        processes = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            with contextlib.suppress(OSError, ValueError):
                p.terminate()  # SIGTERM: the worker kills its bots and exits (worker._worker_terminated)
        deadline = time.monotonic() + 10
        for p in processes:
            try:
                p.join(max(0.1, deadline - time.monotonic()))
                if p.is_alive():
                    p.kill()
            except (OSError, ValueError, AssertionError):
                pass
