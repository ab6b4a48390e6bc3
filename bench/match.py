"""Arbiter speed: the bare gRPC stream round trip against a real match.

1. Bare: the arbiter's server and one echo bot process exchange N request/reply pairs on one
   open stream (no engine, no views, no log): the floor that gRPC sets. Measured twice: with a
   minimal request, and with the very requests a match sends (same views, same sizes),
   prebuilt, so that only the arbiter's own work (engine, views, encoding, legality, time
   control, log) separates the bare figure from the match figure.
2. Match: four echo bots play full matches through the real arbiter (engine, views, legality,
   time control, log). Per asked decision: loop time / decisions asked.

Last line: ``match: X ms/match, Y decisions/s, overhead Z x bare stream``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arbiter.process.bot import BotProcess, wait_until
from arbiter.match.play import BotSpec, play_bot_match
from arbiter.referee.loop import MatchSetup
from arbiter.transport.server import ArbiterServer
from dataclasses import replace

from barbu import wire
from barbu.rules import Phase, deal, make_ruleset, new_match, observe, shuffle_hands
from barbu.v1 import arbiter_pb2 as pb

HERE = Path(__file__).resolve().parent
ECHO = f"{sys.executable} {HERE / 'echo_bot.py'}"
RANDOM = f"{sys.executable} {HERE.parent / 'sample_bots' / 'random_bot.py'}"


def match_requests(seed: int) -> list[pb.DecisionRequest]:
    """The decision requests a match asks, built as the arbiter builds them (views and all)."""
    rng = random.Random(seed)
    state = new_match(make_ruleset())
    requests = []
    while state.phase is not Phase.OVER:
        if state.phase is Phase.DEAL:
            deal(state, shuffle_hands(rng))
            continue
        legal = state.legal_actions()
        if len(legal) > 1:
            view = replace(observe(state, state.turn), results=())
            requests.append(
                pb.DecisionRequest(view=wire.view_to_proto(view), legal=wire.legal_to_proto(legal), decision_seconds=1)
            )
        state.apply(rng.choice(legal))
    return requests


def bare_round_trip(requests: list[pb.DecisionRequest], workdir: Path, bots: int = 1) -> float:
    """Median seconds per request/reply on open streams, over the given (prebuilt) requests,
    asking ``bots`` echo bot processes in turn (a match asks four)."""
    server = ArbiterServer(f"unix:{workdir}/bare.sock").start()
    sessions = [server.expect(seat) for seat in range(bots)]
    processes = [
        BotProcess(ECHO, {"BARBU_ARBITER": server.address, "BARBU_TOKEN": s.token}, workdir / f"bare{i}.out")
        for i, s in enumerate(sessions)
    ]
    try:
        assert wait_until(lambda: all(s.connected.is_set() for s in sessions), 10), "echo bots did not connect"
        messages = [pb.ArbiterMessage(request=r) for r in requests]
        times = []
        for rid, message in enumerate(messages, start=1):
            session = sessions[rid % bots]
            message.request.request_id = rid
            session.requests += 1  # as RemotePlayer counts them: the reply is solicited
            start = time.perf_counter()
            session.send(message)
            reply = session.inbound.get(timeout=5)
            times.append(time.perf_counter() - start)
            assert reply.reply.request_id == rid
        for session in sessions:
            session.send(pb.ArbiterMessage(match_end=pb.MatchEnd(status="complete")))
        return statistics.median(times[len(times) // 10 :])  # skip warm-up
    finally:
        for p in processes:
            p.kill()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exchanges", type=int, default=3000)
    parser.add_argument("--matches", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="barbu-bench-") as tmp:
        workdir = Path(tmp)
        minimal = [pb.DecisionRequest(legal=[pb.Action(play=pb.Play(card="2C"))])] * args.exchanges
        bare_minimal = bare_round_trip(minimal, workdir)
        print(f"bare stream round trip, minimal message: {bare_minimal * 1000:.3f} ms (median of {args.exchanges})")
        realistic = match_requests(seed=12345)
        size = statistics.median(r.ByteSize() for r in realistic)
        bare = bare_round_trip(realistic * max(1, args.exchanges // len(realistic)), workdir)
        print(f"bare stream round trip, match-sized requests (median {size:.0f} bytes): {bare * 1000:.3f} ms")
        bare_four = bare_round_trip(realistic * max(1, args.exchanges // len(realistic)), workdir, bots=4)
        print(f"bare stream round trip, match-sized requests to 4 bots in turn: {bare_four * 1000:.3f} ms")
        per_decision, loop_ms, wall, connect, rates = [], [], [], [], []
        for i in range(args.matches):
            played = play_bot_match(
                [BotSpec(f"echo{s}", ECHO) for s in range(4)],
                MatchSetup(make_ruleset(), seed=i),
                workdir / f"m{i}.jsonl",
            )
            r = played.result
            assert r.status == "complete" and not r.faults, r.faults
            per_decision.append(played.play_seconds / r.decisions)
            rates.append(r.decisions / played.play_seconds)
            loop_ms.append(played.play_seconds * 1000)
            wall.append(played.wall_seconds)
            connect.append(played.connect_seconds)
            print(
                f"match {i}: {r.decisions} decisions asked, loop {played.play_seconds * 1000:.0f} ms, "
                f"{played.play_seconds / r.decisions * 1000:.3f} ms/decision; bot start-up "
                f"{played.connect_seconds:.2f} s; wall {played.wall_seconds:.2f} s"
            )
        random_match = play_bot_match(
            [BotSpec(f"random{s}", RANDOM) for s in range(4)], MatchSetup(make_ruleset(), seed=99), workdir / "r.jsonl"
        )
        print(
            f"full match of 4 sample random bots incl. start-up: {random_match.wall_seconds:.2f} s "
            f"(start-up {random_match.connect_seconds:.2f} s, play {random_match.play_seconds:.2f} s, "
            f"{random_match.result.decisions} decisions asked)"
        )
    z = statistics.median(per_decision) / bare
    print(f"overhead against the minimal message: {statistics.median(per_decision) / bare_minimal:.2f} x")
    print(f"overhead against the same requests to 4 bots in turn: {statistics.median(per_decision) / bare_four:.2f} x")
    print(
        f"match: {statistics.median(loop_ms):.0f} ms/match, {statistics.median(rates):.0f} decisions/s, "
        f"overhead {z:.2f} x bare stream"
    )


if __name__ == "__main__":
    main()
