"""``arbiter check-bot``: a conformance session for a bot program, before it enters a tournament.

Like the tools that check a chess engine before a tournament, it runs the bot for real (a
process started from its command line, speaking gRPC to a real arbiter) and reports each step
of the protocol as passed or failed, with the reason:

* it starts, connects and says hello within the connect limit;
* it answers every kind of decision: each contract, the trump suit and the Domino start rank,
  doubling with and without a chance to redouble, the double forced by the quota, trick play in
  every trick contract, Domino plays and Domino passes;
* it answers only with legal, well-formed actions and with the request id it was asked;
* every decision keeps within the per-decision time limit (no reserve is granted here);
* it stays in the session through MatchStart, every DealEnd and MatchEnd;
* it exits with code 0 within a few seconds after MatchEnd.

The bot sits in seat 0 of two matches against three in-process random players:

1. **standard**: a full 28-deal match on standard rules with the bot first declarer, so it
   declares all seven contracts; single-choice decisions are *not* made for it
   (``auto_single=False``), so it is also asked its forced Domino passes and its pass as a
   declarer nobody doubled. In the last block it doubles first, without redouble chances; in
   the first, the quota makes every opponent double it at least twice, which gives it
   redouble chances.
2. **quota**: a short match (8 deals: Barbu and Domino only) with the tournament setting
   ``auto_single=True`` (single choices are made for the bot and only show in its views).
   With only two deals per block, the quota (2 doubles of each declarer per block) forces
   every non-declarer to double the declarer in every deal, so the bot meets the forced
   double whatever it does by itself.

Coverage is read from what the bot was actually asked: a situation that never came up is a
failed step ("never asked"), never a vacuous pass. Faults come from the referee's
:class:`~arbiter.referee.MatchResult` and from the requests themselves, and each fails the step
it belongs to with its detail.
"""

from __future__ import annotations

import logging
import shlex
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from barbu.rules import MatchState, make_ruleset, observe

from arbiter.compliance.build import OUTPUT_LINES, last_lines
from arbiter.compliance.judges import JUDGES, TRICK_CONTRACTS, Decision, Evidence, SessionRecord, tags_of
from arbiter.errors import ConfigError
from arbiter.match.blocking import MatchOptions, run_blocking
from arbiter.match.play import BotSpec, MatchHost
from arbiter.model import Transport
from arbiter.process.bot import BotProcess
from arbiter.process.limits import Limits
from arbiter.referee.faults import FaultKind, FaultPolicy, PlayerFault
from arbiter.referee.loop import MatchSetup
from arbiter.referee.players import Player, RandomPlayer
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.remote import RemotePlayer

__all__ = ["STEPS", "CheckReport", "Step", "check_bot", "check_bot_line"]


# Every step, in report order, with what it checks.
STEPS: tuple[tuple[str, str], ...] = (
    ("start", "the bot process starts"),
    ("hello", "it connects and says hello (right token, protocol version 1) within the connect limit"),
    ("declare-contracts", "as declarer it names each of the 7 contracts once"),
    ("declare-trump-suit", "it names a trump suit with Trumps"),
    ("declare-domino-start", "it names a start rank with Domino"),
    ("double-no-redouble-chance", "it answers doubling requests where nobody has doubled it"),
    ("double-redouble-chance", "it answers doubling requests where it may redouble"),
    ("double-forced-by-quota", "it answers doubling requests where the quota forces it to double the declarer"),
    *((f"play-{c}", f"it plays cards in {c}") for c in TRICK_CONTRACTS),
    ("domino-play", "it plays cards in Domino"),
    ("domino-pass", "it passes in Domino"),
    ("legal-actions", "every answer is well-formed and one of the request's legal actions"),
    ("request-ids", "every reply carries the request id it answers; nothing else is sent"),
    ("time-limit", "every decision is answered within the per-decision time limit"),
    ("informational-messages", "it stays in the session through MatchStart, every DealEnd and MatchEnd"),
    ("multi-match", "if its hello says multi_match, it plays the next match on the same process and stream"),
    ("clean-exit", "it exits with code 0 within a few seconds after MatchEnd"),
)
STEP_NAMES = tuple(name for name, _ in STEPS)


