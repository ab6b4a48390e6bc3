"""The thinnest possible bot for bench/match.py: answers each request with its first legal
action, straight from the protobuf message (no view decoding)."""

import os
import queue

import grpc

from barbu import wire
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc

outbox: queue.SimpleQueue = queue.SimpleQueue()
outbox.put(pb.BotMessage(hello=pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=os.environ["BARBU_TOKEN"])))


def requests():
    while (message := outbox.get()) is not None:
        yield message


for message in pb_grpc.ArbiterStub(grpc.insecure_channel(os.environ["BARBU_ARBITER"])).Play(requests()):
    kind = message.WhichOneof("msg")
    if kind == "request":
        legal = message.request.legal
        outbox.put(pb.BotMessage(reply=pb.Reply(request_id=message.request.request_id, action=legal[0] if legal else None)))
    elif kind == "match_end":
        break
outbox.put(None)
