"""Hostile remote clients against a real lobby over TLS on 127.0.0.1, keys in a real SQLite file:
floods before and after the hello, slowloris sockets, many connections from one address, huge
messages, a key guessed in a loop, Play calls with wrong tokens. In each test a legitimate
entrant (alice) stays connected throughout, answers the lobby's pings and must still get her
reservations and invitations at the end."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

import grpc
import pytest
from barbu import wire
from barbu.matchlog import verify
from barbu.rules import make_ruleset
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import lobby_pb2 as lpb

from arbiter.lobby.ratelimit import FailureLimiter
from arbiter.lobby.server import LOBBY_SERVICE, Lobby
from arbiter.match.invited import Invitation
from arbiter.match.play import BotSpec, MatchHost
from arbiter.referee.logfile import read_log_lines
from arbiter.referee.loop import MatchSetup
from arbiter.referee.timecontrol import TimeControl
from arbiter.storage import open_database
from arbiter.storage.credentials import EntrantKeys
from arbiter.transport.server import SERVICE, ArbiterServer

from ..tournament.conftest import ROOT
from .certs import TestCerts

HELLO_SECONDS = 1.0
KEEPALIVE_SECONDS = 1.0


@pytest.fixture
def keys(tmp_path):
    engine = open_database(f"sqlite:///{tmp_path}/keys.db")
    store = EntrantKeys(engine)
    yield store, {name: store.issue(name) for name in ("alice", "bob")}
    engine.dispose()


@asynccontextmanager
async def tls_lobby(
    certs: TestCerts,
    check_key: Callable[[str], str],
    play: Callable[[], ArbiterServer | None] = lambda: None,
    **options,
) -> AsyncIterator[Lobby]:
    options = {"hello_seconds": HELLO_SECONDS, "keepalive_seconds": KEEPALIVE_SECONDS, **options}
    credentials = grpc.ssl_server_credentials([(certs.server_key_pem, certs.server_cert_pem)])
    lobby = Lobby(
        "127.0.0.1:0", credentials=credentials, check_key=check_key, entrants=["alice", "bob"], play=play,
        name="hostile", **options,
    )  # fmt: skip
    await lobby.start()
    try:
        yield lobby
    finally:
        await lobby.stop(0)


def tls_channel(certs: TestCerts, address: str) -> grpc.aio.Channel:
    """A channel of its own (its own TCP connection), trusting the test CA."""
    credentials = grpc.ssl_channel_credentials(root_certificates=certs.ca_pem)
    return grpc.aio.secure_channel(address, credentials, options=[("grpc.use_local_subchannel_pool", 1)])


class Client:
    """One Lobby.Connect stream over TLS."""

    def __init__(self, certs: TestCerts, address: str):
        self.channel = tls_channel(certs, address)
        self.call = self.channel.stream_stream(
            f"/{LOBBY_SERVICE}/Connect",
            request_serializer=lpb.EntrantMessage.SerializeToString,
            response_deserializer=lpb.LobbyMessage.FromString,
        )()

    async def send_hello(self, key: str, capacity: int = 1) -> None:
        await self.call.write(
            lpb.EntrantMessage(hello=lpb.LobbyHello(protocol_version=wire.PROTOCOL_VERSION, key=key, capacity=capacity))
        )

    async def read(self, timeout: float = 5.0) -> lpb.LobbyMessage:
        message = await asyncio.wait_for(self.call.read(), timeout)
        assert message is not grpc.aio.EOF
        return message

    async def refusal(self, timeout: float = 5.0) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            while True:  # pongs may come first
                await self.read(timeout)
        return refused.value.code(), refused.value.details()

    async def close(self) -> None:
        await self.channel.close()


class Entrant(Client):
    """The legitimate entrant: connected before the attack, answering every ping, collecting
    its invitations, until the test ends."""

    def __init__(self, certs: TestCerts, address: str):
        super().__init__(certs, address)
        self.invitations: asyncio.Queue[lpb.Invitation] = asyncio.Queue()
        self.pings_answered = 0
        self.leaving = False
        self._task: asyncio.Task[None] | None = None

    async def join(self, key: str) -> Entrant:
        await self.send_hello(key)
        assert (await self.read()).welcome.entrant == "alice"
        self._task = asyncio.ensure_future(self._answer())
        return self

    async def _answer(self) -> None:
        while True:
            message = await self.call.read()
            if message is grpc.aio.EOF:
                assert self.leaving, "the lobby ended the legitimate entrant's stream"
                return
            kind = message.WhichOneof("msg")
            if kind == "ping":
                await self.call.write(lpb.EntrantMessage(pong=lpb.Pong(nonce=message.ping.nonce)))
                self.pings_answered += 1
            elif kind == "invitation":
                self.invitations.put_nowait(message.invitation)

    async def still_served(self, lobby: Lobby, match_id: str) -> None:
        """It answered the lobby's pings, a reservation and an invitation reach it; its stream never broke."""
        assert self._task is not None
        await wait_until(lambda: self.pings_answered >= 1 or self._task.done(), 5)
        assert not self._task.done(), self._task.exception()
        (reservation,) = await lobby.reserve(["alice"], timeout=3)
        assert reservation is not None, "the legitimate entrant lost its place in the lobby"
        reservation.invite(Invitation(match_id, 1, "1.secret", "{}", TimeControl(), ("a", "b", "c", "d")))
        sent = await asyncio.wait_for(self.invitations.get(), 3)
        assert (sent.match_id, sent.token) == (match_id, "1.secret")
        reservation.release()

    async def leave(self) -> None:
        self.leaving = True
        await self.close()
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                await self._task


