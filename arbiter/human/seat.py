"""A person's seat, played over the protocol like any bot's.

The match host seats a person as it seats a remote entrant: an :class:`Invitee` sent its seat's
token (:class:`HumanInvitee`). The invitation starts a :class:`HumanSeat`: a gRPC client in the
host's own event loop that connects to the host's address with that token, says hello, and
from then on is the seat's bot: each decision request it receives is put on the table for the
page (:attr:`HumanSeat.snapshot`), and the choice the page sends back (:meth:`HumanSeat.choose`)
is written as the reply. The referee, its time control, its legality checks and the match log
are those of any match: a person who does not answer in time is a timeout like a slow bot, and
one who keeps not answering forfeits by the fault policy, the fallback finishing the deal.

The page reads the table from another thread (the web server's): :class:`TableBoard` holds the
published snapshot under a lock, with a version number a page waits on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from barbu.rules import Action, Ruleset, View, ruleset_from_json
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc
from barbu.wire import PROTOCOL_VERSION, WireError, action_to_proto, legal_from_proto, phase_from_proto, view_from_proto

from arbiter.human.present import action_label, legal_keys, view_json
from arbiter.match.invited import Invitation
from arbiter.referee.timecontrol import TimeControl

__all__ = ["HumanInvitee", "HumanSeat", "TableBoard"]

log = logging.getLogger(__name__)

CHANNEL_OPTIONS = (("grpc.enable_retries", 0),)
CLOSE_SECONDS = 5.0  # after MatchEnd, for the host to end the stream


_LEFT = object()  # what waiting for a choice gives when the person has left


class Refused(Exception):
    """A choice the table does not take; the message says why."""


class TableBoard:
    """The table as the page sees it: a JSON snapshot and its version, shared between the
    match's event loop (which writes) and the web server's (which reads and waits)."""

    def __init__(self, base: dict[str, Any]) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {"version": 0, **base}
        self.seen: float | None = None  # when a page last asked for the table (time.monotonic)

    def update(self, **changes: Any) -> None:
        with self._lock:
            self._state = {**self._state, **changes, "version": self._state["version"] + 1}

    def note(self, text: str) -> None:
        """A line of what happened that the page shows (a timeout, a forfeit)."""
        with self._lock:
            notes = [*self._state.get("notes", []), text][-20:]
        self.update(notes=notes)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return self._state

    @property
    def version(self) -> int:
        return int(self.snapshot()["version"])

    async def changed(self, after: int, wait: float) -> dict[str, Any]:
        """The snapshot once its version is past ``after``, or after ``wait`` seconds."""
        deadline = time.monotonic() + wait
        while self.version <= after and time.monotonic() < deadline:
            self.seen = time.monotonic()
            await asyncio.sleep(0.05)
        self.seen = time.monotonic()
        return self.snapshot()

    def gone_for(self) -> float:
        """Seconds since a page last asked for the table; 0 if none ever did (the person
        may not have opened it yet)."""
        seen = self.seen
        return 0.0 if seen is None else time.monotonic() - seen


class _Pending:
    """The decision request the person has in hand."""

    def __init__(self, request_id: int, legal: dict[str, Action], future: asyncio.Future[Action]):
        self.request_id = request_id
        self.legal = legal
        self.future = future


class HumanSeat:
    """The seat's protocol client (see the module's docstring)."""

    def __init__(self, board: TableBoard, invitation: Invitation, address: str, abandon: float | None = None):
        self.board = board
        self.abandon = abandon  # seconds without a page, a decision pending, that end the session
        self.abandoned = False
        self.invitation = invitation
        self.address = address
        self.names = list(invitation.entrants)
        self.rules: Ruleset | None = None
        self.results: tuple[Any, ...] = ()
        self.pending: _Pending | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ended_cleanly: bool | None = None  # None while it plays
        self.ending = ""  # how the session ended, in words

    # ---- the page's side (any thread) ---------------------------------------------------------
    def choose(self, request_id: int, key: str) -> None:
        """The person's choice for request ``request_id``; Refused when it is not a legal
        choice of the request in hand (another request, or a key not among the legal ones)."""
        pending, loop = self.pending, self.loop
        if pending is None or loop is None or pending.request_id != request_id:
            raise Refused("that decision is no longer asked for (the table has moved on)")
        if key not in pending.legal:
            raise Refused(f"{key!r} is not a legal choice now")
        action = pending.legal[key]

        def settle() -> None:
            if not pending.future.done():
                pending.future.set_result(action)

        loop.call_soon_threadsafe(settle)

    # ---- the session (the host's event loop) --------------------------------------------------
    async def run(self) -> None:
        self.loop = asyncio.get_running_loop()
        try:
            async with grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS) as channel:
                await self._play(pb_grpc.ArbiterStub(channel).Play())
        except asyncio.CancelledError:
            if not self.abandoned:
                raise
            self._end(False, f"you left the table (no page open for {self.abandon:g} s): the seat forfeited")
        except grpc.aio.AioRpcError as e:
            self._end(False, f"the arbiter ended the seat's session: {e.code().name} {e.details() or ''}".strip())
        except Exception as e:  # the seat's session is over; the referee records what it missed
            log.exception("the human seat's session failed")
            self._end(False, f"the seat's session failed: {e}")
        finally:
            self._drop_pending()

    async def _play(self, call: Any) -> None:
        hello = pb.Hello(protocol_version=PROTOCOL_VERSION, token=self.invitation.token, bot_name="human")
        await call.write(pb.BotMessage(hello=hello))
        writes: set[asyncio.Task[None]] = set()
        while True:
            msg = await call.read()
            if msg is grpc.aio.EOF:
                if self.ended_cleanly is None:
                    self._end(False, "the arbiter took the seat away (it forfeited); the match goes on without you")
                return
            kind = msg.WhichOneof("msg")
            if kind == "request":
                task = asyncio.create_task(self._answer(call, msg.request))
                writes.add(task)
                task.add_done_callback(writes.discard)
            elif kind == "match_start":
                self._start(msg.match_start)
            elif kind == "deal_end":
                self._drop_pending()
                self._show(self._view(msg.deal_end.view))
            elif kind == "match_end":
                self._drop_pending()
                end = msg.match_end
                if self.rules is not None:
                    self._show(self._view(end.view))
                self._end(True, f"the match is over ({end.status}{': ' + end.reason if end.reason else ''})")
                await self._close(call)
                return

    def _start(self, start: pb.MatchStart) -> None:
        import json

        self.rules = ruleset_from_json(json.loads(start.rules_json or "{}"))
        self.board.update(seat=start.seat, names=list(start.entrants) or self.names, status="playing")
        self._show(self._view(start.view))

    def _view(self, msg: pb.View, legal: tuple[Action, ...] = ()) -> View:
        assert self.rules is not None, "a view before match_start"
        view = view_from_proto(msg, self.rules, legal, self.results)
        self.results = view.results
        return view

    def _show(self, view: View, request: dict[str, Any] | None = None) -> None:
        self.board.update(view=view_json(view, self.names), request=request)

    async def _answer(self, call: Any, req: pb.DecisionRequest) -> None:
        """Put the request before the person, wait for the choice, send it. A later request
        (the arbiter's time ran out and it played for the seat) replaces this one."""
        if self.pending is not None:
            self.board.note(f"Time ran out for decision {self.pending.request_id}: the arbiter played for you.")
        self._drop_pending()
        try:
            legal = legal_from_proto(req.legal, phase_from_proto(req.view.phase))
        except WireError as e:
            raise RuntimeError(f"bad legal actions in request {req.request_id}: {e}") from None
        view = self._view(req.view, legal)
        future: asyncio.Future[Action] = asyncio.get_running_loop().create_future()
        keys = legal_keys(legal)
        self.pending = _Pending(req.request_id, keys, future)
        choices = [{"key": k, "label": action_label(a, self.names)} for k, a in keys.items()]
        request = {
            "id": req.request_id,
            "kind": view.phase.name.lower(),
            "choices": choices,
            "seconds": req.decision_seconds,
            "reserve": req.reserve_seconds,
            "asked": time.time(),
        }
        self._show(view, request)
        try:
            action = await self._wait(future)
        except asyncio.CancelledError:
            return
        if action is _LEFT:
            self.abandoned = True
            call.cancel()  # the stream ends: the referee's fault policy forfeits the seat
            return
        if self.pending is not None and self.pending.future is future:
            self.pending = None
            self.board.update(request=None)
        await call.write(pb.BotMessage(reply=pb.Reply(request_id=req.request_id, action=action_to_proto(action))))

    async def _wait(self, future: asyncio.Future[Action]) -> Action | object:
        """The person's choice, or :data:`_LEFT` once no page has asked for the table for
        ``abandon`` seconds (a closed tab; a table never opened is not left)."""
        if self.abandon is None:
            return await future
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(future), 1.0)
            except TimeoutError:
                if self.board.gone_for() > self.abandon:
                    return _LEFT

    def _drop_pending(self) -> None:
        pending, self.pending = self.pending, None
        if pending is not None and not pending.future.done():
            pending.future.cancel()

    async def _close(self, call: Any) -> None:
        with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError, grpc.aio.UsageError):
            await call.done_writing()
            while await asyncio.wait_for(call.read(), CLOSE_SECONDS) is not grpc.aio.EOF:
                pass

    def _end(self, cleanly: bool, words: str) -> None:
        self.ended_cleanly, self.ending = cleanly, words
        self.board.update(request=None)
        self.board.note(words[0].upper() + words[1:] + ".")


