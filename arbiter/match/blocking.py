"""The one blocking edge of the asynchronous core: for code that is not itself asynchronous
(the command line, a tournament's worker process, check-bot, the remote executor, tests).

The referee, the match host, the transport, the lobby and the players have one face,
asynchronous, and run in one event loop. :class:`LoopThread` is that loop for a blocking caller:
an event loop in a thread of its own, for as long as the caller needs it (a worker keeps its
:class:`BlockingHost`, its server and the bots it keeps, across all its matches; the remote
executor its lobby). :meth:`LoopThread.run` waits for one coroutine, :meth:`LoopThread.submit`
hands one back as a :class:`concurrent.futures.Future`; :func:`run_blocking` runs one coroutine
in a loop of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future, wait
from pathlib import Path
from typing import TypeVar

from arbiter.match.invited import Invitee
from arbiter.match.play import BotMatch, BotSpec, MatchHost, MatchOptions
from arbiter.referee.loop import MatchSetup
from arbiter.referee.players import Player

__all__ = ["BlockingHost", "LoopThread", "MatchOptions", "play_bot_match", "result_of", "run_blocking"]

T = TypeVar("T")

STOP_SECONDS = 30.0  # for a cancelled coroutine's clean-up (bots killed, folders removed) to end
CANCEL_ROUNDS = 5  # at close: rounds of cancelling what runs, for what a clean-up started meanwhile
SIGNAL_CHECK_SECONDS = 0.2  # the longest the main thread blocks at a time on what the loop does


def result_of(future: Future[T], timeout: float | None = None) -> T:
    """``future.result(timeout)``, in slices of :data:`SIGNAL_CHECK_SECONDS`. The kernel hands a
    process's signal to any of its threads that is able to take it (gRPC's, the loop's, the
    bots' output readers): Python then runs its handler in the main thread, but only once that
    thread runs Python again; a main thread blocked for good on a lock would never see the
    Ctrl-C. Raises TimeoutError after ``timeout`` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not future.done():
        left = SIGNAL_CHECK_SECONDS if deadline is None else min(SIGNAL_CHECK_SECONDS, deadline - time.monotonic())
        if left <= 0:
            raise TimeoutError(f"not done after {timeout:g} s")
        wait([future], left)
    return future.result()


class LoopThread:
    """An event loop running in a thread of its own until :meth:`close`."""

    def __init__(self, name: str = "barbu-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[object, object, T]) -> Future[T]:
        """Start ``coro`` in the loop; its future (cancelling it cancels the coroutine)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[object, object, T]) -> T:
        """Run ``coro`` to its end and return what it returns. Stopped meanwhile (Ctrl-C,
        SIGTERM: the exception comes in this thread), it is cancelled and its own clean-up runs
        (bots killed, scratch folders and the socket removed) before the stop goes on."""
        ended = threading.Event()

        async def watched() -> T:
            try:
                return await coro
            finally:
                ended.set()

        future = self.submit(watched())
        try:
            return result_of(future)
        except BaseException:
            future.cancel()
            ended.wait(STOP_SECONDS)
            raise

    def call(self, function: Callable[[], T]) -> T:
        """Run a plain function in the loop's thread (what may only be touched there) and wait."""

        async def call() -> T:
            return function()

        return self.run(call())

    @property
    def closed(self) -> bool:
        return self.loop.is_closed()

    def close(self) -> None:
        """Cancel what still runs in the loop and wait for it, stop the loop and its thread (once).
        Nothing is left pending when the loop closes: a task destroyed pending, or an asynchronous
        generator finalized after, says so on stderr at the end of the run ("Task was destroyed
        but it is pending!", "Event loop is closed"), as ``asyncio.run`` would not let happen."""

        async def cancel_all() -> None:
            for _ in range(CANCEL_ROUNDS):  # a task's clean-up may start another: that one too
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                if not tasks:
                    break
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.get_running_loop().shutdown_asyncgens()

        if self.loop.is_closed():
            return
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self.submit(cancel_all()).result(STOP_SECONDS)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(STOP_SECONDS)
        if not self._thread.is_alive():
            self.loop.close()

    def __enter__(self) -> LoopThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_blocking(coro: Coroutine[object, object, T]) -> T:
    """Run one coroutine in an event loop of its own (:class:`LoopThread`)."""
    with LoopThread("barbu-run") as thread:
        return thread.run(coro)


class BlockingHost:
    """A :class:`MatchHost` for blocking callers: ``play`` and ``close`` wait for their end, in
    one event loop that lives as long as the host (its server and kept bots live in it)."""

    def __init__(self, *, listen: str | None = None, reuse: bool = False) -> None:
        self._thread = LoopThread("barbu-host")
        self.host = MatchHost(listen=listen, reuse=reuse)

    def play(
        self,
        entrants: Sequence[BotSpec | Player | Invitee],
        setup: MatchSetup,
        log_path: Path,
        options: MatchOptions = MatchOptions(),
    ) -> BotMatch:
        """:meth:`MatchHost.play`, waited for."""
        return self.run(lambda host: host.play(entrants, setup, log_path, options))

    def run(self, play: Callable[[MatchHost], Coroutine[object, object, T]]) -> T:
        """``play(host)``, run in the host's loop, waited for."""
        return self._thread.run(play(self.host))

    def close(self) -> None:
        if self._thread.closed:
            return
        try:
            self._thread.run(self.host.close())
        finally:
            self._thread.close()

    def __enter__(self) -> BlockingHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def play_bot_match(
    bots: Sequence[BotSpec | Player | Invitee],
    setup: MatchSetup,
    log_path: Path,
    options: MatchOptions = MatchOptions(),
    *,
    listen: str | None = None,
) -> BotMatch:
    """Play one match between four bot commands on a server of its own (``listen``: its
    address, else a private Unix socket). Every bot process is gone when it returns."""
    with BlockingHost(listen=listen) as host:
        return host.play(bots, setup, log_path, options)
