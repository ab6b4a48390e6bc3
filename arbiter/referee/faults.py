"""The fault taxonomy and what the referee does about each fault.

Every failure of a seat has a name (:class:`barbu.matchlog.FaultKind`, docs/match-log.md). The default policy:
substitute a legal move from the seat's fallback player and count a strike; at ``max_strikes``
the fallback plays the seat for the rest of the match and the entrant forfeits. A seat whose
bot is gone (``crash``, ``disconnect``), or a remote entrant that never came (``absent``), cannot
answer again, so it goes to the fallback at once and forfeits.
"""

from __future__ import annotations

from dataclasses import dataclass

from barbu.matchlog import FaultKind as FaultKind  # the log format's vocabulary: one source for both
from barbu.matchlog import FaultRecord as FaultRecord

TERMINAL = (FaultKind.CRASH, FaultKind.DISCONNECT, FaultKind.ABSENT)


class PlayerFault(Exception):
    """Raised by a player when its bot misbehaved; the referee records and handles it."""

    def __init__(self, kind: FaultKind, detail: str, fatal: bool = False):
        super().__init__(f"{kind}: {detail}")
        self.kind = FaultKind(kind)
        self.detail = detail
        self.fatal = fatal or self.kind in TERMINAL  # the bot cannot be asked again


@dataclass(frozen=True)
class FaultPolicy:
    max_strikes: int = 3  # strikes before the seat is taken over and the entrant forfeits

    def __post_init__(self) -> None:
        if self.max_strikes < 1:
            raise ValueError("max_strikes must be at least 1")
