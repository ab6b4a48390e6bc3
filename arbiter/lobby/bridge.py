"""``arbiter connect``: the bridge that lets any bot play from its author's machine.

The bridge keeps ONE ``Lobby.Connect`` stream open to the lobby (TLS; plaintext only to a
loopback address), says who it is with its entrant key, and waits. Each Invitation starts the
bot's command as the arbiter starts a local bot (:class:`~arbiter.process.bot.BotProcess`, with
the bridge's own environment plus ``BARBU_ARBITER``, ``BARBU_TOKEN`` and ``BARBU_SEAT``), whose
``BARBU_ARBITER`` is the bridge's :class:`~arbiter.lobby.relay.Relay`: a local socket whose
streams are carried to the remote table. So a bot that passes check-bot plays remotely unchanged,
in any language, without TLS code of its own.

It stays connected by itself: keepalive both ways (it answers the lobby's pings and pings a
silent lobby), and a stream that drops or a lobby that cannot be reached is retried with
exponential backoff and jitter, while the matches in progress go on (their streams are their
own). It ends by itself when the lobby says its tournament is over (an Over message, the last
before the stream ends), and stops for good, with :class:`~arbiter.errors.LobbyRefused` saying
why, where retrying cannot help: a wrong or revoked key, the key of an entrant that is not remote
there, an unsupported version, a certificate it cannot trust.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from barbu import wire
from barbu.v1 import lobby_pb2 as lpb

from arbiter.addresses import host_port, is_loopback
from arbiter.errors import ArbiterError, ConfigError, LobbyRefused
from arbiter.files import read_text
from arbiter.lobby.relay import MESSAGE_BYTES, Relay, RelayTarget
from arbiter.model import Transport
from arbiter.process.bot import BotProcess
from arbiter.process.limits import Limits
from arbiter.text import printable

log = logging.getLogger(__name__)

CONNECT = "/barbu.v1.Lobby/Connect"
BACKOFF_FIRST = 0.5  # seconds before the first retry; doubles up to BACKOFF_MAX
BACKOFF_MAX = 30.0  # the longest wait between two attempts, jitter included (docs/remote.md)
BACKOFF_JITTER = 0.25  # each wait is drawn within ±25% of its step
WELCOME_SECONDS = 30.0  # from the hello to the lobby's answer
KEEPALIVE_DEFAULT = 30.0  # when a Welcome names none
VERDICT_SECONDS = 1.0  # after a failed write, how long the read side may take to say why the call ended
EXIT_GRACE = 2.0  # after its match's stream ended, a bot may exit by itself this long before it is killed
DYING_GRACE = 2.0  # a bot whose stream was cut: how long a failing process may take to end (RemotePlayer's)
REPORT_SETTLE = 0.2  # after telling the lobby why a stream was cut, before cutting it
# The lobby frees a place when a match ends, and may invite at once; that match's stream may end
# here a moment later (two streams, no order between them): an invitation waits this long for it.
CAPACITY_GRACE = 5.0
DETAIL_CHARS = 1000  # SeatEnded.detail's bound
# gRPC's own keepalive under ours: a ping after 30 s without data (the lobby strikes a client
# that pings more often than every 10 s), the connection dropped 10 s after an unanswered one.
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.enable_retries", 0),
    ("grpc.max_receive_message_length", MESSAGE_BYTES),
    # Each channel its own connections: a new channel to an address starts afresh, never sharing
    # the back-off of another channel's failed attempts (the relay replaces a failing one).
    ("grpc.use_local_subchannel_pool", 1),
]
# The bot runs on its author's machine, for its author: no limits but the bound on its output.
BOT_LIMITS = Limits(memory=None, cpu=None, processes=None, open_files=None, file_size=None)


@dataclass(frozen=True)
class BridgeSettings:
    lobby: str  # host:port
    key: str = field(repr=False)
    command: str  # the bot's command line, shell-quoted
    key_file: str = ""  # where the key came from (for messages; the key itself is never shown)
    ca: bytes | None = field(default=None, repr=False)  # PEM roots to trust; None: the system's
    ca_file: str | None = None
    capacity: int = 1
    name: str = ""
    version: str = ""
    plaintext: bool = False
    out: Path = Path("connect-logs")
    transport: Transport = Transport.UNIX  # tcp: the bot is handed a loopback TCP port (arbiter.process.tcp_relay)


# ---- checking what the user gave ---------------------------------------------------------------
def split_address(text: str, what: str = "--lobby") -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 host in brackets) as host and port; else a ConfigError."""
    found = host_port(text)
    if found is None or found[1] == 0:
        raise ConfigError(f"{what} {printable(text)}: expected HOST:PORT with a port from 1 to 65535")
    return found


