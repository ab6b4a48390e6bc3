"""In-process matches for the runner tests: the same MatchTask -> MatchOutcome contract as the
real per-match function, with arbiter.players instead of bot processes.

A bot "command" here names the player: ``random`` (seeded from the match and seat), ``first``
(always the first legal action: a weak but deterministic player), ``forfeit`` (raises a crash
fault at its first decision, so its entrant forfeits). Module-level functions, so a spawned
worker can import them by name.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

from arbiter.execution.executors import ExecutorFactory, LocalExecutor, Venue, match_failed
from arbiter.execution.play import file_sha256, logged_deals, task_setup
from arbiter.match.blocking import run_blocking
from arbiter.model import MatchOutcome, MatchTask
from arbiter.referee.faults import FaultKind, PlayerFault
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import Referee
from arbiter.referee.players import Player, RandomPlayer, StrategyPlayer

PlayFunction = Callable[[MatchTask], MatchOutcome]


class InProcessExecutor:
    """Plays each match in this process, at once, when it is submitted."""

    slots = 1

    def __init__(self, play: PlayFunction):
        self.play = play

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        future: Future[MatchOutcome] = Future()
        try:
            future.set_result(self.play(task))
        except Exception as e:  # a stop signal (KeyboardInterrupt...) is not the match's: it goes up
            future.set_exception(match_failed(task, e))
        return future

    def connected(self) -> dict[str, int]:
        return {}

    def close(self, *, cancel: bool, over: bool = False) -> None:
        pass  # nothing to release: every match ended in submit()


def in_process(play: PlayFunction | None = None) -> ExecutorFactory:
    """A run's executor that plays its matches in this process with ``play`` (in-process players)."""
    return lambda venue: InProcessExecutor(play or play_inprocess)


def in_workers(job: PlayFunction) -> ExecutorFactory:
    """A run's executor of worker processes whose job is ``job`` (module level: they import it)."""

    class Workers(LocalExecutor):
        pass

    Workers.job = staticmethod(job)
    return lambda venue: Workers(venue.workers, venue.log_folder / "arbiter.log")


class FreshProcesses(LocalExecutor):
    """Worker processes that start every bot afresh for every match (no bot is kept)."""

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        return super().submit(replace(task, reuse=False))


def fresh_processes(venue: Venue) -> FreshProcesses:
    return FreshProcesses(venue.workers, venue.log_folder / "arbiter.log")


class Crasher(Player):
    name = "forfeit"

    async def decide(self, state, seat, time_limit, sent=None):
        raise PlayerFault(FaultKind.CRASH, "in-process crash")


def player(command: str, seat: int, task: MatchTask) -> Player:
    if command == "random":
        return RandomPlayer(seed=f"{task.seed}/{seat}", name="random")
    if command == "first":
        return StrategyPlayer(lambda view: view.legal[0], name="first")
    if command == "forfeit":
        return Crasher()
    raise ValueError(f"unknown in-process player {command!r}")


def play_inprocess(task: MatchTask) -> MatchOutcome:
    started = time.perf_counter()
    setup, policy = task_setup(task)
    control = task.time_control
    players = [player(b.command, s, task) for s, b in enumerate(task.bots)]
    sink = AtomicLogFile(Path(task.log_path))
    seats = [{"seat": s, "entrant": b.name} for s, b in enumerate(task.bots)]
    result = run_blocking(Referee(setup, players, sink, seats=seats, time_control=control, fault_policy=policy).play())
    path = sink.commit()
    deals = logged_deals(path.read_bytes(), task.rules) if result.complete else ()
    return MatchOutcome(
        task.number, result, str(path), file_sha256(path), wall_seconds=time.perf_counter() - started, deals=deals
    )


def play_then_interrupt_at(number: int) -> PlayFunction:
    """Plays normally until match ``number``, where it raises KeyboardInterrupt (in process)."""

    def play(task: MatchTask) -> MatchOutcome:
        if task.number == number:
            raise KeyboardInterrupt
        return play_inprocess(task)

    return play


def play_then_interrupt(task: MatchTask) -> MatchOutcome:
    """Plays normally until the match number in $STOP_AT, where it raises KeyboardInterrupt."""
    if task.number == int(os.environ.get("STOP_AT", "-1")):
        raise KeyboardInterrupt
    return play_inprocess(task)


def pid_of_worker(task: MatchTask) -> MatchOutcome:
    """An in-process match whose outcome carries the worker's pid in ``reason`` (pool tests)."""
    outcome = play_inprocess(task)
    return replace(outcome, result=replace(outcome.result, reason=f"pid {os.getpid()}"))


def play_slowly(task: MatchTask) -> MatchOutcome:
    """An in-process match that takes a while (for interrupting a pool mid-match)."""
    time.sleep(0.3)
    return play_inprocess(task)
