"""The gRPC side of the arbiter: bots connect here and play through one stream each.

``ArbiterServer`` is an asyncio gRPC server (``grpc.aio``) on one address (a Unix socket by
default, or TCP), serving any number of matches one after the other or at once: each match is a
:class:`~arbiter.transport.session.MatchDesk` of seats, each seat registered with a fresh secret
token. A bot's stream is accepted only with a known, unused token and the right protocol version.
:class:`~arbiter.transport.remote.RemotePlayer` turns a session into a referee's player: the
referee awaits it, in the same event loop, with no thread between them.

What a bot cannot do to the arbiter (docs/security.md): send a message over
``max_message_bytes`` (gRPC refuses it without buffering it; the seat gets a ``protocol``
fault), keep more than ``max_inbound`` messages waiting, send more than ``unsolicited_limit``
messages nobody asked for, hold a stream open without a hello for more than ``hello_seconds``,
open a connection once every seat is taken, or take a seat with a used, guessed or another
seat's token. A refused connection never disturbs a connected session, and is charged to no
connected seat: whoever presents a token cannot be told from whoever stole it.

The server runs in the caller's event loop: ``await server.start()`` (code that is not
asynchronous goes through :mod:`arbiter.match.blocking`).

Why a stream ended: ``grpc.aio`` reports no reason. A read ends with EOF when the bot
half-closes; it ends with EOF and then a cancellation of the call when gRPC refused a message
over the size limit (the status goes out to the bot from the core), but also when the bot's
process died or its connection was dropped by keepalive. :meth:`ArbiterServer._why_cut` tells
these apart with what the arbiter knows besides: whether the bot's process still runs, and how
long the stream had been silent. No private gRPC internals are used.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import tempfile
from typing import Any

import grpc
from barbu import wire
from barbu.v1 import arbiter_pb2 as pb

from arbiter.transport.session import GONE, Flag, MatchDesk, Session, Stream

__all__ = [
    "ArbiterServer",
    "Flag",
    "GONE",
    "HELLO_SECONDS",
    "MAX_INBOUND",
    "MAX_MESSAGE_BYTES",
    "MatchDesk",
    "Session",
    "Stream",
    "UNSOLICITED_LIMIT",
    "refused_message",
]

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 1 << 20  # the largest message a bot may send
MAX_INBOUND = 64  # messages waiting to be read, per seat
UNSOLICITED_LIMIT = 16  # messages per match beyond one reply per decision request
SOCKET_PATH_MAX = 107  # bytes in a Unix socket's path (sun_path, less its final NUL)
HELLO_SECONDS = 5.0  # from opening a stream to its hello
SERVICE = "barbu.v1.Arbiter"


def socket_folder(prefix: str, socket_name: str) -> str:
    """A private folder (mode 0700) for a Unix socket of that name: in the temporary folder, or
    in /tmp when that one's path is too long for a socket (a deep $TMPDIR would make binding fail)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    if len(os.fsencode(os.path.join(folder, socket_name))) <= SOCKET_PATH_MAX:
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix=prefix, dir="/tmp")


def refused_message(max_message_bytes: int, by: str = "gRPC") -> str:
    """The ``protocol`` fault's detail for a message over the limit, refused unread by ``by``."""
    return (
        f"sent a message larger than {_size(max_message_bytes)} (or one gRPC could not read): "
        f"{by} refused it without reading it and ended the stream (or the bot closed its stream and "
        "cancelled it at once: the two look alike to the arbiter)"
    )


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} bytes"


def serialize_response(message: bytes | pb.ArbiterMessage) -> bytes:
    """Responses go out as given when already encoded (the hot path encodes requests itself)."""
    if isinstance(message, bytes):
        return message
    return message.SerializeToString()


