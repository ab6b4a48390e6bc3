"""The bridge of ``arbiter connect`` against a test lobby: real gRPC over real sockets (TLS with
the certificates of tests/lobby/certs.py), real bot processes.

``TestLobby`` is a test double of the lobby (arbiter/lobby/server.py has the real one; the tests
of the whole path, with real tournaments, are in the lobby's own test files): it serves
``Lobby.Connect`` (welcomes one key, sends the invitations a test hands it, answers pings,
records what the bridge sends) and ``Arbiter.Play`` with a scripted exchange (MatchStart, one
DecisionRequest, MatchEnd), checking the bot's Reply and its half-close. One test sends the bot
to a real ``ArbiterServer`` that plays a whole match with a real referee instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from barbu.matchlog import MatchResult
from barbu.rules import make_ruleset
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import lobby_pb2 as lpb

from arbiter.errors import KeyRefused, LobbyRefused
from arbiter.lobby.bridge import BACKOFF_MAX, CONNECT, Bridge, BridgeSettings, _Link, _Lost, backoff
from arbiter.lobby.relay import Relay
from arbiter.lobby.server import Lobby
from arbiter.model import Transport
from arbiter.referee.logfile import AtomicLogFile
from arbiter.referee.loop import MatchSetup, Referee
from arbiter.referee.players import RandomPlayer
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.remote import RemotePlayer
from arbiter.transport.server import ArbiterServer

from .certs import TestCerts

ROOT = Path(__file__).resolve().parents[2]
RAW_BOT = [sys.executable, str(ROOT / "tests" / "bots" / "raw_bot.py")]
RANDOM_BOT = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
CRASH_BOT = [sys.executable, str(ROOT / "tests" / "bots" / "crash_bot.py")]
TCP_BOT = [sys.executable, str(ROOT / "tests" / "bots" / "tcp_only_bot.py")]
KEY = "k" + secrets.token_hex(16)
LEGAL = [pb.Action(play=pb.Play(card="2C")), pb.Action(play=pb.Play(card="3C"))]


# ---- the test lobby -------------------------------------------------------------------------------
@dataclass
class TestLobby:
    __test__ = False  # not a test class

    certs: TestCerts | None = None  # None: plaintext
    port: int = 0
    keepalive: float = 30.0
    silent: bool = False  # answers no ping
    hold: bool = False  # a Play stream gets no MatchStart: the bot waits until it is killed
    attempts: int = 0  # Connect calls
    hellos: list[lpb.LobbyHello] = field(default_factory=list)
    received: list[lpb.EntrantMessage] = field(default_factory=list)
    played: list[tuple[str, pb.BotMessage, bool]] = field(default_factory=list)  # match, reply, half-closed
    issued: dict[str, lpb.Invitation] = field(default_factory=dict)
    streams: int = 0  # Connect streams open now

    async def start(self) -> TestLobby:
        self.outbox: asyncio.Queue[lpb.LobbyMessage | None] = asyncio.Queue()
        self.server = grpc.aio.server()
        handlers = {
            "barbu.v1.Lobby": {
                "Connect": grpc.stream_stream_rpc_method_handler(
                    self._connect, lpb.EntrantMessage.FromString, lpb.LobbyMessage.SerializeToString
                )
            },
            "barbu.v1.Arbiter": {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self._play, pb.BotMessage.FromString, pb.ArbiterMessage.SerializeToString
                )
            },
        }
        self.server.add_generic_rpc_handlers(
            tuple(grpc.method_handlers_generic_handler(s, h) for s, h in handlers.items())
        )
        if self.certs is None:
            self.port = self.server.add_insecure_port(f"127.0.0.1:{self.port}")
        else:
            pair = (self.certs.server_key_pem, self.certs.server_cert_pem)
            self.port = self.server.add_secure_port(f"127.0.0.1:{self.port}", grpc.ssl_server_credentials([pair]))
        await self.server.start()
        return self

    async def stop(self) -> None:
        await self.server.stop(0)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def invite(self, match_id: str, seat: int = 2, address: str = "", token: str | None = None) -> str:
        token = token or secrets.token_urlsafe(16)
        invitation = lpb.Invitation(
            match_id=match_id, seat=seat, token=token, address=address, rules_json='{"preset":"standard"}',
            decision_seconds=1.0, reserve_seconds=10.0, connect_seconds=10.0, entrants=["a", "b", "alice", "d"],
        )  # fmt: skip
        self.issued[token] = invitation
        self.outbox.put_nowait(lpb.LobbyMessage(invitation=invitation))
        return token

    def seat_ended(self) -> list[lpb.SeatEnded]:
        return [m.seat_ended for m in self.received if m.WhichOneof("msg") == "seat_ended"]

    async def _connect(self, request_iterator, context) -> None:
        self.attempts += 1
        first = await context.read()
        if first.hello.key != KEY:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown key: no entrant has it (or it was revoked)")
        self.hellos.append(first.hello)
        welcome = lpb.Welcome(
            entrant="alice", capacity=first.hello.capacity, keepalive_seconds=self.keepalive, lobby="test"
        )
        await context.write(lpb.LobbyMessage(welcome=welcome))
        self.streams += 1
        reader = asyncio.create_task(self._read(context))
        try:
            while (message := await self.outbox.get()) is not None:  # None: end the stream, status OK
                await context.write(message)
        finally:
            self.streams -= 1
            reader.cancel()

    async def _read(self, context) -> None:
        while (message := await context.read()) is not grpc.aio.EOF:
            self.received.append(message)
            if message.WhichOneof("msg") == "ping" and not self.silent:
                self.outbox.put_nowait(lpb.LobbyMessage(pong=lpb.Pong(nonce=message.ping.nonce)))

    async def _play(self, request_iterator, context) -> None:
        """The scripted match: one decision between two legal cards."""
        first = await context.read()
        invitation = self.issued.pop(first.hello.token, None)
        if invitation is None:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown or already used token")
        if self.hold:
            await asyncio.Event().wait()
        start = pb.MatchStart(
            match_id=invitation.match_id, seat=invitation.seat, rules_json=invitation.rules_json, deals=1
        )
        await context.write(pb.ArbiterMessage(match_start=start))
        await context.write(pb.ArbiterMessage(request=pb.DecisionRequest(request_id=1, legal=LEGAL)))
        reply = await context.read()
        end = pb.MatchEnd(status="complete", totals=[4, 3, 2, 1], places=[1, 2, 3, 4])
        await context.write(pb.ArbiterMessage(match_end=end))
        after = await context.read()
        self.played.append((invitation.match_id, reply, after is grpc.aio.EOF))


async def until(predicate, timeout: float = 20.0, what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.05)


def settings(lobby: TestLobby, tmp_path: Path, command: list[str], **kw) -> BridgeSettings:
    tls = {"ca": lobby.certs.ca_pem, "ca_file": str(lobby.certs.ca_cert)} if lobby.certs else {"plaintext": True}
    base = {"lobby": lobby.address, "key": KEY, "key_file": "key.txt", "command": shlex.join(command),
            "out": tmp_path / "out", **tls}  # fmt: skip
    return BridgeSettings(**{**base, **kw})


class Running:
    """A bridge running in the test's event loop, stopped (cancelled, as by a stop signal) at the end."""

    def __init__(self, bridge: Bridge):
        self.bridge = bridge
        self.task = asyncio.create_task(bridge.run())

    async def __aenter__(self) -> Bridge:
        return self.bridge

    async def __aexit__(self, *exc) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, LobbyRefused):
            await self.task


