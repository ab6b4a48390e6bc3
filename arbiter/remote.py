"""The gRPC side of the arbiter: bots connect here and play through one stream each.

``ArbiterServer`` listens on one address (a Unix socket by default, or TCP). Each expected
seat is registered with a fresh secret token; a bot's stream is accepted only with a known,
unused token and the right protocol version. ``RemotePlayer`` turns a session into a
:class:`~arbiter.players.Player`: it sends the seat's view with the legal actions and waits,
bounded by the time control, for a reply carrying the same request id.
"""

from __future__ import annotations

import hmac
from dataclasses import replace
import json
import logging
import queue
import secrets
import threading
import time
from concurrent import futures
from typing import Any, Iterator

import grpc

from barbu import wire
from barbu.rules import Phase, View
from barbu.rules.scoring import places
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc

from .faults import FaultKind, PlayerFault
from .launcher import BotProcess
from .players import Player
from .timecontrol import TimeControl

log = logging.getLogger(__name__)

_CLOSE = object()  # ends an outbound stream
_GONE = object()  # the bot's side of the stream ended


class Session:
    """One seat's connection: the token it must present and its message queues."""

    def __init__(self, seat: int, max_inbound: int):
        self.seat = seat
        # The seat number prefix lets a refused hello be charged to the seat it claims.
        self.token = f"{seat}.{secrets.token_urlsafe(24)}"
        self.refusal: str | None = None  # why a connection claiming this seat was refused
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
    def __init__(self, server: "ArbiterServer"):
        self.server = server

    def Play(self, request_iterator: Iterator[pb.BotMessage], context: grpc.ServicerContext):
        try:
            first = next(request_iterator)
        except StopIteration:
            return
        if first.WhichOneof("msg") != "hello":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the first message of a session must be a Hello")
        hello = first.hello
        session = self.server.claim(hello.token)
        if session is None:
            self.server.refuse(hello.token, "it presented an unknown or already used token")
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
        reader = threading.Thread(target=self._read, args=(session, request_iterator), daemon=True)
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
    def _read(session: Session, request_iterator: Iterator[pb.BotMessage]) -> None:
        try:
            for message in request_iterator:
                try:
                    session.inbound.put_nowait(message)
                except queue.Full:
                    session.violation = (
                        f"flooded the arbiter with more than {session.inbound.maxsize} unanswered messages"
                    )
                    session.context.cancel()
                    break
        except grpc.RpcError:
            pass
        except Exception:  # a stream torn down under us
            log.debug("reader for seat %d stopped", session.seat, exc_info=True)
        session.ended.set()
        try:
            session.inbound.put_nowait(_GONE)
        except queue.Full:
            pass


class ArbiterServer:
    """A gRPC server bots connect to; ``address`` is ``unix:/path`` or ``host:port``."""

    def __init__(self, address: str, max_message_bytes: int = 1 << 20, max_inbound: int = 64):
        self.max_inbound = max_inbound
        self._lock = threading.Lock()
        self._sessions: list[Session] = []
        self.refused: list[str] = []  # reasons of every refused hello
        self._grpc = grpc.server(
            futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="arbiter-grpc"),
            options=[
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", 16 << 20),
                ("grpc.so_reuseport", 0),
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

    def start(self) -> "ArbiterServer":
        self._grpc.start()
        return self

    def stop(self) -> None:
        for s in self._sessions:
            s.close()
        self._grpc.stop(grace=0.2).wait()

    def expect(self, seat: int) -> Session:
        """Register a seat and return its session (with the token to hand to the bot)."""
        session = Session(seat, self.max_inbound)
        with self._lock:
            self._sessions.append(session)
        return session

    def refuse(self, token: str, reason: str) -> None:
        """Note a refused hello against the seat its token claims, if it names one."""
        seat_text = token.split(".", 1)[0]
        with self._lock:
            self.refused.append(reason)
            for s in self._sessions:
                if seat_text == str(s.seat) and not s.connected.is_set():
                    s.refusal = f"a connection claiming seat {s.seat} was refused: {reason}"

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
        return PlayerFault(FaultKind.DISCONNECT, "the bot closed its stream")

    def _ensure_connected(self) -> None:
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
