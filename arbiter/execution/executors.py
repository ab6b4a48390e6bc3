"""Where matches are played: one interface, whatever plays them, chosen in one place.

An :class:`Executor` takes :class:`~arbiter.model.MatchTask` s and hands back futures of their
:class:`~arbiter.model.MatchOutcome` s; the tournament loop neither knows nor cares where. Every
executor plays a match the one way, :func:`arbiter.execution.play.play_task`: the local pool in
worker processes (arbiter.execution.processes), a Dask cluster in its workers' (the cluster
package), matches with a seat played from elsewhere in this process, where the lobby listens
(arbiter.execution.remote). :func:`arbiter.execution.venues.default_executor` is the one place that chooses among them,
from a run's :class:`Venue`; a run takes any factory of executors instead (tests play in
process). A future of a match that failed raises a :class:`~arbiter.errors.TournamentError`
naming the match.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arbiter.errors import ArbiterError, TournamentError
from arbiter.execution.processes import WorkerDied, WorkerPool
from arbiter.execution.worker import play_in_worker
from arbiter.lobby.server import KeyCheck, LobbySettings
from arbiter.model import BotSpec, MatchOutcome, MatchTask


class Executor(Protocol):
    slots: int  # matches it plays at once

    def submit(self, task: MatchTask) -> Future[MatchOutcome]: ...

    def connected(self) -> dict[str, int]:
        """The remote entrants connected to its lobby now, with the matches each may play at once."""

    def close(self, *, cancel: bool, over: bool = False) -> None:
        """Release the workers; ``cancel``: stop now, dropping queued matches and killing running ones;
        ``over``: the run is over for good (its remote entrants are told so, where it has a lobby)."""


@dataclass(frozen=True)
class Venue:
    """What choosing where a run's matches are played takes: its tournament's name and
    entrants, how many matches at once, where its logs go, a Dask scheduler, a lobby."""

    name: str
    entrants: tuple[BotSpec, ...]
    workers: int
    log_folder: Path
    cluster: str | None = None  # a Dask scheduler's address: play there
    lobby: LobbySettings | None = None  # where remote entrants connect
    remote_wait: float = 60.0  # seconds a match waits for a remote entrant before it is played absent
    check_key: KeyCheck | None = None  # a remote entrant's key: whose it is


ExecutorFactory = Callable[[Venue], "Executor"]


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


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
    if isinstance(e, WorkerDied):
        return TournamentError(f"{e} while playing match {task.key}; run the same command again to resume")
    if isinstance(e, TournamentError):
        return e
    if isinstance(e, ArbiterError):
        return TournamentError(f"match {task.key} could not be played: {e}")
    return TournamentError(f"match {task.key} failed in its worker: {type(e).__name__}: {e}")


class LocalExecutor:
    """``workers`` worker processes of this machine (arbiter.execution.processes), each playing
    its matches on an arbiter of its own that keeps the bots that play several."""

    job: Callable[[MatchTask], MatchOutcome] = staticmethod(play_in_worker)
    """What a worker does with a task (module level: a worker imports it by name)."""

    def __init__(self, workers: int, log_file: Path):
        self.slots = workers
        self.pool = WorkerPool(workers, str(log_file))

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        return typed_outcome(task, self.pool.submit(type(self).job, task))

    def connected(self) -> dict[str, int]:
        return {}

    def close(self, *, cancel: bool, over: bool = False) -> None:
        self.pool.close(cancel=cancel)