# ---- the tests ---------------------------------------------------------------------------------------
def test_an_invitation_over_tls_starts_the_bot_whose_stream_is_carried_to_the_table(certs, tmp_path, monkeypatch):
    monkeypatch.setenv("BARBU_MODE", "legal")  # raw_bot: answer with the first legal action

    async def scenario():
        lobby = await TestLobby(certs).start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT, name="alice", version="1.2", capacity=2))):
                await until(lambda: lobby.streams == 1, what="the bridge's welcome")
                hello = lobby.hellos[0]
                assert (hello.protocol_version, hello.key, hello.name, hello.version, hello.capacity) == (
                    1, KEY, "alice", "1.2", 2,
                )  # fmt: skip
                lobby.invite("league-0001", seat=2)
                await until(lambda: lobby.played and lobby.seat_ended(), what="the match and the bot's end")
        finally:
            await lobby.stop()
        return lobby

    lobby = asyncio.run(scenario())
    match_id, reply, half_closed = lobby.played[0]
    assert match_id == "league-0001" and reply.reply.request_id == 1 and reply.reply.action == LEGAL[0]
    assert half_closed  # the bot's half-close reached the table as a half-close
    [ended] = lobby.seat_ended()
    assert (ended.match_id, ended.seat, ended.exit_code) == ("league-0001", 2, 0)
    assert "exited with code 0" in ended.detail
    assert (tmp_path / "out" / "league-0001.seat2.stderr").is_file()