@dataclass
class Step:
    name: str
    ok: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class CheckReport:
    command: str
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0
    logs: Path | None = None  # where the match logs and the bot's output were kept, if asked
    pids: list[int] = field(default_factory=list)  # the bot processes started (all killed by now)
    output: str = ""  # the last OUTPUT_LINES lines the bot printed (both matches), shown when a step fails

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)

    @property
    def failed(self) -> list[Step]:
        return [s for s in self.steps if not s.ok]

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "steps": [s.to_json() for s in self.steps], "output": self.output}

    def render(self) -> str:
        width = max(len(n) for n in STEP_NAMES)
        lines = [f"check-bot: {self.command}"]
        lines += [f"  {'PASS' if s.ok else 'FAIL'}  {s.name:<{width}}  {s.detail}" for s in self.steps]
        if self.ok:
            lines.append(f"ok: all {len(self.steps)} steps passed in {self.seconds:.1f}s")
        else:
            names = ", ".join(s.name for s in self.failed)
            lines.append(
                f"FAILED: {len(self.failed)} of {len(self.steps)} steps failed ({names}) in {self.seconds:.1f}s"
            )
        if self.logs is not None:
            lines.append(f"logs and the bot's output: {self.logs}")
        if not self.ok and self.output:
            lines += [f"the bot's output (its last {OUTPUT_LINES} lines):", self.output]
        return "\n".join(lines)


def _recorder(inner: RemotePlayer, outcome: SessionRecord, connect_timeout: float) -> Player:
    """The bot's player (``inner``), recording every exchange into ``outcome``."""

    class Recorder(Player):
        name = inner.name

        async def start(self, seat: int, view: Any) -> None:
            _note_connection(inner, outcome, connect_timeout)
            await inner.start(seat, view)

        async def decide(
            self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None
        ) -> Any:
            view = observe(state, seat)
            contract = view.contract.value if view.contract is not None else None
            record = Decision(
                outcome.label,
                inner.next_request_id,
                view.deal,
                view.phase.name.lower(),
                contract,
                tags_of(view),
                tuple(view.legal),
                doubled_by=frozenset(s for s, targets in view.doubles if view.seat in targets),
            )
            outcome.decisions.append(record)
            started = time.perf_counter()
            try:
                action = await inner.decide(state, seat, time_limit, sent)
            except PlayerFault as f:
                record.elapsed = time.perf_counter() - started
                record.fault = f
                raise
            record.elapsed = time.perf_counter() - started
            record.answered = True
            record.action = action
            record.legal_answer = action in view.legal
            return action

        async def deal_ended(self, state: MatchState, seat: int) -> None:
            await inner.deal_ended(state, seat)
            outcome.deal_ends += 1

        async def match_ended(self, view: Any) -> None:
            await inner.match_ended(view)
            outcome.match_end_sent = True

        async def close(self) -> None:
            await inner.close()

    return Recorder()


def _note_connection(remote: RemotePlayer, out: SessionRecord, connect_timeout: float) -> None:
    """How the bot joined the match (the host has waited for it), or why it did not."""
    session, process = remote.session, remote.process
    assert isinstance(process, BotProcess)
    out.started, out.pid = True, process.pid
    if not session.connected.is_set():
        if session.refusal:
            out.connect_error = session.refusal
        elif process.exit_code() is not None:
            out.connect_error = "never connected: " + process.describe_exit()
        else:
            out.connect_error = f"did not connect and say hello within {connect_timeout:g}s"
        out.exit_detail = process.describe_exit()
        return
    hello = session.hello
    assert hello is not None  # connected: its hello arrived
    out.connected = True
    out.hello = f"as {hello.bot_name or '(no name)'!r} version {hello.bot_version or '(none)'!r}"
    out.multi_match = bool(hello.multi_match)


# ---- running one session ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Plan:
    label: str
    rules: Any
    auto_single: bool
    seed: int


