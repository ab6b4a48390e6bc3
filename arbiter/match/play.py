"""Matches between bot processes: listen, launch, referee, record, clean up.

:class:`MatchHost` is one arbiter for many matches: one event loop, one gRPC server on one
address, and per match a desk of seats with tokens of their own. A tournament worker keeps one
for its whole life; ``arbiter match`` makes one for a single match, and check-bot one for its
two sessions (a seat may be an in-process player: check-bot's random opponents). Its face is
asynchronous; blocking callers go through :mod:`arbiter.match.blocking`.
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
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from barbu.matchlog import MatchResult

from arbiter.errors import ArbiterError, ArbiterStalled, ConfigError, LogFileError
from arbiter.match.invited import Invitation, Invitee
from arbiter.match.kept import DealKey, Kept, KeptBots, ProcessKey, deal_keys
from arbiter.model import BotSpec
from arbiter.process.bot import BotProcess, wait_until
from arbiter.process.limits import Limits
from arbiter.process.sandbox import Isolation, bot_user, bubblewrap_problem
from arbiter.process.users import BotUser, make_reachable
from arbiter.referee.faults import FaultPolicy
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import MatchSetup, Referee
from arbiter.referee.players import Player
from arbiter.referee.stall import StallWatch
from arbiter.referee.timecontrol import TimeControl
from arbiter.text import printable
from arbiter.transport.encode import RequestEncoder
from arbiter.transport.remote import BotLiveness, RemotePlayer
from arbiter.transport.server import ArbiterServer, MatchDesk, Session, Stream, socket_folder

__all__ = ["BotMatch", "BotSpec", "EXIT_GRACE", "MatchHost", "MatchOptions", "SeatExit", "wait_until"]

log = logging.getLogger(__name__)


EXIT_GRACE = 2.0  # seconds for the four bots together to exit by themselves after MatchEnd
SOCKET_NAME = "arbiter.sock"  # the server's socket in the host's private folder


@dataclass(frozen=True)
class MatchOptions:
    """How a match between bot processes is played, beyond who plays and what is dealt."""

    time_control: TimeControl = TimeControl()
    fault_policy: FaultPolicy = FaultPolicy()
    limits: Limits = Limits()
    isolation: str = "none"  # an arbiter.process.sandbox.Isolation value
    reuse: bool | None = None  # keep its multi_match bots for a later match (None: the host's default)
    replace: bool = False  # replace an existing log file (else a LogFileError)
    env: Mapping[str, str] | None = None  # added to the bots' environment
    exit_grace: float = EXIT_GRACE  # for the bots let go to exit by themselves after MatchEnd
    wrap: Callable[[int, RemotePlayer], Player] | None = None  # wraps each bot's player (check-bot's recorder)


@dataclass(frozen=True)
class SeatExit:
    """How a bot process of the match ended once the match was over."""

    code: int | None  # None: still running after the grace (then killed)
    seconds: float | None  # from the end of the match until it exited by itself
    detail: str  # how it ended, in words (BotProcess.describe_exit)


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
    exits: dict[int, SeatExit] = field(default_factory=dict)  # by seat: the bots let go after the match


_warned_unisolated = False
CONNECT_ATTEMPTS = 3  # times a match's bots are seated afresh after the arbiter stalled while they connected


@dataclass
class _Seat:
    index: int  # the seat number
    key: ProcessKey  # the entrant and how its process runs: what a kept process is found by
    session: Session
    process: BotProcess
    kept: Kept | None = None  # the kept process this seat reuses
    cpu_start: float = 0.0


@dataclass(frozen=True)
class _Seating:
    """What seating a match's bots needs: who plays, how their processes run, where they write."""

    label: str
    entrants: Sequence[BotSpec | Player | Invitee]
    setup: MatchSetup
    outputs: list[Path]
    deals: set[DealKey]
    limits: Limits
    isolation: str
    user: BotUser
    env: Mapping[str, str] | None


@dataclass
class _Invited:
    """A seat played from elsewhere: its session and what the lobby knows of the bot's process."""

    index: int
    session: Session
    liveness: BotLiveness