def play_through_the_bridge(tmp_path: Path, command: list[str], seat: int, **kw) -> tuple[MatchResult, TestLobby]:
    """A whole match on a real ArbiterServer (the invitation's address) with a real referee: the
    bot behind the bridge in ``seat``, random players in process in the others. The seat's
    process is known to the arbiter only by what the bridge reported (:class:`ReportedProcess`)."""

    async def scenario():
        lobby = await TestLobby().start()
        table = await ArbiterServer("127.0.0.1:0").start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, command, **kw))):
                session = table.expect(seat)
                lobby.invite("m-real", seat=seat, address=table.address, token=session.token)
                assert await session.connected.wait_for(20)
                control = TimeControl(per_decision=2.0, reserve=10.0)
                players: list = [RandomPlayer(seed=s) for s in range(4)]
                players[seat] = RemotePlayer(session, "alice", control, process=ReportedProcess(lobby))
                sink = AtomicLogFile(tmp_path / "m.jsonl")
                setup = MatchSetup(make_ruleset("standard", {}), seed=5)
                result = await Referee(setup, players, sink, time_control=control).play()
                sink.commit()
                await until(lambda: lobby.seat_ended(), what="the bot's end")
        finally:
            await table.stop()
            await lobby.stop()
        return result, lobby

    return asyncio.run(scenario())


def test_a_whole_match_through_the_relay_against_a_real_arbiter_server(tmp_path):
    """28 deals against the SDK's random bot behind the bridge: every message passes the relay."""
    result, lobby = play_through_the_bridge(tmp_path, RANDOM_BOT, seat=1)
    assert result.status == "complete" and result.faults == (), result.faults
    assert result.deals == 28
    assert lobby.seat_ended()[0].exit_code == 0


def test_with_transport_tcp_the_bot_behind_the_bridge_dials_a_loopback_port(tmp_path):
    """``arbiter connect --transport tcp``: a bot that cannot dial a Unix socket plays the match."""
    result, lobby = play_through_the_bridge(tmp_path, TCP_BOT, seat=2, transport=Transport.TCP)
    assert result.status == "complete" and result.faults == (), result.faults
    assert lobby.seat_ended()[0].exit_code == 0
    output = (tmp_path / "out" / "m-real.seat2.stderr").read_text()
    assert "tcp_only_bot: BARBU_ARBITER=127.0.0.1:" in output, output


class ReportedProcess:
    """A remote bot's process as the arbiter knows it: from the SeatEnded the bridge sent (the
    real lobby does the same for its RemotePlayer's probe)."""

    def __init__(self, lobby: TestLobby):
        self.lobby = lobby

    def _ended(self) -> lpb.SeatEnded | None:
        return next(iter(self.lobby.seat_ended()), None)

    def running(self) -> bool:
        return self._ended() is None

    def exit_code(self) -> int | None:
        ended = self._ended()
        return None if ended is None else ended.exit_code

    def exit_description(self) -> str | None:
        ended = self._ended()
        return None if ended is None else ended.detail

    def with_last_words(self, detail: str) -> str:
        return detail


