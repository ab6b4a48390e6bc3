"""Bots that start once: the processes a match host keeps between matches, idle on their open
streams, and the rules they are handed out by (never a deal they have seen, never past half of
their CPU limit, a bounded number per entrant and in all). docs/security.md, "Bots that start
once"."""

from __future__ import annotations

from dataclasses import dataclass, field

from arbiter.process.bot import BotProcess
from arbiter.process.limits import Limits
from arbiter.referee.loop import MatchSetup
from arbiter.transport.server import Stream

ProcessKey = tuple[str, str, str | None, Limits, str, str]
"""What a kept process is found by: the entrant's name, command and folder, its limits, isolation and transport."""
DealKey = tuple[object, ...]
"""One deal's hands, or ("seed", seed) for every deal shuffled from that seed."""


def deal_keys(setup: MatchSetup) -> set[DealKey]:
    """What identifies the deals of a match: each deal's hands, or the seed they are shuffled
    from (two matches of one seed deal the same hands)."""
    if setup.deals is not None:
        return {tuple(d) for d in setup.deals}
    return {("seed", setup.seed)}


@dataclass
class Kept:
    """A bot process kept between matches, idle on its open stream."""

    key: ProcessKey
    process: BotProcess
    stream: Stream
    deals: set[DealKey] = field(default_factory=set)  # every deal it has seen
    ended: float = 0.0  # when its last match ended (time.monotonic): its output since is that match's

    def usable(self) -> bool:
        return self.stream.alive and self.process.exit_code() is None

    def spent(self) -> bool:
        """Whether it has used half of its CPU limit (RLIMIT_CPU counts over its whole life): it
        is let go before it could run out in the middle of somebody's match."""
        cpu = self.process.limits.cpu
        return cpu is not None and self.process.cpu_seconds() > cpu / 2

    def discard(self) -> None:
        """Gone (it died or misbehaved between matches, or there are too many): charged to no match."""
        self.stream.release()
        self.process.kill()


class KeptBots:
    """A host's kept processes, oldest first: at most ``per_entrant`` per entrant and ``total``
    in all."""

    def __init__(self, per_entrant: int, total: int):
        self.per_entrant, self.total = per_entrant, total
        self._kept: list[Kept] = []

    def __bool__(self) -> bool:
        return bool(self._kept)

    def take(self, key: ProcessKey, deals: set[DealKey]) -> Kept | None:
        """A kept process of this entrant that never saw any of these deals, or None."""
        for kept in list(self._kept):
            if kept.key != key:
                continue
            if not kept.usable() or kept.spent():
                self._kept.remove(kept)
                kept.discard()
                continue
            if kept.deals & deals:
                continue  # it saw one of these deals (from some seat): never again
            self._kept.remove(kept)
            return kept
        return None

    def add(self, kept: Kept) -> None:
        self._kept.append(kept)

    def trim(self) -> None:
        """The oldest go past the bounds."""
        counts: dict[ProcessKey, int] = {}
        for kept in reversed(list(self._kept)):
            counts[kept.key] = counts.get(kept.key, 0) + 1
            if counts[kept.key] > self.per_entrant:
                self._kept.remove(kept)
                kept.discard()
        while len(self._kept) > self.total:
            self._kept.pop(0).discard()

    def release(self) -> list[Kept]:
        """Every kept process, no longer kept (the host retires them)."""
        kept, self._kept = self._kept, []
        return kept
