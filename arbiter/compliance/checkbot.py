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
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from barbu.rules import STANDARD_CONTRACTS, Contract, Declaration, MatchState, Phase, make_ruleset, observe
from barbu.rules.cards import RANKS, SUITS

from arbiter.errors import ConfigError
from arbiter.match.blocking import run_blocking
from arbiter.match.play import BotSpec, MatchHost
from arbiter.process.bot import BotProcess
from arbiter.referee.faults import TERMINAL, FaultKind, FaultPolicy, PlayerFault
from arbiter.referee.loop import MatchSetup
from arbiter.referee.players import Player, RandomPlayer
from arbiter.referee.timecontrol import TimeControl
from arbiter.transport.remote import RemotePlayer

__all__ = ["STEPS", "CheckReport", "Step", "check_bot"]

TRICK_CONTRACTS = ("no_tricks", "no_hearts", "no_queens", "barbu", "no_last_two", "trumps")

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
        return {"ok": self.ok, "steps": [s.to_json() for s in self.steps]}

    def render(self) -> str:
        width = max(len(n) for n in STEP_NAMES)
        lines = [f"check-bot: {self.command}"]
        for s in self.steps:
            lines.append(f"  {'PASS' if s.ok else 'FAIL'}  {s.name:<{width}}  {s.detail}")
        if self.ok:
            lines.append(f"ok: all {len(self.steps)} steps passed in {self.seconds:.1f}s")
        else:
            names = ", ".join(s.name for s in self.failed)
            lines.append(
                f"FAILED: {len(self.failed)} of {len(self.steps)} steps failed ({names}) in {self.seconds:.1f}s"
            )
        if self.logs is not None:
            lines.append(f"logs and the bot's output: {self.logs}")
        return "\n".join(lines)


# ---- what happened in one session ----------------------------------------------------------
@dataclass
class _Decision:
    session: str
    request_id: int
    deal: int
    phase: str
    contract: str | None
    tags: tuple[str, ...]
    legal: tuple[Any, ...]
    action: Any = None
    answered: bool = False  # a well-formed answer arrived (legal or not)
    legal_answer: bool = False
    fault: Any = None  # the PlayerFault raised while asking, if any
    elapsed: float = 0.0
    doubled_by: frozenset[int] = frozenset()  # doubling: the seats that had doubled the bot

    def where(self) -> str:
        what = self.phase if self.contract is None or self.phase == "declare" else f"{self.phase} in {self.contract}"
        return f"{self.session} match, deal {self.deal}, request {self.request_id} ({what})"


@dataclass
class _Session:
    label: str
    started: bool = False
    start_error: str = ""
    pid: int = 0
    connected: bool = False
    connect_seconds: float = 0.0
    connect_error: str = ""
    hello: str = ""
    ran: bool = False
    status: str = ""
    deals: int = 0
    deal_ends: int = 0  # DealEnd messages handed to the bot's stream
    match_start_sent: bool = False
    match_end_sent: bool = False
    faults: list[Any] = field(default_factory=list)  # FaultRecords of the bot's seat
    forfeit: bool = False
    decisions: list[_Decision] = field(default_factory=list)
    exit_code: int | None = None
    exit_seconds: float | None = None
    exit_detail: str = ""
    log_path: Path | None = None
    multi_match: bool = False  # its hello said it can play several matches
    reused: bool = False  # played by the previous match's process, on its stream
    handed_on: bool = False  # its process and stream were kept for the next match


def _tags(view: Any) -> tuple[str, ...]:
    """The situations a decision request exercises."""
    phase = view.phase
    if phase is Phase.DECLARE:
        return ("declare",)
    if phase is Phase.DOUBLE:
        seat, declarer = view.seat, view.declarer
        doubled_me = {s for s, targets in view.doubles if seat in targets}
        tags = []
        if any(t in doubled_me for action in view.legal for t in action):
            tags.append("double-redouble-chance")
        else:
            tags.append("double-no-redouble-chance")
        if seat != declarer and all(declarer in action for action in view.legal):
            tags.append("double-forced-by-quota")
        return tuple(tags)
    if phase is Phase.PLAY:
        return (f"play-{view.contract.value}",)
    if phase is Phase.DOMINO:
        tags = []
        if any(a is not None for a in view.legal):
            tags.append("domino-play")
        if None in view.legal:
            tags.append("domino-pass")
        return tuple(tags)
    return ()