async def wait_until(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def counted(check_key: Callable[[str], str], checked: list[str]) -> Callable[[str], str]:
    """``check_key``, noting in ``checked`` each key it was asked about (what reached the key store)."""

    def check(key: str) -> str:
        checked.append(key)
        return check_key(key)

    return check


def play_call(channel: grpc.aio.Channel) -> grpc.aio.StreamStreamCall:
    """A new ``Arbiter.Play`` call on ``channel``, as a bot opens one."""
    return channel.stream_stream(
        f"/{SERVICE}/Play",
        request_serializer=pb.BotMessage.SerializeToString,
        response_deserializer=pb.ArbiterMessage.FromString,
    )()


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def client_hello(certs: TestCerts) -> bytes:
    """The first bytes a TLS client sends (its ClientHello), made by Python's own ssl module."""
    context = ssl.create_default_context(cadata=certs.ca_pem.decode())
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


async def closed_by_server(reader: asyncio.StreamReader, seconds: float) -> float:
    """How long until the server closed this raw socket (it must within ``seconds``)."""
    started = time.monotonic()
    try:
        while await asyncio.wait_for(reader.read(65536), seconds):
            pass  # the server's side of a handshake, if any
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def refused_while_writing(code: grpc.StatusCode, text: str, expected: grpc.StatusCode, words: str) -> bool:
    """Whether a call was refused as ``expected``. A client whose own write fails because the
    server already ended the call is told INTERNAL by its gRPC library instead of the server's
    status (grpc.aio's client): that too is a refusal, seen from the client's side."""
    return (code == expected and words in text) or (code, text) == (
        grpc.StatusCode.INTERNAL,
        "Internal error from Core",
    )


def test_floods_before_and_after_the_hello_cost_only_the_flooders_streams(certs, keys):
    store, issued = keys

    async def scenario():
        async with tls_lobby(certs, store.holder_of, flood_messages=20, flood_seconds=10) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])
            host, port = host_port(lobby.address)
            # junk bytes instead of TLS: the connection is closed
            for junk in (os.urandom(64 << 10), b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\0" * 1000):
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(junk)
                assert await closed_by_server(reader, 5) < 5
                writer.close()
            # many messages before (instead of) a hello: refused at the first one
            for _ in range(5):
                flooder = Client(certs, lobby.address)
                for nonce in range(200):
                    try:
                        await flooder.call.write(lpb.EntrantMessage(ping=lpb.Ping(nonce=nonce)))
                    except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                        break
                assert refused_while_writing(
                    *await flooder.refusal(), grpc.StatusCode.FAILED_PRECONDITION, "LobbyHello"
                )
                await flooder.close()
            # after a good hello: pings in a loop, cut after flood_messages
            for _ in range(2):
                bob = Client(certs, lobby.address)
                await bob.send_hello(issued["bob"])
                assert (await bob.read()).welcome.entrant == "bob"
                for nonce in range(200):
                    try:
                        await bob.call.write(lpb.EntrantMessage(ping=lpb.Ping(nonce=nonce)))
                    except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
                        break
                assert refused_while_writing(*await bob.refusal(), grpc.StatusCode.CANCELLED, "flooded")
                await bob.close()
            await wait_until(lambda: "bob" not in lobby.connected(), 5)
            await alice.still_served(lobby, "t/floods")
            assert lobby.connected() == {"alice": 1}
            await alice.leave()

    asyncio.run(scenario())


def test_slowloris_sockets_are_closed_and_others_still_connect_meanwhile(certs, keys):
    store, issued = keys

    async def scenario():
        async with tls_lobby(certs, store.holder_of) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])
            host, port = host_port(lobby.address)
            hello = client_hello(certs)
            sockets = []
            for n in range(30):
                reader, writer = await asyncio.open_connection(host, port)
                if n % 3 == 1:
                    writer.write(hello[: len(hello) // 2])  # half a ClientHello, then nothing
                elif n % 3 == 2:
                    writer.write(hello)  # a whole ClientHello, then never the rest of the handshake
                sockets.append((reader, writer))
            # meanwhile a new legitimate client connects and is welcomed
            bob = Client(certs, lobby.address)
            await bob.send_hello(issued["bob"])
            assert (await bob.read()).welcome.entrant == "bob"
            # each stalled socket is closed by the server within the handshake timeout (and some slack)
            waited = await asyncio.gather(*(closed_by_server(reader, HELLO_SECONDS + 4) for reader, _ in sockets))
            assert max(waited) < HELLO_SECONDS + 4
            for _, writer in sockets:
                writer.close()
            await alice.still_served(lobby, "t/slowloris")
            assert lobby.connected() == {"alice": 1, "bob": 1}
            await bob.close()
            await alice.leave()

    asyncio.run(scenario())


def test_many_connections_from_one_address_are_bounded(certs, keys):
    store, issued = keys

    async def scenario():
        async with tls_lobby(certs, store.holder_of, max_pending=8, max_streams=2) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])
            # 50 streams that never say hello: max_pending wait (and are cut), the others are refused at once
            silent = [Client(certs, lobby.address) for _ in range(50)]
            refusals = await asyncio.gather(*(c.refusal() for c in silent))
            codes = [code for code, _ in refusals]
            assert codes.count(grpc.StatusCode.CANCELLED) <= 8
            waiting = [text for code, text in refusals if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert len(waiting) >= 42 and all("waiting to say hello" in t for t in waiting)
            assert not lobby._pending  # nothing left counted against the address
            for c in silent:
                await c.close()
            # bob opens max_streams streams, then 20 more: each of those is refused
            bobs = []
            for n in range(2 + 20):
                bob = Client(certs, lobby.address)
                await bob.send_hello(issued["bob"])
                if n < 2:
                    assert (await bob.read()).welcome.entrant == "bob"
                else:
                    code, text = await bob.refusal()
                    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "already has 2 streams" in text
                bobs.append(bob)
            assert lobby.connected() == {"alice": 1, "bob": 2}
            await alice.still_served(lobby, "t/many")
            for bob in bobs:
                await bob.close()
            await wait_until(lambda: "bob" not in lobby.connected(), 5)
            await alice.leave()

    asyncio.run(scenario())


def test_huge_messages_are_refused_unread(certs, keys):
    store, issued = keys
    checked: list[str] = []
    check_key = counted(store.holder_of, checked)

    async def scenario():
        server = await ArbiterServer("127.0.0.1:0").start()
        desk = server.open_desk("t/huge")
        seat = desk.expect(2)
        async with tls_lobby(certs, check_key, play=lambda: server) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])
            checked.clear()
            # a 2 MiB key: gRPC refuses the message from its length prefix, the lobby never sees it
            for _ in range(3):
                huge = Client(certs, lobby.address)
                with suppress(grpc.aio.AioRpcError):
                    await huge.send_hello("k" * (2 << 20))
                code, text = await huge.refusal()
                assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, text)
                await huge.close()
            assert checked == []
            # just under the limit: read, refused as malformed without being echoed back
            big = Client(certs, lobby.address)
            await big.send_hello("k" * (1000 << 10))
            code, text = await big.refusal()
            assert code == grpc.StatusCode.UNAUTHENTICATED and "malformed" in text and len(text) < 300
            await big.close()
            # a huge message on the lobby's Play route, while a match waits for its seat 2
            for _ in range(3):
                channel = tls_channel(certs, lobby.address)
                call = play_call(channel)
                hello = pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=seat.token, bot_name="x" * (2 << 20))
                with suppress(grpc.aio.AioRpcError):
                    await call.write(pb.BotMessage(hello=hello))
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await asyncio.wait_for(call.read(), 5)
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                await channel.close()
            assert not seat.used and not seat.connected.is_set()  # the seat is still free for its bot
            await alice.still_served(lobby, "t/huge")
            await alice.leave()
        desk.close()
        await server.stop()

    asyncio.run(scenario())