def _plans(seed: int) -> list[_Plan]:
    return [
        _Plan("standard", make_ruleset("standard"), auto_single=False, seed=seed),
        _Plan("quota", make_ruleset("standard", {"contracts": ["barbu", "domino"]}), auto_single=True, seed=seed + 1),
    ]


async def _play_session(
    host: MatchHost,
    plan: _Plan,
    bot: BotSpec,
    control: TimeControl,
    *,
    exit_grace: float,
    folder: Path,
    env: dict[str, str] | None,
    last: bool,
    isolation: str,
    limits: Limits,
) -> SessionRecord:
    """One match of the check, played by the match host as a tournament plays one; ``last``: no
    match follows (a multi-match bot is kept for the next one only if one follows)."""
    out = SessionRecord(plan.label)
    opponents = [RandomPlayer(seed=f"check/{plan.seed}/{s}", name=f"random-{s}") for s in (1, 2, 3)]
    match_id = f"check-bot-{plan.label}"
    setup = MatchSetup(plan.rules, seed=plan.seed, first_declarer=0, match_id=match_id, auto_single=plan.auto_single)
    out.log_path = folder / f"{match_id}.jsonl"
    try:
        played = await host.play(
            [bot, *opponents],
            setup,
            out.log_path,
            MatchOptions(
                time_control=control,
                fault_policy=FaultPolicy(max_strikes=3),
                reuse=not last,
                env=env,
                exit_grace=exit_grace,
                isolation=isolation,
                limits=limits,
                wrap=lambda _seat, remote: _recorder(remote, out, control.connect),
            ),
        )
    except ConfigError as e:
        out.start_error = str(e)
        return out
    result = played.result
    if out.connected:
        out.ran = True
        out.status = result.status if not result.reason else f"{result.status} ({result.reason})"
        out.deals = result.deals
        out.faults = [f for f in result.faults if f.seat == 0]
        out.forfeit = 0 in result.forfeits
    # Timeouts the referee measured but the recorder did not see as a fault.
    for f in out.faults:
        if f.kind is FaultKind.TIMEOUT:
            for d in out.decisions:
                if d.deal == f.deal and d.fault is None and d.elapsed > control.per_decision and d.answered:
                    d.fault = f
                    break
    out.reused, out.handed_on = 0 in played.reused, 0 in played.kept
    out.connect_seconds = played.connect_seconds  # launch (or hand-over) until its hello
    end = played.exits.get(0)
    if end is not None:
        out.exit_code, out.exit_seconds = end.code, end.seconds
        out.exit_detail = out.exit_detail or end.detail
    return out


async def _play_sessions(
    command: str,
    control: TimeControl,
    *,
    seed: int,
    exit_grace: float,
    folder: Path,
    cwd: str | None,
    env: dict[str, str] | None,
    listen: str | None,
    isolation: str,
    limits: Limits,
    transport: Transport,
) -> list[SessionRecord]:
    """The check's matches, on one match host: a bot that said multi_match plays the next one on
    the same process and stream, as in a tournament."""
    bot = BotSpec("bot", command, cwd, transport=transport)
    plans = _plans(seed)
    sessions: list[SessionRecord] = []
    async with MatchHost(listen=listen, reuse=True) as host:
        for i, plan in enumerate(plans):
            s = await _play_session(
                host,
                plan,
                bot,
                control,
                exit_grace=exit_grace,
                folder=folder,
                env=env,
                last=i == len(plans) - 1,
                isolation=isolation,
                limits=limits,
            )
            sessions.append(s)
            if not s.connected:
                # Starting again will not help; report the rest as not reached.
                sessions += [
                    SessionRecord(
                        later.label, started=s.started, start_error=s.start_error, connect_error=s.connect_error
                    )
                    for later in plans[len(sessions) :]
                ]
                break
    return sessions


assert tuple(JUDGES) == STEP_NAMES, "every step has one judge, in report order"


def _judge(sessions: list[SessionRecord], time_limit: float, exit_grace: float) -> list[Step]:
    evidence = Evidence(sessions, time_limit, exit_grace)
    return [Step(name, *judge(name, evidence)) for name, judge in JUDGES.items()]


