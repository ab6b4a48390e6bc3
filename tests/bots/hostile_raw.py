"""A hostile bot speaking raw gRPC, attacking the protocol in the way BARBU_MODE names.

- ``bigmsg``: after a few good answers, sends a 100 MB message (over the 1 MiB limit);
- ``trickle``: answers well, and between answers sends thousands of unsolicited replies a second;
- ``silent``: says hello, then holds the stream open and never answers;
- ``nohello``: opens a stream and never says hello;
- ``reconnect``: plays a few decisions, drops its stream and connects again with its token;
- ``impostor``: connects for the next seat, with its own secret under that seat's number;
- ``thief``: plays well, and after a few decisions opens more connections: its own token again,
  every other seat's token it can read from /proc, guessed tokens, its secret under other
  seats' numbers. It prints the outcomes as one JSON line (``thief: {...}``).

Every mode plays legal moves (the first legal action) whenever it does answer.
"""

import json
import os
import queue
import threading
import time

import grpc
from barbu import wire
from barbu.v1 import arbiter_pb2 as pb
from barbu.v1 import arbiter_pb2_grpc as pb_grpc

ADDRESS = os.environ["BARBU_ARBITER"]
TOKEN = os.environ["BARBU_TOKEN"]
SEAT = int(TOKEN.split(".", 1)[0])
SECRET = TOKEN.split(".", 1)[1]


def hello(token: str = TOKEN, name: str = "hostile") -> pb.BotMessage:
    return pb.BotMessage(hello=pb.Hello(protocol_version=wire.PROTOCOL_VERSION, token=token, bot_name=name))


class Stream:
    """One Play stream: an outbox we feed, and the arbiter's messages."""

    def __init__(self, first: pb.BotMessage | None):
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        if first is not None:
            self.outbox.put(first)
        self.channel = grpc.insecure_channel(ADDRESS)
        self.call = pb_grpc.ArbiterStub(self.channel).Play(self._requests())

    def _requests(self):
        while True:
            message = self.outbox.get()
            if message is None:
                return
            yield message

    def send(self, message: pb.BotMessage) -> None:
        self.outbox.put(message)

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()


def answer(stream: Stream, message: pb.ArbiterMessage) -> None:
    request = message.request
    stream.send(pb.BotMessage(reply=pb.Reply(request_id=request.request_id, action=request.legal[0])))


def play(stream: Stream, on_request=None) -> None:
    """Answer every request (after ``on_request(n, message)``, which may return False to stop)."""
    n = 0
    try:
        for message in stream.call:
            kind = message.WhichOneof("msg")
            if kind == "request":
                n += 1
                if on_request is not None and on_request(n, message) is False:
                    return
                answer(stream, message)
            elif kind == "match_end":
                break
    except grpc.RpcError:
        pass
    stream.outbox.put(None)


def attempt(token: str) -> str:
    """Open one more stream with ``token``: the status the arbiter ends it with."""
    channel = grpc.insecure_channel(ADDRESS)
    outbox: queue.SimpleQueue = queue.SimpleQueue()
    outbox.put(hello(token, "thief"))

    def requests():
        while (m := outbox.get()) is not None:
            yield m

    call = pb_grpc.ArbiterStub(channel).Play(requests(), timeout=5)
    try:
        for message in call:
            return f"ACCEPTED ({message.WhichOneof('msg')})"  # a seat was handed over: must never happen
        return "ENDED"
    except grpc.RpcError as e:
        return e.code().name
    finally:
        outbox.put(None)
        channel.close()


def stolen_tokens() -> list[str]:
    """Every other seat's token this process can read from another process's environment."""
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                for item in f.read().split(b"\0"):
                    if item.startswith(b"BARBU_TOKEN="):
                        found.add(item.split(b"=", 1)[1].decode())
        except OSError:
            continue
    found.discard(TOKEN)
    return sorted(found)


def thief() -> None:
    stream = Stream(hello())
    report = {"seat": SEAT, "attempts": []}

    def steal(n, message):
        if n == 3:  # every seat is connected by now: the match started
            stolen = stolen_tokens()
            report["stolen"] = len(stolen)
            tries = [("own token again", TOKEN)]
            tries += [(f"stolen token of seat {t.split('.')[0]}", t) for t in stolen]
            others = [s for s in range(4) if s != SEAT]
            tries += [(f"guessed token for seat {s}", f"{s}.{'A' * len(SECRET)}") for s in others]
            tries += [(f"own secret as seat {s}", f"{s}.{SECRET}") for s in others]
            tries += [("empty token", ""), ("huge token", "x" * 100_000)]
            for what, token in tries:
                report["attempts"].append({"what": what, "status": attempt(token)})
            print("thief: " + json.dumps(report), flush=True)

    play(stream, steal)


def impostor() -> None:
    other = (SEAT + 1) % 4
    print(f"impostor: connecting as seat {other}: {attempt(f'{other}.{SECRET}')}", flush=True)


def nohello() -> None:
    stream = Stream(None)  # the stream opens; no hello ever comes
    try:
        for _ in stream.call:
            pass
    except grpc.RpcError as e:
        print(f"nohello: the arbiter ended the stream: {e.code().name}", flush=True)
    time.sleep(60)


def silent() -> None:
    stream = Stream(hello())
    try:
        for _ in stream.call:  # never answers
            pass
    except grpc.RpcError:
        pass


def bigmsg() -> None:
    stream = Stream(hello())

    def big(n, message):
        if n == 3:
            print("bigmsg: sending 100 MB", flush=True)
            stream.send(pb.BotMessage(hello=pb.Hello(protocol_version=1, token="x" * 100_000_000)))

    play(stream, big)


def trickle() -> None:
    stream = Stream(hello())
    stop = threading.Event()

    def spam():
        i = 0
        while not stop.is_set():
            stream.send(pb.BotMessage(reply=pb.Reply(request_id=1)))  # an old id: "late", unsolicited
            i += 1
            if i % 50 == 0:
                time.sleep(0.01)  # ~5000 a second

    def start(n, message):
        if n == 2:
            threading.Thread(target=spam, daemon=True).start()

    play(stream, start)
    stop.set()


def reconnect() -> None:
    stream = Stream(hello())

    def drop(n, message):
        if n == 4:
            return False

    play(stream, drop)
    stream.close()
    time.sleep(0.2)
    again = Stream(hello())
    try:
        for message in again.call:
            print("reconnect: accepted again (must never happen)", flush=True)
            if message.WhichOneof("msg") == "request":
                answer(again, message)
    except grpc.RpcError as e:
        print(f"reconnect: refused: {e.code().name}", flush=True)
    time.sleep(60)  # stays around; the arbiter kills it at the end


MODES = {
    "thief": thief,
    "impostor": impostor,
    "nohello": nohello,
    "silent": silent,
    "bigmsg": bigmsg,
    "trickle": trickle,
    "reconnect": reconnect,
}


def main() -> None:
    mode = os.environ.get("BARBU_MODE", "silent")
    if mode not in MODES:
        raise SystemExit(f"unknown BARBU_MODE {mode!r}")
    MODES[mode]()


if __name__ == "__main__":
    main()