def test_a_key_guessed_in_a_loop_is_slowed_down_and_the_entrant_is_unaffected(certs, keys):
    store, issued = keys
    checked: list[str] = []
    check_key = counted(store.holder_of, checked)

    async def scenario():
        limiter = FailureLimiter(max_failures=5, window=60)
        async with tls_lobby(certs, check_key, limiter=limiter, max_pending=4) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])
            checked.clear()

            async def guess(n: int) -> tuple[grpc.StatusCode, str]:
                return await refusal_of_hello(certs, lobby.address, f"bk1.{n:016x}." + "A" * 43)

            results = [await guess(n) for n in range(5)]
            assert all(code == grpc.StatusCode.UNAUTHENTICATED and "unknown" in text for code, text in results)
            results = [await guess(n) for n in range(5, 25)]
            assert all(code == grpc.StatusCode.RESOURCE_EXHAUSTED and "try again in" in text for code, text in results)
            # many at once: none of them reaches the key store now
            results = await asyncio.gather(*(guess(n) for n in range(25, 45)))
            assert all(code == grpc.StatusCode.RESOURCE_EXHAUSTED for code, _ in results)
            assert len(checked) == 5
            # even the right key waits, from this address: the entrant already connected does not
            code, text = await refusal_of_hello(certs, lobby.address, issued["bob"])
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "try again in" in text
            await alice.still_served(lobby, "t/guessed")
            assert lobby.connected() == {"alice": 1}
            await alice.leave()

    asyncio.run(scenario())


