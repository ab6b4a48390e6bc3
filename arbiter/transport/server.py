"""The gRPC side of the arbiter: bots connect here and play through one stream each.

``ArbiterServer`` listens on one address (a Unix socket by default, or TCP). Each expected
seat is registered with a fresh secret token; a bot's stream is accepted only with a known,
unused token and the right protocol version. ``RemotePlayer`` turns a session into a
:class:`~arbiter.players.Player`: it sends the seat's view with the legal actions and waits,
bounded by the time control, for a reply carrying the same request id.

What a bot cannot do to the arbiter (docs/security.md): send a message over
``max_message_bytes`` (gRPC refuses it without buffering it; the seat gets a ``protocol``
fault), keep more than ``max_inbound`` messages waiting, send more than ``unsolicited_limit``
messages nobody asked for, hold a stream open without a hello for more than ``hello_seconds``,
open a connection once every seat is taken, or take a seat with a used, guessed or another
seat's token. A refused connection never disturbs a connected session, and is charged to no
connected seat: whoever presents a token cannot be told from whoever stole it.
"""

from __future__ import annotations

import hmac
import json
import logging
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from dataclasses import replace
from typing import Any

import grpc
from barbu import wire
from barbu.rules import Phase, View
from barbu.rules.scoring import places
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc

from arbiter.process.bot import BotProcess
from arbiter.referee.faults import FaultKind, PlayerFault
from arbiter.referee.players import Player
from arbiter.referee.timecontrol import TimeControl

log = logging.getLogger(__name__)

_CLOSE = object()  # ends an outbound stream
_GONE = object()  # the bot's side of the stream ended

MAX_MESSAGE_BYTES = 1 << 20  # the largest message a bot may send
MAX_INBOUND = 64  # messages waiting to be read, per seat
UNSOLICITED_LIMIT = 16  # messages per match beyond one reply per decision request
HELLO_SECONDS = 5.0  # from opening a stream to its hello


def _install_receive_hook() -> bool:
    """Let a stream's reader tell *why* gRPC ended it.

    grpc's synchronous server gives a servicer no reason when it cuts a stream: a message over
    ``grpc.max_receive_message_length`` (refused from its length prefix, never buffered) and a
    bot cancelling its own stream both surface as a bare ``RpcError``. The one difference is
    the receive operation's outcome: it fails for a refused message and ends empty for a
    cancel. This hook marks the failure on the call's state. grpc is pinned (pyproject.toml);
    if its internals move, the hook is skipped and the fault's detail is less precise.
    """
    try:
        from grpc import _server
    except ImportError:  # pragma: no cover
        return False
    original = getattr(_server, "_receive_message", None)
    if original is None:  # pragma: no cover - a grpc release without it
        return False
    if getattr(original, "_barbu_hook", False):
        return True

    def _receive_message(state, call, request_deserializer):
        callback = original(state, call, request_deserializer)

        def receive_message(event):
            if not getattr(event, "success", True):
                state.barbu_receive_failed = True
            return callback(event)

        return receive_message

    _receive_message._barbu_hook = True  # type: ignore[attr-defined]
    _server._receive_message = _receive_message
    return True


_RECEIVE_HOOK = _install_receive_hook()


def _receive_failed(context: Any, wait: float = 0.1) -> bool:
    """Whether gRPC refused a message on this stream (see :func:`_install_receive_hook`)."""
    state = getattr(context, "_state", None)
    deadline = time.monotonic() + wait
    while True:
        if getattr(state, "barbu_receive_failed", False):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


def _refused_message(max_message_bytes: int) -> str:
    return (
        f"sent a message larger than {_size(max_message_bytes)} (or one gRPC could not read): "
        "gRPC refused it without reading it and ended the stream"
    )


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} bytes"


