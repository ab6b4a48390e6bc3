"""A bot speaking raw gRPC, misbehaving in the way BARBU_MODE names:

- ``garbage``: answers every request with an empty action (malformed);
- ``wrong_id``: answers with a request id that was never issued (protocol);
- ``flood``: after the hello, floods the stream with thousands of messages (protocol).
"""

import os
import queue

import grpc
from barbu import wire
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc


def main() -> None:
    mode = os.environ.get("BARBU_MODE", "garbage")
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=os.environ["BARBU_TOKEN"], bot_name=mode)
        )
    )
    if mode == "flood":
        for i in range(20000):
            outbox.put(pb.BotMessage(reply=pb.Reply(request_id=10_000_000 + i)))

    def requests():
        while True:
            message = outbox.get()
            if message is None:
                return
            yield message

    channel = grpc.insecure_channel(os.environ["BARBU_ARBITER"])
    try:
        for message in pb_grpc.ArbiterStub(channel).Play(requests()):
            kind = message.WhichOneof("msg")
            if kind == "request":
                rid = message.request.request_id
                if mode == "garbage":
                    outbox.put(pb.BotMessage(reply=pb.Reply(request_id=rid, action=pb.Action())))
                elif mode == "wrong_id":
                    outbox.put(pb.BotMessage(reply=pb.Reply(request_id=rid + 1000, action=message.request.legal[0])))
                else:
                    outbox.put(pb.BotMessage(reply=pb.Reply(request_id=rid, action=message.request.legal[0])))
            elif kind == "match_end":
                break
    except grpc.RpcError:
        pass
    outbox.put(None)


if __name__ == "__main__":
    main()