async def refusal_of_hello(certs: TestCerts, address: str, key: str) -> tuple[grpc.StatusCode, str]:
    """The refusal of a new stream's hello with ``key`` (which may come before the hello is written)."""
    client = Client(certs, address)
    try:
        await client.send_hello(key)
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details()
    try:
        return await client.refusal()
    finally:
        await client.close()


def test_play_calls_with_wrong_tokens_take_no_seat(certs, keys):
    store, issued = keys

    async def scenario():
        server = await ArbiterServer("127.0.0.1:0").start()
        try:
            await refused(server)
        finally:  # a failed check must not leave a server for the garbage collector (it crashes the worker)
            await server.stop()

    async def refused(server: ArbiterServer) -> None:
        match: list[ArbiterServer] = []
        async with tls_lobby(certs, store.holder_of, play=lambda: match[0] if match else None) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])

            async def play(token: str | None) -> tuple[grpc.StatusCode, str] | None:
                """A Play call with ``token`` (None: no hello at all): its refusal, or None when it
                was taken."""
                channel = tls_channel(certs, lobby.address)
                call = play_call(channel)
                try:
                    if token is not None:
                        hello = pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=token)
                        await call.write(pb.BotMessage(hello=hello))  # may fail: the refusal came first
                    await asyncio.wait_for(call.read(), 1.0)
                except TimeoutError:
                    pass  # held open: a seat's session
                except grpc.aio.AioRpcError:
                    # The call's own status (a write that lost the race with the refusal may
                    # fail with a transport error of its own)
                    return await call.code(), await call.details()
                finally:
                    await channel.close()
                return None

            # no match runs: every Play call is refused at once, before its hello is read (so none
            # is written: a write that loses that race fails the call on this side, which grpc
            # reports as INTERNAL, not the lobby's status; seen in a run with two CPU hogs)
            for _ in range(20):
                assert (await play(None))[0] == grpc.StatusCode.UNAVAILABLE  # type: ignore[index]
            # a match waits for its seat 2 (played from elsewhere)
            desk = server.open_desk("t/tokens")
            seat = desk.expect(2)
            match.append(server)
            guesses = [f"2.guess{n}" for n in range(20)] + [seat.token + "x", "2." + "s" * 10_000, ""]
            for token in guesses:
                code, text = await play(token)  # type: ignore[misc]
                assert code == grpc.StatusCode.PERMISSION_DENIED and "unknown or already used token" in text
            assert not seat.used
            # what the match notes of them never holds what they sent
            assert desk.refused and not any(token and token in r for token in guesses for r in desk.refused)
            assert await play(seat.token) is None  # the seat's own token still works
            await wait_until(seat.connected.is_set, 5)
            await alice.still_served(lobby, "t/tokens")
            await alice.leave()
            desk.close()

    asyncio.run(scenario())