class _SeatLiveness:
    """What the host may ask of the seat's "process": whether its session still runs."""

    def __init__(self, task: asyncio.Task[None], seat: HumanSeat):
        self.task, self.seat = task, seat

    def running(self) -> bool:
        return not self.task.done()

    def exit_code(self) -> int | None:
        if not self.task.done():
            return None
        return 0 if self.seat.ended_cleanly else 1

    def exit_description(self) -> str | None:
        return None if not self.task.done() else (self.seat.ending or "the person's seat ended")

    def with_last_words(self, detail: str) -> str:
        return detail


class HumanInvitee:
    """The person's seat as the match host sees it (arbiter.match.invited.Invitee): invited,
    it starts the seat's client in the host's loop, connecting to ``address()`` (the host's
    server address, known once it listens)."""

    def __init__(self, name: str, board: TableBoard, address: Callable[[], str], abandon: float | None = None):
        self._name = name
        self.abandon = abandon
        self.board = board
        self.address = address
        self.seat: HumanSeat | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self._name

    def invite(self, invitation: Invitation) -> _SeatLiveness:
        self.seat = HumanSeat(self.board, invitation, self.address(), self.abandon)
        self.board.update(time_control=time_control_json(invitation.time_control), seat=invitation.seat)
        self.task = asyncio.get_running_loop().create_task(self.seat.run())
        return _SeatLiveness(self.task, self.seat)


def time_control_json(control: TimeControl) -> dict[str, float]:
    return {"per_decision": control.per_decision, "reserve": control.reserve}


def seat_names(human: str, bots: Sequence[str], seat: int) -> list[str]:
    """The four entrants' names in seat order, the person at ``seat``."""
    names = list(bots)
    names.insert(seat, human)
    return names