def test_a_bot_that_dies_mid_match_is_reported_before_its_stream_is_cut(tmp_path):
    """The bridge tells the lobby how the process ended before it cuts the table's stream, so the
    arbiter records a crash (with the bot's last words), as for a local bot."""
    result, lobby = play_through_the_bridge(tmp_path, CRASH_BOT, seat=0)
    assert result.status == "complete"  # the fallback played the lost seat to the end
    [fault] = result.faults
    assert (fault.seat, fault.kind) == (0, "crash"), fault
    [ended] = lobby.seat_ended()
    assert ended.exit_code == 3 and "exited with code 3" in ended.detail and "dying on purpose" in ended.detail
    assert "dying on purpose" in fault.detail


def test_the_bridge_reconnects_to_a_lobby_restarted_on_the_same_port(tmp_path, caplog):
    caplog.set_level(logging.INFO, "arbiter.lobby.bridge")

    async def scenario():
        lobby = await TestLobby().start()
        async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT))) as bridge:
            await until(lambda: bridge.welcomes == 1)
            await lobby.stop()
            await asyncio.sleep(1.5)  # unreachable for a while: it keeps trying
            again = await TestLobby(port=lobby.port).start()
            try:
                await until(lambda: bridge.welcomes == 2, timeout=30, what="the reconnection")
            finally:
                await again.stop()

    asyncio.run(scenario())
    text = caplog.text
    assert "lost the lobby" in text and "retrying in" in text
    assert text.count("connected to test (127.0.0.1:") == 2


def test_a_lobby_that_stops_answering_pings_is_left_and_reconnected(tmp_path):
    async def scenario():
        lobby = await TestLobby(keepalive=0.5, silent=True).start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT))) as bridge:
                await until(lambda: bridge.welcomes >= 2, timeout=15, what="a reconnection after a silent lobby")
        finally:
            await lobby.stop()
        return lobby

    lobby = asyncio.run(scenario())
    assert any(m.WhichOneof("msg") == "ping" for m in lobby.received)


def test_a_write_as_the_lobby_ends_the_stream_is_a_lost_stream_not_a_crash(tmp_path):
    """The lobby ends the stream (status OK: an arena draining) just as the bridge writes (a
    seat's report, a pong): grpc fails the write with "RPC already finished". The stream is lost
    and retried, in the read side's words; the write's error never ends the bridge (it did once,
    exit 1, in a run with two CPU hogs), and whoever waits for that message stops waiting."""

    async def scenario():
        lobby = await TestLobby().start()
        channel = grpc.aio.insecure_channel(lobby.address)
        try:
            call = channel.stream_stream(
                CONNECT,
                request_serializer=lpb.EntrantMessage.SerializeToString,
                response_deserializer=lpb.LobbyMessage.FromString,
            )()
            await call.write(lpb.EntrantMessage(hello=lpb.LobbyHello(key=KEY, capacity=1)))
            assert (await call.read()).WhichOneof("msg") == "welcome"
            lobby.outbox.put_nowait(None)
            assert await call.code() == grpc.StatusCode.OK  # the call is over
            link = _Link(call, keepalive=30.0)
            pong = lpb.EntrantMessage(pong=lpb.Pong(nonce=1))
            waiting = asyncio.create_task(link.send(pong, wait=10.0))
            with pytest.raises(_Lost, match="ended the stream$"):
                await asyncio.wait_for(link.serve(lambda message: None, settings(lobby, tmp_path, RAW_BOT)), 10)
            await asyncio.wait_for(waiting, 1.0)  # told the write gave up: no 10 s wait
        finally:
            await channel.close()
            await lobby.stop()

    asyncio.run(scenario())


def test_the_bridge_answers_the_lobby_s_ping_with_its_nonce(tmp_path):
    async def scenario():
        lobby = await TestLobby().start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT))):
                await until(lambda: lobby.streams == 1)
                lobby.outbox.put_nowait(lpb.LobbyMessage(ping=lpb.Ping(nonce=424242)))
                await until(lambda: any(m.pong.nonce == 424242 for m in lobby.received), what="the pong")
        finally:
            await lobby.stop()

    asyncio.run(scenario())


