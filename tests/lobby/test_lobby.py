"""The lobby's own protocol, over real gRPC on 127.0.0.1, with keys from a real SQLite file: hellos,
refusals, reservations and invitations, keepalive, floods. (Whole matches through the lobby, with
the bridge: test_remote_league.py.)"""

from __future__ import annotations

import asyncio
import types
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pytest
from barbu.v1 import lobby_pb2 as lpb

from arbiter.lobby.ratelimit import FailureLimiter
from arbiter.lobby.server import LOBBY_SERVICE, Lobby
from arbiter.match.invited import Invitation
from arbiter.referee.timecontrol import TimeControl
from arbiter.storage import open_database
from arbiter.storage.credentials import EntrantKeys


@pytest.fixture
def keys(tmp_path):
    engine = open_database(f"sqlite:///{tmp_path}/keys.db")
    store = EntrantKeys(engine)
    yield store, {name: store.issue(name) for name in ("alice", "bob", "carol")}
    engine.dispose()


@asynccontextmanager
async def running_lobby(store: EntrantKeys, **options) -> AsyncIterator[Lobby]:
    lobby = Lobby(
        "127.0.0.1:0", credentials=None, check_key=store.holder_of, entrants=["alice", "bob"],
        play=lambda: None, name="test", **options,
    )  # fmt: skip
    await lobby.start()
    try:
        yield lobby
    finally:
        await lobby.stop(0)


class Client:
    """One Lobby.Connect stream, as a bridge opens it."""

    def __init__(self, address: str):
        self.channel = grpc.aio.insecure_channel(address)
        self.call = self.channel.stream_stream(
            f"/{LOBBY_SERVICE}/Connect",
            request_serializer=lpb.EntrantMessage.SerializeToString,
            response_deserializer=lpb.LobbyMessage.FromString,
        )()

    async def hello(self, key: str, name: str = "", capacity: int = 1) -> lpb.LobbyMessage:
        await self.call.write(
            lpb.EntrantMessage(hello=lpb.LobbyHello(protocol_version=1, key=key, name=name, capacity=capacity))
        )
        return await self.read()

    async def read(self, timeout: float = 5.0) -> lpb.LobbyMessage:
        message = await asyncio.wait_for(self.call.read(), timeout)
        assert message is not grpc.aio.EOF
        return message

    async def refusal(self) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await self.read()
        return refused.value.code(), refused.value.details()

    async def close(self) -> None:
        await self.channel.close()


def invitation(match_id: str, seat: int = 0) -> Invitation:
    return Invitation(match_id, seat, f"{seat}.secret", "{}", TimeControl(), ("a", "b", "c", "d"))


def test_a_good_key_is_welcomed_then_invited_and_reports_its_bot(keys):
    store, issued = keys

    async def scenario():
        async with running_lobby(store) as lobby:
            client = Client(lobby.address)
            welcome = await client.hello(issued["alice"], name="alice", capacity=2)
            assert welcome.welcome.entrant == "alice" and welcome.welcome.capacity == 2
            assert lobby.connected() == {"alice": 2}
            (reservation,) = await lobby.reserve(["alice"], timeout=5)
            assert reservation is not None and lobby.connected() == {"alice": 1}
            bot = reservation.invite(invitation("t/m1", seat=2))
            sent = (await client.read()).invitation
            assert (sent.match_id, sent.seat, sent.token, sent.address) == ("t/m1", 2, "2.secret", "")
            assert bot.running()
            await client.call.write(
                lpb.EntrantMessage(seat_ended=lpb.SeatEnded(match_id="t/m1", seat=2, exit_code=3, detail="boom"))
            )
            for _ in range(100):
                if not bot.running():
                    break
                await asyncio.sleep(0.01)
            assert bot.exit_code() == 3 and "boom" in (bot.exit_description() or "")
            reservation.release()
            assert lobby.connected() == {"alice": 2}
            await client.close()
            for _ in range(100):
                if not lobby.connected():
                    break
                await asyncio.sleep(0.01)
            assert lobby.connected() == {}

    asyncio.run(scenario())


