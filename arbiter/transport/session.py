"""Seats, streams and matches on the arbiter's side of the wire.

A :class:`Stream` is one bot connection (one ``Arbiter.Play`` call): it reads everything the bot
sends, as it arrives, in the server's event loop, and enforces the per-stream limits there. A
:class:`Session` is one seat of one match: the seat's token, the decision requests sent to it and
the unsolicited-message budget. A stream serves one session at a time; a bot that declared
``multi_match`` in its hello may serve several matches one after the other (:meth:`Stream.detach`,
:meth:`MatchDesk.hand_over`), each with a session of its own. A :class:`MatchDesk` is the set of
sessions of one match on a server that may hold several.

Everything here lives in the server's event loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from barbu.v1 import arbiter_pb2 as pb

GONE = object()  # what a stream yields once the bot's side has ended


class Flag(asyncio.Event):
    """A flag set once, in the server's event loop, and waited for there with a time limit."""

    async def wait_for(self, timeout: float) -> bool:
        """Wait until the flag is set, or ``timeout`` seconds; whether it is set."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wait(), timeout)
        return self.is_set()


class DeskHost(Protocol):
    """What a :class:`MatchDesk` needs of its server (an ArbiterServer)."""

    max_inbound: int
    unsolicited_limit: int

    def forget(self, desk: MatchDesk) -> None: ...


class Session:
    """One seat of one match: the token its bot must present, and what it was asked.

    ``requests`` counts the decision requests sent (each may be answered once), ``received``
    the messages read since the session began: their difference is the unsolicited budget.
    """

    def __init__(
        self,
        seat: int,
        desk: MatchDesk | None = None,
        *,
        max_inbound: int = 64,
        unsolicited_limit: int = 16,
    ) -> None:
        self.seat = seat
        self.desk = desk
        # The seat number prefix lets a refused hello be charged to the seat it claims.
        self.secret = secrets.token_urlsafe(24)
        self.token = f"{seat}.{self.secret}"
        self.refusal: str | None = None  # why a connection claiming this seat was refused
        self.max_inbound = max_inbound
        self.unsolicited_limit = unsolicited_limit
        self.requests = 0
        self.received = 0
        self.connected = Flag()
        self.ended = Flag()  # the bot's stream ended (or, after a hand-over, this match is over for it)
        self.used = False
        self.stream: Stream | None = None
        self.reused = 0  # matches its stream had served before this one (0: a fresh connection)
        # Whether the bot's process still runs (None: not a local process). Asked the moment
        # gRPC cuts the stream, to tell a crash from a refused message (see ArbiterServer).
        self.probe: Callable[[], bool] | None = None
        self.remote = False  # played from elsewhere, through the lobby (arbiter.lobby)
        self._violation: str | None = None

    @property
    def hello(self) -> pb.Hello | None:
        return self.stream.hello if self.stream is not None else None

    @property
    def violation(self) -> str | None:
        """Why the arbiter cut the stream, if it did (whatever it queued before is not read)."""
        if self._violation is not None:
            return self._violation
        return self.stream.violation if self.stream is not None and self.stream.session is self else None

    @violation.setter
    def violation(self, value: str | None) -> None:
        self._violation = value

    def attach(self, stream: Stream) -> None:
        """Bind a stream to this session: the seat is connected."""
        self.stream = stream
        stream.session = self
        self.used = True
        self.connected.set()
        if stream.ended.is_set():
            self.ended.set()

    def pending(self) -> bool:
        """Whether messages from the bot wait to be read."""
        return bool(self.stream is not None and self.stream.session is self and self.stream.inbox)


class Stream:
    """One bot's connection (one ``Play`` call), read continuously in the server's loop.

    ``writer`` sends one serialized ``ArbiterMessage`` (``bytes``) or message and returns whether
    it went out. The reader enforces, per message: the unsolicited budget of the session it
    serves and the inbound cap; between matches (no session), any message is a violation.
    """

    def __init__(self, hello: pb.Hello, writer: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.hello = hello
        self._writer = writer
        self.loop = loop
        self.session: Session | None = None
        self.inbox: collections.deque[Any] = collections.deque()
        self._waiter: asyncio.Future[Any] | None = None
        self.violation: str | None = None
        self.ended = Flag()  # no more messages will come from the bot
        self.finished = Flag()  # the call is over (its handler returned or was cancelled)
        self.eof = False  # the bot half-closed (or gRPC ended the read side: see ArbiterServer)
        self.closing = False  # the arbiter is ending the stream itself
        self.released: asyncio.Future[None] = loop.create_future()
        self.matches = 0  # matches this stream has served (hand-overs included)
        self.write_failed = False
        self._sending: asyncio.Task[bool] | None = None  # the last message sent with send_soon
        self.last_activity = loop.time()  # the last message read or written
        self.cut: str | None = None  # how gRPC ended it under us: "refused", "crash" or "lost"

    @property
    def multi_match(self) -> bool:
        return bool(getattr(self.hello, "multi_match", False))

    @property
    def alive(self) -> bool:
        return not self.ended.is_set() and self.violation is None and not self.closing

    # -- reading (the server's handler calls these)
    def deliver(self, message: Any) -> str | None:
        """Take one message from the bot; returns a violation (the stream must be cut) or None."""
        self.last_activity = self.loop.time()
        session = self.session
        if session is None:
            return "sent a message between two matches, when nothing was asked"
        session.received += 1
        unsolicited = session.received - session.requests
        if unsolicited > session.unsolicited_limit:
            return (
                f"sent {unsolicited} messages nobody asked for (at most {session.unsolicited_limit} "
                "a match beyond one reply per decision request)"
            )
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            self._waiter = None
            waiter.set_result(message)
            return None
        if len(self.inbox) >= session.max_inbound:
            return f"flooded the arbiter with more than {session.max_inbound} unanswered messages"
        self.inbox.append(message)
        return None

    def cut_off(self, violation: str) -> None:
        if self.violation is None:
            self.violation = violation
        self.end()

    def end(self) -> None:
        """No more messages will come: wake whoever waits for one."""
        self.ended.set()
        if self.session is not None:
            self.session.ended.set()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            self._waiter = None
            waiter.set_result(GONE)

    # -- the referee's side
    async def next_message(self, deadline: float) -> Any:
        """The next message from the bot, ``GONE`` once its side has ended, or ``None`` at
        ``deadline`` (the loop's clock)."""
        if self.inbox:
            return self.inbox.popleft()
        if self.ended.is_set():
            return GONE
        loop = self.loop
        waiter = loop.create_future()
        self._waiter = waiter
        timer = loop.call_at(deadline, _expire, waiter)
        try:
            return await waiter
        finally:
            timer.cancel()
            if self._waiter is waiter:
                self._waiter = None

    def send_soon(self, message: Any) -> None:
        """Send a message nothing answers (a deal's end) without waiting for it to go out: the
        referee deals and asks on while it goes. The stream's next :meth:`write` waits for it
        first, so the bot gets its messages in order. Only the referee writes (one at a time)."""
        self._sending = self.loop.create_task(self._write_after(self._sending, message))

    async def _write_after(self, previous: asyncio.Task[bool] | None, message: Any) -> bool:
        if previous is not None:
            await asyncio.wait((previous,))
        return await self._write(message)

    async def write(self, message: Any) -> bool:
        """Send one message (bytes or an ArbiterMessage), after those sent with :meth:`send_soon`;
        False if the call is gone."""
        sending = self._sending
        if sending is not None:
            await asyncio.wait((sending,))
            if self._sending is sending:
                self._sending = None
        return await self._write(message)

    async def _write(self, message: Any) -> bool:
        if self.write_failed or self.finished.is_set():
            return False
        try:
            self.last_activity = self.loop.time()
            await self._writer(message)
            return True
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # we are being cancelled, not the call
            self.write_failed = True
            return False
        except Exception:
            self.write_failed = True
            return False

    def detach(self) -> None:
        """The match this stream served is over and the stream stays open for another one (a
        ``multi_match`` bot): until :meth:`MatchDesk.hand_over`, any message is a violation."""
        session = self.session
        self.session = None
        self.inbox.clear()
        if session is not None:
            session.ended.set()

    def release(self) -> None:
        """End the call (status OK): the bot's stream closes and the handler returns."""
        self.closing = True
        if not self.released.done():
            self.released.set_result(None)


def _expire(waiter: asyncio.Future[Any]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class MatchDesk:
    """The sessions of one match on a server: its seats' tokens and the refusals charged to it."""

    def __init__(self, server: DeskHost, label: str = "") -> None:
        self.server = server
        self.label = label
        self.sessions: list[Session] = []
        self.refused: list[str] = []  # reasons of the refusals that came while it was open
        self.open = True

    def expect(self, seat: int) -> Session:
        """Register a seat and return its session (with the token to hand to the bot)."""
        session = Session(
            seat, self, max_inbound=self.server.max_inbound, unsolicited_limit=self.server.unsolicited_limit
        )
        self.sessions.append(session)
        return session

    def hand_over(self, seat: int, stream: Stream) -> Session:
        """A seat played by a bot already connected (``multi_match``) after an earlier match: the
        session has a token of its own, used at once by this stream; nobody can present it."""
        session = self.expect(seat)
        session.reused = stream.matches
        stream.inbox.clear()
        session.attach(stream)
        stream.matches += 1
        return session

    def close(self) -> None:
        """The match is over: its tokens are forgotten (a late hello gets 'unknown token')."""
        self.open = False
        self.server.forget(self)
