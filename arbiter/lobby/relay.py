"""The bridge's local table: one gRPC server on a private Unix socket that carries each local
bot's ``Arbiter.Play`` stream, byte for byte, to the remote table it was invited to.

A bot started by ``arbiter connect`` finds this relay in ``BARBU_ARBITER`` and speaks to it
exactly as to a local arbiter, without TLS. The relay reads only the first message (the Hello,
for its token: a token the lobby did not hand this bridge is refused), then forwards every
message in both directions unparsed (no serializer on either side): a ``multi_match`` bot's
next match on the same stream is just more bytes. The bot half-closing is a half-close of the
remote call; the remote call's status is the bot's; the bot's call cut (its process died) cuts
the remote call, after the bridge has had a moment to tell the lobby how the process ended.

A message from the bot is refused here, unread, over the arbiter's own limit (``MAX_MESSAGE_BYTES``,
1 MiB), exactly as the arbiter would refuse it: it never crosses the network, and the bridge can
tell the lobby it was refused (a cut on this machine's socket is not a lost connection), so the
seat gets the ``protocol`` fault a local bot gets rather than a ``disconnect``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from barbu.v1 import arbiter_pb2 as pb
from google.protobuf.message import DecodeError

from arbiter.transport.server import MAX_MESSAGE_BYTES, socket_folder

log = logging.getLogger(__name__)

PLAY = "/barbu.v1.Arbiter/Play"
HELLO_SECONDS = 5.0  # from a local stream's opening to its hello, as the arbiter allows
HALF_CLOSE_SETTLE = 0.2  # seconds between a bot's EOF and its half-close going out (see _upstream)
RELAY_SOCKET = "relay.sock"  # its name in the relay's private folder
MESSAGE_BYTES = 16 << 20  # the largest message from the table to the bot (the arbiter sends at most this)


@dataclass
class RelayTarget:
    """Where one invited seat plays, and what the relay tells the bridge about its stream."""

    token: str
    address: str  # the remote table, host:port
    on_cut: Callable[[], Awaitable[None]]  # the bot's call was cut: called before the remote call is
    started: asyncio.Event = field(default_factory=asyncio.Event)  # the bot said hello
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # its stream is over
    used: bool = False


class Relay:
    """The local server. ``open_channel(address)`` gives a channel to a remote table with the
    bridge's TLS settings; each address gets one, kept while the relay runs."""

    def __init__(self, open_channel: Callable[[str], grpc.aio.Channel]):
        self._open_channel = open_channel
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._targets: dict[str, RelayTarget] = {}
        self._folder = socket_folder("barbu-bridge-", RELAY_SOCKET)  # mode 0700: only this user reaches it
        self.address = "unix:" + os.path.join(self._folder, RELAY_SOCKET)
        self._server: Any = None

    async def start(self) -> Relay:
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),  # from the bot: the arbiter's own limit
            ("grpc.max_send_message_length", MESSAGE_BYTES),
        ]
        self._server = grpc.aio.server(options=options)
        handler: Any = grpc.stream_stream_rpc_method_handler(self._play)  # no (de)serializer: raw bytes
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("barbu.v1.Arbiter", {"Play": handler}),)
        )
        self._server.add_insecure_port(self.address)
        await self._server.start()
        return self

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(0.2)
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
        shutil.rmtree(self._folder, ignore_errors=True)

    def expect(self, target: RelayTarget) -> None:
        self._targets[target.token] = target

    def forget(self, token: str) -> None:
        self._targets.pop(token, None)

    def _claim(self, token: str) -> RelayTarget | None:
        """The unused target of ``token`` (compared in constant time), now used; else None."""
        found = None
        for known, target in self._targets.items():
            if hmac.compare_digest(known.encode(), token.encode()) and not target.used:
                found = target
        if found is not None:
            found.used = True
        return found

    async def _play(self, request_iterator: Any, context: Any) -> None:
        try:
            first = await asyncio.wait_for(context.read(), HELLO_SECONDS)
        except TimeoutError:
            await context.abort(grpc.StatusCode.CANCELLED, f"no hello within {HELLO_SECONDS:g}s")
        if first is grpc.aio.EOF:
            return
        token = _hello_token(first)
        target = self._claim(token) if token is not None else None
        if target is None:
            log.warning("refused a local stream: its hello had no token this bridge was given")
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown or already used token")
        assert target is not None
        target.started.set()
        try:
            await self._pipe(first, target, context)
        finally:
            target.ended.set()

    async def _channel(self, address: str) -> grpc.aio.Channel:
        """The kept channel to ``address``, or a new one if its last connection attempt failed: a
        channel backing off from a failure (its table was down: a killed arbiter, before its
        rerun) fails every call at once until its next attempt, seconds later, even once the
        table is back on the same port."""
        channel = self._channels.get(address)
        if channel is None or channel.get_state() is grpc.ChannelConnectivity.TRANSIENT_FAILURE:
            stale, channel = channel, self._open_channel(address)
            self._channels[address] = channel  # before any await: a seat arriving meanwhile takes it
            if stale is not None:
                await stale.close()
        return channel

    async def _pipe(self, first: bytes, target: RelayTarget, context: Any) -> None:
        channel = await self._channel(target.address)
        call: Any = channel.stream_stream(PLAY)()
        upstream = asyncio.create_task(_upstream(first, call, context))
        downstream = asyncio.create_task(_downstream(call, context))
        try:
            # Waiting on a task, not on the call: a cut of this handler must not cut the call (as
            # a cancelled read of it would) before the bridge has said why.
            await asyncio.wait((downstream,))
        except asyncio.CancelledError:
            upstream.cancel()  # no half-close goes out for a stream that was cut
            await target.on_cut()  # the bot went away: let the bridge say why, then cut the table's side
            call.cancel()
            raise
        finally:
            upstream.cancel()
            downstream.cancel()
        if not downstream.result():
            call.cancel()
            return
        code, details = await call.code(), await call.details()
        if code is not grpc.StatusCode.OK:
            await context.abort(code, details or "")


async def _downstream(call: Any, context: Any) -> bool:
    """The table's messages to the bot until the call ends (its status is passed on by the
    caller); False when the bot's side broke while we wrote to it."""
    try:
        while (message := await call.read()) is not grpc.aio.EOF:
            await context.write(message)
    except grpc.aio.AioRpcError:
        pass
    except Exception as e:
        log.debug("local stream broke: %s", e)
        return False
    return True


async def _upstream(first: bytes, call: Any, context: Any) -> None:
    """The bot's messages to the remote table; the bot's half-close is the call's. A bot that dies
    gives an EOF too, followed at once by the call's cancellation: the half-close waits a moment,
    so that a crash reaches the table as a cut stream, never as a half-close then a cut (which the
    arbiter reads as a refused message)."""
    with contextlib.suppress(grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
        await call.write(first)
        while (message := await context.read()) is not grpc.aio.EOF:
            await call.write(message)
        await asyncio.sleep(HALF_CLOSE_SETTLE)
        await call.done_writing()


def _hello_token(raw: bytes) -> str | None:
    """The token of a first message that is a Hello, else None (only this message is parsed)."""
    try:
        message = pb.BotMessage.FromString(raw)
    except DecodeError:
        return None
    return message.hello.token if message.WhichOneof("msg") == "hello" else None