class MatchHost:
    """One arbiter for many matches (see the module's docstring): ``await host.play(...)`` for
    each, then ``await host.close()`` (or ``async with MatchHost() as host``), which retires the
    kept bots and stops the server."""

    def __init__(
        self, *, listen: str | None = None, reuse: bool = False, keep_per_entrant: int = 4, keep_total: int = 16
    ):
        self.listen = listen
        self.reuse = reuse
        self.server: ArbiterServer | None = None
        self.stalls = StallWatch()  # the arbiter's own stalls: never charged to a bot
        self._server_key: tuple[float, float] | None = None
        self._socket_dir: str | None = None
        self._kept = KeptBots(keep_per_entrant, keep_total)
        self.playing = 0  # matches in play on this host now
        self._starting = asyncio.Lock()

    async def __aenter__(self) -> MatchHost:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ---- the server ---------------------------------------------------------------------------
    async def _ensure_server(self, time_control: TimeControl) -> ArbiterServer:
        async with self._starting:  # matches played at once (the lobby's) share one server
            return await self._start_server(time_control)

    async def _start_server(self, time_control: TimeControl) -> ArbiterServer:
        # Keepalive pings must not cut off a bot that may think this long without answering one.
        thinking = time_control.per_decision + time_control.reserve
        key = (max(1.0, min(5.0, time_control.connect / 2)), max(60.0, thinking + 10))
        if self.server is not None and self._server_key == key:
            return self.server
        if self.server is not None:  # another time control: a server with other limits
            await self.close()
        listen = self.listen
        if listen is None:
            self._socket_dir = socket_folder("barbu-", SOCKET_NAME)
            listen = f"unix:{self._socket_dir}/{SOCKET_NAME}"
        server = ArbiterServer(listen, hello_seconds=key[0], keepalive_seconds=key[1])
        try:
            await server.start()
        except BaseException:
            self._remove_socket_dir()
            raise
        self.server, self._server_key = server, key
        self.stalls.start()
        return server

    def _remove_socket_dir(self) -> None:
        if self._socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None

    async def close(self) -> None:
        """Retire every kept bot and stop the server."""
        kept = self._kept.release()
        await self._retire([k.process for k in kept], [k.stream for k in kept], [0.5] * len(kept))
        self.stalls.stop()
        if self.server is not None:
            server, self.server, self._server_key = self.server, None, None
            await server.stop()
        self._remove_socket_dir()

    # ---- one match ----------------------------------------------------------------------------
    async def play(
        self,
        entrants: Sequence[BotSpec | Player | Invitee],
        setup: MatchSetup,
        log_path: Path,
        options: MatchOptions = MatchOptions(),
    ) -> BotMatch:
        """Play a match of four entrants (bot commands, in-process players, or seats played from
        elsewhere: an ``Invitee`` is sent its seat's token, arbiter.match.invited), logged to
        ``log_path``, as ``options`` say. A file it cannot write is a LogFileError, nobody's fault."""
        self.playing += 1
        try:
            return await self._play(entrants, setup, Path(log_path), options)
        finally:
            self.playing -= 1

    async def _play(
        self, entrants: Sequence[BotSpec | Player | Invitee], setup: MatchSetup, log_path: Path, o: MatchOptions
    ) -> BotMatch:
        time_control, limits, isolation, env = o.time_control, o.limits, o.isolation, o.env
        reuse = self.reuse if o.reuse is None else o.reuse
        user, started = bot_user(limits.user, isolation), time.perf_counter()
        self._check_isolation(isolation, user)
        stem = log_path.name.removesuffix(".jsonl")
        outputs = [log_path.with_name(f"{stem}.seat{s}.stderr") for s in range(4)]
        server = await self._ensure_server(time_control)
        sink = AtomicLogFile(log_path, replace=o.replace)
        deals = deal_keys(setup)
        seats: list[_Seat] = []
        invited: list[_Invited] = []
        desk: MatchDesk | None = None
        try:
            if self._kept:
                await asyncio.sleep(0)  # let the loop see what happened to kept streams meanwhile
            seating = _Seating(setup.match_id or stem, entrants, setup, outputs, deals, limits, isolation, user, env)
            desk, seats, invited, connected = await self._seat_everyone(server, seating, time_control)
            players = self._players(entrants, seats, invited, time_control, setup.match_id or stem, reuse, o.wrap)
            header_seats, header = _header(entrants, seats, isolation, limits)
            referee = Referee(
                setup,
                players,
                sink,
                seats=header_seats,
                time_control=time_control,
                fault_policy=o.fault_policy,
                header=header,
                stalls=self.stalls,
            )
            result = await referee.play()
            played = time.perf_counter()
            if unwritten := next((s.process.output_error for s in seats if s.process.output_error), None):
                raise LogFileError(unwritten)
        except BaseException as e:
            sink.discard()  # the match never started (a bot could not be launched), or we are being stopped
            await self._end_match(seats, invited, deals, None, False, 0.0)
            if desk is not None:
                desk.close()
            _abandoned(e, outputs, log_path)
            raise
        kept_seats, cpu, exits = await self._end_match(seats, invited, deals, result, reuse, o.exit_grace)
        desk.close()
        # The log gets its final name last, after the clean-up: a tournament records the match right
        # after this returns, so the time a finished log exists unrecorded stays as short as it can.
        path = sink.commit()
        return BotMatch(
            result,
            log_path=path,
            outputs=[outputs[s.index] for s in seats],
            wall_seconds=time.perf_counter() - started,
            connect_seconds=connected - started,
            play_seconds=played - connected,
            pids=[s.process.pid for s in seats],
            tokens=[s.session.token for s in seats] + [s.process.token for s in seats if s.kept],
            refused=list(desk.refused),
            isolation=isolation,
            scratch=[s.process.scratch for s in seats if s.process.scratch and s.kept is None],
            uids=[s.process.user.uid for s in seats],
            reused=[s.index for s in seats if s.kept],
            kept=kept_seats,
            bots_cpu=cpu,
            exits=exits,
        )

    def _check_isolation(self, isolation: str, user: BotUser) -> None:
        """A match that asks for a sandbox this machine cannot build is refused, never played
        without it; one played without isolation says so in the arbiter's log (once)."""
        global _warned_unisolated
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
        elif not _warned_unisolated:
            log.warning(
                "bots are not isolated (isolation: none): they run as user %s and see this machine's files, "
                "processes and network; see docs/security.md",
                user.name,
            )
            _warned_unisolated = True

    async def _launch(self, desk: MatchDesk, seating: _Seating, seats: list[_Seat]) -> None:
        """Each bot's seat, into ``seats`` as it is had: a kept process of the entrant's that may
        play these deals, or a new one. A bot that cannot be started ends the match before it
        begins (the caller ends the seats already in ``seats``)."""
        assert self.server is not None
        limits, isolation, user = seating.limits, seating.isolation, seating.user
        if self._socket_dir and user.is_other:  # another user must use the socket
            os.chmod(os.path.join(self._socket_dir, SOCKET_NAME), 0o666)
            if isolation == Isolation.NONE:  # and reach it: a sandbox shows the socket file alone
                make_reachable(self._socket_dir, user)
                os.chmod(self._socket_dir, 0o711)
        for seat, bot in enumerate(seating.entrants):
            if not isinstance(bot, BotSpec):
                continue
            if bot.remote:
                raise ConfigError(f"{bot.name!r} is a remote entrant: it plays through a lobby (arbiter run)")
            key = (bot.name, bot.command, bot.cwd, limits, isolation, bot.transport)
            kept = self._kept.take(key, seating.deals)
            if kept is not None:
                session = desk.hand_over(seat, kept.stream)
                session.probe = kept.process.running
                seats.append(_Seat(seat, key, session, kept.process, kept, kept.process.cpu_seconds()))
                await kept.process.settle_output(kept.ended)
                kept.process.redirect_output(seating.outputs[seat])
                continue
            session = desk.expect(seat)
            bot_env = {**(seating.env or {}), "BARBU_ARBITER": self.server.address, "BARBU_TOKEN": session.token}
            bot_env["BARBU_SEAT"] = str(seat)
            process = BotProcess(
                bot.command,
                bot_env,
                seating.outputs[seat],
                cwd=bot.cwd,
                limits=limits,
                isolation=isolation,
                transport=bot.transport,
            )
            session.probe = process.running
            seats.append(_Seat(seat, key, session, process))

    async def _seat_everyone(
        self, server: ArbiterServer, seating: _Seating, time_control: TimeControl
    ) -> tuple[MatchDesk, list[_Seat], list[_Invited], float]:
        """Launch and invite the match's bots and wait for them to connect. A bot that could not
        connect while the arbiter itself was stalled (stopped, suspended: a bot's own connect
        timeout may run out meanwhile) is nobody's fault: the seats are let go and seated
        afresh, up to :data:`CONNECT_ATTEMPTS` times."""
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            desk = server.open_desk(seating.label)
            seats: list[_Seat] = []
            invited: list[_Invited] = []
            try:
                await self._launch(desk, seating, seats)
                invited = _invite(desk, seating.entrants, seating.setup, time_control)
                mark = StallWatch.now()
                connected = await self._await_connections(seats, invited, time_control)
                sessions = [s.session for s in seats] + [i.session for i in invited]
                missing = [session.seat for session in sessions if not session.connected.is_set()]
                stalled = self.stalls.since(mark)
                if not missing or stalled <= 0:
                    return desk, seats, invited, connected
                if attempt == CONNECT_ATTEMPTS:
                    raise ArbiterStalled(
                        f"the arbiter stalled ({stalled:.0f} s) while the bots of match {seating.label} connected, "
                        f"{attempt} times in a row: no bot is charged; run it again when the machine is steady"
                    )
            except BaseException:
                await self._end_match(seats, invited, seating.deals, None, False, 0.0)
                desk.close()
                raise
            log.warning(
                "the arbiter stalled for %.1f s while the bots of match %s connected and seats %s never did: "
                "no bot is charged, they start again",
                stalled,
                seating.label,
                ", ".join(map(str, missing)),
            )
            await self._end_match(seats, invited, seating.deals, None, False, 0.0)
            desk.close()
        raise AssertionError("unreachable")  # pragma: no cover - the last attempt returns or raises

    async def _await_connections(self, seats: list[_Seat], invited: list[_Invited], time_control: TimeControl) -> float:
        """Wait for every bot to connect, or to die, or for the connect limit (which a stall of
        the arbiter's own does not use up). Returns when it stopped waiting (``perf_counter``)."""
        loop = asyncio.get_running_loop()
        deadline, mark, excused = loop.time() + time_control.connect, StallWatch.now(), 0.0
        waiting = [(s.session, s.process) for s in seats] + [(i.session, i.liveness) for i in invited]
        while not all(session.connected.is_set() or bot.exit_code() is not None for session, bot in waiting):
            if loop.time() >= deadline:
                stalled = self.stalls.since(mark)
                if stalled <= excused:
                    break
                deadline, excused = deadline + stalled - excused, stalled
            await asyncio.sleep(0.005)
        return time.perf_counter()

    def _players(
        self,
        entrants: Sequence[BotSpec | Player | Invitee],
        seats: list[_Seat],
        invited: list[_Invited],
        time_control: TimeControl,
        match_id: str,
        reuse: bool,
        wrap: Callable[[int, RemotePlayer], Player] | None,
    ) -> list[Player]:
        """The referee's four players: each bot's seat over its session, the others in process."""
        names = [e.name for e in entrants]
        encoder = RequestEncoder()
        result: list[Player] = []
        by_seat: dict[int, tuple[Session, BotLiveness, bool]] = {
            s.index: (s.session, s.process, not reuse) for s in seats
        }
        by_seat |= {i.index: (i.session, i.liveness, True) for i in invited}
        for i, entrant in enumerate(entrants):
            if i not in by_seat:
                assert isinstance(entrant, Player)
                result.append(entrant)
                continue
            session, process, release = by_seat[i]
            remote = RemotePlayer(
                session,
                entrant.name,
                time_control,
                process=process,
                match_id=match_id,
                entrants=names,
                release_on_close=release,
                encoder=encoder,
                stalls=self.stalls,
            )
            result.append(wrap(i, remote) if wrap is not None else remote)
        return result

    async def _end_match(
        self,
        seats: list[_Seat],
        invited: list[_Invited],
        deals: set[DealKey],
        result: MatchResult | None,
        reuse: bool,
        grace: float,
    ) -> tuple[list[int], float, dict[int, SeatExit]]:
        """Keep the bots that may play again; the others get their stream ended, ``grace`` to
        exit by themselves (at most half a second for one that forfeited: it got no MatchEnd),
        then are killed. Returns the kept seats, the CPU the bots spent on
        the match, and how each bot let go ended. A seat played from elsewhere is never kept."""
        for i in invited:
            if i.session.stream is not None and i.session.stream.session is i.session:
                i.session.stream.release()
        faulted = {f.seat for f in result.faults} if result is not None else set()
        complete = result is not None and result.status == "complete"
        keep: list[_Seat] = []
        drop: list[_Seat] = []
        for s in seats:
            stream = s.session.stream
            if (
                reuse
                and complete
                and s.index not in faulted
                and stream is not None
                and stream.multi_match
                and stream.alive
                and s.process.exit_code() is None
            ):
                keep.append(s)
            else:
                drop.append(s)
        cpu = 0.0
        for s in keep:
            stream = s.session.stream
            assert stream is not None
            stream.detach()
            kept = s.kept or Kept(s.key, s.process, stream)
            kept.deals |= deals
            kept.ended = time.monotonic()
            cpu += s.process.cpu_seconds() - s.cpu_start
            self._kept.add(kept)
        forfeits = set(result.forfeits) if result is not None else set()
        graces = [min(grace, 0.5) if s.index in forfeits else grace for s in drop]
        ends = await self._retire([s.process for s in drop], [s.session.stream for s in drop], graces)
        cpu += sum(max(0.0, used - s.cpu_start) for (used, _), s in zip(ends, drop, strict=True))
        self._kept.trim()
        return [s.index for s in keep], cpu, {s.index: end for (_, end), s in zip(ends, drop, strict=True)}

    async def _retire(
        self, processes: list[BotProcess], streams: list[Stream | None], graces: list[float]
    ) -> list[tuple[float, SeatExit]]:
        """End the streams, give each process its grace (seconds) to exit, kill them. Returns
        the CPU seconds each had used and how it ended."""
        for stream in streams:
            if stream is not None:
                stream.release()
        loop = asyncio.get_running_loop()
        start = loop.time()
        exited: dict[int, float] = {}
        while True:
            now = loop.time() - start
            exited |= {i: now for i, p in enumerate(processes) if i not in exited and p.exit_code() is not None}
            if all(i in exited or now >= grace for i, grace in enumerate(graces)):
                break
            await asyncio.sleep(0.01)
        ends = []
        for i, p in enumerate(processes):
            code = p.exit_code()
            ends.append((p.cpu_seconds(), SeatExit(code, exited.get(i), p.describe_exit())))  # before the kill reaps it
            p.kill()
        return ends