def _recorder(inner: RemotePlayer, outcome: _Session, connect_timeout: float) -> Player:
    """The bot's player (``inner``), recording every exchange into ``outcome``."""

    class Recorder(Player):
        name = inner.name

        async def start(self, seat: int, view: Any) -> None:
            _note_connection(inner, outcome, connect_timeout)
            await inner.start(seat, view)
            outcome.match_start_sent = True

        async def decide(
            self, state: MatchState, seat: int, time_limit: float, sent: Callable[[], None] | None = None
        ) -> Any:
            view = observe(state, seat)
            contract = view.contract.value if view.contract is not None else None
            record = _Decision(
                outcome.label, inner.next_request_id, view.deal, view.phase.name.lower(), contract,
                _tags(view), tuple(view.legal),
                doubled_by=frozenset(s for s, targets in view.doubles if view.seat in targets),
            )  # fmt: skip
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


def _note_connection(remote: RemotePlayer, out: _Session, connect_timeout: float) -> None:
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
    host: MatchHost, plan: _Plan, bot: BotSpec, control: TimeControl, *, exit_grace: float, folder: Path,
    env: dict[str, str] | None, last: bool,
) -> _Session:  # fmt: skip
    """One match of the check, played by the match host as a tournament plays one; ``last``: no
    match follows (a multi-match bot is kept for the next one only if one follows)."""
    out = _Session(plan.label)
    opponents = [RandomPlayer(seed=f"check/{plan.seed}/{s}", name=f"random-{s}") for s in (1, 2, 3)]
    match_id = f"check-bot-{plan.label}"
    setup = MatchSetup(plan.rules, seed=plan.seed, first_declarer=0, match_id=match_id, auto_single=plan.auto_single)
    out.log_path = folder / f"{match_id}.jsonl"
    try:
        played = await host.play(
            [bot, *opponents], setup, out.log_path, time_control=control, fault_policy=FaultPolicy(max_strikes=3),
            reuse=not last, env=env, exit_grace=exit_grace,
            wrap=lambda _seat, remote: _recorder(remote, out, control.connect),
        )  # fmt: skip
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
    end = played.exits.get(0)
    if end is not None:
        out.exit_code, out.exit_seconds = end.code, end.seconds
        out.exit_detail = out.exit_detail or end.detail
    return out


async def _play_sessions(
    command: str, control: TimeControl, *, seed: int, exit_grace: float, folder: Path, cwd: str | None,
    env: dict[str, str] | None, listen: str | None,
) -> list[_Session]:  # fmt: skip
    """The check's matches, on one match host: a bot that said multi_match plays the next one on
    the same process and stream, as in a tournament."""
    bot = BotSpec("bot", command, cwd)
    plans = _plans(seed)
    sessions: list[_Session] = []
    async with MatchHost(listen=listen, reuse=True) as host:
        for i, plan in enumerate(plans):
            s = await _play_session(
                host, plan, bot, control, exit_grace=exit_grace, folder=folder, env=env, last=i == len(plans) - 1
            )
            sessions.append(s)
            if not s.connected:
                # Starting again will not help; report the rest as not reached.
                for later in plans[len(sessions) :]:
                    sessions.append(
                        _Session(
                            later.label, started=s.started, start_error=s.start_error, connect_error=s.connect_error
                        )
                    )
                break
    return sessions


# ---- judging ------------------------------------------------------------------------------------
# Where a fault that cost the bot its seat is reported in full; other steps point there.
_ROOT_STEP = {
    "illegal": "legal-actions", "malformed": "legal-actions", "protocol": "request-ids",
    "timeout": "time-limit", "crash": "informational-messages", "disconnect": "informational-messages",
}  # fmt: skip


def _fault_text(fault: Any) -> str:
    kind = getattr(fault, "kind", "")
    return f"{getattr(kind, 'value', kind)}: {fault.detail}"


def _action_text(action: Any) -> str:
    from barbu.rules import Declaration, card_name

    if action is None:
        return "pass"
    if isinstance(action, Declaration):
        return str(action)
    if isinstance(action, tuple):
        return "double " + (",".join(map(str, action)) if action else "nobody (pass)")
    if isinstance(action, int) and 0 <= action < 52:
        return card_name(action)
    return repr(action)


