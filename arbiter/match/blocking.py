"""The one blocking edge of the asynchronous core: for code that is not itself asynchronous
(the command line, a tournament's worker process, check-bot, tests).

The referee, the match host, the transport and the players have one face, asynchronous, and
run in one event loop. :class:`BlockingLoop` gives a blocking caller such a loop for as long as
it needs one (a worker keeps its :class:`BlockingHost`, its bots and its server, across all its
matches); :func:`run_blocking` runs one coroutine in a loop of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from arbiter.match.play import BotMatch, BotSpec, MatchHost
from arbiter.referee.loop import MatchSetup

__all__ = ["BlockingHost", "BlockingLoop", "play_bot_match", "run_blocking"]

T = TypeVar("T")


class BlockingLoop:
    """An event loop that blocking code runs coroutines in, one at a time."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to its end. Stopped meanwhile (Ctrl-C, SIGTERM: the exception comes out
        of the loop), it is cancelled and its own clean-up runs (bots killed, scratch folders
        and the socket removed) before the stop goes on."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:  # a loop already runs in this thread (a notebook, Playwright's blocking API): wait here
            with ThreadPoolExecutor(1, thread_name_prefix="barbu-blocking") as thread:
                return thread.submit(self.run, coro).result()
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        task = self._loop.create_task(coro)
        try:
            return self._loop.run_until_complete(task)
        except BaseException:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    self._loop.run_until_complete(task)
            raise

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run one coroutine in an event loop of its own (:class:`BlockingLoop`)."""
    loop = BlockingLoop()
    try:
        return loop.run(coro)
    finally:
        loop.close()


class BlockingHost:
    """A :class:`MatchHost` for blocking callers: ``play`` and ``close`` wait for their end, in
    one event loop that lives as long as the host (its server and kept bots live in it)."""

    def __init__(self, **host: Any):
        self.host = MatchHost(**host)
        self._loop = BlockingLoop()

    def play(self, entrants: list[Any], setup: MatchSetup, log_path: Path, **kw: Any) -> BotMatch:
        """:meth:`MatchHost.play`, waited for."""
        return self._loop.run(self.host.play(entrants, setup, log_path, **kw))

    def close(self) -> None:
        try:
            self._loop.run(self.host.close())
        finally:
            self._loop.close()

    def __enter__(self) -> BlockingHost:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def play_bot_match(
    bots: list[BotSpec], setup: MatchSetup, log_path: Path, *, listen: str | None = None, **kw: Any
) -> BotMatch:
    """Play one match between four bot commands on a server of its own (keyword arguments: those
    of :meth:`MatchHost.play`). Every bot process is gone when it returns."""
    with BlockingHost(listen=listen) as host:
        return host.play(bots, setup, log_path, **kw)
