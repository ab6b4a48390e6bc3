"""A Dask worker's side of a cluster run: the task of a match and the plugin that serves it.

The coordinator registers :class:`ArenaPlugin` on every worker (kept for the worker's life): it
holds the worker's match processes, its bundle lock and the programs it has checked, stops a
match whose task is cancelled, and retires idle match processes. A match is played in a *match
process*, a worker process (arbiter.execution.processes: the local pool's kind) child of the Dask
worker, because the worker's event loop must not host matches (an arbiter, a gRPC server and four
bots each). It plays as a local pool's worker does (:func:`arbiter.execution.worker.play_in_worker`),
dies with its Dask worker, bots and all, and is kept for the worker's next match (its arbiter
keeps bots that play several).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin
from tornado.ioloop import PeriodicCallback

from arbiter.errors import ConfigError, TournamentError
from arbiter.execution import bundle as bundles
from arbiter.execution.cluster.shipping import (
    ClusterJob,
    ClusterResult,
    Program,
    RemoteBot,
    program_version,
    project_identity,
    variable_name,
)
from arbiter.execution.processes import WorkerProcess
from arbiter.execution.worker import play_in_worker
from arbiter.model import BotSpec, MatchOutcome, MatchTask
from arbiter.text import printable

PLUGIN = "barbu-arena"  # the plugin's name on every worker
BUNDLE_SECONDS = 300.0  # for a worker to fetch a bundle from the scheduler
LOG_LEVEL = 6  # zlib level of the logs shipped back
IDLE_SECONDS = 10.0  # a match process (and the bots it keeps) idle this long is stopped: in a run
# the next match follows within a second, so this long means its coordinator is gone
REAP_SECONDS = 5.0  # how often the plugin looks for idle match processes


def play_on_worker(job: ClusterJob) -> ClusterResult:
    """The Dask task: play one match on this worker as a local pool worker plays it."""
    from distributed import get_worker

    worker = get_worker()
    arena = worker.plugins.get(PLUGIN)
    if not isinstance(arena, ArenaPlugin):
        raise TournamentError(f"Dask worker {worker.address} has no {PLUGIN!r} plugin: restart it to get it")
    return arena.play(job, worker.get_current_task())


class ArenaPlugin(WorkerPlugin):
    """This worker's match processes, bundles and checked programs (state set up on the worker)."""

    idempotent = True  # a second coordinator's registration keeps the processes of the first

    def setup(self, worker: Any) -> None:
        self.address: str = worker.address
        self.log_file = os.path.join(worker.local_directory, "barbu-arbiter.log")
        self.work_root = tempfile.mkdtemp(prefix="barbu-", dir=worker.local_directory)
        self.lock = threading.Lock()  # the three below
        self.idle: list[_MatchProcess] = []
        self.playing: dict[Any, _MatchProcess] = {}  # by the Dask key of the match it plays
        self.checked: set[Program] = set()
        self.bundle_lock = threading.Lock()  # one unpacking at a time
        self.reaper = PeriodicCallback(self._reap, REAP_SECONDS * 1000)
        self.reaper.start()

    def teardown(self, worker: Any) -> None:
        self.reaper.stop()
        with self.lock:
            processes = [*self.idle, *self.playing.values()]
            self.idle.clear()
        for match in processes:  # each kills its bots and leaves
            match.process.terminate()
        shutil.rmtree(self.work_root, ignore_errors=True)

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        """A match whose task leaves ``executing`` while it plays is no longer wanted (cancelled,
        or its coordinator gone): stop it, bots and all. A played match's task leaves
        ``executing`` only after :meth:`play` returned."""
        if start == "executing":
            with self.lock:
                process = self.playing.get(key)
            if process is not None:
                process.process.cancel()

    def play(self, job: ClusterJob, key: Any) -> ClusterResult:
        started = time.perf_counter()
        self._check_project(job.project)
        bots = tuple(self._bot(b, job.run) for b in job.bots)
        work = Path(tempfile.mkdtemp(prefix="m-", dir=self.work_root))
        try:
            task = replace(job.task, bots=bots, log_path=str(work / Path(job.task.log_path).name))
            before = time.perf_counter() - started
            outcome = self._play(task, key)
            after = time.perf_counter()
            log_path = Path(outcome.log_path)
            shipped = zlib.compress(log_path.read_bytes(), LOG_LEVEL)
            stem = log_path.name.removesuffix(".jsonl")
            outputs = []
            for seat in range(4):
                output = work / f"{stem}.seat{seat}.stderr"
                outputs.append(zlib.compress(output.read_bytes() if output.exists() else b"", LOG_LEVEL))
            overhead = before + time.perf_counter() - after
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return ClusterResult(outcome, shipped, tuple(outputs), self.address, overhead)

    def _play(self, task: MatchTask, key: Any) -> MatchOutcome:
        """Play in an idle match process (or a new one), given back to the idle ones after."""
        with self.lock:
            match = self.idle.pop() if self.idle else None
        if match is None or not match.process.alive():
            if match is not None:
                match.process.stop()
            match = _MatchProcess(WorkerProcess(self.log_file))
        with self.lock:
            self.playing[key] = match
        try:
            return match.process.call(play_in_worker, task)
        except TournamentError as e:
            if match.process.cancelled:
                raise TournamentError(f"match {task.key} was cancelled") from None
            raise TournamentError(f"{e} while playing match {task.key}") from None
        finally:
            with self.lock:
                del self.playing[key]
                kept = match.process.alive() and not match.process.cancelled
                if kept:
                    match.last_used = time.monotonic()
                    self.idle.append(match)
            if not kept:  # dead, or cancelled as its reply came
                match.process.stop()

    def retire_idle(self, idle_seconds: float = 0.0) -> int:
        """Stop the match processes that have not played for ``idle_seconds``: the bots they keep
        for the next match go with them. Returns how many stopped."""
        now = time.monotonic()
        with self.lock:
            retired = [m for m in self.idle if now - m.last_used >= idle_seconds]
            self.idle = [m for m in self.idle if m not in retired]
        for match in retired:
            match.process.terminate()
        for match in retired:
            match.process.stop()
        return len(retired)

    async def _reap(self) -> None:
        """For a coordinator that died: its match processes' bots are not left waiting."""
        await asyncio.to_thread(self.retire_idle, IDLE_SECONDS)

    def _check_project(self, expected: str) -> None:
        if project_identity() != expected:
            project_identity.cache_clear()  # the worker's installation may have changed since
            if project_identity() != expected:
                raise ConfigError(
                    f"Dask worker {self.address} runs {project_identity()}, the coordinator {expected}: install "
                    "the same Barbu Arena (and Python) on every worker"
                )

    def _bot(self, bot: RemoteBot, run: str) -> BotSpec:
        """The entrant as this worker runs it: its command pointing into its unpacked bundle."""
        files = self._bundle_files(bot.bundle, run)
        if bot.program is not None and bot.program not in self.checked:
            check_program(bot, bot.program, self.address)
            with self.lock:
                self.checked.add(bot.program)
        argv = [
            sys.executable if w.kind == "python" else str(files / w.text) if w.kind == "file" else w.text
            for w in bot.argv
        ]
        return BotSpec(bot.name, shlex.join(argv), str(files))

    def _bundle_files(self, digest: str, run: str) -> Path:
        files = bundles.cached(digest)
        if files is not None:
            return files
        with self.bundle_lock:
            files = bundles.cached(digest)
            if files is None:
                from distributed import Variable, get_client

                try:
                    data = Variable(variable_name(digest, run), client=get_client()).get(timeout=BUNDLE_SECONDS)
                except TimeoutError:
                    data = None
                if not isinstance(data, bytes):
                    raise TournamentError(f"bundle {digest[:12]} is not on the scheduler (the coordinator has gone)")
                files = bundles.unpack(digest, data)
        return files


