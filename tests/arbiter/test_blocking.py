"""The blocking edge's event loop (arbiter/match/blocking.py): what its close leaves behind."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from arbiter.match.blocking import LoopThread


def test_closing_the_loop_leaves_nothing_pending_not_even_what_a_clean_up_started():
    """A task still pending when its loop is closed is destroyed later, saying so on stderr
    ("Task was destroyed but it is pending!"); an asynchronous generator finalized after the loop
    closed fails with "Event loop is closed". The close finishes both first."""
    thread = LoopThread("test-loop")
    running = threading.Event()
    spawned: list[asyncio.Task] = []
    finalized: list[str] = []
    kept: list[AsyncIterator[int]] = []

    async def numbers() -> AsyncIterator[int]:
        try:
            yield 1
            await asyncio.sleep(3600)
        finally:
            finalized.append("generator")

    async def waits_and_cleans_up() -> None:
        kept.append(generator := numbers())
        await anext(generator)  # left suspended, still referenced: only the loop's shutdown finalizes it
        running.set()
        try:
            await asyncio.sleep(3600)
        finally:  # a clean-up that starts another task
            spawned.append(asyncio.get_running_loop().create_task(asyncio.sleep(3600)))

    thread.submit(waits_and_cleans_up())
    assert running.wait(10)
    thread.close()
    assert thread.closed
    assert len(spawned) == 1 and spawned[0].cancelled()
    assert finalized == ["generator"]
