"""A stream's messages reach the bot in the order the referee sent them, even those it did not
wait for (``Stream.send_soon``: a deal's end, while the referee deals and asks on)."""

from __future__ import annotations

import asyncio

from barbu.v1 import arbiter_pb2 as pb

from arbiter.transport.session import Stream


def slow_writer(sent: list[str], fail_on: str | None = None):
    """A call's write that takes longer for earlier messages (so an unordered stream would show)."""
    delays = iter([0.03, 0.02, 0.01, 0.0, 0.0, 0.0])

    async def write(message: str) -> None:
        await asyncio.sleep(next(delays))
        if message == fail_on:
            raise RuntimeError("the call is gone")
        sent.append(message)

    return write


def test_messages_sent_soon_go_out_before_the_next_write_and_in_order():
    async def scenario() -> tuple[list[str], bool, bool]:
        sent: list[str] = []
        stream = Stream(pb.Hello(), slow_writer(sent), asyncio.get_running_loop())
        stream.send_soon("deal end 1")
        stream.send_soon("deal end 2")
        returned_at_once = sent == []  # send_soon does not wait
        went = await stream.write("request")
        return sent, returned_at_once, went

    sent, returned_at_once, went = asyncio.run(scenario())
    assert returned_at_once
    assert went
    assert sent == ["deal end 1", "deal end 2", "request"]


def test_a_message_sent_soon_that_fails_makes_the_next_write_fail_and_nothing_follows_it():
    async def scenario() -> tuple[list[str], bool, bool]:
        sent: list[str] = []
        stream = Stream(pb.Hello(), slow_writer(sent, fail_on="deal end"), asyncio.get_running_loop())
        stream.send_soon("deal end")
        went = await stream.write("request")
        return sent, went, stream.write_failed

    sent, went, failed = asyncio.run(scenario())
    assert (sent, went, failed) == ([], False, True)


def test_a_write_cancelled_while_it_waits_for_a_message_sent_soon_leaves_that_message_going():
    async def scenario() -> list[str]:
        sent: list[str] = []
        stream = Stream(pb.Hello(), slow_writer(sent), asyncio.get_running_loop())
        stream.send_soon("deal end")
        waiting = asyncio.ensure_future(stream.write("request"))
        await asyncio.sleep(0.005)
        waiting.cancel()
        await asyncio.sleep(0.06)
        assert waiting.cancelled()
        return sent

    assert asyncio.run(scenario()) == ["deal end"]