class Session:
    """One seat's connection: the token it must present and its message queues."""

    def __init__(self, seat: int, max_inbound: int = MAX_INBOUND, unsolicited_limit: int = UNSOLICITED_LIMIT):
        self.seat = seat
        # The seat number prefix lets a refused hello be charged to the seat it claims.
        self.secret = secrets.token_urlsafe(24)
        self.token = f"{seat}.{self.secret}"
        self.refusal: str | None = None  # why a connection claiming this seat was refused
        self.unsolicited_limit = unsolicited_limit
        self.requests = 0  # decision requests sent: each may be answered once
        self.received = 0  # messages received after the hello
        self.connected = threading.Event()
        self.used = False
        self.hello: pb.Hello | None = None
        self.outbound: queue.SimpleQueue = queue.SimpleQueue()
        self.inbound: queue.Queue = queue.Queue(maxsize=max_inbound)
        self.ended = threading.Event()
        self.violation: str | None = None  # why the arbiter cut the stream, if it did
        self.context: grpc.ServicerContext | None = None

    def send(self, message: pb.ArbiterMessage) -> None:
        if not self.ended.is_set():
            self.outbound.put(message)

    def close(self) -> None:
        self.outbound.put(_CLOSE)


class _Servicer(pb_grpc.ArbiterServicer):
    def __init__(self, server: ArbiterServer):
        self.server = server

    def Play(self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext):
        server = self.server
        if server.full():
            server.refuse("", "a connection came when every seat was already connected")
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "every seat of this match is already connected")
        # A stream that says nothing holds a server thread: cut it if no hello comes in time.
        late = threading.Event()

        def cut() -> None:
            late.set()
            context.cancel()

        timer = threading.Timer(server.hello_seconds, cut)
        timer.daemon = True
        timer.start()
        try:
            first = next(request_iterator)
        except (StopIteration, grpc.RpcError):  # the bot closed the stream, or we cut it
            if late.is_set():
                server.refuse("", f"a connection sent no hello within {server.hello_seconds:g}s")
            return
        finally:
            timer.cancel()
        if first.WhichOneof("msg") != "hello":
            server.refuse("", "a connection sent something else than a hello first")
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the first message of a session must be a Hello")
        hello = first.hello
        session = server.claim(hello.token)
        if session is None:
            server.refuse(hello.token, server.why_refused(hello.token))
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown or already used token")
        if hello.protocol_version != wire.PROTOCOL_VERSION:
            reason = (
                f"protocol version {hello.protocol_version} is not supported; "
                f"this arbiter speaks {wire.PROTOCOL_VERSION}"
            )
            session.refusal = f"its hello was refused: {reason}"
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, reason)
        session.hello = hello
        session.context = context
        reader = threading.Thread(
            target=self._read, args=(session, request_iterator, server.max_message_bytes), daemon=True
        )
        reader.start()
        session.connected.set()
        log.debug("seat %d connected: %s %s", session.seat, hello.bot_name, hello.bot_version)
        while True:
            message = session.outbound.get()
            if message is _CLOSE:
                break
            yield message
        session.ended.set()

    @staticmethod
    def _read(session: Session, request_iterator: Iterator[pb.BotMessage], max_message_bytes: int) -> None:
        try:
            for message in request_iterator:
                session.received += 1
                unsolicited = session.received - session.requests
                if unsolicited > session.unsolicited_limit:
                    session.violation = (
                        f"sent {unsolicited} messages nobody asked for (at most {session.unsolicited_limit} "
                        "a match beyond one reply per decision request)"
                    )
                    session.context.cancel()
                    break
                try:
                    session.inbound.put_nowait(message)
                except queue.Full:
                    session.violation = (
                        f"flooded the arbiter with more than {session.inbound.maxsize} unanswered messages"
                    )
                    session.context.cancel()
                    break
            else:  # the stream ended: by the bot, or because gRPC refused a message
                if session.violation is None and _receive_failed(session.context, wait=0):
                    session.violation = _refused_message(max_message_bytes)
        except grpc.RpcError:
            if session.violation is None and not session.ended.is_set() and _receive_failed(session.context):
                session.violation = _refused_message(max_message_bytes)
        except Exception:  # a stream torn down under us
            log.debug("reader for seat %d stopped", session.seat, exc_info=True)
        session.ended.set()
        try:
            session.inbound.put_nowait(_GONE)
        except queue.Full:
            pass


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
        self.max_inbound = max_inbound
        self.max_message_bytes = max_message_bytes
        self.unsolicited_limit = unsolicited_limit
        self.hello_seconds = hello_seconds
        self._lock = threading.Lock()
        self._sessions: list[Session] = []
        self.refused: list[str] = []  # reasons of every refused connection (never a token)
        self._grpc = grpc.server(
            futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="arbiter-grpc"),
            options=[
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
            ],
            maximum_concurrent_rpcs=64,
        )
        pb_grpc.add_ArbiterServicer_to_server(_Servicer(self), self._grpc)
        port = self._grpc.add_insecure_port(address)
        if address.startswith("unix:"):
            self.address = address
        else:
            host = address.rsplit(":", 1)[0]
            self.address = f"{host}:{port}"

    def start(self) -> ArbiterServer:
        self._grpc.start()
        return self

    def stop(self) -> None:
        for s in self._sessions:
            s.close()
        self._grpc.stop(grace=0.2).wait()

    def expect(self, seat: int) -> Session:
        """Register a seat and return its session (with the token to hand to the bot)."""
        session = Session(seat, self.max_inbound, self.unsolicited_limit)
        with self._lock:
            self._sessions.append(session)
        return session

    def full(self) -> bool:
        """Every registered seat has been claimed: no connection can be accepted any more."""
        with self._lock:
            return bool(self._sessions) and all(s.used for s in self._sessions)

    def why_refused(self, token: str) -> str:
        """Why a hello with this token is refused, in words that never repeat the token."""
        seat_text, _, secret = token.partition(".")
        with self._lock:
            for s in self._sessions:
                if hmac.compare_digest(s.token.encode(), token.encode()):
                    return f"it presented an unknown or already used token (seat {s.seat}'s, already used)"
            for s in self._sessions:
                if secret and hmac.compare_digest(s.secret.encode(), secret.encode()):
                    return (
                        f"it presented an unknown or already used token (seat {s.seat}'s secret "
                        f"with the seat number {seat_text[:8]!r})"
                    )
        return "it presented an unknown or already used token (no seat of this match has it)"

    def refuse(self, token: str, reason: str) -> None:
        """Note a refused connection. Only a seat not yet connected is told about it (it
        explains the fault if that seat never connects): a connected seat is never charged,
        since whoever presents a token cannot be told from whoever stole it."""
        seat_text, _, secret = token.partition(".")
        with self._lock:
            self.refused.append(reason)
            for s in self._sessions:
                if s.connected.is_set():
                    continue
                if seat_text == str(s.seat):
                    s.refusal = f"a connection claiming seat {s.seat} was refused: {reason}"
                elif secret and hmac.compare_digest(s.secret.encode(), secret.encode()):
                    # its own secret under another seat's number: it tried to take another seat
                    s.refusal = f"its hello was refused: {reason} (a bot may only connect for its own seat)"
        log.warning("refused a connection: %s", reason)

    def claim(self, token: str) -> Session | None:
        """The session of ``token`` if it is known and unused (compared in constant time)."""
        found = None
        with self._lock:
            for s in self._sessions:
                if hmac.compare_digest(s.token.encode(), token.encode()) and not s.used:
                    found = s
            if found is not None:
                found.used = True
        return found