def _not_reached(sessions: list[_Session]) -> str:
    """Why the bot may never have been asked something: it did not start, join, or stay."""
    for s in sessions:
        if not s.started:
            return "not reached: the bot did not start (see start)"
        if not s.connected:
            return f"not reached: the bot never joined the {s.label} match (see hello)"
        if s.forfeit:
            fatal = s.faults[-1] if s.faults else None
            if fatal is None:
                return f"not reached: the bot lost its seat in the {s.label} match"
            step = _ROOT_STEP.get(fatal.kind.value, "informational-messages")
            return f"not reached: the bot lost its seat in the {s.label} match at deal {fatal.deal} (see {step})"
    return ""


def _bad(d: _Decision) -> str | None:
    """What went wrong with one decision, or None."""
    if d.fault is not None:
        return _fault_text(d.fault)
    if d.answered and not d.legal_answer:
        return f"illegal: {_action_text(d.action)} is not one of the {len(d.legal)} legal actions"
    return None


def _replied(d: _Decision) -> bool:
    """A reply with the right request id arrived (well-formed or not)."""
    return d.answered or (d.fault is not None and d.fault.kind is FaultKind.MALFORMED)


# ---- the judges: one per step, or per family of steps -------------------------------------------
Verdict = tuple[bool, str]  # passed, and the detail shown beside the step


@dataclass
class _Evidence:
    """What the sessions showed, with the views several judges share."""

    sessions: list[_Session]
    time_limit: float
    exit_grace: float

    @cached_property
    def decisions(self) -> list[_Decision]:
        return [d for s in self.sessions for d in s.decisions]

    @cached_property
    def unreached(self) -> str:
        return _not_reached(self.sessions)

    @cached_property
    def declarations(self) -> list[_Decision]:
        return [d for d in self.decisions if "declare" in d.tags]

    @cached_property
    def bad_declaration(self) -> str:
        """The first wrong answer to a declaration request, or ""."""
        bad = [(d, why) for d in self.declarations if (why := _bad(d)) is not None]
        return f"{bad[0][0].where()}: {bad[0][1]}" if bad else ""

    @cached_property
    def replied(self) -> list[_Decision]:
        return [d for d in self.decisions if _replied(d)]


Judge = Callable[[str, _Evidence], Verdict]


def _start(_name: str, ev: _Evidence) -> Verdict:
    if all(s.started for s in ev.sessions):
        return True, "started (pid " + ", ".join(str(s.pid) for s in ev.sessions if s.pid) + ")"
    return False, next(s.start_error for s in ev.sessions if not s.started)


def _hello(_name: str, ev: _Evidence) -> Verdict:
    failed = [s for s in ev.sessions if s.started and not s.connected]
    if not all(s.started for s in ev.sessions):
        return False, "not reached: the bot did not start (see start)"
    if failed:
        return False, f"{failed[0].label} match: {failed[0].connect_error}"
    took = max(s.connect_seconds for s in ev.sessions)
    return True, f"connected {ev.sessions[0].hello} (protocol v1) within {took:.2f}s"


def _declare_contracts(_name: str, ev: _Evidence) -> Verdict:
    """The standard match's declarations, in which the bot must name each contract once."""
    standard = [d for d in ev.declarations if d.session == ev.sessions[0].label and d.legal_answer]
    covered = {d.action.contract for d in standard}
    missing = [c.value for c in STANDARD_CONTRACTS if c not in covered]
    if ev.bad_declaration:
        return False, ev.bad_declaration
    if missing:
        return False, f"never declared {', '.join(missing)}" + (f"; {ev.unreached}" if ev.unreached else "")
    return True, "declared all 7 contracts: " + ", ".join(str(d.action) for d in standard)


def _declared_option(contract: Contract, show: Callable[[Declaration], str]) -> Judge:
    """The judge of a contract's option (the trump suit, the Domino start rank)."""

    def judge(_name: str, ev: _Evidence) -> Verdict:
        named = [d.action for d in ev.declarations if d.legal_answer and isinstance(d.action, Declaration)]
        chosen = [a for a in named if a.contract is contract]
        if ev.bad_declaration:
            return False, ev.bad_declaration
        if chosen:
            return True, "named " + ", ".join(show(a) for a in chosen)
        return False, ev.unreached or f"never declared {contract.value}"

    return judge


def _named(option: int | None) -> int:
    """A legal Trumps or Domino declaration names its suit or start rank."""
    assert option is not None
    return option


