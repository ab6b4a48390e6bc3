"""Worker processes: the one way the arbiter runs work in processes of its own.

A :class:`WorkerProcess` is a child started with :mod:`subprocess` that runs jobs (a picklable
function and its arguments) one at a time, sent over a pipe; :class:`WorkerPool` keeps several
busy. The local pool of a tournament, a Dask worker's match processes and the arena's checker all
use them. Each child is set up by :func:`arbiter.execution.worker.worker_init` (it dies with its
parent, kills its bots on ``WORKER_STOP``, keeps its temporary files in a folder of its own) and
starts a session of its own: a signal sent to the arbiter's whole process group (Ctrl-C in a
terminal, supervisord's ``stopasgroup``, ``kill -- -PGID``) reaches the arbiter alone. One sent to
every process of a control group (systemd's default ``KillMode=control-group``) reaches the
workers too, and they ignore it, as their bots do: the stop signals are the arbiter's, which
finishes what it drains and then ends its workers itself, with ``WORKER_STOP`` (SIGUSR1).

Why not :mod:`multiprocessing`: a Dask worker is a daemonic process, which may not start
multiprocessing children; grpcio is not fork-safe (a child is a fresh interpreter); and its
children would share the arbiter's process group.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing.connection
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from arbiter.errors import ArbiterError, TournamentError
from arbiter.signals import WORKER_STOP

T = TypeVar("T")

STOP_SECONDS = 10.0  # for a stopped child to kill its bots and leave, before SIGKILL
_CHILD = "import sys; from arbiter.execution.processes import child_main; child_main(sys.argv[1:])"


class WorkerDied(TournamentError):
    """The worker process ended while it ran a job (killed, out of memory, stopped)."""


class WorkerProcess:
    """A child process that runs jobs one at a time (see the module's docstring); its output
    and its logging go to ``log_file``."""

    def __init__(self, log_file: str):
        ours, theirs = multiprocessing.Pipe()
        os.makedirs(os.path.dirname(log_file) or ".", exist_ok=True)
        with open(log_file, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(theirs.fileno()), str(os.getpid()), log_file, json.dumps(sys.path)],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        theirs.close()
        self.connection = ours
        self.cancelled = False

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, job: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``job(*args, **kwargs)`` in the child and return what it returns, or raise what it
        raised; :class:`WorkerDied` if the child ended meanwhile."""
        try:
            self.connection.send((job, args, kwargs))
            kind, value = self.connection.recv()
        except (OSError, EOFError):
            code = self.stop()
            how = "was stopped" if self.cancelled else f"died (exit status {code})"
            raise WorkerDied(f"the worker process {how}") from None
        if kind == "error":
            raise value
        result: T = value
        return result

    def cancel(self) -> None:
        """Stop the job being run: the child kills its bots and leaves."""
        self.cancelled = True
        self.terminate()

    def terminate(self) -> None:
        """:data:`~arbiter.signals.WORKER_STOP`: the child kills its bots and leaves (arbiter.execution.worker)."""
        if self.proc.poll() is None:
            self.proc.send_signal(WORKER_STOP)

    def stop(self) -> int | None:
        """End the child (:data:`~arbiter.signals.WORKER_STOP`, then SIGKILL after :data:`STOP_SECONDS`) and wait for it."""
        if self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.connection.close()
        return self.proc.returncode


class WorkerPool:
    """``size`` worker processes, each started at its first job and replaced if it dies; a job
    waits in line for a free one."""

    def __init__(self, size: int, log_file: str, name: str = "barbu-worker"):
        self.log_file = log_file
        self._jobs: queue.Queue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = queue.Queue()
        self._processes: list[WorkerProcess] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._serve, name=f"{name}-{i}", daemon=True) for i in range(size)]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((future, job, args))
        return future

    def _serve(self) -> None:
        process: WorkerProcess | None = None
        try:
            while (item := self._jobs.get()) is not None:
                future, job, args = item
                if not future.set_running_or_notify_cancel():
                    continue
                if process is None or not process.alive() or process.cancelled:
                    if process is not None:
                        process.stop()
                    process = self._start()
                try:
                    future.set_result(process.call(job, *args))
                except BaseException as e:  # the job's failure is the caller's to see
                    future.set_exception(e)
        finally:
            if process is not None:
                process.stop()

    def _start(self) -> WorkerProcess:
        process = WorkerProcess(self.log_file)
        with self._lock:
            self._processes = [p for p in self._processes if p.alive()] + [process]
        return process

    def close(self, *, cancel: bool) -> None:
        """Stop the workers: ``cancel``, at once (queued jobs dropped, running ones stopped and
        their bots killed); else once every job submitted has run."""
        if cancel:
            with contextlib.suppress(queue.Empty):
                while True:
                    item = self._jobs.get_nowait()
                    if item is not None:
                        item[0].cancel()
            with self._lock:
                for process in self._processes:
                    process.cancel()
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join(STOP_SECONDS * 2)


def child_main(args: list[str]) -> None:
    """A worker process: the worker's set-up, then one job per request until the pipe closes."""
    from arbiter.execution.worker import worker_init

    sys.path[:] = json.loads(args[3])  # the parent's: a job is found by the module it was defined in
    connection = multiprocessing.connection.Connection(int(args[0]))
    worker_init(int(args[1]), args[2])
    while True:
        try:
            job, job_args, job_kwargs = connection.recv()
        except EOFError:
            return
        reply: tuple[str, Any]
        try:
            reply = ("ok", job(*job_args, **job_kwargs))
        except Exception as e:
            reply = ("error", e)
        try:
            connection.send(reply)  # pickled whole before a byte is sent
        except Exception:
            error = reply[1]
            shown = error if isinstance(error, ArbiterError) else f"{type(error).__name__}: {error}"
            connection.send(("error", TournamentError(str(shown))))