def _invite(
    desk: MatchDesk, entrants: Sequence[BotSpec | Player | Invitee], setup: MatchSetup, time_control: TimeControl
) -> list[_Invited]:
    """Register each seat played from elsewhere and send its invitation (its token)."""
    invited = []
    names = tuple(e.name for e in entrants)
    rules = json.dumps(setup.rules.to_json())
    for seat, entrant in enumerate(entrants):
        if isinstance(entrant, (BotSpec, Player)):
            continue
        session = desk.expect(seat)
        session.remote = True
        invitation = Invitation(desk.label, seat, session.token, rules, time_control, names)
        liveness = entrant.invite(invitation)
        session.probe = liveness.running
        invited.append(_Invited(seat, session, liveness))
    return invited


def _header(
    entrants: Sequence[BotSpec | Player | Invitee], seats: list[_Seat], isolation: str, limits: Limits
) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The log's ``seats`` (with each bot's command) and the keys the host adds to its header:
    the isolation, the limits, and which seats a kept process played (docs/match-log.md)."""
    header_seats = [
        {"seat": i, "entrant": e.name} | ({"command": e.command} if isinstance(e, BotSpec) and not e.remote else {})
        for i, e in enumerate(entrants)
    ]
    header: dict[str, object] = {"isolation": isolation, "limits": limits.to_json()}
    reused = [{"seat": s.index, "matches_before": s.session.reused} for s in seats if s.kept]
    if reused:
        header["reused"] = reused
    return header_seats, header


def _abandoned(error: BaseException, outputs: list[Path], log_path: Path) -> None:
    """A match that will not count: nothing of it is left half-written when the failure is the
    arbiter's own or a stop; a file the arbiter cannot write raises LogFileError naming it."""
    if isinstance(error, ArbiterError) or not isinstance(error, Exception):
        for path in outputs:
            path.unlink(missing_ok=True)
    if isinstance(error, OSError):
        raise LogFileError(f"cannot write {printable(str(error.filename or log_path))}: {error.strerror or error}")
