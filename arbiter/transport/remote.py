"""A seat played by a bot over a gRPC session: the referee's player on the transport's side.

The referee awaits :meth:`RemotePlayer.ask` in the server's event loop: the request is encoded
straight from the match state (:mod:`arbiter.transport.encode`), written to the bot's stream,
and the reply awaited with the time control's deadline: one coroutine, no thread in between.

The transport knows nothing of processes: when the bot is a local process, the caller passes
what the player needs to tell a crash from a hang-up (``process``: anything with
``exit_description()`` and ``with_last_words(detail)``, e.g. ``arbiter.process.bot.BotProcess``).

A decision's deadline is extended by any time the arbiter itself was stalled while it waited
(:class:`~arbiter.referee.stall.StallWatch`): a stopped arbiter never charges a bot.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Protocol

from barbu import wire
from barbu.rules import MatchState, Phase, View
from barbu.rules.scoring import places
from barbu.v1 import arbiter_pb2 as pb

from arbiter.referee.faults import FaultKind, PlayerFault
from arbiter.referee.players import Player
from arbiter.referee.stall import StallWatch
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.encode import RequestEncoder
from arbiter.transport.session import GONE, Session

CRASH_GRACE = 0.5  # seconds to let a dying process be reaped, to tell a crash from a hang-up
REFUSAL_GRACE = 0.1  # seconds, after an EOF, for gRPC to cancel a call whose message it refused
# Seconds for a process whose stream gRPC cut under it to show whether it is dying: a Python bot
# closes its stream on its way out (a MemoryError, a full disk) and may take a while to end,
# more so under load. Waited only in that case, which is rare.
DYING_GRACE = 2.0


class BotLiveness(Protocol):
    """What a player may ask about the bot's process (arbiter.process.bot.BotProcess has all)."""

    def running(self) -> bool:
        """Whether the process still runs (cheap: asked when gRPC cuts its stream)."""

    def exit_code(self) -> int | None:
        """None while it runs; then its exit code (negative: killed by that signal)."""

    def exit_description(self) -> str | None:
        """None while it runs; once it has ended, how (exit code, signal, limit, last output)."""

    def with_last_words(self, detail: str) -> str:
        """``detail`` with the bot's last output line, when it wrote one."""