class RemotePlayer(Player):
    """A seat played by a bot over a gRPC session (optionally a local process we started)."""

    def __init__(
        self,
        session: Session,
        name: str,
        time_control: TimeControl,
        *,
        process: BotProcess | None = None,
        match_id: str = "",
        entrants: list[str] | None = None,
    ):
        self.session = session
        self.name = name
        self.time_control = time_control
        self.process = process
        self.match_id = match_id
        self.entrants = entrants or []
        self.next_request_id = 1

    # -- faults
    def _gone(self) -> PlayerFault:
        if self.session.violation:
            return PlayerFault(FaultKind.PROTOCOL, self.session.violation, fatal=True)
        if self.process is not None:
            # give a dying process a moment to be reaped so we can tell a crash from a hang-up
            deadline = time.monotonic() + 0.5
            while self.process.exit_code() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if self.process.exit_code() is not None:
                return PlayerFault(FaultKind.CRASH, self.process.describe_exit())
        return PlayerFault(FaultKind.DISCONNECT, "the bot closed its stream, or its connection was lost")

    def _ensure_connected(self) -> None:
        if self.session.violation:  # cut off: whatever it queued before is not read
            raise PlayerFault(FaultKind.PROTOCOL, self.session.violation, fatal=True)
        if not self.session.connected.is_set():
            if self.session.refusal:
                raise PlayerFault(FaultKind.PROTOCOL, self.session.refusal, fatal=True)
            if self.process is not None and self.process.exit_code() is not None:
                raise PlayerFault(FaultKind.CRASH, "never connected: " + self.process.describe_exit())
            raise PlayerFault(FaultKind.DISCONNECT, "the bot never connected")
        if self.session.ended.is_set() and self.session.inbound.empty():
            raise self._gone()

    # -- Player
    def start(self, seat: int, view: View) -> None:
        self._ensure_connected()
        rules = view.rules
        self.session.send(
            pb.ArbiterMessage(
                match_start=pb.MatchStart(
                    match_id=self.match_id,
                    seat=seat,
                    rules_json=json.dumps(rules.to_json()),
                    entrants=self.entrants,
                    deals=rules.deals_per_match,
                    decision_seconds=self.time_control.per_decision,
                    reserve_seconds=self.time_control.reserve,
                    view=wire.view_to_proto(view),
                )
            )
        )

    def decide(self, view: View, time_limit: float) -> Any:
        self._ensure_connected()
        request_id = self.next_request_id
        self.next_request_id += 1
        self.session.requests += 1  # before sending: the reply may come at once
        self.session.send(
            pb.ArbiterMessage(
                request=pb.DecisionRequest(
                    request_id=request_id,
                    # Past deals' results travel once, in DealEnd; the SDK keeps them.
                    view=wire.view_to_proto(replace(view, results=())),
                    legal=wire.legal_to_proto(view.legal),
                    decision_seconds=min(self.time_control.per_decision, time_limit),
                    reserve_seconds=max(0.0, time_limit - self.time_control.per_decision),
                )
            )
        )
        deadline = time.monotonic() + time_limit
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PlayerFault(FaultKind.TIMEOUT, f"no answer within {time_limit:.3f}s")
            try:
                message = self.session.inbound.get(timeout=remaining)
            except queue.Empty:
                raise PlayerFault(FaultKind.TIMEOUT, f"no answer within {time_limit:.3f}s") from None
            if message is _GONE:
                raise self._gone()
            kind = message.WhichOneof("msg")
            if kind != "reply":
                raise PlayerFault(FaultKind.PROTOCOL, f"sent a {kind or 'empty message'} where a reply was due")
            rid = message.reply.request_id
            if 0 < rid < request_id:
                continue  # a late answer to a request that already timed out
            if rid != request_id:
                raise PlayerFault(FaultKind.PROTOCOL, f"replied to unknown request id {rid} (expected {request_id})")
            try:
                return wire.action_from_proto(message.reply.action, view.phase)
            except wire.WireError as e:
                raise PlayerFault(FaultKind.MALFORMED, str(e)) from None

    def deal_ended(self, view: View) -> None:
        self.session.send(pb.ArbiterMessage(deal_end=pb.DealEnd(view=wire.view_to_proto(view))))

    def match_ended(self, view: View) -> None:
        self.session.send(
            pb.ArbiterMessage(
                match_end=pb.MatchEnd(
                    status="complete" if view.phase is Phase.OVER else "aborted",
                    totals=list(view.totals),
                    places=places(list(view.totals)),
                    view=wire.view_to_proto(view),
                )
            )
        )

    def close(self) -> None:
        self.session.close()