def check_plaintext(address: str) -> None:
    """A lobby without TLS is only for a lobby on this machine."""
    host, _ = split_address(address)
    if not is_loopback(host):
        raise ConfigError(
            f"--plaintext: {printable(host)} is not a loopback address; a remote lobby is reached with TLS "
            "(drop --plaintext, give its CA with --ca FILE if it is not signed by a public one)"
        )


def read_key(path: str) -> str:
    """The entrant key in ``path``, stripped; a ConfigError that never shows it."""
    key = read_text(path, 64 << 10, "key file").strip()
    if not key:
        raise ConfigError(f"--key-file {printable(path)} is empty: put the key `arbiter key new` printed in it")
    if any(c.isspace() for c in key):
        raise ConfigError(f"--key-file {printable(path)} holds more than one word: put only the key in it")
    return key


def read_ca(path: str) -> bytes:
    """The PEM certificates in ``path`` (the CA that signed the lobby's certificate)."""
    text = read_text(path, 1 << 20, "CA file")
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ConfigError(f"--ca {printable(path)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    return text.encode()


def backoff(failures: int) -> float:
    """Seconds to wait after ``failures`` attempts in a row failed: 0.5 s doubled each time, drawn
    within ±25% (bridges that lost one lobby together do not all come back at once), the step
    held where its jitter reaches ``BACKOFF_MAX``, never past it."""
    step = min(BACKOFF_MAX / (1 + BACKOFF_JITTER), BACKOFF_FIRST * 2.0 ** min(failures, 16))
    return step * random.uniform(1 - BACKOFF_JITTER, 1 + BACKOFF_JITTER)


# ---- why a stream ended ---------------------------------------------------------------------
class _Lost(Exception):
    """The lobby went away or turned us away for now: retry after a while."""


class _Over(Exception):
    """The lobby said its tournament is over (its Over message, whose reason this carries)."""


def _refusal(code: grpc.StatusCode | None, details: str | None, settings: BridgeSettings, welcomed: bool) -> Exception:
    """What a stream's status means: a :class:`LobbyRefused` to stop on, or a :class:`_Lost`."""
    text = printable(details or "")
    where = f"the lobby at {settings.lobby}"
    if code is grpc.StatusCode.UNAUTHENTICATED:
        return LobbyRefused(f"{where} refused the key in {printable(settings.key_file)}: {text}")
    if code is grpc.StatusCode.FAILED_PRECONDITION:
        return LobbyRefused(f"{where} refused this bridge: {text}")
    if code is grpc.StatusCode.PERMISSION_DENIED:  # a good key of an entrant that does not play there
        return LobbyRefused(f"{where} does not take this entrant: {text}")
    # A TLS failure is a refusal to stop on only before any stream was welcomed: once the same
    # certificate and CA have worked, it is a connection cut mid-way (a lobby killed), retried.
    if code is grpc.StatusCode.UNAVAILABLE and not welcomed and (tls := _tls_problem(text, settings)):
        return LobbyRefused(tls)
    if code is grpc.StatusCode.UNAVAILABLE and settings.plaintext and "Socket closed" in text and not welcomed:
        return LobbyRefused(f"{where} closed the plaintext connection: it speaks TLS (drop --plaintext)")
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
        return _Lost(f"{where} turned us away for now (rate-limited): {text}")
    name = code.name if code is not None else "no status"
    return _Lost(f"{where}: {name}: {text}" if text else f"{where}: {name}")


def _tls_problem(details: str, settings: BridgeSettings) -> str | None:
    """The one line for a TLS handshake that failed (grpc says so only in its details)."""
    host, _ = split_address(settings.lobby)
    if "CERTIFICATE_VERIFY_FAILED" in details or "certificate verify failed" in details:
        if settings.ca_file is not None:
            return f"the lobby's certificate is not signed by the CA in {printable(settings.ca_file)}"
        return "the lobby's certificate is not signed by a CA this system trusts: give the lobby's CA with --ca FILE"
    if "Hostname Verification" in details or "Peer name" in details:
        return f"the lobby's certificate is not for {printable(host)}: connect with the name or address it names"
    if re.search(r"handshake|SSL_ERROR|WRONG_VERSION_NUMBER", details, re.IGNORECASE):
        hint = " (a lobby without TLS, on this machine only: --plaintext)" if is_loopback(host) else ""
        return f"the TLS handshake with the lobby at {settings.lobby} failed{hint}: {details}"
    return None


# ---- the lobby stream ---------------------------------------------------------------------------
class _Link:
    """One welcomed Connect stream: a single writer, the reader, and our side of the keepalive."""

    def __init__(self, call: Any, keepalive: float):
        self.call = call
        self.keepalive = keepalive
        self._outbox: asyncio.Queue[tuple[lpb.EntrantMessage, asyncio.Future[None]]] = asyncio.Queue()
        self._nonces = itertools.count(1)
        self._loop = asyncio.get_running_loop()
        self.heard = self._loop.time()
        self.ping_sent: float | None = None  # when our unanswered ping went out

    async def send(self, message: lpb.EntrantMessage, wait: float = 0.0) -> None:
        """Queue ``message``; with ``wait``, wait that long at most for it to be written."""
        done = self._loop.create_future()
        self._outbox.put_nowait((message, done))
        if wait:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(done), wait)

    async def serve(self, on_message: Callable[[lpb.LobbyMessage], None], settings: BridgeSettings) -> None:
        """Until the stream ends: raises what its end means. The read side says it best (the
        lobby's Over, or the call's status): a write that failed because the call ended under it
        waits a moment for that word."""
        writer = asyncio.create_task(self._write(settings))
        reader = asyncio.create_task(self._read(on_message, settings))
        tasks = [writer, asyncio.create_task(self._keep_alive()), reader]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            if writer in done and reader not in done:
                await asyncio.wait({reader}, timeout=VERDICT_SECONDS)
            for task in (reader, *tasks):
                if task.done():
                    task.result()  # the one that ended says why
            raise _Lost(f"the lobby at {settings.lobby} ended the stream")  # pragma: no cover - every task raises
        finally:
            for task in tasks:
                task.cancel()

    async def _read(self, on_message: Callable[[lpb.LobbyMessage], None], settings: BridgeSettings) -> None:
        while (message := await self.call.read()) is not grpc.aio.EOF:
            self.heard, self.ping_sent = self._loop.time(), None  # any message shows the lobby is there
            kind = message.WhichOneof("msg")
            if kind == "ping":
                await self.send(lpb.EntrantMessage(pong=lpb.Pong(nonce=message.ping.nonce)))
            elif kind == "over":
                raise _Over(printable(message.over.reason[:DETAIL_CHARS]) or "the tournament is over")
            else:
                on_message(message)
        code = await self.call.code()
        if code is grpc.StatusCode.OK:
            raise _Lost(f"the lobby at {settings.lobby} ended the stream")
        raise _refusal(code, await self.call.details(), settings, welcomed=True)

    async def _write(self, settings: BridgeSettings) -> None:
        while True:
            message, done = await self._outbox.get()
            try:
                await self.call.write(message)
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError) as e:
                # The call ended under the write (grpc: "RPC already finished"): the stream is lost,
                # and whoever waits for this message need not wait any longer.
                if not done.done():
                    done.set_result(None)
                raise _Lost(
                    f"the stream to the lobby at {settings.lobby} ended while writing: {printable(str(e))}"
                ) from None
            except BaseException:
                if not done.done():
                    done.cancel()
                raise
            if not done.done():
                done.set_result(None)

    async def _keep_alive(self) -> None:
        """Ping after ``keepalive`` seconds of silence; no answer as long again: the stream is lost."""
        while True:
            await asyncio.sleep(min(1.0, self.keepalive / 4))
            now = self._loop.time()
            if self.ping_sent is not None and now - self.ping_sent >= self.keepalive:
                raise _Lost(f"the lobby did not answer a ping within {self.keepalive:g} s")
            if self.ping_sent is None and now - self.heard >= self.keepalive:
                self.ping_sent = now
                await self.send(lpb.EntrantMessage(ping=lpb.Ping(nonce=next(self._nonces))))


