"""Arbiter speed, side by side in one run: the floor gRPC Python sets, a real match, and CPU.

1. **Floor**: the arbiter's own kind of server (``grpc.aio``, the same options, a Unix socket)
   asking four echo bot processes in turn, over open bidirectional streams, the very requests a
   match sends (prebuilt: ~350 bytes), each answered with a ~20-byte reply. The handler does
   nothing but write a request and read the reply: what gRPC Python itself costs per exchange.
2. **Match**: four echo bots (the same processes' code) play full matches through the arbiter
   (engine, views, legality, time control, log). Per asked decision: loop time / decisions.
3. **Start-up**: a sample random bot from its start to its hello, next to ``python -c "import
   grpc"``.
4. **CPU**: ``arbiter match`` of four sample random bots (start-up included, the arbiter and its
   bots, user + system) next to ``arbiter selfplay`` of the same seed; and a league of matches of
   random bots through one arbiter that keeps the bots (``multi_match``), per match in steady state
   (after the first match: the start-ups are paid once per league, not per match), and the whole
   league's per match beside it. Beside them, the lower bound any arbiter of Python gRPC
   processes meets: five interpreters that import grpc, every decision asked costing one
   exchange at the floor's CPU (both ends), and the match itself (selfplay's CPU once started:
   the engine and the log); with the bots kept, the same without the start-ups.

Medians throughout. The figures shift with the machine's load: compare only figures of one run.
``--timeline`` splits, each round, a floor exchange into its write and its wait for the reply,
and a match's decision asked into its write, its wait, the reply's way from the stream's reader to
the referee, and the referee's work from there to the next request (the engine, the log line, the
request's encoding): where the loop's time over the floor goes.
``--profile`` prints where the arbiter's time goes during a match (cProfile, top functions).
``--what-if`` also plays, each round, a match with the log switched off, one whose referee reads
each reply itself (no reader task), one with both, and one where no seat is told a deal's end:
what the loop would be without them (bots started afresh for each). Experiments only: the arbiter
needs them all (the log is the record; without the reader task a read abandoned at a deadline
would leave gRPC's one receive of the call pending, and nothing would watch the stream between
two requests; the deal ends carry the results a bot keeps).

Both builds, side by side: the bench runs itself twice, once on the pure source
(``BARBU_PURE=1``, which the bots it starts inherit) and once on the compiled build
(docs/speed.md), prints each run's lines under its name, then the figures of both.

Last line: ``match: X ms/match, Y decisions/s, overhead Z x bare stream (pure P x); league CPU
C x bound (pure Q x)`` (Z: the compiled build's loop time per decision asked over the floor
measured just before it, median over the rounds; C: its CPU per league match over the printed
lower bound with the bots kept).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from unittest import mock

import grpc
from barbu import wire
from barbu.build import describe
from barbu.matchlog import MatchLogWriter
from barbu.rules import Phase, deal, make_ruleset, new_match, observe, shuffle_hands
from barbu.v1 import arbiter_pb2 as pb

from arbiter.match.blocking import BlockingHost, run_blocking
from arbiter.match.play import BotSpec, MatchHost
from arbiter.process.procfs import tree_cpu_seconds
from arbiter.referee.loop import MatchSetup, _BufferedWriter
from arbiter.transport.remote import RemotePlayer
from arbiter.transport.server import MAX_MESSAGE_BYTES, SERVICE, ArbiterServer, server_options
from arbiter.transport.session import GONE, Stream

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
ECHO = f"{PY} {HERE / 'echo_bot.py'}"
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'}"
ARBITER = [PY, "-m", "arbiter"]
QUICK = ["--exchanges", "200", "--matches", "1", "--cpu-runs", "1", "--league", "2", "--startups", "1", "--timeline"]
"""--quick: a run of seconds that tests/test_benches.py makes."""


def match_requests(seed: int) -> list[bytes]:
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
            request = pb.DecisionRequest(
                request_id=len(requests) + 1,
                view=wire.view_to_proto(view),
                legal=wire.legal_to_proto(legal),
                decision_seconds=1.0,
                reserve_seconds=10.0,
            )
            requests.append(pb.ArbiterMessage(request=request).SerializeToString())
        state.apply(rng.choice(legal))
    return requests


# ---- 1. the floor --------------------------------------------------------------------------
async def floor(
    requests: list[bytes], workdir: Path, bots: int = 4, split: list[tuple[float, float]] | None = None
) -> tuple[float, float, float]:
    """Median seconds per request/reply, asking ``bots`` echo processes in turn; the median
    reply size; and the CPU seconds per exchange, this process's and the echo processes'.
    ``split``: gets each exchange's (write, wait for the reply) seconds."""
    address = f"unix:{workdir}/floor.sock"
    contexts: dict[str, object] = {}
    ready = asyncio.Event()
    done = asyncio.get_running_loop().create_future()

    async def play(_request_iterator, context):
        hello = await context.read()
        contexts[hello.hello.token] = context
        if len(contexts) == bots:
            ready.set()
        await done

    server = grpc.aio.server(options=server_options(MAX_MESSAGE_BYTES, 60.0, 20.0, 15.0), maximum_concurrent_rpcs=64)
    handler = grpc.stream_stream_rpc_method_handler(
        play, request_deserializer=pb.BotMessage.FromString, response_serializer=lambda b: b
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Play": handler}),))
    server.add_insecure_port(address)
    await server.start()
    env = {**os.environ, "BARBU_ARBITER": address}
    procs = [subprocess.Popen(ECHO.split(), env={**env, "BARBU_TOKEN": str(i)}) for i in range(bots)]
    try:
        await asyncio.wait_for(ready.wait(), 30)
        ctxs = [contexts[str(i)] for i in range(bots)]
        times, sizes = [], []
        cpu_before = time.process_time() + sum(tree_cpu_seconds(p.pid) for p in procs)
        for i, data in enumerate(requests):
            context = ctxs[i % bots]
            start = time.perf_counter()
            await context.write(data)
            wrote = time.perf_counter()
            reply = await context.read()
            times.append(time.perf_counter() - start)
            if split is not None:
                split.append((wrote - start, times[-1] - (wrote - start)))
            sizes.append(reply.ByteSize())
        cpu = time.process_time() + sum(tree_cpu_seconds(p.pid) for p in procs) - cpu_before
        done.set_result(None)
        return statistics.median(times[len(times) // 10 :]), statistics.median(sizes), cpu / len(requests)
    finally:
        if not done.done():
            done.set_result(None)
        await server.stop(0.5)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


# ---- what if: the loop without parts the arbiter needs (experiments, --what-if) --------------
def without_log() -> list[tuple[Any, str, Any]]:
    """The referee logs nothing (the log writer's two per-decision calls do nothing)."""
    return [(MatchLogWriter, "acted", lambda *args, **kwargs: None), (_BufferedWriter, "flush", lambda self: None)]


def without_reader_task() -> list[tuple[Any, str, Any]]:
    """Each reply is read by the referee's own task, straight from the call (no deadline kept)."""
    calls: dict[Stream, Any] = {}

    async def hold(self: ArbiterServer, stream: Stream, context: Any) -> None:
        calls[stream] = context
        await asyncio.Event().wait()

    async def read_here(self: Stream, deadline: float) -> Any:
        if self.inbox:
            return self.inbox.popleft()
        message = await calls[self].read()
        if message is grpc.aio.EOF:
            self.eof = True
            self.end()
            return GONE
        self.session.received += 1
        return message

    return [(ArbiterServer, "_read", hold), (Stream, "next_message", read_here)]


def timeline_marks(marks: list[tuple[str, float]]) -> list[tuple[Any, str, Any]]:
    """``--timeline``: each decision's moments appended to ``marks``: the request about to be
    written (``ask``), written (``wrote``), the reply read by the stream's reader (``reply``), and
    the referee back with it (``back``)."""
    write, deliver, exchange = Stream.write, Stream.deliver, RemotePlayer._exchange

    async def timed_write(self: Stream, message: Any) -> bool:
        marks.append(("write", time.perf_counter()))
        went = await write(self, message)
        marks.append(("wrote", time.perf_counter()))
        return went

    def timed_deliver(self: Stream, message: Any) -> str | None:
        marks.append(("reply", time.perf_counter()))
        return deliver(self, message)

    async def timed_exchange(self: RemotePlayer, *args: Any, **kwargs: Any) -> Any:
        marks.append(("ask", time.perf_counter()))
        action = await exchange(self, *args, **kwargs)
        marks.append(("back", time.perf_counter()))
        return action

    return [
        (Stream, "write", timed_write),
        (Stream, "deliver", timed_deliver),
        (RemotePlayer, "_exchange", timed_exchange),
    ]


TIMELINE = ("ask", "write", "wrote", "reply", "back")


def timeline_parts(marks: list[tuple[str, float]]) -> dict[str, float]:
    """Median seconds of each part of a decision asked: the write, the wait for the reply, the
    reply's way to the referee, and the referee's work from there to the next request (counted
    only where that request comes next: not across a deal's end)."""
    parts: dict[str, list[float]] = {"write": [], "wait": [], "to the referee": [], "the referee": []}
    starts = [i for i, (kind, _) in enumerate(marks) if kind == "ask"]
    for i, j in zip(starts, [*starts[1:], len(marks)], strict=True):
        if tuple(kind for kind, _ in marks[i : i + 5]) != TIMELINE:
            continue
        ask, write, wrote, reply, back = (t for _, t in marks[i : i + 5])
        parts["write"].append(wrote - write)
        parts["wait"].append(reply - wrote)
        parts["to the referee"].append(back - reply)
        if j == i + 5 and j < len(marks):
            parts["the referee"].append(marks[j][1] - back)
    return {name: statistics.median(times) for name, times in parts.items() if times}


WHAT_IF = {
    "without the log": without_log,
    "without the reader task": without_reader_task,
    "without both": lambda: without_log() + without_reader_task(),
    # no seat told a deal's end (the echo bots keep no results: they miss nothing)
    "without the deal ends": lambda: [(RemotePlayer, "deal_ended", mock.AsyncMock(return_value=None))],
}


@contextlib.contextmanager
def replaced(changes: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Each ``(owner, attribute, value)`` of ``changes`` in place for the duration."""
    with contextlib.ExitStack() as stack:
        for owner, name, value in changes:
            stack.enter_context(mock.patch.object(owner, name, value))
        yield


# ---- bot start-up ------------------------------------------------------------------------------
async def startup(runs: int, workdir: Path) -> tuple[float, float]:
    """Median seconds from starting a sample random bot to its hello reaching the arbiter, and
    median seconds of ``python -c "import grpc"``, measured in turn."""
    from arbiter.transport.server import ArbiterServer

    server = await ArbiterServer(f"unix:{workdir}/start.sock").start()
    to_hello, imports = [], []
    try:
        for _ in range(runs):
            session = server.expect(0)
            env = {**os.environ, "BARBU_ARBITER": server.address, "BARBU_TOKEN": session.token}
            started = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(*RANDOM.split(), env=env, stderr=subprocess.DEVNULL)
            await session.connected.wait_for(30)
            to_hello.append(time.perf_counter() - started)
            session.stream.release()
            await proc.wait()
            started = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(PY, "-c", "import grpc")
            await proc.wait()
            imports.append(time.perf_counter() - started)
    finally:
        await server.stop()
    return statistics.median(to_hello), statistics.median(imports)


# ---- 3. CPU ------------------------------------------------------------------------------------
def cpu_of(argv: list[str], **kw) -> float:
    """CPU seconds (user + system) of a command and everything it started and reaped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def selfplay_game_cpu(seed: int) -> float:
    """CPU seconds of selfplay's match once its process has started (``arbiter selfplay``'s
    referee, players and log, the log written to memory)."""
    from arbiter.referee.loop import Referee
    from arbiter.referee.players import RandomPlayer

    setup = MatchSetup(make_ruleset("standard"), seed=seed, match_id=f"selfplay-{seed}")
    players = [RandomPlayer(seed=f"{seed}/{s}", name=f"random-{s}") for s in range(4)]
    lines: list[str] = []
    started = time.process_time()
    run_blocking(Referee(setup, players, lines.append, log_times=False).play())
    return time.process_time() - started


def asked_decisions(log: Path) -> int:
    """Decisions a match asked its bots: the log lines that carry their time."""
    with log.open(encoding="utf-8") as lines:
        return sum(1 for line in lines if '"ms":' in line)


def league_child(n: int, folder: Path) -> None:
    """``--league N``: N matches of four random bots through one arbiter that keeps its bots.
    Writes the CPU of this process and its bots, and of this process alone, after each match to
    ``folder/league-cpu.json``."""
    marks = []
    with BlockingHost(reuse=True) as host:
        for i in range(n):
            played = host.play(
                [BotSpec(f"random{s}", RANDOM) for s in range(4)], MatchSetup(make_ruleset(), seed=1000 + i),
                folder / f"league{i}.jsonl",
            )  # fmt: skip
            assert played.result.status == "complete" and not played.result.faults, played.result.faults
            marks.append((tree_cpu_seconds(os.getpid()), time.process_time()))
    (folder / "league-cpu.json").write_text(json.dumps(marks))


def league_cpu(n: int, folder: Path) -> tuple[float, float, float]:
    """CPU seconds per match of a league of ``n`` (at least 2) through one arbiter that keeps its
    bots: in steady state (from the end of the first match to the end of the last, over the
    ``n - 1`` matches between: no start-up in it, as in the bound with the bots kept), the
    arbiter's own part of it, and the whole league's over ``n`` (start-ups included)."""
    whole = cpu_of([PY, __file__, "--league-child", str(n), "--folder", str(folder)])
    marks = json.loads((folder / "league-cpu.json").read_text())
    return (marks[-1][0] - marks[0][0]) / (n - 1), (marks[-1][1] - marks[0][1]) / (n - 1), whole / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exchanges", type=int, default=3000, help="floor exchanges (default 3000)")
    parser.add_argument("--matches", type=int, default=3, help="echo matches (default 3)")
    parser.add_argument("--cpu-runs", type=int, default=3, help="arbiter match / selfplay pairs (default 3)")
    parser.add_argument(
        "--league", type=int, default=6, help="matches in the league with reuse (default 6, at least 2)"
    )
    parser.add_argument("--startups", type=int, default=9, help="bot start-ups timed (default 9)")
    parser.add_argument("--profile", action="store_true", help="profile the arbiter during one echo match")
    parser.add_argument(
        "--what-if", action="store_true", help="also the loop without the log, the reader task, the deal ends"
    )
    parser.add_argument(
        "--timeline", action="store_true", help="also where each decision's time goes, beside the floor"
    )
    parser.add_argument("--league-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help=f"seconds, for the test suite: {' '.join(QUICK)}")
    parser.add_argument("--one-build", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*QUICK, *sys.argv[1:]])
    if args.league < 2:
        parser.error("--league: at least 2 matches (the steady state is measured after the first)")
    if args.league_child:
        return league_child(args.league_child, args.folder)
    if not args.one_build:
        return both_builds()
    print(f"build: {describe()}")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="barbu-bench-") as tmp:
        workdir = Path(tmp)
        # One event loop for the floor and the matches: grpc.aio keeps one poller per process,
        # made for the first loop that uses it (a second loop in turn would be slowed down).
        measured = asyncio.run(rounds(args, workdir))
        # CPU of whole commands, start-up included: the arbiter and its bots, against selfplay.
        match_cpu, self_cpu = [], []
        for i in range(args.cpu_runs):
            seed = 7 + i
            bots = [a for _ in range(4) for a in ("--bot", RANDOM)]
            match_cpu.append(
                cpu_of([*ARBITER, "match", "--seed", str(seed), "--log", str(workdir / f"c{i}.jsonl"), *bots])
            )
            self_cpu.append(cpu_of([*ARBITER, "selfplay", "--seed", str(seed), "--out", str(workdir / f"s{i}.jsonl")]))
        m, s = statistics.median(match_cpu), statistics.median(self_cpu)
        print(
            f"CPU of one 28-deal match of 4 random bots, start-up included: arbiter match {m:.2f} s, "
            f"selfplay {s:.2f} s (same seeds, medians of {args.cpu_runs}): {m / s:.2f} x selfplay"
        )
        # What no arbiter of Python gRPC processes can go below: five interpreters importing grpc,
        # each decision asked costing at least one exchange at the floor's CPU, and the match
        # itself (what selfplay does once started: the engine and the log).
        asked = statistics.median(asked_decisions(workdir / f"c{i}.jsonl") for i in range(args.cpu_runs))
        start = 5 * statistics.median(cpu_of([PY, "-c", "import grpc"]) for _ in range(5))
        exchanges = asked * statistics.median(measured.floor_cpu)
        game = statistics.median(selfplay_game_cpu(7 + i) for i in range(args.cpu_runs))
        bound = start + exchanges + game
        print(
            f"lower bound over gRPC: 5 start-ups to 'import grpc' {start:.2f} s + {asked:.0f} exchanges at the "
            f"floor's CPU ({statistics.median(measured.floor_cpu) * 1e6:.0f} us each, both ends) {exchanges:.2f} s "
            f"+ the match itself (selfplay's, once started) {game:.2f} s = {bound:.2f} s = {bound / s:.2f} x "
            f"selfplay; with the bots kept {(exchanges + game) / s:.2f} x"
        )
        league, own, whole = league_cpu(args.league, workdir)
        kept_bound = exchanges + game
        print(
            f"CPU per match in a league of {args.league} with the bots kept (multi_match), from the end of the "
            f"first match: {league:.2f} s (the arbiter {own:.2f} s, its bots {league - own:.2f} s), "
            f"{league / s:.2f} x selfplay, {league / kept_bound:.2f} x the bound with the bots kept; the whole "
            f"league over {args.league}, its start-ups included: {whole:.2f} s"
        )
    bare = statistics.median(measured.floors)
    # Each round's match against the floor measured just before it (the load changes from one
    # minute to the next): the median of those ratios.
    z = statistics.median(d / f for d, f in zip(measured.per_decision, measured.floors, strict=True))
    print(f"floor: {bare * 1000:.3f} ms per exchange (median of {len(measured.floors)} runs of {args.exchanges}); "
          f"match {statistics.median(measured.per_decision) * 1000:.3f} ms per decision asked "
          f"(median of {len(measured.per_decision)})")  # fmt: skip
    for name, ratios in measured.what_if.items():
        print(f"what if: {name}: {statistics.median(ratios):.2f} x bare stream (median of {len(ratios)})")
    if measured.timeline:
        medians = (f"{name} {statistics.median(times) * 1e6:.0f}" for name, times in measured.timeline.items())
        print(
            "timeline: a floor exchange and a match's decision asked, us (medians over the rounds): "
            + ", ".join(medians)
        )
    print(
        f"match: {statistics.median(measured.loop_ms):.0f} ms/match, {statistics.median(measured.rates):.0f} "
        f"decisions/s, overhead {z:.2f} x bare stream"
    )
    figures = {
        "loop_ms": statistics.median(measured.loop_ms),
        "rate": statistics.median(measured.rates),
        "overhead": z,
        "per_decision_ms": statistics.median(measured.per_decision) * 1000,
        "floor_ms": bare * 1000,
        "match_cpu": m,
        "selfplay_cpu": s,
        "league_cpu": league,
        "league_whole": whole,
        "kept_bound": kept_bound,
    }
    print("figures: " + json.dumps(figures))


def both_builds() -> None:
    """Run this bench once per build (``BARBU_PURE``), show each run, then both side by side."""
    figures = {}
    for build, pure in (("pure", "1"), ("compiled", "0")):
        run = subprocess.run(
            [PY, __file__, *sys.argv[1:], "--one-build"],
            env={**os.environ, "BARBU_PURE": pure},
            capture_output=True,
            text=True,
        )
        lines = run.stdout.splitlines()
        for line in lines:
            if not line.startswith("figures: "):
                print(f"[{build}] {line}")
        if run.returncode != 0:
            sys.exit(f"bench/match.py: the {build} run failed:\n{run.stderr[-3000:]}")
        figures[build] = json.loads(lines[-1].removeprefix("figures: "))
    p, c = figures["pure"], figures["compiled"]
    rows = [
        ("loop per decision asked, ms", "per_decision_ms"),
        ("gRPC floor per exchange, ms", "floor_ms"),
        ("loop / floor (goal <= 1.3)", "overhead"),
        ("CPU of arbiter match, s", "match_cpu"),
        ("CPU of selfplay, s", "selfplay_cpu"),
        ("league CPU per match (bots kept), s", "league_cpu"),
        ("  the same with its start-ups, s", "league_whole"),
        ("lower bound with the bots kept, s", "kept_bound"),
    ]
    print(f"{'':38}{'pure':>10}{'compiled':>10}")
    for label, key in rows:
        print(f"{label:38}{p[key]:10.3f}{c[key]:10.3f}")
    pl, cl = p["league_cpu"] / p["kept_bound"], c["league_cpu"] / c["kept_bound"]
    print(f"{'league CPU / bound (goal <= 1.5)':38}{pl:10.2f}{cl:10.2f}")
    print(
        f"match: {c['loop_ms']:.0f} ms/match, {c['rate']:.0f} decisions/s, overhead {c['overhead']:.2f} x bare stream "
        f"(pure {p['overhead']:.2f} x); league CPU {cl:.2f} x bound (pure {pl:.2f} x)"
    )


@dataclass
class Rounds:
    """What :func:`rounds` measured, one entry per round."""

    floors: list[float] = field(default_factory=list)  # seconds per exchange
    floor_cpu: list[float] = field(default_factory=list)  # CPU seconds per exchange, both ends
    per_decision: list[float] = field(default_factory=list)  # match loop seconds per decision asked
    loop_ms: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)  # decisions asked per second
    what_if: dict[str, list[float]] = field(default_factory=dict)  # --what-if: loop / floor, by change
    timeline: dict[str, list[float]] = field(default_factory=dict)  # --timeline: seconds, by part


async def rounds(args: argparse.Namespace, workdir: Path) -> Rounds:
    """The floor and a match of four echo bots, in turn, ``args.matches`` times; then the bot
    start-up."""
    realistic = match_requests(seed=12345)
    size = statistics.median(len(r) for r in realistic)
    exchanges = (realistic * (args.exchanges // len(realistic) + 1))[: args.exchanges]
    out = Rounds()
    host = MatchHost(reuse=True)
    try:
        for i in range(args.matches):
            split: list[tuple[float, float]] = []
            bare, reply, cpu = await floor(exchanges, workdir, split=split)
            out.floors.append(bare)
            out.floor_cpu.append(cpu)
            played = await host.play(
                [BotSpec(f"echo{s}", ECHO) for s in range(4)],
                MatchSetup(make_ruleset(), seed=i),
                workdir / f"m{i}.jsonl",
            )
            r = played.result
            assert r.status == "complete" and not r.faults, r.faults
            out.per_decision.append(played.play_seconds / r.decisions)
            out.rates.append(r.decisions / played.play_seconds)
            out.loop_ms.append(played.play_seconds * 1000)
            print(
                f"round {i}: floor {bare * 1000:.3f} ms/exchange (request {size:.0f} B, reply {reply:.0f} B); "
                f"match {r.decisions} decisions asked, loop {played.play_seconds * 1000:.0f} ms, "
                f"{played.play_seconds / r.decisions * 1000:.3f} ms/decision = "
                f"{played.play_seconds / r.decisions / bare:.2f} x floor"
                + (f" (bots kept: seats {played.reused})" if played.reused else "")
            )
            if args.timeline:
                await timeline(host, i, split, workdir, out)
            for name, change in WHAT_IF.items() if args.what_if else ():
                fresh = MatchHost()  # bots that connect under the change
                try:
                    with replaced(change()):
                        other = await fresh.play(
                            [BotSpec(f"echo{s}", ECHO) for s in range(4)], MatchSetup(make_ruleset(), seed=i),
                            workdir / f"m{i}-{name}.jsonl",
                        )  # fmt: skip
                finally:
                    await fresh.close()
                assert other.result.status == "complete" and not other.result.faults, other.result.faults
                ratio = other.play_seconds / other.result.decisions / bare
                out.what_if.setdefault(name, []).append(ratio)
                print(f"round {i}: {name}: {ratio:.2f} x floor")
        if args.profile:
            await profile(host, workdir)
    finally:
        await host.close()
    hello, imports = await startup(args.startups, workdir)
    print(f"bot start-up up to its hello: {hello * 1000:.0f} ms; python -c 'import grpc': {imports * 1000:.0f} ms "
          f"({hello / imports:.2f} x; medians of {args.startups})")  # fmt: skip
    return out


async def timeline(host: MatchHost, i: int, split: list[tuple[float, float]], workdir: Path, out: Rounds) -> None:
    """``--timeline``: the round's floor exchange in its two parts, and a match's decision in its
    four, beside each other (the same kept bots, marks taken as it plays)."""
    marks: list[tuple[str, float]] = []
    with replaced(timeline_marks(marks)):
        played = await host.play(
            [BotSpec(f"echo{s}", ECHO) for s in range(4)], MatchSetup(make_ruleset(), seed=i), workdir / f"t{i}.jsonl"
        )
    assert played.result.status == "complete" and not played.result.faults, played.result.faults
    parts = {
        "floor write": statistics.median(w for w, _ in split),
        "floor wait": statistics.median(r for _, r in split),
        **{f"match {name}": seconds for name, seconds in timeline_parts(marks).items()},
    }
    for name, seconds in parts.items():
        out.timeline.setdefault(name, []).append(seconds)
    print(f"round {i}: timeline, us (medians): " + ", ".join(f"{k} {v * 1e6:.0f}" for k, v in parts.items()))


async def profile(host: MatchHost, workdir: Path) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    played = await host.play(
        [BotSpec(f"echo{s}", ECHO) for s in range(4)], MatchSetup(make_ruleset(), seed=99), workdir / "p.jsonl"
    )
    profiler.disable()
    print(f"profile of one match ({played.result.decisions} decisions, loop {played.play_seconds * 1000:.0f} ms):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