def test_no_more_bots_than_the_capacity(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("BARBU_MODE", "legal")
    monkeypatch.setattr("arbiter.lobby.bridge.CAPACITY_GRACE", 0.0)  # no wait for a match about to end

    async def scenario():
        lobby = await TestLobby().start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT, capacity=1))) as bridge:
                await until(lambda: lobby.streams == 1)
                lobby.invite("one")
                lobby.invite("two")
                await until(lambda: lobby.played, what="the first match")
                assert "match two seat 2: not started: the capacity of 1 match(es) at once is reached" in caplog.text
                await until(lambda: bridge.running == 0, what="the first bot's end")
                lobby.invite("three")  # room again
                await until(lambda: len(lobby.played) == 2, what="the third match")
        finally:
            await lobby.stop()
        return lobby

    lobby = asyncio.run(scenario())
    assert [p[0] for p in lobby.played] == ["one", "three"]
    assert not (tmp_path / "out" / "two.seat2.stderr").exists()


def test_the_relay_refuses_a_token_the_lobby_did_not_give(tmp_path):
    async def scenario():
        lobby = await TestLobby().start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT))) as bridge:
                await until(lambda: lobby.streams == 1)
                relay = bridge._relay
                assert relay is not None and os.stat(os.path.dirname(relay.address[5:])).st_mode & 0o777 == 0o700
                async with grpc.aio.insecure_channel(relay.address) as channel:
                    call = channel.stream_stream("/barbu.v1.Arbiter/Play", pb.BotMessage.SerializeToString, pb.ArbiterMessage.FromString)()  # fmt: skip
                    await call.write(pb.BotMessage(hello=pb.Hello(protocol_version=1, token="guessed")))
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call.read()
                    return refused.value.code()
        finally:
            await lobby.stop()

    assert asyncio.run(scenario()) is grpc.StatusCode.PERMISSION_DENIED


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("wrong key", "refused the key in key.txt: unknown key: no entrant has it (or it was revoked)"),
        ("wrong CA", "the lobby's certificate is not signed by the CA in "),
        ("plaintext to TLS", "closed the plaintext connection: it speaks TLS (drop --plaintext)"),
        ("TLS to plaintext", "the TLS handshake with the lobby at 127.0.0.1:"),
    ],
)
def test_the_bridge_stops_for_good_with_one_line_saying_why(certs, tmp_path, case, expected):
    async def scenario():
        lobby = await TestLobby(None if case == "TLS to plaintext" else certs).start()
        try:
            kw: dict = {}
            if case == "wrong key":
                kw = {"key": "x" + KEY}
            elif case == "wrong CA":
                kw = {"ca": certs.other_ca_pem, "ca_file": str(certs.other_ca_cert)}
            elif case == "plaintext to TLS":
                kw = {"plaintext": True, "ca": None}
            elif case == "TLS to plaintext":
                kw = {"plaintext": False, "ca": certs.ca_pem, "ca_file": str(certs.ca_cert)}
            with pytest.raises(LobbyRefused) as stopped:
                await asyncio.wait_for(Bridge(settings(lobby, tmp_path, RAW_BOT, **kw)).run(), 20)
            return str(stopped.value)
        finally:
            await lobby.stop()

    message = asyncio.run(scenario())
    assert expected in message and "\n" not in message
    assert KEY not in message


