"""The arbiter's own stalls: time it was not running, which no bot may be charged for.

A stopped arbiter (``kill -STOP``, a suspended laptop or VM) keeps no deadline: when it runs
again, every timer of its event loop is overdue, and a bot that answered in time looks as if it
had not answered at all. :class:`StallWatch` is a heartbeat on the event loop: a task that wakes
every ``period`` seconds and notes each gap far beyond that (``threshold``) as a stall. Whoever
waits on a bot asks :meth:`StallWatch.since` how long the arbiter was stalled since it started
waiting, and extends its deadline by that much; the referee charges the seat only the rest.
"""

from __future__ import annotations

import asyncio
import logging
import time

log = logging.getLogger(__name__)

PERIOD = 0.05  # seconds between heartbeats
THRESHOLD = 1.0  # a gap this much longer than the period is a stall, not a busy loop


class StallWatch:
    """The stalls of the running event loop, on :func:`time.monotonic`'s clock."""

    def __init__(self, period: float = PERIOD, threshold: float = THRESHOLD):
        self.period = period
        self.threshold = threshold
        self.stalls: list[tuple[float, float]] = []  # (last beat before, first beat after)
        self._beat = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> StallWatch:
        """Start beating in the running loop (again after :meth:`stop`)."""
        if self._task is None or self._task.done():
            self._beat = time.monotonic()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="arbiter-stall-watch")
        return self

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.period)
            self._note(time.monotonic())

    def _note(self, now: float) -> None:
        if now - self._beat > self.period + self.threshold:
            self.stalls.append((self._beat, now))
            stalled = now - self._beat - self.period
            log.warning("the arbiter did not run for %.1f s (stopped or suspended); no bot is charged for it", stalled)
        self._beat = now

    @staticmethod
    def now() -> float:
        return time.monotonic()

    def since(self, start: float) -> float:
        """Seconds the arbiter was stalled since ``start`` (a :meth:`now`): noted stalls, and
        one still going on that the heartbeat has not yet seen end (its timers all fire at once
        when the loop runs again, in no set order)."""
        now = time.monotonic()
        if self._task is not None:
            self._note(now)
        return sum(max(0.0, min(end, now) - max(begin, start) - self.period) for begin, end in self.stalls)
