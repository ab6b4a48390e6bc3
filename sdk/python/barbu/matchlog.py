"""The published match log (``barbu-match-log``, docs/match-log.md): write, read, verify.

Pure: the writer hands finished lines to a callable; the reader (:func:`read_log`) takes an
iterable of lines, verifies each, and hands the accepted ones, typed (:mod:`barbu.loglines`), to
a :class:`Visitor` that builds what the caller wants: the verdict (:func:`verify`), what the
match came to (:class:`Outcome`), a replay, per-deal facts.
Files, atomic renames and paths belong to the callers. A bot author uses it to study the logs
of past matches (every deal's hands are in them):

>>> import random
>>> from barbu.rules import make_ruleset, new_match, deal, shuffle_hands, legal_actions, apply
>>> lines = []
>>> state = new_match(make_ruleset("standard"))
>>> writer = MatchLogWriter(lines.append, rules=state.rules, first_declarer=0,
...                         seats=[{"seat": s, "entrant": f"bot{s}"} for s in range(4)])
>>> rng = random.Random(5)
>>> while not state.is_over:
...     if state.phase is Phase.DEAL:
...         deal(state, shuffle_hands(rng))
...         writer.dealt(state)
...     else:
...         seat, action = state.turn, rng.choice(legal_actions(state))
...         apply(state, action)
...         writer.acted(state, seat, action)
>>> result = verify(lines)  # an iterable of lines (a file object does)
>>> result.valid, result.complete, result.deals, result.totals == state.totals
(True, True, 28, True)

A :class:`Visitor` gets the lines the verifier accepts, typed (here: who took the K♥ of each
Barbu deal, with :class:`Outcome` giving what the match came to):

>>> from barbu.loglines import Declared, TrickDone
>>> from barbu.rules import Contract, parse_card
>>> class KingTakers(Visitor[list[int]]):
...     def __init__(self):
...         self.contract, self.takers = None, []
...     def visit(self, line, state):
...         if isinstance(line, Declared):
...             self.contract = line.declaration.contract
...         elif isinstance(line, TrickDone) and self.contract is Contract.BARBU:
...             if parse_card("KH") in line.cards:
...                 self.takers.append(line.winner)
...     def end(self, verification):
...         return self.takers
>>> len(read_log(lines, KingTakers())) == 4  # the Barbu is played once per declarer
True
>>> read_log(lines, Outcome()).result.complete
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from .logcheck import LogChecker, LogError, Verification, hands_from_deal_line, read_lines
from .loglines import (
    FAULT_KINDS,
    FORMAT,
    VERSION,
    Decision,
    Fault,
    FaultKind,
    FaultRecord,
    Header,
    LogLine,
    MatchEnd,
    MatchResult,
    MatchStatus,
    typed_line,
)
from .rules import Action, Declaration, MatchState, Phase, card_name, hand_names
from .rules.cards import RANKS, SUITS
from .rules.ruleset import Ruleset

__all__ = [
    "FAULT_KINDS",
    "FORMAT",
    "VERSION",
    "FaultKind",
    "FaultRecord",
    "LogError",
    "LogOutcome",
    "MatchLogWriter",
    "MatchResult",
    "MatchStatus",
    "Outcome",
    "Verification",
    "Verify",
    "Visitor",
    "declare_line",
    "dumps",
    "hands_from_deal_line",
    "read_log",
    "verify",
]

_LINE_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # json.dumps would make one per line


def dumps(obj: dict[str, Any]) -> str:
    """One log line: compact JSON, keys in the order given, no trailing newline."""
    return _LINE_ENCODER.encode(obj)


# ---- writing ---------------------------------------------------------------------------
class MatchLogWriter:
    """Turns a match's progress into log lines, handed one by one to ``emit``.

    Call :meth:`dealt` after each deal and :meth:`acted` after each applied decision; the
    writer adds the derived ``trick``, ``deal_end`` and ``match_end`` lines itself.
    """

    def __init__(
        self,
        emit: Callable[[str], None],
        *,
        rules: Ruleset,
        first_declarer: int,
        seats: list[dict[str, Any]],
        match_id: str | None = None,
        seed: int | None = None,
        extra: dict[str, Any] | None = None,
    ):
        self._emit = emit
        self._tricks_written = 0
        self._deals_written = 0
        self.ended = False
        header: dict[str, Any] = {"type": "match", "format": FORMAT, "version": VERSION}
        if match_id is not None:
            header["match_id"] = match_id
        header["rules"] = rules.to_json()
        if seed is not None:
            header["seed"] = seed
        header["first_declarer"] = first_declarer
        header["seats"] = seats
        header.update(extra or {})
        self._line(header)

    def _line(self, obj: dict[str, Any]) -> None:
        self._emit(dumps(obj))

    def dealt(self, state: MatchState) -> None:
        """Log the deal just dealt to ``state`` (its ``deal`` line, with the four hands)."""
        self._tricks_written = 0
        self._line(
            {
                "type": "deal",
                "deal": state.deal_index,
                "declarer": state.declarer,
                "hands": [hand_names(h) for h in state.dealt],
            }
        )

    def acted(
        self, state: MatchState, seat: int, action: Action, *, ms: float | None = None, auto: bool = False
    ) -> None:
        """Log the decision just applied to ``state`` and whatever it completed."""
        deal = self._deals_written
        if isinstance(action, Declaration):
            line = declare_line(deal, seat, action)
        elif isinstance(action, tuple):
            line = {"type": "double", "deal": deal, "seat": seat, "targets": list(action)}
        else:
            line = {"type": "play", "deal": deal, "seat": seat, "card": None if action is None else card_name(action)}
        if ms is not None:
            line["ms"] = round(ms, 3)
        if auto:
            line["auto"] = True
        self._line(line)
        self._catch_up(state)

    def _catch_up(self, state: MatchState) -> None:
        deal = self._deals_written
        for trick in state.tricks[self._tricks_written :]:
            self._line(
                {
                    "type": "trick",
                    "deal": deal,
                    "index": trick.index,
                    "leader": trick.leader,
                    "cards": [card_name(c) for c in trick.cards],
                    "winner": trick.winner,
                }
            )
        self._tricks_written = len(state.tricks)
        if len(state.results) > deal:
            r = state.results[deal]
            self._line(
                {
                    "type": "deal_end",
                    "deal": deal,
                    "reason": r.reason,
                    "raw": list(r.raw),
                    "scores": list(r.scores),
                    "totals": list(r.totals),
                }
            )
            self._deals_written += 1
        if state.phase is Phase.OVER and not self.ended:
            self.ended = True
            self._line(
                {"type": "match_end", "status": "complete", "totals": list(state.totals), "places": state.places()}
            )

    def fault(self, deal: int, seat: int, kind: str, detail: str, action: str) -> None:
        """Log a fault of ``seat`` (``kind`` one of ``FAULT_KINDS``) and what was done about it."""
        self._line({"type": "fault", "deal": deal, "seat": seat, "kind": kind, "detail": detail, "action": action})

    def aborted(self, state: MatchState, reason: str) -> None:
        """End the log of a match that cannot be finished; totals are those of completed deals."""
        if self.ended:
            return
        self.ended = True
        self._line(
            {
                "type": "match_end",
                "status": "aborted",
                "reason": reason,
                "totals": list(state.totals),
                "places": state.places(),
            }
        )


def declare_line(deal: int, seat: int, decl: Declaration) -> dict[str, Any]:
    """The ``declare`` line of a declaration, as a dict in log key order."""
    line: dict[str, Any] = {"type": "declare", "deal": deal, "seat": seat, "contract": decl.contract.value}
    if decl.trump is not None:
        line["trump"] = SUITS[decl.trump]
    if decl.start_rank is not None:
        line["start_rank"] = RANKS[decl.start_rank]
    return line


# ---- reading ----------------------------------------------------------------------------
T = TypeVar("T")


class Visitor(Generic[T]):
    """What reading a log builds. :func:`read_log` calls :meth:`visit` with each line the
    verifier accepts, typed, then :meth:`end` with the verdict, and returns what ``end`` returns."""

    wants_lines: ClassVar[bool] = True  # False: only the verdict (the lines are not typed)

    def visit(self, line: LogLine, state: MatchState) -> None:
        """One accepted line and the match just after it (the verifier's own state: clone it to keep it)."""

    def end(self, verification: Verification) -> T:
        """What the reading built, given the verdict on the whole log."""
        raise NotImplementedError


def read_log(lines: Iterable[str], visitor: Visitor[T]) -> T:
    """Verify a log (its lines with their line ends: an open file works) and hand each accepted
    line to ``visitor``. The first bad line ends the reading, and the verdict names it; a last
    line cut off mid-write (no newline, not JSON) is dropped: the log just ends early.
    """
    checker = LogChecker()
    typed = visitor.wants_lines
    try:
        for number, obj, cut in read_lines(lines):
            if obj is None:
                if cut:
                    break
                raise LogError(number, "not a JSON object")
            checker.feed(number, obj)
            if typed:
                visitor.visit(typed_line(number, obj, checker.game), checker.game)
    except LogError as e:
        return visitor.end(Verification(valid=False, line=e.line, error=e.message))
    return visitor.end(checker.result())


class Verify(Visitor[Verification]):
    """The verdict alone."""

    wants_lines = False

    def end(self, verification: Verification) -> Verification:
        """The verdict."""
        return verification


def verify(lines: Iterable[str]) -> Verification:
    """Rebuild the match from the log and check every line (spec: "What a verifier checks");
    :func:`read_log` with a :class:`Visitor` also hands each accepted line over, typed."""
    return read_log(lines, Verify())


@dataclass(frozen=True)
class LogOutcome:
    """What a finished log says about its match: its result, and its header (who played what)."""

    result: MatchResult
    header: Header


class Outcome(Visitor["LogOutcome | None"]):
    """What the match came to; None unless the log is valid and finished (complete or aborted)."""

    def __init__(self) -> None:
        self.header: Header | None = None
        self.reason: str | None = None
        self.faults: list[Fault] = []
        self.decisions = 0
        self.think = [0.0, 0.0, 0.0, 0.0]

    def visit(self, line: LogLine, state: MatchState) -> None:
        """Count decisions and think times; keep faults, the header and the end's reason."""
        if isinstance(line, Decision) and not line.auto:
            self.decisions += 1
            if line.ms is not None:
                self.think[line.seat] += line.ms / 1000
        elif isinstance(line, Fault):
            self.faults.append(line)
        elif isinstance(line, MatchEnd):
            self.reason = line.reason
        elif isinstance(line, Header):
            self.header = line

    def end(self, verification: Verification) -> LogOutcome | None:
        """The outcome, or None for a log that is invalid or not finished."""
        v = verification
        if not v.valid or v.status not in ("complete", "aborted") or self.header is None:
            return None
        result = MatchResult(
            status=MatchStatus(v.status),
            totals=tuple(v.totals),
            places=tuple(v.places),
            faults=tuple(f.record for f in self.faults),
            forfeits=tuple(sorted({f.seat for f in self.faults if f.action == "forfeit"})),
            deals=v.deals,
            decisions=self.decisions,
            think_seconds=tuple(self.think),
            reason=self.reason,
        )
        return LogOutcome(result, self.header)
