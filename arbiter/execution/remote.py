"""Matches with remote entrants: played in the coordinator, where the lobby listens.

A match with a remote seat is played by :class:`RemoteExecutor`: one thread of the process that
runs the tournament, with an event loop of its own holding the lobby (arbiter.lobby.server) and
a match host. The local seats of such a match are bot processes of this machine, the remote ones
are invited through the lobby and play over its address, so the lobby never has to reach a worker
process or a Dask worker. Matches without a remote seat go where they always go (a local pool, the
cluster): :class:`RoutedExecutor` sends each match to one or the other.

A remote entrant that is not connected, or has no free capacity, when its match is ready waits up
to the tournament's ``remote_wait``; after that the match is played with that seat ``absent``
(docs/remote.md): the fallback plays it and the entrant forfeits, under the fault policy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from arbiter.errors import ConfigError
from arbiter.execution.executors import Executor, Venue, typed_outcome
from arbiter.execution.play import play_task
from arbiter.lobby.server import Lobby, Reservation
from arbiter.match.blocking import LoopThread
from arbiter.match.invited import Invitee
from arbiter.match.play import MatchHost
from arbiter.model import BotSpec, MatchOutcome, MatchTask
from arbiter.referee.players import AbsentPlayer, Player

log = logging.getLogger(__name__)

__all__ = ["RemoteExecutor", "RoutedExecutor", "entrant_of", "has_remote_seat"]


def has_remote_seat(task: MatchTask) -> bool:
    return any(bot.remote for bot in task.bots)


def entrant_of(name: str) -> str:
    """The entrant a key is for: an arena's version ``alice@2`` is entrant ``alice``'s."""
    return name.partition("@")[0]


class RemoteExecutor:
    """Plays up to ``venue.workers`` matches with remote seats at once, in an event loop of this
    process (a :class:`LoopThread`) holding the lobby and a match host."""

    def __init__(self, venue: Venue):
        if venue.lobby is None or venue.check_key is None:
            raise ConfigError(f"tournament {venue.name!r} has remote entrants but no lobby")
        self.slots = venue.workers
        self.venue = venue
        self._told_absent: set[str] = set()  # entrants the operator was told a match waits for
        self._thread = LoopThread("barbu-lobby")
        self.host = MatchHost(reuse=False)
        self.lobby = Lobby(
            venue.lobby.listen,
            credentials=venue.lobby.credentials(),
            check_key=venue.check_key,
            entrants=[entrant_of(e.name) for e in venue.entrants if e.remote],
            play=lambda: self.host.server,
            name=venue.name,
        )
        self._running: set[Future[MatchOutcome]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()  # in the loop: the matches being played
        self._room: asyncio.Semaphore | None = None
        try:
            self._thread.run(self._start())
        except BaseException:
            self._thread.close()
            raise

    async def _start(self) -> None:
        self._room = asyncio.Semaphore(self.slots)
        await self.lobby.start()

    @property
    def address(self) -> str:
        return self.lobby.address

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        inner = self._thread.submit(self._play(task))
        self._running.add(inner)
        inner.add_done_callback(self._running.discard)
        return typed_outcome(task, inner)

    async def _play(self, task: MatchTask) -> MatchOutcome:
        me = asyncio.current_task()
        assert self._room is not None and me is not None
        self._tasks.add(me)
        try:
            return await self._play_with_room(task, self._room)
        finally:
            self._tasks.discard(me)

    async def _play_with_room(self, task: MatchTask, room: asyncio.Semaphore) -> MatchOutcome:
        async with room:
            remote = [seat for seat, bot in enumerate(task.bots) if bot.remote]
            wait = self.venue.remote_wait
            self._say_who_is_waited_for(task, [entrant_of(task.bots[s].name) for s in remote], wait)
            reserved = await self.lobby.reserve([entrant_of(task.bots[s].name) for s in remote], wait)
            seats: list[BotSpec | Player | Invitee] = list(task.bots)
            for seat, reservation in zip(remote, reserved, strict=True):
                name = task.bots[seat].name
                seats[seat] = reservation or AbsentPlayer(
                    name, f"{name} was not connected to the lobby (or had no free capacity) after {wait:g} s"
                )
            try:
                return await play_task(self.host, task, seats)
            finally:
                for r in reserved:
                    if isinstance(r, Reservation):
                        r.release()

    def _say_who_is_waited_for(self, task: MatchTask, names: list[str], wait: float) -> None:
        """Once per absence: a match waits for a remote entrant that is not connected."""
        connected = self.lobby.capacities()
        self._told_absent -= set(connected)  # back: its next absence is told again
        absent = sorted({n for n in names if n not in connected} - self._told_absent)
        if absent:
            self._told_absent.update(absent)
            log.warning(
                "match %s waits up to %g s for %s: not connected to the lobby (then played with the seat absent)",
                task.key,
                wait,
                ", ".join(absent),
            )

    def connected(self) -> dict[str, int]:
        """Each connected remote entrant's capacity (matches at once, over all its streams)."""
        return dict(self._thread.call(self.lobby.capacities))

    def close(self, *, cancel: bool, over: bool = False) -> None:
        """Stop the lobby and the host; ``cancel``: matches in progress are abandoned (their bots
        killed, their logs discarded), else they are waited for; ``over``: the connected entrants
        are told the tournament is over (their bridges exit rather than wait for a next run)."""
        try:
            if cancel:
                for future in list(self._running):
                    future.cancel()
            self._thread.run(self._close(f"tournament {self.venue.name!r} is over" if over else ""))
        finally:
            self._thread.close()

    async def _close(self, over: str) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)  # cancelled matches clean up first
        await self.lobby.stop(over=over)
        await self.host.close()


class RoutedExecutor:
    """Matches with a remote seat to the lobby's executor, the others to the usual one (made at
    its first match: a tournament whose every match has a remote seat starts no worker)."""

    def __init__(self, remote: RemoteExecutor, make_local: Callable[[], Executor], local_slots: int):
        self.remote = remote
        self._make_local = make_local
        self._local: Executor | None = None
        self.slots = remote.slots + local_slots

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        if has_remote_seat(task):
            return self.remote.submit(task)
        if self._local is None:
            self._local = self._make_local()
        return self._local.submit(task)

    def connected(self) -> dict[str, int]:
        return self.remote.connected()

    def close(self, *, cancel: bool, over: bool = False) -> None:
        try:
            if self._local is not None:
                self._local.close(cancel=cancel, over=over)
        finally:
            self.remote.close(cancel=cancel, over=over)
