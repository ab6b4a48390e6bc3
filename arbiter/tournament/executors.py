"""Where matches are played: the one interface of the local and the cluster executors."""

from __future__ import annotations

import concurrent.futures
from typing import Protocol

from arbiter.tournament.runner import MatchOutcome, MatchTask


class Executor(Protocol):
    slots: int  # matches it plays at once

    def submit(self, task: MatchTask) -> concurrent.futures.Future[MatchOutcome]: ...

    def close(self, *, cancel: bool) -> None:  # cancel=True: stop now, kill running matches
        ...
