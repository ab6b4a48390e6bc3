"""The thinnest possible bot for bench/match.py: answers each request with its first legal
action, straight from the protobuf message (no view decoding), on one asyncio stream in one
thread (grpc.aio), as the SDK runner does. It plays as many matches as the arbiter hands it
(multi_match) and exits when the arbiter ends its stream."""

import asyncio
import os

import grpc
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc


async def main() -> None:
    options = (("grpc.enable_retries", 0), ("grpc.enable_channelz", 0), ("grpc.http2.bdp_probe", 0))  # as the SDK
    async with grpc.aio.insecure_channel(os.environ["BARBU_ARBITER"], options=options) as channel:
        call = pb_grpc.ArbiterStub(channel).Play()
        await call.write(
            pb.BotMessage(hello=pb.Hello(protocol_version=1, token=os.environ["BARBU_TOKEN"], multi_match=True))
        )
        while (message := await call.read()) is not grpc.aio.EOF:
            if message.WhichOneof("msg") == "request":
                request = message.request
                reply = pb.Reply(request_id=request.request_id, action=request.legal[0] if request.legal else None)
                await call.write(pb.BotMessage(reply=reply))


asyncio.run(main())
