"""The lobby: where remote entrants wait for their matches (proto/barbu/v1/lobby.proto).

A remote entrant (``arbiter connect``, or a bot that speaks the lobby itself) keeps one
``Lobby.Connect`` stream open, authenticated by its entrant key and declaring a capacity (matches
at once). When a match needs it, the match's host reserves a free place on one of its streams
(:meth:`Lobby.reserve`), and the match host sends the seat's invitation through that reservation
(arbiter.match.invited): the one-time token and the address to play at, which is this lobby's
own address. The lobby's address also serves ``Arbiter.Play`` for those seats and hands each
call to the match host's server, so a remote seat is an ordinary session from there on.

Everything here lives in the match host's event loop. What a client cannot do (docs/security.md):
hold a stream open without a hello for more than ``hello_seconds``; keep more than
``max_pending`` unauthenticated streams open from one address; try keys after
``limiter``'s failures from its address; send more than ``flood_messages`` messages in
``flood_seconds``; open more than ``max_streams`` streams for one entrant. Whatever a client
does, it is refused on its own stream: connected entrants and matches in progress are not touched.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from barbu import wire
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import lobby_pb2 as lpb

from arbiter.errors import ArbiterError
from arbiter.lobby.ratelimit import FailureLimiter, address_of
from arbiter.match.invited import Invitation
from arbiter.text import printable
from arbiter.transport.server import MAX_MESSAGE_BYTES, SERVICE, ArbiterServer, serialize_response, server_options

__all__ = ["KeyCheck", "Lobby", "LobbySettings", "Reservation", "LOBBY_SERVICE"]

log = logging.getLogger(__name__)

LOBBY_SERVICE = "barbu.v1.Lobby"
DETAIL_MAX = 1000  # characters of a SeatEnded's detail kept


@dataclass(frozen=True)
class LobbySettings:
    """Where the lobby that remote entrants connect to listens (docs/tournaments.md).

    ``listen`` is ``HOST:PORT`` as written (port 0: a free port is picked); ``cert`` and ``key``
    are the TLS certificate and private key (PEM files, resolved against the tournament file's
    folder), both None for a plaintext lobby, which the file allows on a loopback address only."""

    listen: str
    cert: Path | None = None
    key: Path | None = None

    def credentials(self) -> grpc.ServerCredentials | None:
        """The lobby's TLS credentials from its certificate chain and key files (None: plaintext)."""
        if self.cert is None or self.key is None:
            return None
        return grpc.ssl_server_credentials([(self.key.read_bytes(), self.cert.read_bytes())])


KeyCheck = Callable[[str], str]
"""An entrant key's entrant name; raises an ArbiterError (e.g. KeyRefused) whose message may be
shown to the client. It may block (a database read): the lobby calls it in a thread."""


class _RemoteBot:
    """What an entrant told of the bot process of one invitation (arbiter.transport.remote's
    BotLiveness): running until a SeatEnded says how it ended. ``token``: its seat's."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.code: int | None = None
        self.detail = ""

    def running(self) -> bool:
        return self.code is None

    def exit_code(self) -> int | None:
        return self.code

    def exit_description(self) -> str | None:
        if self.code is None:
            return None
        return f"the remote bot process ended ({self.detail or f'exit code {self.code}'})"

    def with_last_words(self, detail: str) -> str:
        return detail


@dataclass(eq=False)
class _Stream:
    """One entrant's open Connect stream."""

    entrant: str
    capacity: int
    version: str
    peer: str
    outbox: asyncio.Queue[lpb.LobbyMessage | None] = field(default_factory=asyncio.Queue)  # None: the end
    in_use: int = 0
    bots: dict[tuple[str, int], _RemoteBot] = field(default_factory=dict)  # by match and seat
    alive: bool = True
    last_heard: float = field(default_factory=time.monotonic)

    @property
    def free(self) -> int:
        return self.capacity - self.in_use if self.alive else 0