def test_a_table_restarted_on_the_same_port_gets_the_next_bot_at_once(tmp_path, monkeypatch):
    """A killed `arbiter run` resumed: a bot invited just before the kill reached for the dead
    table, which left the relay's channel to that address backing off from the failure; the table
    comes back on the same port. The next invited bot must reach it, not fail at once with the old
    channel's last error (as two remote seats did in a league's first match after a resume)."""
    monkeypatch.setenv("BARBU_MODE", "legal")

    def moved(token: str, lobby: TestLobby, table: TestLobby) -> None:
        table.issued[token] = lobby.issued.pop(token)  # the table, not the lobby, checks the token

    async def scenario():
        lobby = await TestLobby().start()
        table = await TestLobby().start()
        try:
            async with Running(Bridge(settings(lobby, tmp_path, RAW_BOT))) as bridge:
                await until(lambda: bridge.welcomes == 1, what="the welcome")
                await table.stop()
                lobby.invite("during", seat=1, address=table.address)  # its bot finds no table
                await until(lambda: len(lobby.seat_ended()) == 1, what="the first bot's end")
                again = await TestLobby(port=table.port).start()
                try:
                    moved(lobby.invite("after", seat=1, address=again.address), lobby, again)
                    await until(lambda: len(lobby.seat_ended()) == 2, what="the second bot's end")
                finally:
                    await again.stop()
        finally:
            await lobby.stop()
        return lobby, again

    lobby, again = asyncio.run(scenario())
    first, second = lobby.seat_ended()
    assert (first.match_id, second.match_id) == ("during", "after")
    assert [match for match, *_ in again.played] == ["after"], second.detail  # the second bot played


def test_a_finished_tournament_ends_its_bridges_a_lobby_that_only_stopped_is_retried(tmp_path, caplog):
    """Against the real lobby: one stopped without a word (a run interrupted, to be resumed) is
    retried until it is back; one whose tournament is over says so, and the bridge's run returns
    the lobby's words instead of retrying."""
    caplog.set_level(logging.INFO, "arbiter.lobby.bridge")

    def lobby_on(port: int) -> Lobby:
        def check_key(key: str) -> str:
            if key != KEY:
                raise KeyRefused("unknown key")
            return "alice"

        return Lobby(f"127.0.0.1:{port}", credentials=None, check_key=check_key, entrants=["alice"],
                     play=lambda: None, name="test")  # fmt: skip

    async def scenario() -> str:
        lobby = await lobby_on(0).start()
        port = int(lobby.address.rsplit(":", 1)[1])
        bridge = Bridge(settings(TestLobby(port=port), tmp_path, RAW_BOT))
        run = asyncio.create_task(bridge.run())
        try:
            await until(lambda: bridge.welcomes == 1, what="the welcome")
            await lobby.stop()  # no word: only lost
            await asyncio.sleep(1.0)
            assert not run.done()
            again = await lobby_on(port).start()
            await until(lambda: bridge.welcomes == 2, timeout=30, what="the reconnection")
            await again.stop(over="tournament 'test' is over")
            return await asyncio.wait_for(run, 10)
        finally:
            run.cancel()

    assert asyncio.run(scenario()) == "tournament 'test' is over"
    assert "lost the lobby" in caplog.text


def test_the_backoff_doubles_with_jitter_and_never_waits_past_its_documented_maximum():
    firsts = [backoff(0) for _ in range(200)]
    assert 0.375 <= min(firsts) < max(firsts) <= 0.625  # 0.5 s, jittered
    assert 1.5 <= backoff(2) <= 2.5
    long = [backoff(n) for n in range(6, 3000)]  # hours of retries: 2**3000 seconds would not even be a float
    assert max(long) <= BACKOFF_MAX == 30.0
    assert min(long) >= 0.6 * BACKOFF_MAX and len(set(long)) > 100  # still spread out at the cap


def test_the_relay_binds_its_socket_under_a_temporary_folder_too_deep_for_one(tmp_path, monkeypatch):
    """A Unix socket's path has at most 107 bytes: under a deeper $TMPDIR the bridge's relay puts
    its socket folder in /tmp (as the arbiter's matches do) instead of failing to bind, and
    removes it when it stops."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))

    async def scenario() -> Path:
        relay = await Relay(grpc.aio.insecure_channel).start()
        socket = Path(relay.address.removeprefix("unix:"))
        try:
            assert socket.is_socket() and len(os.fsencode(socket)) <= 107
        finally:
            await relay.stop()
        return socket

    socket = asyncio.run(scenario())
    assert not socket.parent.exists() and not any(deep.iterdir())
