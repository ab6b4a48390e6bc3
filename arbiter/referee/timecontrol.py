"""Time control: a per-decision limit plus a per-match reserve, measured by the arbiter.

A decision may take up to ``per_decision`` seconds for free; anything beyond is drawn from the
seat's reserve. A decision that would overdraw the reserve is a timeout (the reserve is then
empty). The arbiter therefore never waits longer than ``per_decision + reserve left`` for one
answer, and ``match_limit`` bounds the whole match as a last-resort watchdog.
"""

from __future__ import annotations

from dataclasses import dataclass


# The longest each may be: finite, and within what a match can sensibly wait for.
MAX_SECONDS = {"per_decision": 3600.0, "reserve": 86400.0, "connect": 3600.0, "match_limit": 7 * 86400.0}
MAX_WORDS = {"per_decision": "an hour", "reserve": "a day", "connect": "an hour", "match_limit": "a week"}


@dataclass(frozen=True)
class TimeControl:
    per_decision: float = 1.0
    reserve: float = 10.0
    connect: float = 10.0  # for a bot to start, connect and say hello
    match_limit: float = 1800.0  # wall-clock watchdog for one whole match

    def __post_init__(self) -> None:
        for name in ("per_decision", "reserve", "connect", "match_limit"):
            problem = seconds_problem(name, getattr(self, name))
            if problem:
                raise ValueError(f"time control {name!r} {problem}")


def seconds_problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the time control's ``name`` (the one check of its bounds), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number of seconds, got {value!r}"
    if value != value:  # NaN
        return "must be a finite number of seconds, got nan"
    if name == "reserve" and value < 0:
        return f"must be 0 seconds or more, got {value:g}"
    if name != "reserve" and not value > 0:
        return f"must be more than 0 seconds, got {value:g}"
    if not value <= MAX_SECONDS[name]:  # also infinity
        return f"must be at most {MAX_SECONDS[name]:g} seconds ({MAX_WORDS[name]}), got {value:g}"
    return None


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
