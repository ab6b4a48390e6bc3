"""barbu.runner against a real gRPC server on a real Unix socket, with the random sample bot
running as a real subprocess."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from barbu.bot import Bot
from barbu.rules import Phase, apply, deal, new_match, observe, ruleset_from_json, shuffle_hands
from barbu.runner import run
from barbu.v1 import arbiter_pb2_grpc as pb_grpc
from barbu.wire import PROTOCOL_VERSION, WireError, action_from_proto, legal_to_proto, pb, view_to_proto

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
TOKEN = "s3cret-seat-2"
SEAT = 2


class ScriptedArbiter(pb_grpc.ArbiterServicer):
    """A minimal arbiter: checks the hello, then plays `deals` deals of a real match, sending
    every decision of every seat to the one bot connected (it is stateless), and records what
    came back. Assertions happen in the test thread, from the records."""

    def __init__(self, deals: int, rules_json: dict | None = None, seed: int = 11, matches: int = 1):
        self.deals = deals
        self.matches = matches  # more than one only for a bot that declared multi_match
        self.rules_json = rules_json or {"preset": "standard"}
        self.seed = seed
        self.hello: pb.Hello | None = None
        self.exchanges: list[tuple[int, tuple, pb.BotMessage]] = []  # (request id, legal, reply)
        self.problems: list[str] = []
        self.deal_ends = 0
        self.half_closed = threading.Event()
        self.finished = threading.Event()

    def Play(self, request_iterator, context):
        try:
            yield from self._play(request_iterator, context)
        finally:
            self.finished.set()

    def _play(self, request_iterator, context):
        first = next(request_iterator)
        if first.WhichOneof("msg") != "hello":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the first message must be a hello")
        self.hello = first.hello
        if first.hello.token != TOKEN:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "unknown token: no seat is waiting for it")
        for match in range(self.matches if first.hello.multi_match else 1):
            yield from self._match(request_iterator, match)
        if first.hello.multi_match:
            # A multi-match bot does not half-close after MatchEnd: it waits for another match,
            # and exits when the arbiter ends the stream (as here).
            self.half_closed.set()
            return
        # A clean client half-closes its side after the match end.
        for extra in request_iterator:
            self.problems.append(f"message after the match end: {extra}")
        self.half_closed.set()

    def _match(self, request_iterator, match: int):
        rules = ruleset_from_json(self.rules_json)
        state = new_match(rules, first_declarer=1)
        rng = random.Random(self.seed)
        yield pb.ArbiterMessage(
            match_start=pb.MatchStart(
                match_id="test-match" if match == 0 else f"test-match-{match + 1}",
                seat=SEAT,
                rules_json=json.dumps(self.rules_json),
                entrants=["north", "east", "random", "west"],
                deals=rules.deals_per_match,
                decision_seconds=1.0,
                reserve_seconds=30.0,
                view=view_to_proto(observe(state, SEAT)),
            )
        )
        request_id = 1000
        while state.deal_index < self.deals:
            if state.phase is Phase.DEAL:
                deal(state, shuffle_hands(rng))
                continue
            view = observe(state, state.turn)
            request_id += 3  # ids need not be consecutive: the bot must echo them
            yield pb.ArbiterMessage(
                request=pb.DecisionRequest(
                    request_id=request_id,
                    view=view_to_proto(view),
                    legal=legal_to_proto(view.legal),
                    decision_seconds=1.0,
                    reserve_seconds=30.0,
                )
            )
            reply = next(request_iterator)
            self.exchanges.append((request_id, view.legal, reply))
            action = view.legal[0]
            if reply.WhichOneof("msg") != "reply" or reply.reply.request_id != request_id:
                self.problems.append(f"request {request_id}: got {reply}")
            else:
                try:
                    answer = action_from_proto(reply.reply.action, view.phase)
                except WireError as e:
                    self.problems.append(f"request {request_id}: malformed: {e}")
                else:
                    if answer in view.legal:
                        action = answer
                    else:
                        self.problems.append(f"request {request_id}: illegal {answer!r}")
            apply(state, action)
            if state.phase in (Phase.DEAL, Phase.OVER):
                self.deal_ends += 1
                yield pb.ArbiterMessage(deal_end=pb.DealEnd(view=view_to_proto(observe(state, SEAT))))
        yield pb.ArbiterMessage(
            match_end=pb.MatchEnd(
                status="aborted",
                totals=state.totals,
                places=state.places(),
                view=view_to_proto(observe(state, SEAT)),
                reason=f"test: stopped after {self.deals} deals",
            )
        )


@pytest.fixture
def socket_dir(tmp_path):
    # Unix socket paths are limited to ~107 bytes; pytest's tmp_path can be long under xdist.
    if len(str(tmp_path)) < 80:
        yield tmp_path
    else:
        with tempfile.TemporaryDirectory(prefix="barbu-") as d:
            yield Path(d)


@pytest.fixture
def serve(socket_dir):
    servers = []

    def start(servicer):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pb_grpc.add_ArbiterServicer_to_server(servicer, server)
        address = f"unix:{socket_dir / f'arbiter{len(servers)}.sock'}"
        server.add_insecure_port(address)
        server.start()
        servers.append(server)
        return address

    yield start
    for server in servers:
        server.stop(grace=None)


def run_bot(address: str | None, token: str | None = TOKEN, seed: str = "7", timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BARBU_")}
    env["BARBU_SEED"] = seed
    if address is not None:
        env["BARBU_ARBITER"] = address
    if token is not None:
        env["BARBU_TOKEN"] = token
    return subprocess.run(
        [sys.executable, str(RANDOM_BOT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_random_bot_plays_legal_moves_and_exits_cleanly(serve):
    # A whole block of 7 deals: every contract of the standard menu, Domino included.
    arbiter = ScriptedArbiter(deals=7)
    address = serve(arbiter)
    proc = run_bot(address)
    assert proc.returncode == 0, proc.stderr
    assert arbiter.hello is not None
    assert arbiter.hello.protocol_version == PROTOCOL_VERSION == 1
    assert arbiter.hello.token == TOKEN
    assert (arbiter.hello.bot_name, arbiter.hello.bot_version) == ("random", "1")
    assert arbiter.problems == []
    assert len(arbiter.exchanges) > 7 * 40
    assert arbiter.deal_ends == 7
    assert arbiter.half_closed.wait(5), "the bot did not close its side of the stream"
    # The random bot really chooses among the legal actions, not always the first one.
    chosen = [action_from_proto(r.reply.action, Phase.PLAY) for _, legal, r in arbiter.exchanges
              if len(legal) > 1 and r.reply.action.WhichOneof("kind") == "play" and legal[0] is not None
              and not getattr(r.reply.action.play, "pass")]  # fmt: skip
    assert len(set(chosen)) > 10
    # One line at the start, one at the end.
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr
    assert "INFO" in lines[0] and f"bot random 1 in match test-match at {address}: seat 2" in lines[0]
    assert "INFO" in lines[1] and "match test-match ended (aborted: test: stopped after 7 deals)" in lines[1]


def test_same_seed_same_choices(serve):
    first, second = ScriptedArbiter(deals=1), ScriptedArbiter(deals=1)
    assert run_bot(serve(first), seed="5").returncode == 0
    assert run_bot(serve(second), seed="5").returncode == 0
    assert [r.reply.action for _, _, r in first.exchanges] == [r.reply.action for _, _, r in second.exchanges]


def test_bad_token_is_one_clear_line_and_exit_1(serve):
    arbiter = ScriptedArbiter(deals=1)
    proc = run_bot(serve(arbiter), token="wrong")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ERROR" in lines[0] and "PERMISSION_DENIED" in lines[0] and "unknown token" in lines[0]
    assert arbiter.exchanges == []


def test_unreachable_arbiter_is_one_clear_line(socket_dir):
    address = f"unix:{socket_dir / 'nobody-listens.sock'}"
    proc = run_bot(address, timeout=60)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "ERROR" in lines[0] and f"cannot reach the arbiter at {address}" in lines[0] and "UNAVAILABLE" in lines[0]


@pytest.mark.parametrize(
    "address, token, missing",
    [(None, TOKEN, "BARBU_ARBITER"), ("unix:/tmp/x.sock", None, "BARBU_TOKEN"), ("", TOKEN, "BARBU_ARBITER")],
)
def test_missing_environment_exits_2(address, token, missing):
    proc = run_bot(address, token=token, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and missing in lines[0], proc.stderr


# ---- in-process runs: the runner's handling of a failing bot ---------------------------------
class CrashingBot(Bot):
    name = "crasher"

    def __init__(self):
        self.calls = 0

    def decide(self, view):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("boom")
        return view.legal[0]


class GarbageBot(Bot):
    name = "garbage"

    def __init__(self):
        self.seen: list[tuple[float, float]] = []
        self.ended = []

    def decide(self, view):
        self.seen.append((self.decision_seconds, self.reserve_seconds))
        return "not an action" if len(self.seen) == 2 else view.legal[-1]

    def on_match_end(self, view):
        self.ended.append(view)


def test_a_crashing_bot_ends_the_session_with_exit_1(serve, capsys):
    arbiter = ScriptedArbiter(deals=1)
    assert run(CrashingBot(), address=serve(arbiter), token=TOKEN) == 1
    assert "the bot failed" in capsys.readouterr().err
    assert len(arbiter.exchanges) == 2
    assert arbiter.finished.wait(5)


def test_an_unsendable_answer_is_sent_empty_and_play_goes_on(serve, capsys):
    arbiter = ScriptedArbiter(deals=1)
    bot = GarbageBot()
    assert run(bot, address=serve(arbiter), token=TOKEN) == 0
    err = capsys.readouterr().err
    assert "cannot be sent" in err and "'not an action'" in err
    assert len(arbiter.problems) == 1
    assert arbiter.problems[0].startswith(f"request {arbiter.exchanges[1][0]}: malformed: expected a double action")
    assert arbiter.problems[0].endswith("got an empty action")
    assert bot.seen[0] == (1.0, 30.0)
    assert len(bot.ended) == 1 and bot.ended[0].deal == 1 and len(bot.ended[0].results) == 1


# ---- several matches on one stream (Hello.multi_match) --------------------------------------
def test_the_random_bot_declares_multi_match_and_plays_the_next_match_on_the_same_stream(serve):
    arbiter = ScriptedArbiter(deals=1, matches=2)  # the same deal twice: a seeded bot replays it
    proc = run_bot(serve(arbiter), seed="9")
    assert proc.returncode == 0, proc.stderr
    assert arbiter.hello.multi_match is True
    assert arbiter.problems == [] and arbiter.deal_ends == 2
    half = len(arbiter.exchanges) // 2
    first, second = arbiter.exchanges[:half], arbiter.exchanges[half:]
    assert [r.reply.action for _, _, r in first] == [r.reply.action for _, _, r in second]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 4, proc.stderr  # start and end of each match; the stream's end is quiet
    assert "in match test-match at" in lines[0] and "in match test-match-2 at" in lines[2]


class OneMatchBot(Bot):
    name = "one-match"  # multi_match stays False: the default


def test_a_bot_without_multi_match_half_closes_after_its_match(serve):
    arbiter = ScriptedArbiter(deals=1, matches=2)
    assert run(OneMatchBot(), address=serve(arbiter), token=TOKEN) == 0
    assert arbiter.hello.multi_match is False
    assert arbiter.half_closed.wait(5) and arbiter.problems == [] and arbiter.deal_ends == 1
