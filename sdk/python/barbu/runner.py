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

A bot whose class sets ``multi_match = True`` says so in its hello: after a match it keeps its
stream open and plays the next match the arbiter hands it (``on_match_start`` again, with a new
seat, rules and time control), until the arbiter ends the stream. Its state must not leak from
one match to the next in ways that matter to it (the arbiter never hands it a deal it has seen).

The runner is one asyncio event loop (``grpc.aio``) in the program's main thread: a message is
read, the bot decides in that same thread, the reply is written; no thread hands anything to
another. A bot that thinks for its whole decision time is not dropped by the arbiter's keepalive:
gRPC answers pings in its own threads, without Python.

Exit codes: 0 when the match ended normally, 1 when the session failed (the arbiter refused
the bot, the connection broke, the bot raised), 2 when the environment is incomplete. The
runner logs to stderr, which the arbiter keeps beside the match log. It never reconnects.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

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
# One long stream of small messages: no retry buffering (a broken session is over anyway), no
# channelz bookkeeping, no bandwidth probing. Each saves a little work on every message.
CHANNEL_OPTIONS = (("grpc.enable_retries", 0), ("grpc.enable_channelz", 0), ("grpc.http2.bdp_probe", 0))


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
    return asyncio.run(_Session(bot, address, token, name, version).run())


class _Session:
    def __init__(self, bot: Bot, address: str, token: str, name: str, version: str):
        self.bot = bot
        self.address = address
        self.token = token
        self.name, self.version = name, version
        self.multi_match = bool(getattr(bot, "multi_match", False))
        self.rules: Ruleset | None = None
        self.results: tuple[Any, ...] = ()  # scored deals, kept from the views that carry them
        self.decisions = 0
        self.matches = 0  # matches ended
        self.in_match = False
        self.match_id = ""
        self.seat = -1

    async def run(self) -> int:
        async with grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS) as channel:
            return await self.play(pb_grpc.ArbiterStub(channel).Play())

    async def play(self, call: Any) -> int:
        hello = pb.Hello(
            protocol_version=PROTOCOL_VERSION,
            token=self.token,
            bot_name=self.name,
            bot_version=self.version,
            multi_match=self.multi_match,
        )
        try:
            await call.write(pb.BotMessage(hello=hello))
            while True:
                msg = await call.read()
                if msg is grpc.aio.EOF:
                    if self.in_match or self.matches == 0:
                        log.error(
                            "the arbiter closed the session before the match ended (after %d decisions)", self.decisions
                        )
                        return 1
                    return 0  # a multi-match bot: the arbiter has no other match for it
                reply = self._handle(msg)
                if reply is not None:
                    await call.write(reply)
                elif not self.in_match and self.matches and not self.multi_match:
                    await self._close(call)
                    return 0
        except grpc.aio.AioRpcError as e:
            log.error("%s", self._describe(e.code(), e.details()))
            return 1
        except (grpc.aio.UsageError, asyncio.InvalidStateError):  # a write on a call that has ended
            log.error("%s", self._describe(await call.code(), await call.details()))
            return 1
        except _SessionError as e:
            log.error("protocol error: %s", e)
            call.cancel()
            return 1
        except Exception:
            log.exception("the bot failed (after %d decisions); ending the session", self.decisions)
            call.cancel()
            return 1

    def _describe(self, code: Any, details: str | None) -> str:
        name = code.name if code is not None else "UNKNOWN"
        if code is grpc.StatusCode.UNAVAILABLE and self.decisions == 0 and self.rules is None:
            return f"cannot reach the arbiter at {self.address}: {name}: {details or ''}"
        return f"the arbiter ended the session with {name}: {details or ''}"

    async def _close(self, call: Any) -> None:
        """After MatchEnd: half-close our side and let the arbiter end the stream."""
        try:
            await call.done_writing()
            while True:
                extra = await asyncio.wait_for(call.read(), CLOSE_GRACE_SECONDS)
                if extra is grpc.aio.EOF:
                    return
                log.warning("ignoring a message after the match end: %s", extra.WhichOneof("msg"))
        except TimeoutError:
            call.cancel()
        except grpc.aio.AioRpcError as e:
            log.debug("after the match end: %s", self._describe(e.code(), e.details()))

    def _view(self, msg: pb.View, legal: tuple[Any, ...] = ()) -> Any:
        """The bot's View; decision requests omit past results, so they come from our copy."""
        if self.rules is None:
            raise _SessionError("a message with a view arrived before match_start")
        try:
            view = view_from_proto(msg, self.rules, legal, self.results)
        except WireError as e:
            raise _SessionError(f"bad view from the arbiter: {e}") from None
        self.results = view.results
        return view

    def _handle(self, msg: pb.ArbiterMessage) -> pb.BotMessage | None:
        """Handle one message; returns the reply to send, if any."""
        kind = msg.WhichOneof("msg")
        if kind == "request":
            return self._decide(msg.request)
        if kind == "match_start":
            start = msg.match_start
            if self.in_match:
                raise _SessionError("a match_start arrived in the middle of a match")
            import json  # here, not at the top: nothing before the hello needs it

            try:
                self.rules = ruleset_from_json(json.loads(start.rules_json or "{}"))
            except (ValueError, BarbuError) as e:
                raise _SessionError(f"cannot read the match rules {start.rules_json!r}: {e}") from None
            self.in_match = True
            self.results = ()
            self.decisions = 0
            self.match_id, self.seat = start.match_id, start.seat
            self.bot.decision_seconds = start.decision_seconds
            self.bot.reserve_seconds = start.reserve_seconds
            log.info(
                "bot %s %s in match %s at %s: seat %d, %d deals, rules %s, entrants %s",
                self.name,
                self.version,
                start.match_id,
                self.address,
                start.seat,
                start.deals,
                start.rules_json,
                ", ".join(start.entrants),
            )
            self.bot.on_match_start(self._view(start.view))
        elif kind == "deal_end":
            self.bot.on_deal_end(self._view(msg.deal_end.view))
        elif kind == "match_end":
            end = msg.match_end
            log.info(
                "match %s ended (%s%s) after %d decisions: totals %s, places %s",
                self.match_id,
                end.status,
                f": {end.reason}" if end.reason else "",
                self.decisions,
                list(end.totals),
                list(end.places),
            )
            if self.rules is not None:
                self.bot.on_match_end(self._view(end.view))
            self.in_match = False
            self.matches += 1
        else:
            log.debug("ignoring an unknown message from the arbiter (%s)", kind)
        return None

    def _decide(self, req: pb.DecisionRequest) -> pb.BotMessage:
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
        self.decisions += 1
        return pb.BotMessage(reply=pb.Reply(request_id=req.request_id, action=action_msg))