class RemotePlayer(Player):
    """A seat played by a bot over a gRPC session (optionally a local process we started).

    ``release_on_close``: end the bot's stream when the player is closed (after MatchEnd). A
    caller that may hand the stream to the bot's next match (a ``multi_match`` bot) passes
    False and decides itself.
    """

    def __init__(
        self,
        session: Session,
        name: str,
        time_control: TimeControl,
        *,
        process: BotLiveness | None = None,
        match_id: str = "",
        entrants: list[str] | None = None,
        release_on_close: bool = True,
        encoder: RequestEncoder | None = None,
        stalls: StallWatch | None = None,
    ):
        self.session = session
        self.name = name
        self.time_control = time_control
        self.process = process
        self.match_id = match_id
        self.entrants = entrants or []
        self.release_on_close = release_on_close
        self.encoder = encoder or RequestEncoder()
        self.stalls = stalls
        self.next_request_id = 1
        if process is not None and session.probe is None:
            session.probe = process.running

    # ---- faults ------------------------------------------------------------------------------
    async def gone(self) -> PlayerFault:
        """The fault of a bot whose stream has ended."""
        session = self.session
        stream = session.stream
        if stream is not None and stream.eof and session.violation is None and not stream.closing:
            await stream.finished.wait_for(REFUSAL_GRACE)  # a refused message is cancelled right away
        if stream is not None and stream.cut == "refused" and self.process is not None:
            # An EOF then a cancelled call, the process still running: a message refused over
            # the size limit, or a Python bot on its way out (its interpreter closes the stream
            # before the process ends). A process that then fails (an exit code other than 0, a
            # signal) crashed; one that goes on, or ends cleanly, broke the size limit.
            code = await self._exit_code(DYING_GRACE)
            if code is not None and code != 0:
                return PlayerFault(FaultKind.CRASH, self.process.exit_description() or f"exit code {code}")
        if session.violation:
            return PlayerFault(FaultKind.PROTOCOL, session.violation, fatal=True)
        # give a dying process a moment to be reaped so we can tell a crash from a hang-up
        if self.process is not None and await self._exit_code(CRASH_GRACE) is not None:
            return PlayerFault(FaultKind.CRASH, self.process.exit_description() or "the bot process ended")
        return PlayerFault(FaultKind.DISCONNECT, "the bot closed its stream, or its connection was lost")

    async def _exit_code(self, wait: float) -> int | None:
        """The process's exit code, waiting up to ``wait`` seconds for it to end."""
        assert self.process is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while (code := self.process.exit_code()) is None and loop.time() < deadline:
            await asyncio.sleep(0.01)
        return code

    def _ensure_connected(self) -> None:
        """Raise the seat's fault if it cannot be asked: cut off, refused, never connected."""
        session = self.session
        if session.violation:  # cut off: whatever it queued before is not read
            raise PlayerFault(FaultKind.PROTOCOL, session.violation, fatal=True)
        if not session.connected.is_set():
            if session.refusal:
                raise PlayerFault(FaultKind.PROTOCOL, session.refusal, fatal=True)
            exit_text = self.process.exit_description() if self.process is not None else None
            if exit_text is not None:
                raise PlayerFault(FaultKind.CRASH, "never connected: " + exit_text)
            raise PlayerFault(FaultKind.DISCONNECT, "the bot never connected")

    async def _ready(self) -> None:
        stream = self.session.stream
        if stream is not None and stream.cut == "refused" and self.process is not None:
            raise await self.gone()  # cut under us: a refused message, or a dying process (see gone)
        self._ensure_connected()
        if self.session.ended.is_set() and not self.session.pending():
            raise await self.gone()

    async def _send(self, message: Any) -> None:
        stream = self.session.stream
        if stream is None:
            return
        await stream.write(message)

    # ---- the referee's player ---------------------------------------------------------------
    async def start(self, seat: int, view: View) -> None:
        await self._ready()
        rules = view.rules
        await self._send(
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

    async def decide(
        self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None
    ) -> Any:
        """The hot path: the request is encoded from the state itself (the view ``observe``
        would give, without building it)."""
        await self._ready()
        request_id = self._next_id()
        decision = min(self.time_control.per_decision, time_limit)
        reserve = max(0.0, time_limit - self.time_control.per_decision)
        data = self.encoder.request(state, seat, request_id, decision, reserve)
        return await self._exchange(data, request_id, time_limit, state.phase, sent)

    def _next_id(self) -> int:
        request_id = self.next_request_id
        self.next_request_id += 1
        self.session.requests += 1  # before sending: the reply may come at once
        return request_id

    async def _exchange(
        self, message: Any, request_id: int, time_limit: float, phase: Phase, sent: Callable[[], None] | None = None
    ) -> Any:
        stream = self.session.stream
        assert stream is not None
        deadline = stream.loop.time() + time_limit
        mark, excused = StallWatch.now(), 0.0
        await stream.write(message)
        if sent is not None:
            sent()
        while True:
            reply = await stream.next_message(deadline)
            if reply is None:
                stalled = self.stalls.since(mark) if self.stalls is not None else 0.0
                if stalled > excused:  # the arbiter was not running: the bot gets that time back
                    deadline, excused = deadline + stalled - excused, stalled
                    continue
                raise PlayerFault(FaultKind.TIMEOUT, f"no answer within {time_limit:.3f}s")
            if reply is GONE:
                raise await self.gone()
            kind = reply.WhichOneof("msg")
            if kind != "reply":
                raise PlayerFault(FaultKind.PROTOCOL, f"sent a {kind or 'empty message'} where a reply was due")
            rid = reply.reply.request_id
            if 0 < rid < request_id:
                continue  # a late answer to a request that already timed out
            if rid != request_id:
                raise PlayerFault(FaultKind.PROTOCOL, f"replied to unknown request id {rid} (expected {request_id})")
            try:
                return wire.action_from_proto(reply.reply.action, phase)
            except wire.WireError as e:
                detail = str(e) if self.process is None else self.process.with_last_words(str(e))
                raise PlayerFault(FaultKind.MALFORMED, detail) from None

    async def deal_ended(self, state: MatchState, seat: int) -> None:
        stream = self.session.stream
        if stream is not None:
            stream.send_soon(self.encoder.deal_end(state, seat))

    async def match_ended(self, view: View) -> None:
        await self._send(
            pb.ArbiterMessage(
                match_end=pb.MatchEnd(
                    status="complete" if view.phase is Phase.OVER else "aborted",
                    totals=list(view.totals),
                    places=places(list(view.totals)),
                    view=wire.view_to_proto(view),
                )
            )
        )

    async def close(self) -> None:
        stream = self.session.stream
        if self.release_on_close and stream is not None and stream.session is self.session:
            stream.release()