def _situation(name: str, ev: _Evidence, extra: str = "") -> Verdict:
    """The requests tagged with the step's name: asked at least once, each answered well."""
    mine = [d for d in ev.decisions if name in d.tags]
    bad = [(d, why) for d in mine if (why := _bad(d)) is not None]
    if bad:
        d, why = bad[0]
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return False, f"{d.where()}: {why}{more}"
    if not mine:
        return False, ev.unreached or "never asked: the situation did not come up in the check's matches"
    return True, f"answered {len(mine)} request(s)" + (f"; {extra}" if extra else "")


def _redouble_chance(name: str, ev: _Evidence) -> Verdict:
    redoubled = sum(1 for d in ev.decisions if name in d.tags and d.legal_answer and _is_redouble(d))
    return _situation(name, ev, f"redoubled in {redoubled}")


def _is_redouble(d: _Decision) -> bool:
    """Whether the answer redoubled someone: it targets a seat that had doubled the bot."""
    return isinstance(d.action, tuple) and any(t in d.doubled_by for t in d.action)


def _domino_pass(name: str, ev: _Evidence) -> Verdict:
    """Being offered a pass is not enough: the bot must take one when it has no other action."""
    offered = [d for d in ev.decisions if name in d.tags]
    passed = sum(1 for d in offered if d.legal_answer and d.action is None)
    ok, detail = _situation(name, ev, f"passed {passed} times")
    if ok and passed == 0:
        return False, f"never passed: {len(offered)} request(s) offered a pass, none was answered with one"
    return ok, detail


def _legal_actions(_name: str, ev: _Evidence) -> Verdict:
    wrong = [d for d in ev.replied if _bad(d) is not None]
    if wrong:
        d = wrong[0]
        return False, f"{len(wrong)} bad answer(s); first: {d.where()}: {_bad(d)}"
    if not ev.replied:
        return False, ev.unreached or "not reached: no answer was read"
    return True, f"{len(ev.replied)} answers, all legal"


def _request_ids(_name: str, ev: _Evidence) -> Verdict:
    protocol = [(s, f) for s in ev.sessions for f in s.faults if f.kind is FaultKind.PROTOCOL]
    if protocol:
        s, f = protocol[0]
        return False, f"{s.label} match, deal {f.deal}: {_fault_text(f)}"
    if not ev.replied:
        return False, ev.unreached or "not reached: no reply arrived"
    return True, f"{len(ev.replied)} replies, each to its request"