@dataclass(eq=False)
class _Waiter:
    names: tuple[str, ...]
    future: asyncio.Future[list[Reservation | None]]


class Reservation:
    """One place on one entrant's stream, held for one seat of one match (an Invitee)."""

    def __init__(self, lobby: Lobby, stream: _Stream):
        self._lobby = lobby
        self._stream = stream
        self._invited: tuple[str, int] | None = None
        self._released = False

    @property
    def name(self) -> str:
        return self._stream.entrant

    def invite(self, invitation: Invitation) -> _RemoteBot:
        bot = _RemoteBot(invitation.token)
        stream = self._stream
        self._invited = (invitation.match_id, invitation.seat)
        stream.bots[self._invited] = bot
        control = invitation.time_control
        stream.outbox.put_nowait(
            lpb.LobbyMessage(
                invitation=lpb.Invitation(
                    match_id=invitation.match_id,
                    seat=invitation.seat,
                    token=invitation.token,
                    address="",  # this lobby's own address, as the entrant reached it
                    rules_json=invitation.rules_json,
                    decision_seconds=control.per_decision,
                    reserve_seconds=control.reserve,
                    connect_seconds=control.connect,
                    entrants=list(invitation.entrants),
                )
            )
        )
        return bot

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._stream.in_use -= 1
            if self._invited is not None:
                self._stream.bots.pop(self._invited, None)
            self._lobby._changed()