def test_refusals_say_why_and_guessing_is_slowed_down_for_that_address_only(keys):
    store, issued = keys

    async def scenario():
        async with running_lobby(store, limiter=FailureLimiter(max_failures=3, window=60)) as lobby:
            alice = Client(lobby.address)
            assert (await alice.hello(issued["alice"])).welcome.entrant == "alice"

            async def refused(key: str, **hello) -> tuple[grpc.StatusCode, str]:
                client = Client(lobby.address)
                try:
                    await client.call.write(
                        lpb.EntrantMessage(hello=lpb.LobbyHello(protocol_version=1, key=key, capacity=1, **hello))
                    )
                    return await client.refusal()
                finally:
                    await client.close()

            code, text = await refused(issued["carol"])  # a good key of an entrant not in this tournament
            assert code == grpc.StatusCode.PERMISSION_DENIED and "carol" in text
            code, text = await refused(issued["bob"], name="alice")
            assert code == grpc.StatusCode.UNAUTHENTICATED and "'bob'" in text
            code, text = await refused("bk1.0123456789abcdef." + "x" * 43)
            assert code == grpc.StatusCode.UNAUTHENTICATED and "unknown" in text
            code, text = await refused("not a key")
            assert code == grpc.StatusCode.UNAUTHENTICATED and "malformed" in text
            # three failures from 127.0.0.1: even a good key waits now, and says so
            code, text = await refused(issued["bob"])
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "try again in" in text
            # the entrant already connected is still served
            (reservation,) = await lobby.reserve(["alice"], timeout=5)
            assert reservation is not None
            reservation.invite(invitation("t/m2"))
            assert (await alice.read()).invitation.match_id == "t/m2"
            await alice.close()

    asyncio.run(scenario())


def test_a_revoked_key_is_refused_at_its_next_attempt(keys):
    store, issued = keys

    async def scenario():
        async with running_lobby(store) as lobby:
            store.revoke("bob")
            client = Client(lobby.address)
            await client.call.write(
                lpb.EntrantMessage(hello=lpb.LobbyHello(protocol_version=1, key=issued["bob"], capacity=1))
            )
            code, text = await client.refusal()
            assert code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in text
            await client.close()

    asyncio.run(scenario())


def test_reservations_wait_for_capacity_and_give_up_after_the_wait(keys):
    store, issued = keys

    async def scenario():
        async with running_lobby(store) as lobby:
            assert await lobby.reserve(["alice"], timeout=0.2) == [None]  # not connected: absent
            client = Client(lobby.address)
            await client.hello(issued["alice"], capacity=1)
            (first,) = await lobby.reserve(["alice"], timeout=1)
            assert first is not None
            waiting = asyncio.ensure_future(lobby.reserve(["alice"], timeout=5))
            await asyncio.sleep(0.2)
            assert not waiting.done()  # no free capacity yet
            first.release()
            (second,) = await asyncio.wait_for(waiting, 2)
            assert second is not None
            # two seats of one match are taken together or not at all: bob is absent, alice is there
            both = await lobby.reserve(["alice", "bob"], timeout=0.2)
            assert both == [None, None]  # alice's one place is held by `second`
            second.release()
            alice, bob = await lobby.reserve(["alice", "bob"], timeout=0.2)
            assert alice is not None and bob is None
            await client.close()

    asyncio.run(scenario())


