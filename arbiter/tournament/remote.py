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
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc

from arbiter.errors import ConfigError
from arbiter.lobby.server import KeyCheck, Lobby, Reservation
from arbiter.match.invited import Invitee
from arbiter.match.play import MatchHost
from arbiter.model import BotSpec, MatchOutcome, MatchTask
from arbiter.process.limits import Limits
from arbiter.referee.players import AbsentPlayer, Player
from arbiter.tournament.config import TournamentConfig
from arbiter.tournament.executors import Executor, typed_outcome
from arbiter.tournament.worker import outcome_from_result, task_setup

__all__ = ["RemoteExecutor", "RoutedExecutor", "entrant_of", "has_remote_seat"]


def has_remote_seat(task: MatchTask) -> bool:
    return any(bot.remote for bot in task.bots)


def entrant_of(name: str) -> str:
    """The entrant a key is for: an arena's version ``alice@2`` is entrant ``alice``'s."""
    return name.partition("@")[0]


class RemoteExecutor:
    """Plays up to ``slots`` matches with remote seats at once, in a thread of this process."""

    def __init__(self, config: TournamentConfig, check_key: KeyCheck, slots: int):
        if config.lobby is None:
            raise ConfigError(f"tournament {config.name!r} has remote entrants but no lobby")
        self.slots = slots
        self.config = config
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="barbu-lobby", daemon=True)
        self._thread.start()
        self.host = MatchHost(reuse=False)
        self.lobby = Lobby(
            config.lobby.listen,
            credentials=_credentials(config.lobby.cert, config.lobby.key),
            check_key=check_key,
            entrants=[entrant_of(e.name) for e in config.entrants if e.remote],
            play=lambda: self.host.server,
            name=config.name,
        )
        self._running: set[Future[MatchOutcome]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()  # in the loop: the matches being played
        self._room: asyncio.Semaphore | None = None
        try:
            self._call(self._start())
        except BaseException:
            self._stop_loop()
            raise

    async def _start(self) -> None:
        self._room = asyncio.Semaphore(self.slots)
        await self.lobby.start()

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def address(self) -> str:
        return self.lobby.address

    def submit(self, task: MatchTask) -> Future[MatchOutcome]:
        inner = asyncio.run_coroutine_threadsafe(self._play(task), self._loop)
        self._running.add(inner)
        inner.add_done_callback(self._running.discard)
        return typed_outcome(task, inner)

    async def _play(self, task: MatchTask) -> MatchOutcome:
        assert self._room is not None
        me = asyncio.current_task()
        assert me is not None
        self._tasks.add(me)
        try:
            return await self._play_with_room(task, self._room)
        finally:
            self._tasks.discard(me)

    async def _play_with_room(self, task: MatchTask, room: asyncio.Semaphore) -> MatchOutcome:
        async with room:
            remote = [seat for seat, bot in enumerate(task.bots) if bot.remote]
            wait = self.config.remote_wait
            reserved = await self.lobby.reserve([entrant_of(task.bots[s].name) for s in remote], wait)
            entrants: list[BotSpec | Player | Invitee] = list(task.bots)
            for seat, reservation in zip(remote, reserved, strict=True):
                name = task.bots[seat].name
                entrants[seat] = reservation or AbsentPlayer(
                    name, f"{name} was not connected to the lobby (or had no free capacity) after {wait:g} s"
                )
            try:
                setup, policy = task_setup(task)
                played = await self.host.play(
                    entrants, setup, Path(task.log_path), time_control=task.time_control, fault_policy=policy,
                    limits=task.limits if isinstance(task.limits, Limits) else Limits(), isolation=task.isolation,
                )  # fmt: skip
            finally:
                for r in reserved:
                    if isinstance(r, Reservation):
                        r.release()
        outcome = outcome_from_result(task, played.result, played.log_path, played.wall_seconds)
        return replace(outcome, bots_cpu=played.bots_cpu)

    def connected(self) -> dict[str, int]:
        """Each connected remote entrant's capacity (matches at once, over all its streams)."""
        return dict(self._call(self._connected()))

    async def _connected(self) -> dict[str, int]:
        return self.lobby.capacities()

    def close(self, *, cancel: bool) -> None:
        """Stop the lobby and the host; ``cancel``: matches in progress are abandoned (their bots
        killed, their logs discarded), else they are waited for."""
        try:
            if cancel:
                for future in list(self._running):
                    future.cancel()
            self._call(self._close())
        finally:
            self._stop_loop()

    async def _close(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)  # cancelled matches clean up first
        await self.lobby.stop()
        await self.host.close()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()


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

    def close(self, *, cancel: bool) -> None:
        try:
            if self._local is not None:
                self._local.close(cancel=cancel)
        finally:
            self.remote.close(cancel=cancel)


def _credentials(cert: Path | None, key: Path | None) -> grpc.ServerCredentials | None:
    """The lobby's TLS credentials from its certificate chain and key files (None: plaintext)."""
    if cert is None or key is None:
        return None
    return grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