def test_silent_play_calls_while_a_match_waits_are_bounded_per_address(certs, keys):
    """Play calls that never say hello count against the address's max_pending, as silent
    Connect streams do: else one address holds the lobby's every call slot for as long as a
    match's hello timeout, again and again."""
    store, issued = keys

    async def scenario():
        server = await ArbiterServer("127.0.0.1:0", hello_seconds=3.0).start()
        desk = server.open_desk("t/silent")
        seat = desk.expect(2)
        async with tls_lobby(certs, store.holder_of, play=lambda: server, max_pending=8) as lobby:
            alice = await Entrant(certs, lobby.address).join(issued["alice"])
            channels = [tls_channel(certs, lobby.address) for _ in range(40)]
            calls = [play_call(channel) for channel in channels]

            async def status(call) -> grpc.StatusCode:
                try:
                    await asyncio.wait_for(call.read(), 1.5)
                except TimeoutError:
                    return grpc.StatusCode.OK  # still held open, waiting for a hello
                except grpc.aio.AioRpcError as e:
                    return e.code()
                raise AssertionError("a silent Play call was sent something")

            codes = await asyncio.gather(*(status(call) for call in calls))
            assert codes.count(grpc.StatusCode.OK) <= 8
            assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) >= 32
            # the seat's own bot, from the same address, still gets its seat once the silent calls are cut
            for channel in channels:
                await channel.close()
            await wait_until(lambda: not lobby._pending, 5)
            channel = tls_channel(certs, lobby.address)
            call = play_call(channel)
            await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=seat.token)))
            await wait_until(seat.connected.is_set, 5)
            assert not lobby._pending
            await channel.close()
            await alice.still_served(lobby, "t/silent")
            await alice.leave()
        desk.close()
        await server.stop()

    asyncio.run(scenario())


def test_a_match_played_through_the_lobby_under_attack_records_none_of_it(certs, keys, tmp_path):
    """A match with a remote seat (a real bridge and bot process) while hostile clients hit the
    lobby's address: it ends complete without a fault, its log verifies and holds nothing of theirs."""
    store, issued = keys
    key_file = tmp_path / "bob.key"
    key_file.write_text(issued["bob"] + "\n")
    heuristic = f"{sys.executable} {ROOT / 'sample_bots' / 'heuristic_bot.py'}"
    mark = "QZXJV"  # found in no path, name or log field

    async def attack(address: str, host_port_: tuple[str, int], stop: asyncio.Event) -> int:
        """Wrong keys, wrong tokens, huge and junk messages, silent sockets, until ``stop``; how many."""
        attempts = 0
        while not stop.is_set():
            attempts += 1
            await refusal_of_hello(certs, address, f"{mark}-{attempts}")
            channel = tls_channel(certs, address)
            for token in (f"3.{mark}{attempts}", f"0.{mark}", "x" * (2 << 20)):
                call = play_call(channel)
                hello = pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=token, bot_name=mark)
                with suppress(grpc.aio.AioRpcError, TimeoutError):
                    await call.write(pb.BotMessage(hello=hello))
                    await asyncio.wait_for(call.read(), 0.5)
            await channel.close()
            reader, writer = await asyncio.open_connection(*host_port_)
            writer.write(mark.encode() * 1000)
            with suppress(ConnectionError):
                await asyncio.wait_for(reader.read(), 2)
            writer.close()
        return attempts

    async def scenario():
        host = MatchHost()
        limiter = FailureLimiter(max_failures=1000, window=60)  # the attack's wrong keys stay refusals
        async with tls_lobby(certs, store.holder_of, play=lambda: host.server, limiter=limiter) as lobby:
            bridge = subprocess.Popen(
                [sys.executable, "-m", "arbiter", "connect", "--lobby", lobby.address, "--key-file", str(key_file),
                 "--ca", str(certs.ca_cert), "--out", str(tmp_path / "bridge"), "--", *heuristic.split()],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            stop = asyncio.Event()
            attacker = asyncio.ensure_future(attack(lobby.address, host_port(lobby.address), stop))
            try:
                await wait_until(lambda: "bob" in lobby.connected(), 20)
                (reservation,) = await lobby.reserve(["bob"], timeout=5)
                assert reservation is not None
                log_path = tmp_path / "m.jsonl"
                try:
                    played = await host.play(
                        [BotSpec(f"local{s}", heuristic) for s in range(3)] + [reservation],
                        MatchSetup(make_ruleset(), seed=3),
                        log_path,
                    )
                finally:
                    reservation.release()
            finally:
                stop.set()
                attempts = await attacker
                bridge.terminate()
                _, bridge_errors = bridge.communicate(timeout=20)
                await host.close()
        assert attempts >= 2, "the attack did not overlap the match"
        assert played.result.status == "complete" and not played.result.faults, (played.result.faults, bridge_errors)
        text = log_path.read_text()
        assert mark not in text
        assert verify(read_log_lines(log_path)).valid

    asyncio.run(scenario())
