"""Authentication and separation at the gRPC server, with raw clients in this process: who may
take a seat, what a refused connection may not disturb, and the stream limits.

The server runs in an event loop of its own thread (:class:`ServerLoop`) while the test's
blocking clients talk to it from theirs, as bots in other processes would."""

from __future__ import annotations

import asyncio
import queue
import shutil
import tempfile
import threading
import time

import grpc
import pytest
from barbu import wire
from barbu.rules import make_ruleset, new_match, observe
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc

from arbiter.referee.faults import FaultKind, PlayerFault
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.remote import RemotePlayer
from arbiter.transport.server import ArbiterServer, Stream

_END = object()


class ServerLoop:
    """An event loop running in a thread of its own; :meth:`call` runs a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def call(self, coro, timeout: float | None = 30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def serve(self, address: str, **kw) -> ArbiterServer:
        server = self.call(ArbiterServer(address, **kw).start())
        server.call = self.call  # type: ignore[attr-defined]
        return server

    def close(self, server: ArbiterServer) -> None:
        self.call(server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class Client:
    """A raw bot connection: what we send, what comes back, how it ended."""

    def __init__(self, address: str, first: pb.BotMessage | None):
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        if first is not None:
            self.outbox.put(first)
        self.channel = grpc.insecure_channel(address)
        self.call = pb_grpc.ArbiterStub(self.channel).Play(self._requests(), timeout=20)
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.ended: str | None = None
        self.done = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _requests(self):
        while (m := self.outbox.get()) is not _END:
            yield m

    def _read(self) -> None:
        try:
            for message in self.call:
                self.inbox.put(message)
            self.ended = "OK"
        except grpc.RpcError as e:
            self.ended = e.code().name
        self.done.set()

    def send(self, message: pb.BotMessage) -> None:
        self.outbox.put(message)

    def status(self, timeout: float = 10) -> str | None:
        self.done.wait(timeout)
        return self.ended

    def close(self) -> None:
        self.outbox.put(_END)
        self.call.cancel()
        self.channel.close()


def hello(token: str, version: int = wire.PROTOCOL_VERSION, name: str = "test") -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(protocol_version=version, token=token, bot_name=name))


@pytest.fixture
def server():
    folder = tempfile.mkdtemp(prefix="barbu-auth-")
    loop = ServerLoop()
    srv = loop.serve(f"unix:{folder}/a.sock", hello_seconds=1.0)
    clients: list[Client] = []
    srv.connect = lambda first: clients.append(Client(srv.address, first)) or clients[-1]  # type: ignore[attr-defined]
    yield srv
    for c in clients:
        c.close()
    loop.close(srv)
    shutil.rmtree(folder, ignore_errors=True)


def player(session) -> RemotePlayer:
    return RemotePlayer(session, "p", TimeControl(per_decision=2.0, reserve=0.0))


def decide(server, session, client: Client) -> object:
    """One real decision over the session: the client answers with the first legal action."""
    state = new_match(make_ruleset(), 0)
    state.deal(((1 << 13) - 1, ((1 << 13) - 1) << 13, ((1 << 13) - 1) << 26, ((1 << 13) - 1) << 39))
    p = player(session)
    answer = threading.Thread(target=_answer_one, args=(client,), daemon=True)
    answer.start()
    return server.call(p.decide(state, state.turn, 2.0))


def _answer_one(client: Client) -> None:
    while True:
        message = client.inbox.get(timeout=10)
        if message.WhichOneof("msg") == "request":
            req = message.request
            client.send(pb.BotMessage(reply=pb.Reply(request_id=req.request_id, action=req.legal[0])))
            return


def test_tokens_are_random_distinct_and_long(server):
    sessions = [server.expect(s) for s in range(4)]
    secrets_ = [s.secret for s in sessions]
    assert len(set(secrets_)) == 4 and all(len(x) >= 32 for x in secrets_)
    assert [s.token.split(".")[0] for s in sessions] == ["0", "1", "2", "3"]


def test_a_stolen_token_after_its_seat_connected_is_refused_and_disturbs_nothing(server):
    s0, s1 = server.expect(0), server.expect(1)
    owner = server.connect(hello(s0.token))
    assert server.call(s0.connected.wait_for(5))
    thief = server.connect(hello(s0.token, name="thief"))
    assert thief.status() == "PERMISSION_DENIED"
    assert "seat 0's, already used" in server.refused[-1]
    # The owner's session is untouched: connected, not ended, not charged, and it still plays.
    assert s0.connected.is_set() and not s0.ended.is_set() and s0.refusal is None and s0.violation is None
    assert decide(server, s0, owner) is not None
    assert not s1.connected.is_set()


def test_a_guessed_or_borrowed_token_for_a_free_seat_is_refused_and_the_seat_still_connects(server):
    s0, s1 = server.expect(0), server.expect(1)
    guess = server.connect(hello("1." + "A" * len(s1.secret)))
    assert guess.status() == "PERMISSION_DENIED"
    assert s1.refusal and "no seat of this match has it" in s1.refusal
    borrowed = server.connect(hello(f"1.{s0.secret}"))  # seat 0's secret, claiming seat 1
    assert borrowed.status() == "PERMISSION_DENIED"
    assert s0.refusal and "seat 0's secret with the seat number '1'" in s0.refusal
    assert "only connect for its own seat" in s0.refusal
    real = server.connect(hello(s1.token))
    assert server.call(s1.connected.wait_for(5))
    player(s1)._ensure_connected()  # connected: the earlier refusals are not held against it
    assert decide(server, s1, real) is not None
    # A seat that never connects is charged with what was tried in its name.
    with pytest.raises(PlayerFault) as e:
        player(s0)._ensure_connected()
    assert e.value.kind is FaultKind.PROTOCOL and "only connect for its own seat" in e.value.detail


def test_refusals_never_repeat_a_token(server, caplog):
    sessions = [server.expect(s) for s in range(2)]
    for token in ("0.wrong", f"1.{sessions[0].secret}", "x" * 5000, ""):
        server.connect(hello(token)).status()
    server.connect(hello(sessions[0].token))
    assert server.call(sessions[0].connected.wait_for(5))
    server.connect(hello(sessions[0].token)).status()
    text = " ".join(server.refused) + caplog.text + str([s.refusal for s in sessions])
    assert all(s.secret not in text for s in sessions)
    assert "x" * 50 not in text


def test_a_connection_once_every_seat_is_taken_is_refused_at_once(server):
    s0 = server.expect(0)
    server.connect(hello(s0.token))
    assert server.call(s0.connected.wait_for(5))
    late = server.connect(None)  # not even a hello: it is not read
    assert late.status(timeout=3) == "RESOURCE_EXHAUSTED"
    assert "every seat was already connected" in server.refused[-1]


def test_a_stream_without_a_hello_is_cut(server):
    server.expect(0)
    started = time.monotonic()
    silent = server.connect(None)
    assert silent.status(timeout=5) == "CANCELLED"
    assert 0.9 < time.monotonic() - started < 4
    deadline = time.monotonic() + 3
    while not server.refused and time.monotonic() < deadline:
        time.sleep(0.01)  # the server notes it just after the client sees the end
    assert server.refused == ["a connection sent no hello within 1s"]


def test_the_first_message_must_be_a_hello(server):
    server.expect(0)
    c = server.connect(pb.BotMessage(reply=pb.Reply(request_id=1)))
    assert c.status() == "FAILED_PRECONDITION"


def test_unsolicited_messages_beyond_the_budget_cut_the_stream(server):
    s0 = server.expect(0)
    c = server.connect(hello(s0.token))
    assert server.call(s0.connected.wait_for(5))
    for i in range(17):
        c.send(pb.BotMessage(reply=pb.Reply(request_id=99 + i)))
    assert c.status() == "CANCELLED"
    assert (
        s0.violation == "sent 17 messages nobody asked for (at most 16 a match beyond one reply per decision request)"
    )
    with pytest.raises(PlayerFault) as e:
        player(s0)._ensure_connected()
    assert e.value.kind is FaultKind.PROTOCOL and e.value.fatal


def test_a_message_over_the_size_limit_is_a_named_protocol_fault(server):
    s0 = server.expect(0)
    c = server.connect(hello(s0.token))
    assert server.call(s0.connected.wait_for(5))
    c.send(hello("x" * (2 << 20)))  # 2 MiB
    assert c.status() == "RESOURCE_EXHAUSTED"
    assert server.call(s0.ended.wait_for(5))
    assert s0.violation and s0.violation.startswith("sent a message larger than 1 MiB")


def test_a_remote_seats_cut_is_a_disconnect_unless_its_bridge_says_it_refused_a_message(server):
    """A remote seat (played through the lobby) whose stream is cut: over a network, a lost
    connection (`disconnect`); when its bridge said first that it refused the bot's oversized
    message (the lobby calls refused_elsewhere), the `protocol` fault a local bot gets. A token
    no seat has changes nothing."""
    faults = []
    for refused in (False, True):
        session = server.expect(0)
        session.remote = True
        c = server.connect(hello(session.token))
        assert server.call(session.connected.wait_for(5))
        assert not server.refused_elsewhere("0.not-a-token", "its bridge (arbiter connect)")
        if refused:
            assert server.refused_elsewhere(session.token, "its bridge (arbiter connect)")
        c.close()  # the bridge cuts the stream
        assert server.call(session.ended.wait_for(5))
        faults.append(server.call(player(session).gone()))
    lost, refused_fault = faults
    assert lost.kind is FaultKind.DISCONNECT
    assert refused_fault.kind is FaultKind.PROTOCOL and refused_fault.fatal
    assert refused_fault.detail.startswith("sent a message larger than 1 MiB") and "its bridge" in refused_fault.detail


def test_no_message_to_a_bot_carries_any_token(server):
    sessions = [server.expect(s) for s in range(4)]
    state = new_match(make_ruleset(), 0)
    state.deal(((1 << 13) - 1, ((1 << 13) - 1) << 13, ((1 << 13) - 1) << 26, ((1 << 13) - 1) << 39))
    sent: list = []

    async def record(message) -> None:
        sent.append(message if isinstance(message, bytes) else message.SerializeToString())

    for s in sessions:
        s.attach(Stream(pb.Hello(), record, server.loop))  # as if its bot had connected: what would it be sent?
        p = player(s)
        server.call(p.start(s.seat, observe(state, s.seat)))
        if s.seat == state.turn:
            with pytest.raises(PlayerFault):  # nobody answers: what matters is what was sent
                server.call(p.decide(state, s.seat, 0.05), timeout=5)
        server.call(p.deal_ended(state, s.seat))
        server.call(p.match_ended(observe(state, s.seat)))
    assert len(sent) == 4 * 3 + 1
    for data in sent:
        assert all(other.secret.encode() not in data for other in sessions)


def test_a_frozen_bot_is_dropped_by_keepalive(tmp_path):
    """A bot that stops answering pings (here SIGSTOPped: a vanished remote peer looks the
    same) loses its connection after keepalive + timeout, and its seat a `disconnect`."""
    import os
    import signal
    import sys

    from arbiter.process.bot import BotProcess

    from .conftest import BOTS

    folder = tempfile.mkdtemp(prefix="barbu-ka-")
    loop = ServerLoop()
    srv = loop.serve(f"unix:{folder}/a.sock", keepalive_seconds=1, keepalive_timeout=1)
    s0 = srv.expect(0)
    bot = BotProcess(
        f"env BARBU_MODE=silent {sys.executable} {BOTS / 'hostile_raw.py'}",
        {"BARBU_ARBITER": srv.address, "BARBU_TOKEN": s0.token}, tmp_path / "out.txt",
    )  # fmt: skip
    try:
        assert srv.call(s0.connected.wait_for(10))
        os.kill(bot.pid, signal.SIGSTOP)
        started = time.monotonic()
        assert srv.call(s0.ended.wait_for(10)), "the frozen bot's connection was never dropped"
        assert time.monotonic() - started < 6
        fault = srv.call(RemotePlayer(s0, "p", TimeControl(per_decision=1.0, reserve=0.0), process=bot).gone())
        assert fault.kind is FaultKind.DISCONNECT and "connection was lost" in fault.detail
    finally:
        os.kill(bot.pid, signal.SIGCONT)
        bot.kill()
        loop.close(srv)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_bot_thinking_for_its_whole_decision_time_is_not_dropped_by_keepalive(tmp_path):
    """The SDK runner decides in its only Python thread; gRPC answers the arbiter's pings in
    its own threads meanwhile: a bot computing for longer than keepalive + timeout (here 4 s of
    a busy loop against 1 + 1 s) keeps its connection and its seat."""
    import sys

    from arbiter.process.bot import BotProcess
    from arbiter.referee.logfile import AtomicLogFile
    from arbiter.referee.loop import MatchSetup, Referee
    from arbiter.referee.players import RandomPlayer

    from .conftest import BOTS

    folder = tempfile.mkdtemp(prefix="barbu-ka-")
    loop = ServerLoop()
    srv = loop.serve(f"unix:{folder}/a.sock", keepalive_seconds=1, keepalive_timeout=1)
    s0 = srv.expect(0)
    bot = BotProcess(
        f"env BARBU_SLEEP=4 BARBU_SPIN=1 {sys.executable} {BOTS / 'slow_bot.py'}",
        {"BARBU_ARBITER": srv.address, "BARBU_TOKEN": s0.token}, tmp_path / "out.txt",
    )  # fmt: skip
    try:
        assert srv.call(s0.connected.wait_for(10))
        control = TimeControl(per_decision=8.0, reserve=0.0)
        players = [RemotePlayer(s0, "thinker", control, process=bot)] + [RandomPlayer(seed=s) for s in (1, 2, 3)]
        sink = AtomicLogFile(tmp_path / "m.jsonl")
        rules = make_ruleset("standard", {"contracts": ["barbu"]})
        result = srv.call(Referee(MatchSetup(rules, seed=3), players, sink, time_control=control).play())
        sink.commit()
        assert result.status == "complete" and result.faults == (), result.faults
        assert max(result.think_seconds) >= 4 * 0.9
    finally:
        bot.kill()
        loop.close(srv)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_stream_handed_to_the_next_match_gets_a_token_of_its_own_and_must_keep_quiet_between(server):
    """A multi_match bot's stream serves a second match with a session (and token) of its own;
    between two matches, anything it sends cuts it off (and no match is charged)."""
    first = server.open_desk("one")
    s0 = first.expect(0)
    c = server.connect(pb.BotMessage(hello=pb.Hello(protocol_version=1, token=s0.token, multi_match=True)))
    assert server.call(s0.connected.wait_for(5)) and s0.hello.multi_match
    assert decide(server, s0, c) is not None
    stream = s0.stream
    server.call(_async(stream.detach))
    first.close()
    second = server.open_desk("two")
    s1 = server.call(_async(lambda: second.hand_over(2, stream)))
    assert s1.token != s0.token and s1.connected.is_set() and s1.reused == 1 and s1.stream is stream
    assert decide(server, s1, c) is not None  # the same bot, in its next match
    server.call(_async(stream.detach))
    second.close()
    c.send(pb.BotMessage(reply=pb.Reply(request_id=1)))  # nothing was asked
    assert c.status() == "CANCELLED"
    assert server.call(stream.ended.wait_for(5)) and "between two matches" in stream.violation


async def _async(fn):
    return fn()