class Lobby:
    """The lobby's gRPC server on ``listen`` (``host:port``), TLS with ``credentials`` (None:
    plaintext, which the tournament file allows on a loopback address only).

    ``entrants``: the names that may connect (a tournament's remote entrants); ``play``: the
    match host's server, whose matches the invited seats play (None while it has none).
    """

    def __init__(
        self,
        listen: str,
        *,
        credentials: grpc.ServerCredentials | None,
        check_key: KeyCheck,
        entrants: Collection[str],
        play: Callable[[], ArbiterServer | None],
        name: str = "",
        keepalive_seconds: float = 15.0,
        hello_seconds: float = 5.0,
        limiter: FailureLimiter | None = None,
        max_pending: int = 8,
        max_streams: int = 8,
        max_capacity: int = 64,
        flood_messages: int = 40,
        flood_seconds: float = 10.0,
    ):
        self.listen = listen
        self.address = listen
        self.credentials = credentials
        self.check_key = check_key
        self.entrants = frozenset(entrants)
        self.play = play
        self.name = name
        self.keepalive_seconds = keepalive_seconds
        self.hello_seconds = hello_seconds
        self.limiter = limiter if limiter is not None else FailureLimiter()
        self.max_pending = max_pending
        self.max_streams = max_streams
        self.max_capacity = max_capacity
        self.flood_messages = flood_messages
        self.flood_seconds = flood_seconds
        self._streams: dict[str, list[_Stream]] = {}
        self._pending: Counter[str] = Counter()
        self._waiting: list[_Waiter] = []  # matches waiting for places, oldest first
        self._nonces = itertools.count(1)
        self._grpc: Any = None

    # ---- life cycle ------------------------------------------------------------------------
    async def start(self) -> Lobby:
        options = server_options(MAX_MESSAGE_BYTES, self.keepalive_seconds, self.keepalive_seconds, 30.0)
        options = [o for o in options if o[0] != "grpc.max_concurrent_streams"]
        options += [
            ("grpc.max_concurrent_streams", 2 + self.max_capacity),  # a bridge's Connect and its Play calls
            ("grpc.server_handshake_timeout_ms", int(self.hello_seconds * 1000)),  # slow TLS handshakes
        ]
        self._grpc = grpc.aio.server(options=options, maximum_concurrent_rpcs=512)
        connect = grpc.stream_stream_rpc_method_handler(
            self._connect,
            request_deserializer=lpb.EntrantMessage.FromString,
            response_serializer=lpb.LobbyMessage.SerializeToString,
        )
        play = grpc.stream_stream_rpc_method_handler(
            self._play, request_deserializer=pb.BotMessage.FromString, response_serializer=serialize_response
        )
        self._grpc.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(LOBBY_SERVICE, {"Connect": connect}),
                grpc.method_handlers_generic_handler(SERVICE, {"Play": play}),
            )
        )
        if self.credentials is None:
            port = self._grpc.add_insecure_port(self.listen)
        else:
            port = self._grpc.add_secure_port(self.listen, self.credentials)
        self.address = f"{self.listen.rsplit(':', 1)[0]}:{port}"
        await self._grpc.start()
        log.info("lobby listening on %s (%s)", self.address, "TLS" if self.credentials else "plaintext")
        return self

    async def stop(self, grace: float = 0.5, *, over: str = "") -> None:
        """End every stream and stop serving. ``over``: what is served is over for good (a finished
        tournament), said in these words first, as an Over message: bridges exit rather than
        reconnect. Without it a stream just ends, and its bridge comes back to the next run."""
        for streams in self._streams.values():
            for s in streams:
                s.alive = False
                if over:
                    s.outbox.put_nowait(lpb.LobbyMessage(over=lpb.Over(reason=over)))
                s.outbox.put_nowait(None)  # its handler returns: the stream ends with status OK
        await asyncio.sleep(0.05)
        if self._grpc is not None:
            await self._grpc.stop(grace)
            self._grpc = None

    # ---- reservations ------------------------------------------------------------------------
    def connected(self) -> dict[str, int]:
        """Each connected entrant's free capacity."""
        return {name: sum(s.free for s in streams) for name, streams in self._streams.items() if streams}

    def capacities(self) -> dict[str, int]:
        """Each connected entrant's capacity, free or not."""
        return {name: sum(s.capacity for s in streams if s.alive) for name, streams in self._streams.items() if streams}

    def _changed(self) -> None:
        """Capacity came or went: grant what waits, oldest first. A match may take an entrant's
        place only when no older waiting match wants that entrant (no match waits forever behind
        later ones), but it does not wait behind one that wants other entrants."""
        wanted: set[str] = set()
        for waiter in list(self._waiting):
            if waiter.future.done():
                continue
            if not wanted & set(waiter.names) and (taken := self._take(waiter.names, partial=False)) is not None:
                waiter.future.set_result(taken)
                self._waiting.remove(waiter)
            else:
                wanted |= set(waiter.names)

    async def reserve(self, names: Sequence[str], timeout: float) -> list[Reservation | None]:
        """A place for each of ``names`` (a match's remote seats), all at once as soon as every
        one has free capacity (in the order matches asked), else, after ``timeout`` seconds,
        whatever is free then (None for the others: absent)."""
        waiter = _Waiter(tuple(names), asyncio.get_running_loop().create_future())
        self._waiting.append(waiter)
        self._changed()
        try:
            return await asyncio.wait_for(asyncio.shield(waiter.future), timeout)
        except TimeoutError:
            return self._take(names, partial=True) or [None] * len(names)
        except BaseException:  # cancelled: what was granted meanwhile goes back
            if waiter.future.done() and not waiter.future.cancelled():
                for reservation in waiter.future.result():
                    if reservation is not None:
                        reservation.release()
            raise
        finally:
            if waiter in self._waiting:
                self._waiting.remove(waiter)

    def _take(self, names: Sequence[str], *, partial: bool) -> list[Reservation | None] | None:
        free = {name: sorted(self._streams.get(name, []), key=lambda s: -s.free) for name in set(names)}
        wanted = Counter(names)
        if not partial and any(sum(s.free for s in free[n]) < k for n, k in wanted.items()):
            return None
        result: list[Reservation | None] = []
        for name in names:
            stream = next((s for s in free[name] if s.free > 0), None)
            if stream is None:
                result.append(None)
                continue
            stream.in_use += 1
            result.append(Reservation(self, stream))
        return result

    # ---- one entrant's stream ----------------------------------------------------------------
    async def _connect(self, request_iterator: Any, context: Any) -> None:
        peer = address_of(context.peer())
        stream = await self._admit(peer, context)
        if stream is None:
            return
        self._streams.setdefault(stream.entrant, []).append(stream)
        self._changed()
        log.info(
            "%s connected from %s (capacity %d, version %r)", stream.entrant, peer, stream.capacity, stream.version
        )
        reader = asyncio.ensure_future(self._read(stream, context))
        try:
            welcome = lpb.Welcome(
                entrant=stream.entrant,
                capacity=stream.capacity,
                keepalive_seconds=self.keepalive_seconds,
                lobby=self.name,
            )
            await context.write(lpb.LobbyMessage(welcome=welcome))
            violation = await self._serve(stream, context, reader)
            if violation:
                await context.abort(grpc.StatusCode.CANCELLED, violation)
        finally:
            reader.cancel()
            stream.alive = False
            self._streams[stream.entrant].remove(stream)
            self._changed()
            log.info("%s disconnected (from %s)", stream.entrant, peer)

    async def _admit(self, peer: str, context: Any) -> _Stream | None:
        """The stream of an entrant whose hello and key are good; anything else is refused with
        a status saying why (context.abort raises)."""
        if self._pending[peer] >= self.max_pending:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "too many connections waiting to say hello from this address"
            )
        self._pending[peer] += 1
        try:
            return await self._hello(peer, context)
        finally:
            self._greeted(peer)

    def _greeted(self, peer: str) -> None:
        """One of ``peer``'s calls no longer waits for its first message."""
        self._pending[peer] -= 1
        if not self._pending[peer]:
            del self._pending[peer]

    async def _hello(self, peer: str, context: Any) -> _Stream | None:
        try:
            first = await asyncio.wait_for(context.read(), self.hello_seconds)
        except TimeoutError:
            await context.abort(grpc.StatusCode.CANCELLED, f"no LobbyHello within {self.hello_seconds:g}s")
        if first is grpc.aio.EOF:
            return None
        wait = self.limiter.blocked(peer)  # after the read: a refusal before it could cut the client's write
        if wait is not None:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many failed attempts from this address: try again in {wait:.0f} s",
            )
        if first.WhichOneof("msg") != "hello":
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the first message must be a LobbyHello")
        hello = first.hello
        if hello.protocol_version != wire.PROTOCOL_VERSION:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol version {hello.protocol_version} is not supported; this lobby speaks "
                f"{wire.PROTOCOL_VERSION}",
            )
        if hello.capacity < 1:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "capacity must be at least 1")
        try:
            entrant = await asyncio.to_thread(self.check_key, hello.key)
        except ArbiterError as e:
            self.limiter.failed(peer)
            log.warning("refused a lobby connection from %s: %s", peer, e)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, str(e))
        except Exception:
            log.exception("the lobby could not check a key")
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the lobby cannot check keys now: try again later")
        if hello.name and hello.name != entrant:
            self.limiter.failed(peer)
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                f"this key belongs to {entrant!r}, not to {printable(hello.name[:64])!r}",
            )
        if entrant not in self.entrants:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"{entrant!r} is not a remote entrant of {self.name or 'this lobby'}"
            )
        if len(self._streams.get(entrant, [])) >= self.max_streams:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, f"{entrant!r} already has {self.max_streams} streams open"
            )
        capacity = min(hello.capacity, self.max_capacity)
        return _Stream(entrant, capacity, hello.version[:200], peer)

    async def _serve(self, stream: _Stream, context: Any, reader: asyncio.Future[str | None]) -> str | None:
        """Send what is queued, ping a silent entrant; returns why the stream must be cut, or
        None when the entrant ended it."""
        ping_sent: float | None = None
        get: asyncio.Future[lpb.LobbyMessage | None] | None = None
        try:
            while True:
                if get is None:
                    get = asyncio.ensure_future(stream.outbox.get())
                done, _ = await asyncio.wait((get, reader), timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
                if get in done:
                    message, get = get.result(), None
                    if message is None:
                        return None
                    await context.write(message)
                    continue
                if reader in done:
                    return reader.result()
                now = time.monotonic()
                if ping_sent is not None and stream.last_heard >= ping_sent:
                    ping_sent = None  # it answered (anything it sends counts)
                elif ping_sent is not None and now - ping_sent > self.keepalive_seconds:
                    log.warning("%s did not answer a ping for %.0f s: dropped", stream.entrant, now - ping_sent)
                    return None
                if ping_sent is None and now - stream.last_heard >= self.keepalive_seconds:
                    ping_sent = now
                    await context.write(lpb.LobbyMessage(ping=lpb.Ping(nonce=next(self._nonces))))
        finally:
            if get is not None:  # the call ended (or was cut: the entrant went away): no read outlives it
                get.cancel()

    async def _read(self, stream: _Stream, context: Any) -> str | None:
        """Read the entrant's messages; returns a violation, or None at the end of its stream."""
        recent: deque[float] = deque()
        while True:
            message = await context.read()
            if message is grpc.aio.EOF:
                return None
            now = time.monotonic()
            stream.last_heard = now
            recent.append(now)
            while recent and now - recent[0] > self.flood_seconds:
                recent.popleft()
            if len(recent) > self.flood_messages:
                return f"flooded the lobby: more than {self.flood_messages} messages in {self.flood_seconds:g} s"
            kind = message.WhichOneof("msg")
            if kind == "ping":
                stream.outbox.put_nowait(lpb.LobbyMessage(pong=lpb.Pong(nonce=message.ping.nonce)))
            elif kind == "seat_ended":
                ended = message.seat_ended
                bot = stream.bots.get((ended.match_id, ended.seat))
                if bot is not None and bot.code is None:
                    bot.detail = printable(ended.detail[:DETAIL_MAX])
                    bot.code = ended.exit_code
            elif kind == "message_refused":
                self._refused(stream, message.message_refused)
            elif kind != "pong":
                return f"sent a {kind or 'empty message'} after its hello"

    def _refused(self, stream: _Stream, refused: lpb.MessageRefused) -> None:
        """The entrant refused its bot's oversized message (one of its own invitations only):
        that seat's protocol fault, as a local bot's (ArbiterServer.refused_elsewhere)."""
        bot = stream.bots.get((refused.match_id, refused.seat))
        server = self.play()
        if bot is not None and server is not None:
            server.refused_elsewhere(bot.token, "its bridge (arbiter connect)")

    # ---- invited seats' Play calls -------------------------------------------------------------
    async def _play(self, request_iterator: Any, context: Any) -> None:
        peer = address_of(context.peer())
        server = self.play()
        if server is None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "no match is waiting for a seat here")
        assert server is not None
        if self._pending[peer] >= self.max_pending:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, "too many connections waiting to say hello from this address"
            )
        # Until its hello, the call counts against its address as a Connect stream does: else
        # one address could hold every call slot of the lobby with silent Play calls.
        self._pending[peer] += 1
        first_read = _FirstRead(context, lambda: self._greeted(peer))
        try:
            await server.play_call(request_iterator, first_read)
        finally:
            first_read.done()


class _FirstRead:
    """A call's context that calls ``done`` once, when its first read returns (or fails)."""

    def __init__(self, context: Any, done: Callable[[], None]):
        self._context = context
        self._done: Callable[[], None] | None = done

    def done(self) -> None:
        if self._done is not None:
            done, self._done = self._done, None
            done()

    async def read(self) -> Any:
        try:
            return await self._context.read()
        finally:
            self.done()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)
