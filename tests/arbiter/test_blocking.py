"""The blocking edge's event loop (arbiter/match/blocking.py): what its close leaves behind, and
how soon a stop signal reaches a caller waiting for it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from arbiter.match.blocking import LoopThread

ROOT = Path(__file__).resolve().parents[2]


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


SIGNALLED_ELSEWHERE = """
import asyncio, signal, sys, threading, time
from arbiter.match.blocking import LoopThread
from arbiter.signals import Stopped, stop_on_signals

started = threading.Event()
cleaned = []

async def match():
    started.set()
    try:
        await asyncio.sleep(60)
    finally:
        cleaned.append(True)

def ctrl_c_to_the_loop_thread():
    started.wait()
    loop_thread = next(t for t in threading.enumerate() if t.name == "test-loop")
    signal.pthread_kill(loop_thread.ident, signal.SIGINT)

threading.Thread(target=ctrl_c_to_the_loop_thread, daemon=True).start()
begun = time.monotonic()
try:
    with stop_on_signals(), LoopThread("test-loop") as thread:
        thread.run(match())
except Stopped:  # (the loop closed: what a stop caught as run() began is cancelled there)
    print(f"stopped after {time.monotonic() - begun:.2f} s; cleaned up: {cleaned == [True]}")
"""


def test_a_ctrl_c_the_kernel_hands_to_another_thread_still_stops_a_run_at_once():
    """The kernel may deliver a process's SIGINT to any thread that does not block it; Python
    runs the handler in the main thread once that thread runs Python again. A main thread blocked
    for good on the loop's result would not see it for the whole match (``arbiter play``'s
    Ctrl-C was lost that way under load): the wait comes back often enough to see it."""
    run = subprocess.run(
        [sys.executable, "-c", SIGNALLED_ELSEWHERE], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr
    seconds = float(run.stdout.split()[2])
    assert seconds < 30 and run.stdout.strip().endswith("cleaned up: True"), run.stdout