async def retire_idle_matches(dask_worker: Any) -> int:
    """Run by the coordinator on every worker at the end of a run (``Client.run``): the bots kept
    for a next match leave with the run."""
    arena = dask_worker.plugins.get(PLUGIN)
    return await asyncio.to_thread(arena.retire_idle, 0.0) if isinstance(arena, ArenaPlugin) else 0


def check_program(bot: RemoteBot, program: Program, address: str) -> None:
    """A program the bundle does not hold is on this worker at the coordinator's path and version."""
    found = program.name if "/" in program.name else shutil.which(program.name)
    if found is None or not os.path.isfile(found):
        raise ConfigError(
            f"entrant {bot.name!r} runs {printable(program.name)}, which Dask worker {address} does not have "
            f"(the coordinator's is {printable(program.path)}, {printable(program.version)}); install it there"
        )
    found = os.path.abspath(found)
    if found != program.path:
        raise ConfigError(
            f"entrant {bot.name!r} runs {printable(program.name)}: on Dask worker {address} that is "
            f"{printable(found)}, on the coordinator {printable(program.path)}; a worker plays with the same program"
        )
    version = program_version(found)
    if version != program.version:
        raise ConfigError(
            f"entrant {bot.name!r} runs {printable(found)}: version {printable(version)} on Dask worker {address}, "
            f"{printable(program.version)} on the coordinator; a worker plays with the same program"
        )


@dataclass(eq=False)
class _MatchProcess:
    """A worker process of this Dask worker that plays its matches, and when it last did."""

    process: WorkerProcess
    last_used: float = field(default_factory=time.monotonic)