def test_silence_floods_and_wrong_first_messages_cost_only_their_own_stream(keys):
    store, issued = keys

    async def scenario():
        async with running_lobby(store, hello_seconds=0.5, keepalive_seconds=1.0, flood_messages=20) as lobby:
            alice = Client(lobby.address)
            await alice.hello(issued["alice"])
            silent = Client(lobby.address)
            await silent.call.write(lpb.EntrantMessage())  # not a hello
            code, text = await silent.refusal()
            assert code == grpc.StatusCode.FAILED_PRECONDITION and "LobbyHello" in text
            mute = Client(lobby.address)
            code, text = await mute.refusal()  # says nothing at all
            assert code == grpc.StatusCode.CANCELLED and "no LobbyHello" in text
            flooder = Client(lobby.address)
            await flooder.hello(issued["bob"])
            for nonce in range(21):  # one over the limit: the last is read after the others went out
                await flooder.call.write(lpb.EntrantMessage(ping=lpb.Ping(nonce=nonce)))
            while True:  # pongs, then the cut
                try:
                    message = await flooder.read()
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.CANCELLED and "flooded" in e.details()
                    break
                assert message.WhichOneof("msg") == "pong"
            # alice answers the lobby's pings and stays; a client that stops answering is dropped
            ping = await alice.read(timeout=5)
            assert ping.WhichOneof("msg") == "ping"
            await alice.call.write(lpb.EntrantMessage(pong=lpb.Pong(nonce=ping.ping.nonce)))
            assert lobby.connected() == {"alice": 1}
            await alice.read(timeout=5)  # the next ping, left unanswered
            for _ in range(60):
                if not lobby.connected():
                    break
                await asyncio.sleep(0.1)
            assert lobby.connected() == {}
            for c in (alice, silent, mute, flooder):
                await c.close()

    asyncio.run(scenario())


def test_matches_get_an_entrant_in_the_order_they_asked(keys):
    store, issued = keys

    async def scenario():
        async with running_lobby(store) as lobby:
            alice, bob = Client(lobby.address), Client(lobby.address)
            await alice.hello(issued["alice"], capacity=1)
            await bob.hello(issued["bob"], capacity=1)
            (held,) = await lobby.reserve(["alice"], timeout=1)
            older = asyncio.ensure_future(lobby.reserve(["alice", "bob"], timeout=10))
            await asyncio.sleep(0.05)
            newer = asyncio.ensure_future(lobby.reserve(["alice"], timeout=10))
            bob_only = asyncio.ensure_future(lobby.reserve(["bob"], timeout=10))
            await asyncio.sleep(0.2)
            assert not older.done() and not newer.done()
            assert not bob_only.done()  # bob is free, but an older match waits for him (and alice)
            held.release()
            got = await asyncio.wait_for(older, 2)
            assert all(got) and not newer.done() and not bob_only.done()
            for r in got:
                r.release()
            assert (await asyncio.wait_for(newer, 2))[0] is not None
            assert (await asyncio.wait_for(bob_only, 2))[0] is not None
            await alice.close()
            await bob.close()

    asyncio.run(scenario())


def test_a_finished_tournament_says_so_last_and_a_mere_stop_ends_the_stream_without_a_word(keys):
    store, issued = keys

    async def last_messages(over: str) -> tuple[list[str], grpc.StatusCode]:
        async with running_lobby(store) as lobby:
            client = Client(lobby.address)
            await client.hello(issued["alice"])
            await lobby.stop(over=over)
            seen = []
            while (message := await asyncio.wait_for(client.call.read(), 5)) is not grpc.aio.EOF:
                seen.append(message.over.reason if message.WhichOneof("msg") == "over" else message.WhichOneof("msg"))
            code = await client.call.code()
            await client.close()
            return seen, code

    assert asyncio.run(last_messages("tournament 'test' is over")) == (
        ["tournament 'test' is over"],
        grpc.StatusCode.OK,
    )
    assert asyncio.run(last_messages("")) == ([], grpc.StatusCode.OK)


def test_an_entrant_that_goes_away_leaves_no_task_of_its_stream_behind(keys):
    """A task still waiting when the event loop closes is destroyed pending ("Task was destroyed
    but it is pending!", then "Event loop is closed" from its clean-up, at the end of a run)."""
    store, issued = keys

    async def scenario() -> list[asyncio.Task]:
        async with running_lobby(store) as lobby:
            before = asyncio.all_tasks()
            client = Client(lobby.address)
            await client.hello(issued["alice"])
            await client.close()  # the call is cancelled under the lobby's handler
            for _ in range(200):
                if not lobby.connected():
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            # (gRPC's own tasks run compiled coroutines: its server always keeps one waiting for the next call)
            return [t for t in asyncio.all_tasks() - before if isinstance(t.get_coro(), types.CoroutineType)]

    assert asyncio.run(scenario()) == []
