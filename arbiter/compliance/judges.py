"""What check-bot saw of a bot (:class:`SessionRecord`, one per match, with a :class:`Decision`
per request) and the judges that turn it into its steps' verdicts (:data:`JUDGES`, in report
order: that of :data:`arbiter.compliance.checkbot.STEPS`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from barbu.rules import STANDARD_CONTRACTS, Contract, Declaration, Phase, card_name
from barbu.rules.cards import RANKS, SUITS

from arbiter.referee.faults import TERMINAL, FaultKind

TRICK_CONTRACTS = ("no_tricks", "no_hearts", "no_queens", "barbu", "no_last_two", "trumps")


# ---- what happened in one session ----------------------------------------------------------
@dataclass
class Decision:
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
class SessionRecord:
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
    match_end_sent: bool = False
    faults: list[Any] = field(default_factory=list)  # FaultRecords of the bot's seat
    forfeit: bool = False
    decisions: list[Decision] = field(default_factory=list)
    exit_code: int | None = None
    exit_seconds: float | None = None
    exit_detail: str = ""
    log_path: Path | None = None
    multi_match: bool = False  # its hello said it can play several matches
    reused: bool = False  # played by the previous match's process, on its stream
    handed_on: bool = False  # its process and stream were kept for the next match


def tags_of(view: Any) -> tuple[str, ...]:
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


# ---- judging ------------------------------------------------------------------------------------
# Where a fault that cost the bot its seat is reported in full; other steps point there.
_ROOT_STEP = {
    "illegal": "legal-actions", "malformed": "legal-actions", "protocol": "request-ids",
    "timeout": "time-limit", "crash": "informational-messages", "disconnect": "informational-messages",
    "absent": "informational-messages",
}  # fmt: skip


def _fault_text(fault: Any) -> str:
    kind = getattr(fault, "kind", "")
    return f"{getattr(kind, 'value', kind)}: {fault.detail}"


def _action_text(action: Any) -> str:
    if action is None:
        return "pass"
    if isinstance(action, Declaration):
        return str(action)
    if isinstance(action, tuple):
        return "double " + (",".join(map(str, action)) if action else "nobody (pass)")
    if isinstance(action, int) and 0 <= action < 52:
        return card_name(action)
    return repr(action)


def _not_reached(sessions: list[SessionRecord]) -> str:
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


def _bad(d: Decision) -> str | None:
    """What went wrong with one decision, or None."""
    if d.fault is not None:
        return _fault_text(d.fault)
    if d.answered and not d.legal_answer:
        return f"illegal: {_action_text(d.action)} is not one of the {len(d.legal)} legal actions"
    return None


def _replied(d: Decision) -> bool:
    """A reply with the right request id arrived (well-formed or not)."""
    return d.answered or (d.fault is not None and d.fault.kind is FaultKind.MALFORMED)


# ---- the judges: one per step, or per family of steps -------------------------------------------
StepVerdict = tuple[bool, str]  # passed, and the detail shown beside the step


@dataclass
class Evidence:
    """What the sessions showed, with the views several judges share."""

    sessions: list[SessionRecord]
    time_limit: float
    exit_grace: float

    @cached_property
    def decisions(self) -> list[Decision]:
        return [d for s in self.sessions for d in s.decisions]

    @cached_property
    def unreached(self) -> str:
        return _not_reached(self.sessions)

    @cached_property
    def declarations(self) -> list[Decision]:
        return [d for d in self.decisions if "declare" in d.tags]

    @cached_property
    def bad_declaration(self) -> str:
        """The first wrong answer to a declaration request, or ""."""
        bad = [(d, why) for d in self.declarations if (why := _bad(d)) is not None]
        return f"{bad[0][0].where()}: {bad[0][1]}" if bad else ""

    @cached_property
    def replied(self) -> list[Decision]:
        return [d for d in self.decisions if _replied(d)]


Judge = Callable[[str, Evidence], StepVerdict]


def _start(_name: str, ev: Evidence) -> StepVerdict:
    if all(s.started for s in ev.sessions):
        return True, "started (pid " + ", ".join(str(s.pid) for s in ev.sessions if s.pid) + ")"
    return False, next(s.start_error for s in ev.sessions if not s.started)


def _hello(_name: str, ev: Evidence) -> StepVerdict:
    failed = [s for s in ev.sessions if s.started and not s.connected]
    if not all(s.started for s in ev.sessions):
        return False, "not reached: the bot did not start (see start)"
    if failed:
        return False, f"{failed[0].label} match: {failed[0].connect_error}"
    took = max(s.connect_seconds for s in ev.sessions)
    return True, f"connected {ev.sessions[0].hello} (protocol v1) within {took:.2f}s"


def _declare_contracts(_name: str, ev: Evidence) -> StepVerdict:
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

    def judge(_name: str, ev: Evidence) -> StepVerdict:
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


def _situation(name: str, ev: Evidence, extra: str = "") -> StepVerdict:
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


def _redouble_chance(name: str, ev: Evidence) -> StepVerdict:
    redoubled = sum(1 for d in ev.decisions if name in d.tags and d.legal_answer and _is_redouble(d))
    return _situation(name, ev, f"redoubled in {redoubled}")


def _is_redouble(d: Decision) -> bool:
    """Whether the answer redoubled someone: it targets a seat that had doubled the bot."""
    return isinstance(d.action, tuple) and any(t in d.doubled_by for t in d.action)


def _domino_pass(name: str, ev: Evidence) -> StepVerdict:
    """Being offered a pass is not enough: the bot must take one when it has no other action."""
    offered = [d for d in ev.decisions if name in d.tags]
    passed = sum(1 for d in offered if d.legal_answer and d.action is None)
    ok, detail = _situation(name, ev, f"passed {passed} times")
    if ok and passed == 0:
        return False, f"never passed: {len(offered)} request(s) offered a pass, none was answered with one"
    return ok, detail


def _legal_actions(_name: str, ev: Evidence) -> StepVerdict:
    wrong = [d for d in ev.replied if _bad(d) is not None]
    if wrong:
        d = wrong[0]
        return False, f"{len(wrong)} bad answer(s); first: {d.where()}: {_bad(d)}"
    if not ev.replied:
        return False, ev.unreached or "not reached: no answer was read"
    return True, f"{len(ev.replied)} answers, all legal"


def _request_ids(_name: str, ev: Evidence) -> StepVerdict:
    protocol = [(s, f) for s in ev.sessions for f in s.faults if f.kind is FaultKind.PROTOCOL]
    if protocol:
        s, f = protocol[0]
        return False, f"{s.label} match, deal {f.deal}: {_fault_text(f)}"
    if not ev.replied:
        return False, ev.unreached or "not reached: no reply arrived"
    return True, f"{len(ev.replied)} replies, each to its request"


def _time_limit(_name: str, ev: Evidence) -> StepVerdict:
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


def _informational_messages(_name: str, ev: Evidence) -> StepVerdict:
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


def _multi_match(_name: str, ev: Evidence) -> StepVerdict:
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


def _clean_exit(_name: str, ev: Evidence) -> StepVerdict:
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
