"""Wall-clock limits of the tests that race a bot against the clock, scaled to how busy this
machine is.

A test that gives a bot 3 s to connect, or 12 s of wall clock to use 2 s of CPU, is right on a
quiet machine and wrong on one whose load average is ten times its cores (CI's can be): there
the bot gets a tenth of a core, and what the test meant as ample is not. :func:`patient` scales
such a limit by the load per core when the process started (at least 1, at most
``MAX_SLOWNESS``). Limits a test *means* to be short (the per-decision time a hanging bot must
run out of) stay as they are.
"""

from __future__ import annotations

import os

MAX_SLOWNESS = 6.0
SLOWNESS = min(MAX_SLOWNESS, max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1)))


def patient(seconds: float) -> float:
    """``seconds`` of wall clock that must be ample, on this machine as loaded as it is."""
    return seconds * SLOWNESS