class ArbiterServer:
    """A gRPC server bots connect to; ``address`` is ``unix:/path`` or ``host:port``.

    ``keepalive_seconds``: how long a connection may stay silent before the server pings it;
    a ping unanswered for ``keepalive_timeout`` seconds drops the connection (a vanished remote
    bot). Keep it above the longest a bot may think (per decision + reserve): a bot whose
    runtime cannot answer pings while it computes (one JavaScript thread) is not cut off.
    """

    def __init__(
        self,
        address: str,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        max_inbound: int = MAX_INBOUND,
        *,
        unsolicited_limit: int = UNSOLICITED_LIMIT,
        hello_seconds: float = HELLO_SECONDS,
        keepalive_seconds: float = 60.0,
        keepalive_timeout: float = 20.0,
        idle_seconds: float = 15.0,
    ):
        self.requested_address = address
        self.address = address
        self.max_inbound = max_inbound
        self.max_message_bytes = max_message_bytes
        self.unsolicited_limit = unsolicited_limit
        self.hello_seconds = hello_seconds
        self.keepalive_seconds = keepalive_seconds
        self.keepalive_timeout = keepalive_timeout
        self.idle_seconds = idle_seconds
        self.refused: list[str] = []  # reasons of every refused connection (never a token)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._desks: list[MatchDesk] = []
        self._default: MatchDesk | None = None
        self._streams: set[Stream] = set()
        self._grpc: Any = None

    # ---- life cycle ------------------------------------------------------------------------
    def options(self) -> list[tuple[str, Any]]:
        """The gRPC server options: the limits of docs/security.md (bench/match.py's floor uses
        the same)."""
        return server_options(self.max_message_bytes, self.keepalive_seconds, self.keepalive_timeout, self.idle_seconds)

    async def start(self) -> ArbiterServer:
        """Start serving in the running event loop."""
        self.loop = asyncio.get_running_loop()
        self._grpc = grpc.aio.server(options=self.options(), maximum_concurrent_rpcs=64)
        handler = grpc.stream_stream_rpc_method_handler(
            self.play_call, request_deserializer=pb.BotMessage.FromString, response_serializer=serialize_response
        )
        handlers = {"Play": handler}
        self._grpc.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
        if hasattr(self._grpc, "add_registered_method_handlers"):
            self._grpc.add_registered_method_handlers(SERVICE, handlers)
        port = self._grpc.add_insecure_port(self.requested_address)
        if not self.requested_address.startswith("unix:"):
            host = self.requested_address.rsplit(":", 1)[0]
            self.address = f"{host}:{port}"
        await self._grpc.start()
        return self

    async def stop(self, grace: float = 0.2) -> None:
        for stream in list(self._streams):
            stream.release()
        if self._grpc is not None:
            await self._grpc.stop(grace)
            self._grpc = None

    # ---- matches and seats ------------------------------------------------------------------
    def open_desk(self, label: str = "") -> MatchDesk:
        """A new match on this server: register its seats with ``desk.expect(seat)``."""
        desk = MatchDesk(self, label)
        self._desks.append(desk)
        return desk

    def expect(self, seat: int) -> Session:
        """Register a seat of this server's one match (a server serving one match at a time)."""
        if self._default is None or not self._default.open:
            self._default = self.open_desk()
        return self._default.expect(seat)

    def forget(self, desk: MatchDesk) -> None:
        if desk in self._desks:
            self._desks.remove(desk)
        if self._default is desk:
            self._default = None

    def _sessions(self) -> list[Session]:
        return [s for d in self._desks for s in d.sessions]

    def full(self) -> bool:
        """Every registered seat has been claimed: no connection can be accepted any more."""
        sessions = self._sessions()
        return bool(sessions) and all(s.used for s in sessions)

    def why_refused(self, token: str) -> str:
        """Why a hello with this token is refused, in words that never repeat the token."""
        seat_text, _, secret = token.partition(".")
        sessions = self._sessions()
        for s in sessions:
            if hmac.compare_digest(s.token.encode(), token.encode()):
                return f"it presented an unknown or already used token (seat {s.seat}'s, already used)"
        for s in sessions:
            if secret and hmac.compare_digest(s.secret.encode(), secret.encode()):
                return (
                    f"it presented an unknown or already used token (seat {s.seat}'s secret "
                    f"with the seat number {seat_text[:8]!r})"
                )
        return "it presented an unknown or already used token (no seat of this match has it)"

    def refuse(self, token: str, reason: str) -> None:
        """Note a refused connection. Only a seat not yet connected is told about it (it
        explains the fault if that seat never connects): a connected seat is never charged,
        since whoever presents a token cannot be told from whoever stole it. The refusal goes
        to the seat whose secret the token carries, else to the seat of that number in every
        match still waiting for it."""
        seat_text, _, secret = token.partition(".")
        self.refused.append(reason)
        for desk in self._desks:
            desk.refused.append(reason)  # every match in progress notes it (the token may name none)
            for s in desk.sessions:
                if s.connected.is_set():
                    continue
                if seat_text == str(s.seat):
                    s.refusal = f"a connection claiming seat {s.seat} was refused: {reason}"
                elif secret and hmac.compare_digest(s.secret.encode(), secret.encode()):
                    # its own secret under another seat's number: it tried to take another seat
                    s.refusal = f"its hello was refused: {reason} (a bot may only connect for its own seat)"
        log.warning("refused a connection: %s", reason)

    def refused_elsewhere(self, token: str, by: str) -> bool:
        """A message of the seat of ``token`` over ``max_message_bytes`` was refused before it
        reached this server, by ``by`` (a remote entrant's bridge, on its author's machine, as the
        lobby hears from it): the seat's ``protocol`` fault, as if this server had refused it,
        not the lost connection its cut stream looks like here. Whether the seat was found."""
        for s in self._sessions():
            if hmac.compare_digest(s.token.encode(), token.encode()):
                if s.violation is None:
                    s.violation = refused_message(self.max_message_bytes, by)
                return True
        return False

    def claim(self, token: str) -> Session | None:
        """The session of ``token`` if it is known and unused (compared in constant time)."""
        found = None
        for s in self._sessions():
            if hmac.compare_digest(s.token.encode(), token.encode()) and not s.used:
                found = s
        if found is not None:
            found.used = True
        return found

    # ---- one bot's call ----------------------------------------------------------------------
    async def play_call(self, request_iterator: Any, context: Any) -> None:
        """One bot's ``Play`` call: on this server's address, or on the lobby's (an invited
        remote seat, arbiter.lobby.server) for a match of this server."""
        if self.full():
            self.refuse("", "a connection came when every seat was already connected")
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "every seat of this match is already connected")
        # A stream that says nothing costs a coroutine, not a thread; it is cut all the same.
        try:
            first = await asyncio.wait_for(context.read(), self.hello_seconds)
        except TimeoutError:
            self.refuse("", f"a connection sent no hello within {self.hello_seconds:g}s")
            await context.abort(grpc.StatusCode.CANCELLED, f"no hello within {self.hello_seconds:g}s")
        if first is grpc.aio.EOF:
            return  # the bot closed the stream before saying anything
        if first.WhichOneof("msg") != "hello":
            self.refuse("", "a connection sent something else than a hello first")
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the first message of a session must be a Hello")
        hello = first.hello
        session = self.claim(hello.token)
        if session is None:
            self.refuse(hello.token, self.why_refused(hello.token))
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown or already used token")
        assert session is not None
        if hello.protocol_version != wire.PROTOCOL_VERSION:
            reason = (
                f"protocol version {hello.protocol_version} is not supported; "
                f"this arbiter speaks {wire.PROTOCOL_VERSION}"
            )
            session.refusal = f"its hello was refused: {reason}"
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, reason)
        loop = asyncio.get_running_loop()
        stream = Stream(hello, context.write, loop)
        stream.matches = 1
        self._streams.add(stream)
        session.attach(stream)
        log.debug("seat %d connected: %s %s", session.seat, hello.bot_name, hello.bot_version)
        # The bot's messages are read by a task of their own, for as long as the call lasts; this
        # handler holds the call open until the arbiter releases it (or gRPC ends it).
        reader = loop.create_task(self._read(stream, context))
        try:
            await asyncio.wait((reader, stream.released), return_when=asyncio.FIRST_COMPLETED)
            if reader.done() and stream.violation is not None and not stream.released.done():
                await context.abort(grpc.StatusCode.CANCELLED, "cut off: " + stream.violation)
            await stream.released  # after an EOF the arbiter may still write to the bot
        except asyncio.CancelledError:
            # gRPC cancelled the call: the bot went away, or the core refused a message.
            if not stream.eof and not reader.done():
                await asyncio.sleep(0)  # an EOF that came with the cancellation is read first
            if stream.eof and stream.violation is None and not stream.closing:
                self._why_cut(stream)
            raise
        finally:
            reader.cancel()
            self._streams.discard(stream)
            stream.end()
            stream.finished.set()

    async def _read(self, stream: Stream, context: Any) -> None:
        """Read the bot's messages until its side ends (EOF) or it breaks a limit."""
        while True:
            message = await context.read()
            if message is grpc.aio.EOF:
                stream.eof = True
                stream.end()
                return
            violation = stream.deliver(message)
            if violation is not None:
                stream.cut_off(violation)
                return
            # Let the referee take the reply and send its next request before this task starts
            # the next read: starting a read costs about what a write costs, and it can wait.
            await asyncio.sleep(0)

    def _why_cut(self, stream: Stream) -> None:
        """gRPC cancelled the call right after an EOF. grpc.aio gives the same two events, in the
        same order, for four causes; three are told apart here: the bot's process died (its
        socket closed with it: it is already gone), the connection went silent for the keepalive
        time (pings unanswered), or the core refused a message over ``max_message_bytes`` from
        its length prefix (and told the bot so, with RESOURCE_EXHAUSTED): the seat's
        ``protocol`` fault. The fourth, a bot that half-closes its stream and cancels it at once,
        cannot be told from the third (nothing grpc.aio reports differs, not even the timing):
        it gets the same fault, whose detail says so. A "refused" cut stays tentative for a local
        process: a Python bot closes its stream on its way out, before its process ends, so the
        player waits a moment to see it fail (RemotePlayer.gone). A remote seat's cut is "lost":
        over a network, a dropped connection is far likelier than an oversized message; a remote
        bot's bridge refuses such a message itself and says so (:meth:`refused_elsewhere`)."""
        session = stream.session
        probe = session.probe if session is not None else None
        assert self.loop is not None
        if probe is not None and not probe():
            stream.cut = "crash"
        elif session is not None and session.remote:
            stream.cut = "lost"  # over a network, a dropped connection is the likely cause
        elif self.loop.time() - stream.last_activity >= self.keepalive_seconds:
            stream.cut = "lost"
        else:
            stream.cut = "refused"
            stream.violation = refused_message(self.max_message_bytes)