def _time_limit(_name: str, ev: _Evidence) -> Verdict:
    limit = ev.time_limit
    slow = [d for d in ev.decisions if (d.fault is not None and d.fault.kind is FaultKind.TIMEOUT) or d.elapsed > limit]
    timeouts = [(s, f) for s in ev.sessions for f in s.faults if f.kind is FaultKind.TIMEOUT]
    timed = sorted(
        d.elapsed for d in ev.decisions if _replied(d) or (d.fault is not None and d.fault.kind is FaultKind.PROTOCOL)
    )
    if slow:
        d = slow[0]
        why = _fault_text(d.fault) if d.fault is not None else f"took {d.elapsed:.3f}s"
        return False, f"{d.where()}: {why} (limit {limit:g}s per decision)"
    if timeouts:
        s, f = timeouts[0]
        return False, f"{s.label} match, deal {f.deal}: {_fault_text(f)}"
    if not timed:
        return False, ev.unreached or "not reached: no reply arrived"
    median = timed[len(timed) // 2]
    return True, f"slowest {timed[-1] * 1000:.1f} ms, median {median * 1000:.1f} ms (limit {limit:g}s)"


def _informational_messages(_name: str, ev: _Evidence) -> Verdict:
    """The session as a whole: the bot stayed until MatchEnd in every match."""
    problems = []
    for s in ev.sessions:
        if not s.connected:
            problems.append(ev.unreached)
            continue
        gone = [f for f in s.faults if f.kind in TERMINAL]
        lost = [f for f in s.faults if f.action == "forfeit"]
        if gone:
            problems.append(f"{s.label} match, deal {gone[0].deal}: {_fault_text(gone[0])}")
        elif lost:
            problems.append(ev.unreached)
        elif not s.match_end_sent or s.status != "complete":
            problems.append(f"{s.label} match ended {s.status or 'early'} before MatchEnd reached the bot")
    if problems:
        return False, problems[0]
    ends = " and ".join(f"{s.deal_ends} DealEnd ({s.label})" for s in ev.sessions)
    return True, f"received MatchStart, {ends} and MatchEnd, answering throughout"


def _multi_match(_name: str, ev: _Evidence) -> Verdict:
    """An optional capability: not declaring it passes; declaring it must hold."""
    first = ev.sessions[0]
    if not first.connected:
        return False, ev.unreached or "not reached: the bot never connected (see hello)"
    if not first.multi_match:
        return True, "not declared (optional): every match gets a process of its own"
    later = ev.sessions[1:]
    if not first.handed_on or not all(s.reused for s in later):
        return (
            False,
            ev.unreached or f"declared, but the {first.label} match did not end well enough to hand it another",
        )
    for s in later:
        if not s.ran or s.forfeit or s.status != "complete":
            return (
                False,
                f"declared, but on the same process the {s.label} match went wrong: {s.status or 'not played'}",
            )
    return True, f"declared: played the {', '.join(s.label for s in later)} match on the same process and stream"


def _clean_exit(_name: str, ev: _Evidence) -> Verdict:
    exits = []
    for s in ev.sessions:
        if s.handed_on:
            continue  # its process went on to the next match: the exit that counts comes after it
        if not s.connected or s.forfeit or not s.match_end_sent:
            exits.append(
                f"{ev.unreached or 'not reached: MatchEnd was not sent'}; {s.exit_detail or 'the process was killed'}"
            )
        elif s.exit_code is None:
            exits.append(f"{s.label} match: still running {ev.exit_grace:g}s after MatchEnd (killed)")
        elif s.exit_code != 0:
            exits.append(f"{s.label} match: {s.exit_detail}")
    if exits:
        return False, exits[0]
    took = max(s.exit_seconds or 0.0 for s in ev.sessions)
    return True, f"exit code 0 within {took:.2f}s after MatchEnd"


# Every step's judge, in report order (that of STEPS).
JUDGES: dict[str, Judge] = {
    "start": _start,
    "hello": _hello,
    "declare-contracts": _declare_contracts,
    "declare-trump-suit": _declared_option(Contract.TRUMPS, lambda a: SUITS[_named(a.trump)]),
    "declare-domino-start": _declared_option(Contract.DOMINO, lambda a: RANKS[_named(a.start_rank)]),
    "double-no-redouble-chance": _situation,
    "double-redouble-chance": _redouble_chance,
    "double-forced-by-quota": _situation,
    **{f"play-{c}": _situation for c in TRICK_CONTRACTS},
    "domino-play": _situation,
    "domino-pass": _domino_pass,
    "legal-actions": _legal_actions,
    "request-ids": _request_ids,
    "time-limit": _time_limit,
    "informational-messages": _informational_messages,
    "multi-match": _multi_match,
    "clean-exit": _clean_exit,
}
assert tuple(JUDGES) == STEP_NAMES, "every step has one judge, in report order"


def _judge(sessions: list[_Session], time_limit: float, exit_grace: float) -> list[Step]:
    evidence = _Evidence(sessions, time_limit, exit_grace)
    return [Step(name, *judge(name, evidence)) for name, judge in JUDGES.items()]


# ---- the entry points ---------------------------------------------------------------------------
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
) -> CheckReport:
    """Run the bot ``command`` through the conformance sessions; returns the report.

    ``command`` is an argument list or a shell-style string (split with ``shlex``, no shell);
    a bare ``python`` or ``python3`` runs the arbiter's own interpreter, as in tournament files.
    ``time_limit`` is the per-decision limit in seconds (no reserve); ``connect_timeout`` the
    time to start, connect and say hello; ``exit_grace`` the time to exit after MatchEnd;
    ``match_limit`` a wall-clock watchdog per match; ``logs`` a folder where the match logs and
    the bot's output are kept (a temporary folder, removed, otherwise); ``cwd`` and ``env`` the
    bot's working folder and extra environment; ``listen`` a ``host:port`` for the arbiter
    (port 0: any free port) instead of a private Unix socket.
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
        sessions = run_blocking(
            _play_sessions(
                launch, control, seed=seed, exit_grace=exit_grace, folder=folder, cwd=cwd, env=env, listen=listen
            )
        )
        report.steps = _judge(sessions, time_limit, exit_grace)
        report.pids = [s.pid for s in sessions if s.pid]
    finally:
        for q, level in zip(quiet, levels):
            q.setLevel(level)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    report.seconds = time.perf_counter() - started
    report.logs = folder if keep else None
    return report