# ---- the bridge ---------------------------------------------------------------------------------
@dataclass
class _Seat:
    """One invitation: its bot process and its stream through the relay."""

    invitation: lpb.Invitation
    target: RelayTarget
    bot: BotProcess | None = None
    reported: bool = False  # SeatEnded sent (or given up)
    killed_why: str = ""  # set when the bridge killed the process


class Bridge:
    """Run with ``await bridge.run()``: returns when the lobby says its tournament is over (the
    lobby's words); raises :class:`LobbyRefused` when the lobby turns it away for good, and kills
    its bots on the way out (a stop signal cancels it)."""

    def __init__(self, settings: BridgeSettings):
        self.settings = settings
        self.capacity = settings.capacity
        self.welcomes = 0  # how many times the lobby welcomed us (tests read it)
        self._seats: dict[str, _Seat] = {}  # by token
        self._tasks: set[asyncio.Task[None]] = set()
        self._link: _Link | None = None
        self._relay: Relay | None = None
        self._stopping = False

    def channel(self, address: str) -> grpc.aio.Channel:
        """A channel to ``address`` with the bridge's TLS settings (the lobby's, and every table's)."""
        if self.settings.plaintext:
            return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        credentials = grpc.ssl_channel_credentials(root_certificates=self.settings.ca)
        return grpc.aio.secure_channel(address, credentials, options=CHANNEL_OPTIONS)

    async def run(self) -> str:
        self._relay = await Relay(self._table_channel).start()
        try:
            return await self._stay_connected()
        finally:
            self._stopping = True
            for task in self._tasks:
                task.cancel()
            self._kill_all()
            await self._relay.stop()

    def _table_channel(self, address: str) -> grpc.aio.Channel:
        return self.channel(address or self.settings.lobby)

    async def _stay_connected(self) -> str:
        """Connect, and connect again whenever the stream is lost, with backoff and jitter, until
        the lobby says its tournament is over (what it said)."""
        failures = 0
        while True:
            welcomed = self.welcomes
            try:
                await self._session()
            except _Over as e:
                await self._let_bots_exit()
                return str(e)
            except _Lost as e:
                if self.welcomes > welcomed:  # that stream had been welcomed: start the backoff over
                    failures = 0
                delay = backoff(failures)
                failures += 1
                how = "lost the lobby" if self.welcomes > welcomed else "cannot reach the lobby"
                log.warning("%s (%s); retrying in %.1f s", how, e, delay)
                await asyncio.sleep(delay)

    async def _let_bots_exit(self) -> None:
        """The tournament is over, so every match has ended: its bots get the grace they always get
        to exit by themselves (and say how they ended) before what still runs is killed."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=EXIT_GRACE + DYING_GRACE)

    async def _session(self) -> None:
        """One Connect stream, from its hello to its end (which it raises)."""
        settings = self.settings
        channel = self.channel(settings.lobby)
        call = channel.stream_stream(
            CONNECT,
            request_serializer=lpb.EntrantMessage.SerializeToString,
            response_deserializer=lpb.LobbyMessage.FromString,
        )()
        try:
            welcome = await self._hello(call)
            self.welcomes += 1
            self.capacity = welcome.capacity or settings.capacity
            keepalive = welcome.keepalive_seconds if welcome.keepalive_seconds > 0 else KEEPALIVE_DEFAULT
            label = f"{printable(welcome.lobby)} ({settings.lobby})" if welcome.lobby else settings.lobby
            log.info("connected to %s as %s (capacity %d)", label, printable(welcome.entrant), self.capacity)
            self._link = _Link(call, keepalive)
            await self._link.serve(self._on_message, settings)
        except grpc.aio.AioRpcError as e:
            raise _refusal(e.code(), e.details(), settings, welcomed=self.welcomes > 0) from None
        finally:
            self._link = None
            call.cancel()
            await channel.close()

    async def _hello(self, call: Any) -> lpb.Welcome:
        s = self.settings
        hello = lpb.LobbyHello(
            protocol_version=wire.PROTOCOL_VERSION, key=s.key, name=s.name, version=s.version, capacity=s.capacity
        )
        await call.write(lpb.EntrantMessage(hello=hello))
        try:
            first = await asyncio.wait_for(call.read(), WELCOME_SECONDS)
        except TimeoutError:
            raise _Lost(f"the lobby at {s.lobby} did not answer within {WELCOME_SECONDS:g} s") from None
        if first is grpc.aio.EOF:
            raise _refusal(await call.code(), await call.details(), s, welcomed=self.welcomes > 0)
        if first.WhichOneof("msg") != "welcome":
            raise _Lost(f"the lobby at {s.lobby} answered with {first.WhichOneof('msg')}, not a welcome")
        welcome: lpb.Welcome = first.welcome
        return welcome

    # ---- invitations -------------------------------------------------------------------------
    def _on_message(self, message: lpb.LobbyMessage) -> None:
        if message.WhichOneof("msg") == "invitation":
            self._invited(message.invitation)

    def _invited(self, invitation: lpb.Invitation) -> None:
        task = asyncio.create_task(self._admit(invitation))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _busy(self) -> int:
        """Matches in play: a bot whose match is over no longer counts, even while it exits."""
        return sum(1 for seat in self._seats.values() if not seat.target.ended.is_set())

    async def _admit(self, invitation: lpb.Invitation) -> None:
        where = f"match {printable(invitation.match_id)} seat {invitation.seat}"
        loop = asyncio.get_running_loop()
        until = loop.time() + CAPACITY_GRACE
        while self._busy() >= self.capacity and loop.time() < until and not self._stopping:
            await asyncio.sleep(0.02)
        if self._stopping:
            return
        if self._busy() >= self.capacity:
            log.warning("%s: not started: the capacity of %d match(es) at once is reached", where, self.capacity)
            return
        if invitation.token in self._seats:
            log.warning("%s: invited twice with the same token; ignored", where)
            return
        assert self._relay is not None
        address = invitation.address or self.settings.lobby
        seat = _Seat(invitation, RelayTarget(invitation.token, address, functools.partial(self._cut, invitation.token)))
        self._seats[invitation.token] = seat
        self._relay.expect(seat.target)
        log.info("%s: invited; starting the bot", where)
        task = asyncio.create_task(self._play_seat(seat))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play_seat(self, seat: _Seat) -> None:
        """Start the seat's bot, watch it, kill it once its match is over, say how it ended."""
        inv = seat.invitation
        where = f"match {printable(inv.match_id)} seat {inv.seat}"
        try:
            seat.bot = self._start_bot(inv)  # here, not in a thread: a stop cannot leave it running unseen
        except ArbiterError as e:
            log.error("%s: %s", where, e)
            await self._report(seat, 127, str(e))
            self._forget(seat)
            return
        try:
            await self._watch(seat)
            if seat.bot.exit_code() is None:
                await asyncio.to_thread(seat.bot.kill)
                await self._report_exit(seat)
            else:  # described first (the kill removes its cgroup, and the out-of-memory record with it),
                # then reaped: the kill releases what it left (its process group, its seat's folder)
                try:
                    await self._report_exit(seat)
                finally:
                    await asyncio.to_thread(seat.bot.kill)
        finally:
            self._forget(seat)

    def _start_bot(self, inv: lpb.Invitation) -> BotProcess:
        assert self._relay is not None
        env = {"BARBU_ARBITER": self._relay.address, "BARBU_TOKEN": inv.token, "BARBU_SEAT": str(inv.seat)}
        return BotProcess(
            self.settings.command, env, self._output(inv), limits=BOT_LIMITS, transport=self.settings.transport
        )

    def _output(self, inv: lpb.Invitation) -> Path:
        """``OUT/<match_id>.seat<N>.stderr``, the match id made a safe file name; never an earlier file."""
        stem = re.sub(r"[^A-Za-z0-9._-]", "_", inv.match_id).lstrip(".") or "match"
        path = self.settings.out / f"{stem}.seat{inv.seat}.stderr"
        for n in itertools.count(2):
            if not path.exists():
                return path
            path = self.settings.out / f"{stem}.seat{inv.seat}.{n}.stderr"
        raise AssertionError("unreachable")  # pragma: no cover

    async def _watch(self, seat: _Seat) -> None:
        """Until the bot's process ends, or should be killed: its match's stream ended a grace ago,
        or it never said hello in the invitation's connect time (and a grace)."""
        assert seat.bot is not None
        loop = asyncio.get_running_loop()
        connect_by = loop.time() + max(seat.invitation.connect_seconds, 1.0) + EXIT_GRACE
        ended_at: float | None = None
        while seat.bot.exit_code() is None:
            now = loop.time()
            if seat.target.ended.is_set():
                ended_at = now if ended_at is None else ended_at
                if now - ended_at >= EXIT_GRACE:
                    seat.killed_why = "after its match's stream ended"
                    return
            elif not seat.target.started.is_set() and now >= connect_by:
                seat.killed_why = "it never connected"
                return
            await asyncio.sleep(0.05)

    async def _cut(self, token: str) -> None:
        """The bot's stream was cut under the relay, on this machine: before the remote call is
        cut, tell the lobby why, as the arbiter tells it for a local bot (ArbiterServer._why_cut,
        RemotePlayer.gone). A process that had ended, or that fails within ``DYING_GRACE`` (a
        Python bot closes its stream on its way out), crashed: the lobby hears how it ended. One
        that goes on, or ends cleanly, sent a message the relay refused over the arbiter's limit
        (or closed its stream and cancelled it at once: the two look alike): the lobby hears
        that, and the seat gets the ``protocol`` fault a local bot gets, not a lost connection."""
        seat = self._seats.get(token)
        if seat is None or seat.bot is None or self._stopping:
            return
        if seat.bot.exit_code() is None:
            loop = asyncio.get_running_loop()
            until = loop.time() + DYING_GRACE
            while seat.bot.exit_code() is None and loop.time() < until:
                await asyncio.sleep(0.01)
            code = seat.bot.exit_code()
            if code is None or code == 0:
                await self._report_refused(seat)
                return
        await self._report_exit(seat)

    async def _report_refused(self, seat: _Seat) -> None:
        inv = seat.invitation
        log.warning(
            "match %s seat %d: the bot sent a message over the arbiter's limit: refused, its stream cut",
            printable(inv.match_id),
            inv.seat,
        )
        if self._link is not None:
            refused = lpb.MessageRefused(match_id=inv.match_id, seat=inv.seat)
            await self._link.send(lpb.EntrantMessage(message_refused=refused), wait=2.0)
            await asyncio.sleep(REPORT_SETTLE)  # the lobby reads it before the cut reaches the table

    async def _report_exit(self, seat: _Seat) -> None:
        assert seat.bot is not None
        if seat.reported:
            return
        seat.reported = True
        code = seat.bot.exit_code()
        if seat.killed_why:
            detail = f"the bridge killed the bot process: {seat.killed_why}"
        else:
            detail = await asyncio.to_thread(seat.bot.describe_exit)
        log.info("match %s seat %d: %s", printable(seat.invitation.match_id), seat.invitation.seat, detail)
        await self._report(seat, code if code is not None else -9, detail)

    async def _report(self, seat: _Seat, exit_code: int, detail: str) -> None:
        """SeatEnded on the lobby stream, if it is up (written before this returns, or 2 s passed)."""
        seat.reported = True
        inv = seat.invitation
        ended = lpb.SeatEnded(match_id=inv.match_id, seat=inv.seat, exit_code=exit_code, detail=detail[:DETAIL_CHARS])
        if self._link is not None:
            await self._link.send(lpb.EntrantMessage(seat_ended=ended), wait=2.0)

    def _forget(self, seat: _Seat) -> None:
        self._seats.pop(seat.invitation.token, None)
        if self._relay is not None:
            self._relay.forget(seat.invitation.token)

    def _kill_all(self) -> None:
        """On the way out: every bot still running is killed."""
        for seat in list(self._seats.values()):
            if seat.bot is not None and seat.bot.exit_code() is None:
                log.info(
                    "killing the bot of match %s seat %d", printable(seat.invitation.match_id), seat.invitation.seat
                )
                seat.bot.kill()
        self._seats.clear()

    @property
    def running(self) -> int:
        """Bots started and not yet over."""
        return len(self._seats)
