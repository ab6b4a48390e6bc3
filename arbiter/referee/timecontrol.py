"""Time control: a per-decision limit plus a per-match reserve, measured by the arbiter.

A decision may take up to ``per_decision`` seconds for free; anything beyond is drawn from the
seat's reserve. A decision that would overdraw the reserve is a timeout (the reserve is then
empty). The arbiter therefore never waits longer than ``per_decision + reserve left`` for one
answer, and ``match_limit`` bounds the whole match as a last-resort watchdog.
"""

from __future__ import annotations

from arbiter.model import MAX_SECONDS, MAX_WORDS, TimeControl  # the match model's type

__all__ = ["MAX_SECONDS", "MAX_WORDS", "SeatClock", "TimeControl"]


class SeatClock:
    """One seat's reserve over a match."""

    def __init__(self, control: TimeControl):
        self.control = control
        self.reserve_left = control.reserve

    @property
    def limit(self) -> float:
        """The longest the next decision may take."""
        return self.control.per_decision + self.reserve_left

    def charge(self, elapsed: float) -> bool:
        """Account for a decision that took ``elapsed`` seconds; False if it was too slow."""
        over = elapsed - self.control.per_decision
        if over <= 0:
            return True
        if over <= self.reserve_left:
            self.reserve_left -= over
            return True
        self.reserve_left = 0.0
        return False
