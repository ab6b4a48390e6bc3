"""Matches between bot processes: listen, launch, referee, record, clean up.

:class:`MatchHost` is one arbiter for many matches: one event loop, one gRPC server on one
address, and per match a desk of seats with tokens of their own. A tournament worker keeps one
for its whole life; :func:`play_bot_match` (``arbiter match``) makes one for a single match.
Whatever the bots do, a match returns a result and leaves a finished log; every process it
started is gone, except those the host keeps for the next match (below).

**Bots that start once.** A host made with ``reuse=True`` keeps a bot process running after
its match when the bot said in its hello that it can play several matches (``multi_match``),
the match ended normally and the seat had no fault; the next match of the same entrant may be
handed to it on the same stream (a session and token of its own, its own output file, time
control, fault policy and log). A process is never handed a match that shares a deal with one
it has played (the copies of a duplicate set, a deal file's repeated blocks): a fresh process
plays it. A kept bot that dies or misbehaves between matches is simply not used again; what
happens during a match touches that match only. Limits and isolation are those of the process,
so a kept process runs under the limits it was started with (its ``cpu`` limit counts over its
whole life): a task whose limits or isolation differ gets a process of its own.

The bots run under ``limits`` (arbiter.process.limits.Limits) and, with
``isolation="bubblewrap"``, each in its own sandbox; a match that asks for a sandbox this
machine cannot build is refused (ConfigError), never played without it. The log's ``match``
line records both (``isolation``, ``limits``) and which seats a kept process played
(``reused``, docs/match-log.md); a match played without isolation says so in the arbiter's log.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from barbu.matchlog import dumps

from arbiter.errors import ConfigError
from arbiter.process.bot import BotProcess, wait_until
from arbiter.process.limits import Limits
from arbiter.process.sandbox import bubblewrap_problem
from arbiter.process.users import make_reachable, resolve_user
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import MatchResult, MatchSetup, Referee
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.encode import RequestEncoder
from arbiter.transport.server import ArbiterServer, RemotePlayer, Session, Stream

__all__ = ["BotMatch", "BotSpec", "EXIT_GRACE", "MatchHost", "play_bot_match", "wait_until"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: str
    cwd: str | None = None


@dataclass
class BotMatch:
    result: MatchResult
    log_path: Path
    outputs: list[Path] = field(default_factory=list)  # each seat's captured stdout+stderr
    wall_seconds: float = 0.0  # launch to clean-up
    connect_seconds: float = 0.0  # launch until every bot connected (or gave up)
    play_seconds: float = 0.0  # the referee's match loop
    pids: list[int] = field(default_factory=list)  # the bot processes of the match
    tokens: list[str] = field(default_factory=list)  # the seats' tokens (children inherit them)
    refused: list[str] = field(default_factory=list)  # why each refused connection was refused
    isolation: str = "none"
    scratch: list[str] = field(default_factory=list)  # the seats' scratch folders (removed)
    uids: list[int] = field(default_factory=list)  # the user each bot ran as
    reused: list[int] = field(default_factory=list)  # seats played by a process kept from an earlier match
    kept: list[int] = field(default_factory=list)  # seats whose process is kept for a later match
    bots_cpu: float = 0.0  # CPU seconds the four bots spent on this match (start-up included)


_warned_unisolated = False
EXIT_GRACE = 2.0  # seconds for the four bots together to exit by themselves after MatchEnd


class _HeaderKeys:
    """A log sink that adds keys to the first line (the ``match`` line); the log format lets
    a reader ignore keys it does not know."""

    def __init__(self, sink: Callable[[str], None], extra: dict):
        self.sink = sink
        self.extra: dict | None = extra

    def __call__(self, line: str) -> None:
        if self.extra is not None:
            header = json.loads(line)
            header.update(self.extra)
            line = dumps(header)
            self.extra = None
        self.sink(line)


@dataclass
class _Kept:
    """A bot process kept between matches, idle on its open stream."""

    key: tuple
    process: BotProcess
    stream: Stream
    deals: set = field(default_factory=set)  # every deal it has seen (see _deal_keys)
    cpu_mark: float = 0.0

    def usable(self) -> bool:
        return self.stream.alive and self.process.exit_code() is None


@dataclass
class _Seat:
    key: tuple  # the entrant and how its process runs: what a kept process is found by
    session: Session
    process: BotProcess
    kept: _Kept | None = None  # the kept process this seat reuses
    cpu_start: float = 0.0


def _deal_keys(setup: MatchSetup) -> set:
    """What identifies the deals of a match: each deal's hands, or the seed they are shuffled
    from (two matches of one seed deal the same hands)."""
    if setup.deals is not None:
        return {tuple(d) for d in setup.deals}
    return {("seed", setup.seed)}


class MatchHost:
    """One arbiter for many matches (see the module's docstring).

    Use it from code that is not asynchronous with :meth:`play` (the host runs its own event
    loop), or from a running loop with ``await`` :meth:`aplay`. :meth:`close` retires the kept
    bots and stops the server.
    """

    def __init__(
        self, *, listen: str | None = None, reuse: bool = False, keep_per_entrant: int = 4, keep_total: int = 16
    ):
        self.listen = listen
        self.reuse = reuse
        self.keep_per_entrant = keep_per_entrant
        self.keep_total = keep_total
        self.server: ArbiterServer | None = None
        self._server_key: tuple | None = None
        self._socket_dir: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kept: list[_Kept] = []

    # ---- the blocking face ------------------------------------------------------------------
    def play(self, bots: list[BotSpec], setup: MatchSetup, log_path: Path, **kw: Any) -> BotMatch:
        """Play a match (see :meth:`aplay`) in the host's own event loop."""
        return self._run(self.aplay(bots, setup, log_path, **kw))

    def close(self) -> None:
        if self._loop is None or self._loop.is_closed():
            self._remove_socket_dir()
            return
        try:
            self._run(self.aclose())
        finally:
            self._loop.close()
            self._loop = None

    def _run(self, coro: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise RuntimeError("MatchHost.play runs its own event loop: in a running loop, await aplay()")
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        task = self._loop.create_task(coro)
        try:
            return self._loop.run_until_complete(task)
        except BaseException:
            # Stopped (Ctrl-C, SIGTERM) while the loop waited: cancel the match so that its own
            # clean-up runs (bots killed, scratch folders and the socket removed), then go on.
            if not task.done():
                task.cancel()
                try:
                    self._loop.run_until_complete(task)
                except BaseException:
                    pass
            raise

    def __enter__(self) -> MatchHost:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- the server ---------------------------------------------------------------------------
    async def _ensure_server(self, time_control: TimeControl) -> ArbiterServer:
        # Keepalive pings must not cut off a bot that may think this long without answering one.
        thinking = time_control.per_decision + time_control.reserve
        key = (max(1.0, min(5.0, time_control.connect / 2)), max(60.0, thinking + 10))
        if self.server is not None and self._server_key == key:
            return self.server
        if self.server is not None:  # another time control: a server with other limits
            await self.aclose()
        listen = self.listen
        if listen is None:
            self._socket_dir = tempfile.mkdtemp(prefix="barbu-")
            listen = f"unix:{self._socket_dir}/arbiter.sock"
        server = ArbiterServer(listen, hello_seconds=key[0], keepalive_seconds=key[1])
        try:
            await server.astart()
        except BaseException:
            self._remove_socket_dir()
            raise
        self.server, self._server_key = server, key
        return server

    def _remove_socket_dir(self) -> None:
        if self._socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    async def aclose(self) -> None:
        """Retire every kept bot and stop the server."""
        kept, self._kept = self._kept, []
        await self._retire([k.process for k in kept], [k.stream for k in kept], grace=0.5)
        if self.server is not None:
            server, self.server, self._server_key = self.server, None, None
            await server.astop()
        self._remove_socket_dir()

    # ---- one match ----------------------------------------------------------------------------
    async def aplay(
        self,
        bots: list[BotSpec],
        setup: MatchSetup,
        log_path: Path,
        *,
        time_control: TimeControl = TimeControl(),
        fault_policy: FaultPolicy = FaultPolicy(),
        limits: Limits = Limits(),
        isolation: str = "none",
        reuse: bool | None = None,
    ) -> BotMatch:
        """Play a match between four bot commands; the log is written to ``log_path``.
        ``reuse`` (default: the host's) lets this match use and keep ``multi_match`` bots."""
        global _warned_unisolated
        reuse = self.reuse if reuse is None else reuse
        if len(bots) != 4:
            raise ValueError("a match needs exactly 4 bots")
        user = resolve_user(limits.user)
        if isolation == "bubblewrap":
            problem = bubblewrap_problem(user)
            if problem:
                raise ConfigError(
                    f"isolation: bubblewrap was asked for, but {problem}. Bots are not isolated, so the match is "
                    "not played (install bubblewrap and allow user namespaces, or set isolation: none)"
                )
            if self.listen is not None and not self.listen.startswith("unix:"):
                raise ConfigError(
                    "isolation: bubblewrap leaves bots no network: they reach the arbiter by its Unix socket only"
                )
        elif isolation != "none":
            raise ConfigError(f"isolation {isolation!r} is not one of none, bubblewrap")
        started = time.perf_counter()
        log_path = Path(log_path)
        stem = log_path.name.removesuffix(".jsonl")
        outputs = [log_path.with_name(f"{stem}.seat{s}.stderr") for s in range(4)]
        sink = AtomicLogFile(log_path)
        try:
            server = await self._ensure_server(time_control)
        except BaseException:
            sink.discard()
            raise
        loop = asyncio.get_running_loop()
        desk = server.open_desk(setup.match_id or stem)
        deals = _deal_keys(setup)
        seats: list[_Seat] = []
        match_ended = False
        result: MatchResult | None = None
        try:
            if self._socket_dir and user.is_other:  # another user must reach and use the socket
                make_reachable(self._socket_dir, user)
                os.chmod(self._socket_dir, 0o711)
                os.chmod(os.path.join(self._socket_dir, "arbiter.sock"), 0o666)
            if self._kept:
                await asyncio.sleep(0)  # let the loop see what happened to kept streams meanwhile
            for seat, bot in enumerate(bots):
                key = (bot.name, bot.command, bot.cwd, limits, isolation)
                kept = self._take(key, deals) if reuse else None
                if kept is not None:
                    session = desk.hand_over(seat, kept.stream)
                    session.probe = kept.process.running
                    kept.process.redirect_output(outputs[seat])
                    seats.append(_Seat(key, session, kept.process, kept, kept.process.cpu_seconds()))
                    continue
                session = desk.expect(seat)
                env = {"BARBU_ARBITER": server.address, "BARBU_TOKEN": session.token, "BARBU_SEAT": str(seat)}
                process = BotProcess(
                    bot.command,
                    env,
                    outputs[seat],
                    cwd=bot.cwd,
                    limits=limits,
                    isolation=isolation,
                    socket_dir=self._socket_dir,
                )
                session.probe = process.running
                seats.append(_Seat(key, session, process))
            if isolation == "none" and not _warned_unisolated:
                log.warning(
                    "bots are not isolated (isolation: none): they run as user %s and see this machine's files, "
                    "processes and network; see docs/security.md",
                    user.name,
                )
                _warned_unisolated = True
            # Wait for every bot to connect, or to die, or for the connect limit.
            deadline = loop.time() + time_control.connect
            while not all(s.session.connected.is_set() or s.process.exit_code() is not None for s in seats):
                if loop.time() >= deadline:
                    break
                await asyncio.sleep(0.005)
            connected = time.perf_counter()
            entrants = [b.name for b in bots]
            encoder = RequestEncoder()
            players = [
                RemotePlayer(
                    s.session,
                    b.name,
                    time_control,
                    process=s.process,
                    match_id=setup.match_id or stem,
                    entrants=entrants,
                    release_on_close=not reuse,
                    encoder=encoder,
                )
                for s, b in zip(seats, bots)
            ]
            header_seats = [{"seat": s, "entrant": b.name, "command": b.command} for s, b in enumerate(bots)]
            extra: dict[str, Any] = {"isolation": isolation, "limits": limits.to_json()}
            reused = [{"seat": i, "matches_before": s.session.reused} for i, s in enumerate(seats) if s.kept]
            if reused:
                extra["reused"] = reused
            header = _HeaderKeys(sink, extra)
            referee = Referee(
                setup, players, header, seats=header_seats, time_control=time_control, fault_policy=fault_policy
            )
            result = await referee.arun()
            played = time.perf_counter()
            match_ended = True
        except BaseException:
            sink.discard()  # the match never started (a bot could not be launched), or we are being stopped
            await self._end_match(seats, deals, None, False, reuse)
            desk.close()
            raise
        kept_seats, cpu = await self._end_match(seats, deals, result, match_ended, reuse)
        desk.close()
        # The log gets its final name last, after the clean-up: a tournament records the match right
        # after this returns, so the time a finished log exists unrecorded stays as short as it can.
        path = sink.commit()
        return BotMatch(
            result,
            path,
            outputs,
            wall_seconds=time.perf_counter() - started,
            connect_seconds=connected - started,
            play_seconds=played - connected,
            pids=[s.process.pid for s in seats],
            tokens=[s.session.token for s in seats] + [s.process.token for s in seats if s.kept],
            refused=list(desk.refused),
            isolation=isolation,
            scratch=[s.process.scratch for s in seats if s.process.scratch and s.kept is None],
            uids=[s.process.user.uid for s in seats],
            reused=[i for i, s in enumerate(seats) if s.kept],
            kept=kept_seats,
            bots_cpu=cpu,
        )

    def _take(self, key: tuple, deals: set) -> _Kept | None:
        """A kept process of this entrant that never saw any of these deals, or None."""
        for kept in list(self._kept):
            if kept.key != key:
                continue
            if not kept.usable() or self._spent(kept):
                self._kept.remove(kept)
                self._discard(kept)
                continue
            if kept.deals & deals:
                continue  # it saw one of these deals (from some seat): never again
            self._kept.remove(kept)
            return kept
        return None

    @staticmethod
    def _spent(kept: _Kept) -> bool:
        """Whether a kept process has used half of its CPU limit (RLIMIT_CPU counts over its
        whole life): it is let go before it could run out in the middle of somebody's match."""
        cpu = kept.process.limits.cpu
        return cpu is not None and kept.process.cpu_seconds() > cpu / 2

    def _discard(self, kept: _Kept) -> None:
        """A kept bot that died or misbehaved between matches: gone, charged to no match."""
        kept.stream.release()
        kept.process.kill()

    async def _end_match(
        self, seats: list[_Seat], deals: set, result: MatchResult | None, match_ended: bool, reuse: bool
    ) -> tuple[list[int], float]:
        """Keep the bots that may play again; the others get their stream ended, a grace to
        exit by themselves (after a normal end), then are killed. Returns the kept seats and
        the CPU the bots spent on the match."""
        faulted = {f.seat for f in result.faults} if result is not None else set()
        complete = result is not None and result.status == "complete" and match_ended
        keep: list[tuple[int, _Seat]] = []
        drop: list[_Seat] = []
        for i, s in enumerate(seats):
            stream = s.session.stream
            if (
                reuse
                and complete
                and i not in faulted
                and stream is not None
                and stream.multi_match
                and stream.alive
                and s.process.exit_code() is None
            ):
                keep.append((i, s))
            else:
                drop.append(s)
        cpu = 0.0
        for i, s in keep:
            stream = s.session.stream
            assert stream is not None
            stream.detach()
            kept = s.kept or _Kept(s.key, s.process, stream)
            kept.deals |= deals
            now = s.process.cpu_seconds()
            cpu += now - s.cpu_start
            self._kept.append(kept)
        used = await self._retire(
            [s.process for s in drop], [s.session.stream for s in drop], grace=EXIT_GRACE if match_ended else 0.0
        )
        cpu += sum(max(0.0, u - s.cpu_start) for u, s in zip(used, drop))
        self._trim()
        return [i for i, _ in keep], cpu

    def _trim(self) -> None:
        """At most ``keep_per_entrant`` kept processes per entrant and ``keep_total`` in all:
        the oldest go."""
        counts: dict[tuple, int] = {}
        for kept in reversed(list(self._kept)):
            counts[kept.key] = counts.get(kept.key, 0) + 1
            if counts[kept.key] > self.keep_per_entrant:
                self._kept.remove(kept)
                self._discard(kept)
        while len(self._kept) > self.keep_total:
            self._discard(self._kept.pop(0))

    async def _retire(self, processes: list[BotProcess], streams: list[Stream | None], grace: float) -> list[float]:
        """End the streams, give the processes ``grace`` seconds together to exit, kill them.
        Returns the CPU seconds each had used."""
        for stream in streams:
            if stream is not None:
                stream.release()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while any(p.exit_code() is None for p in processes) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        used = []
        for p in processes:
            used.append(p.cpu_seconds())  # before the kill reaps it
            p.kill()
        return used


def play_bot_match(
    bots: list[BotSpec],
    setup: MatchSetup,
    log_path: Path,
    *,
    time_control: TimeControl = TimeControl(),
    fault_policy: FaultPolicy = FaultPolicy(),
    listen: str | None = None,
    limits: Limits = Limits(),
    isolation: str = "none",
) -> BotMatch:
    """Play one match between four bot commands on a server of its own; the log is written to
    ``log_path``. Every bot process is gone when it returns."""
    host = MatchHost(listen=listen)
    try:
        return host.play(
            bots, setup, log_path, time_control=time_control, fault_policy=fault_policy, limits=limits,
            isolation=isolation,
        )  # fmt: skip
    finally:
        host.close()
