"""The bot side of the protocol: connect a :class:`~barbu.bot.Bot` to the arbiter and play.

A bot program ends with::

    if __name__ == "__main__":
        from barbu.runner import run
        raise SystemExit(run(MyBot()))

The arbiter's launcher starts the program with the environment it needs:

* ``BARBU_ARBITER``: the arbiter's address, ``host:port`` or ``unix:/path/to/socket``;
* ``BARBU_TOKEN``: the secret token of the bot's seat;
* ``BARBU_LOG_LEVEL`` (optional): ``DEBUG``, ``INFO`` (default), ``WARNING``, ``ERROR``.

One session is one bidirectional gRPC stream (see proto/barbu/v1/arbiter.proto): the runner
sends the hello, then answers every decision request with ``bot.decide(view)`` and passes the
informational messages to ``bot.on_match_start``, ``bot.on_deal_end`` and ``bot.on_match_end``.
Before each decision it sets ``bot.decision_seconds`` and ``bot.reserve_seconds`` (floats,
seconds: the free time of this decision and the reserve left) for bots that manage their time.

Exit codes: 0 when the match ended normally, 1 when the session failed (the arbiter refused
the bot, the connection broke, the bot raised), 2 when the environment is incomplete. The
runner logs to stderr, which the arbiter keeps beside the match log. It never reconnects.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from dataclasses import replace
from typing import Any, Iterator

import grpc

from .bot import Bot
from .rules import Ruleset, ruleset_from_json
from .rules.errors import BarbuError
from .v1 import arbiter_pb2 as pb
from .v1 import arbiter_pb2_grpc as pb_grpc
from .wire import PROTOCOL_VERSION, WireError, action_to_proto, legal_from_proto, phase_from_proto, view_from_proto

log = logging.getLogger("barbu.runner")

# How long to wait, after MatchEnd, for the arbiter to close the stream before cancelling it.
CLOSE_GRACE_SECONDS = 5.0

_END = object()  # closes the request stream


class _SessionError(Exception):
    """The arbiter broke the protocol; the message says how."""


class _StderrHandler(logging.StreamHandler[Any]):
    """Writes to whatever ``sys.stderr`` is at the time of the record (tests swap it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _configure_logging() -> None:
    level_name = os.environ.get("BARBU_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    level = logging.getLevelName(level_name)
    if not isinstance(level, int):
        level = logging.INFO
    if not log.handlers:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s barbu.runner: %(message)s"))
        log.addHandler(handler)
        log.propagate = False
    log.setLevel(level)
    if level_name not in logging.getLevelNamesMapping():
        log.warning("BARBU_LOG_LEVEL=%r is not a log level; using INFO", level_name)


def run(bot: Bot, address: str | None = None, token: str | None = None) -> int:
    """Play one session against the arbiter; returns the process exit code (0, 1 or 2)."""
    _configure_logging()
    address = address or os.environ.get("BARBU_ARBITER", "").strip()
    token = token if token is not None else os.environ.get("BARBU_TOKEN", "")
    if not address:
        log.error("no arbiter address: set BARBU_ARBITER to host:port or unix:/path/to/socket")
        return 2
    if not token:
        log.error("no seat token: set BARBU_TOKEN to the token the arbiter gave this seat")
        return 2
    name, version = str(getattr(bot, "name", "") or ""), str(getattr(bot, "version", "") or "")
    log.debug("bot %s %s connecting to the arbiter at %s (protocol v%d)", name, version, address, PROTOCOL_VERSION)
    with grpc.insecure_channel(address) as channel:
        return _Session(bot, pb_grpc.ArbiterStub(channel), address, token, name, version).play()


class _Session:
    def __init__(self, bot: Bot, stub: pb_grpc.ArbiterStub, address: str, token: str, name: str, version: str):
        self.bot = bot
        self.stub = stub
        self.address = address
        self.name, self.version = name, version
        self.outbox: queue.Queue[Any] = queue.Queue()
        self.outbox.put(
            pb.BotMessage(
                hello=pb.Hello(protocol_version=PROTOCOL_VERSION, token=token, bot_name=name, bot_version=version)
            )
        )
        self.rules: Ruleset | None = None
        self.results: tuple[Any, ...] = ()  # scored deals, kept from the views that carry them
        self.decisions = 0
        self.match_id = ""
        self.seat = -1

    def _requests(self) -> Iterator[pb.BotMessage]:
        while True:
            item = self.outbox.get()
            if item is _END:
                return
            yield item

    def play(self) -> int:
        responses = self.stub.Play(self._requests())
        try:
            for msg in responses:
                if self._handle(msg):
                    self._close(responses)
                    return 0
            log.error("the arbiter closed the session before the match ended (after %d decisions)", self.decisions)
            return 1
        except grpc.RpcError as e:
            log.error("%s", self._describe(e))
            return 1
        except _SessionError as e:
            log.error("protocol error: %s", e)
            responses.cancel()
            return 1
        except Exception:
            log.exception("the bot failed (after %d decisions); ending the session", self.decisions)
            responses.cancel()
            return 1
        finally:
            self.outbox.put(_END)

    def _describe(self, e: grpc.RpcError) -> str:
        code = e.code() if hasattr(e, "code") else None
        details = (e.details() if hasattr(e, "details") else "") or ""
        name = code.name if code is not None else "UNKNOWN"
        if code is grpc.StatusCode.UNAVAILABLE and self.decisions == 0 and self.rules is None:
            return f"cannot reach the arbiter at {self.address}: {name}: {details}"
        return f"the arbiter ended the session with {name}: {details}"

    def _close(self, responses: Any) -> None:
        """After MatchEnd: half-close our side and let the arbiter end the stream."""
        self.outbox.put(_END)
        timer = threading.Timer(CLOSE_GRACE_SECONDS, responses.cancel)
        timer.daemon = True
        timer.start()
        try:
            for extra in responses:
                log.warning("ignoring a message after the match end: %s", extra.WhichOneof("msg"))
        except grpc.RpcError as e:
            log.debug("after the match end: %s", self._describe(e))
        finally:
            timer.cancel()

    def _view(self, msg: pb.View, legal: tuple[Any, ...] = ()) -> Any:
        """The bot's View; decision requests omit past results, so they come from our copy."""
        if self.rules is None:
            raise _SessionError("a message with a view arrived before match_start")
        try:
            view = view_from_proto(msg, self.rules, legal)
        except WireError as e:
            raise _SessionError(f"bad view from the arbiter: {e}") from None
        if msg.results:
            self.results = view.results
        elif self.results:
            view = replace(view, results=self.results)
        return view

    def _handle(self, msg: pb.ArbiterMessage) -> bool:
        """Handle one message; True when the match is over."""
        kind = msg.WhichOneof("msg")
        if kind == "request":
            self._decide(msg.request)
        elif kind == "match_start":
            start = msg.match_start
            import json  # here, not at the top: nothing before the hello needs it

            try:
                self.rules = ruleset_from_json(json.loads(start.rules_json or "{}"))
            except (ValueError, BarbuError) as e:
                raise _SessionError(f"cannot read the match rules {start.rules_json!r}: {e}") from None
            self.match_id, self.seat = start.match_id, start.seat
            self.bot.decision_seconds = start.decision_seconds
            self.bot.reserve_seconds = start.reserve_seconds
            log.info(
                "bot %s %s in match %s at %s: seat %d, %d deals, rules %s, entrants %s",
                self.name, self.version, start.match_id, self.address, start.seat, start.deals, start.rules_json,
                ", ".join(start.entrants),
            )  # fmt: skip
            self.bot.on_match_start(self._view(start.view))
        elif kind == "deal_end":
            self.bot.on_deal_end(self._view(msg.deal_end.view))
        elif kind == "match_end":
            end = msg.match_end
            log.info(
                "match %s ended (%s%s) after %d decisions: totals %s, places %s",
                self.match_id, end.status, f": {end.reason}" if end.reason else "", self.decisions,
                list(end.totals), list(end.places),
            )  # fmt: skip
            if self.rules is not None:
                self.bot.on_match_end(self._view(end.view))
            return True
        else:
            log.debug("ignoring an unknown message from the arbiter (%s)", kind)
        return False

    def _decide(self, req: pb.DecisionRequest) -> None:
        if self.rules is None:
            raise _SessionError("a decision request arrived before match_start")
        try:
            legal = legal_from_proto(req.legal, phase_from_proto(req.view.phase))
        except WireError as e:
            raise _SessionError(f"bad legal actions in request {req.request_id}: {e}") from None
        view = self._view(req.view, legal)
        self.bot.decision_seconds = req.decision_seconds
        self.bot.reserve_seconds = req.reserve_seconds
        action = self.bot.decide(view)
        try:
            action_msg = action_to_proto(action)
        except WireError as e:
            # Sent anyway (empty): the arbiter records a malformed action and substitutes one.
            log.error("request %d: the bot's answer %r cannot be sent: %s", req.request_id, action, e)
            action_msg = pb.Action()
        self.outbox.put(pb.BotMessage(reply=pb.Reply(request_id=req.request_id, action=action_msg)))
        self.decisions += 1