def server_options(
    max_message_bytes: int, keepalive_seconds: float, keepalive_timeout: float, idle_seconds: float
) -> list[tuple[str, Any]]:
    return [
        # gRPC refuses a larger message from its length prefix: it is never buffered.
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", 16 << 20),
        ("grpc.so_reuseport", 0),
        # One bot needs one stream; a connection may not open many.
        ("grpc.max_concurrent_streams", 4),
        # A silent connection is pinged; a dead one is dropped.
        ("grpc.keepalive_time_ms", int(keepalive_seconds * 1000)),
        ("grpc.keepalive_timeout_ms", int(keepalive_timeout * 1000)),
        ("grpc.http2.ping_timeout_ms", int(keepalive_timeout * 1000)),  # what this grpc waits for an ack
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.keepalive_permit_without_calls", 0),
        # A client may ping at most every 10 s while no data flows; more often is a
        # strike, and 2 strikes close its connection (a ping flood costs us nothing).
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.http2.max_ping_strikes", 2),
        # A connection without any stream is closed.
        ("grpc.max_connection_idle_ms", int(idle_seconds * 1000)),
        # Per message, less work: no channelz bookkeeping (unused) and no bandwidth probing
        # (flow-control pings sized for bulk transfers; our messages are a few hundred bytes).
        ("grpc.enable_channelz", 0),
        ("grpc.http2.bdp_probe", 0),
    ]