# ---- the entry points ---------------------------------------------------------------------------
def check_bot_line(
    command: str, *, time_limit: float, connect_timeout: float, isolation: str, limits: Limits, transport: str
) -> str:
    """The ``arbiter check-bot`` command line that runs this very check of ``command`` (a
    shell-style string, run from the bot's folder): its isolation, limits, times and transport."""
    words = ["arbiter", "check-bot", "--isolation", str(isolation)]
    words += ["--time-per-decision", f"{time_limit:g}", "--connect", f"{connect_timeout:g}"]
    if transport != Transport.UNIX:
        words += ["--transport", str(transport)]
    default = Limits()
    for f in fields(Limits):
        value = getattr(limits, f.name)
        if value != getattr(default, f.name):
            words += ["--limit", f"{f.name}={'unlimited' if value is None else value}"]
    return f"{shlex.join(words)} -- {command}"


def check_bot(
    command: list[str] | str,
    time_limit: float = 2.0,
    *,
    connect_timeout: float = 10.0,
    exit_grace: float = 5.0,
    match_limit: float = 300.0,
    seed: int = 1,
    listen: str | None = None,
    logs: str | Path | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    isolation: str = "none",
    limits: Limits = Limits(),
    transport: str = "unix",
) -> CheckReport:
    """Run the bot ``command`` through the conformance sessions; returns the report.

    ``command`` is an argument list or a shell-style string (split with ``shlex``, no shell);
    a bare ``python`` or ``python3`` runs the arbiter's own interpreter, as in tournament files.
    ``time_limit`` is the per-decision limit in seconds (no reserve); ``connect_timeout`` the
    time to start, connect and say hello; ``exit_grace`` the time to exit after MatchEnd;
    ``match_limit`` a wall-clock watchdog per match; ``logs`` a folder where the match logs and
    the bot's output are kept (a temporary folder, removed, otherwise); ``cwd`` and ``env`` the
    bot's working folder and extra environment; ``listen`` a ``host:port`` for the arbiter
    (port 0: any free port) instead of a private Unix socket; ``isolation`` and ``limits`` how
    the bot is kept from the machine, as in a tournament (an arena checks uploads in bubblewrap);
    ``transport`` how it reaches the arbiter (``tcp``: a loopback TCP address, as an entrant's).
    """
    if not time_limit > 0:
        raise ValueError(f"the time limit must be positive, got {time_limit!r}")
    text = shlex.join(command) if isinstance(command, (list, tuple)) else str(command)
    report = CheckReport(command=text)
    launch = text  # the launcher resolves a bare `python` to the arbiter's interpreter
    started = time.perf_counter()
    keep = logs is not None
    folder = Path(logs) if logs is not None else Path(tempfile.mkdtemp(prefix="barbu-checkbot-"))
    folder.mkdir(parents=True, exist_ok=True)
    # The referee and the host warn about every fault; here the report says it, once, in its place.
    quiet = [logging.getLogger(name) for name in ("arbiter.referee", "arbiter.match")]
    levels = [q.level for q in quiet]
    for q in quiet:
        q.setLevel(logging.ERROR)
    control = TimeControl(per_decision=time_limit, reserve=0.0, connect=connect_timeout, match_limit=match_limit)
    try:
        play = _play_sessions(
            launch,
            control,
            seed=seed,
            exit_grace=exit_grace,
            folder=folder,
            cwd=cwd,
            env=env,
            listen=listen,
            isolation=isolation,
            limits=limits,
            transport=Transport(transport),
        )
        sessions = run_blocking(play)
        report.steps = _judge(sessions, time_limit, exit_grace)
        report.pids = [s.pid for s in sessions if s.pid]
        outputs = [
            s.log_path.with_name(s.log_path.name.replace(".jsonl", ".seat0.stderr")) for s in sessions if s.log_path
        ]
        printed = "\n".join(text for path in outputs if path.is_file() and (text := last_lines(path)))
        report.output = "\n".join(printed.splitlines()[-OUTPUT_LINES:])
    finally:
        for q, level in zip(quiet, levels, strict=True):
            q.setLevel(level)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    report.logs = folder if keep else None
    return report
