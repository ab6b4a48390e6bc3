"""The lines of a match log as typed values (docs/match-log.md, "Line types").

:func:`barbu.matchlog.read_log` checks each line of a log with the rules, then hands it to a
visitor as one of these, the way python-chess hands a PGN's moves to its visitors: a visitor
never sees a line the verifier refused, so its fields have their documented types. ``obj`` is
the line as written (a dict in the log's key order), for keys a newer writer adds and for
copying a line unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from .rules import Contract, Declaration, MatchState, parse_card, parse_rank, parse_suit
from .rules.ruleset import Ruleset

FORMAT = "barbu-match-log"
"""The ``format`` of a log's header line."""
VERSION = 1
"""The log format version this module writes and reads."""


class FaultKind(StrEnum):
    """Why a seat's answer was not used: the ``kind`` of a ``fault`` line (and of the arbiter's faults)."""

    TIMEOUT = "timeout"  # no answer within the decision limit plus the reserve
    ILLEGAL = "illegal"  # a well-formed action the rules do not allow now
    MALFORMED = "malformed"  # an answer that is not an action at all
    DISCONNECT = "disconnect"  # the bot never connected, or its stream closed
    CRASH = "crash"  # the bot process died (or an in-process player raised)
    PROTOCOL = "protocol"  # a wrong token or version, an unknown request id, a flood
    ABSENT = "absent"  # a remote entrant not connected (or with no free capacity) when its match began


FAULT_KINDS = tuple(kind.value for kind in FaultKind)
"""The ``FaultKind`` values as plain strings."""


class MatchStatus(StrEnum):
    """How a match ended: the ``status`` of its ``match_end`` line."""

    COMPLETE = "complete"  # every deal was played
    ABORTED = "aborted"  # stopped early (the match watchdog, an internal error): never rated


@dataclass(frozen=True)
class FaultRecord:
    """One fault of one seat: what a ``fault`` line says, and what the referee and the results
    database keep of it."""

    deal: int
    seat: int
    kind: FaultKind
    detail: str
    action: str  # "substituted", or "forfeit" (substituted, and the seat is taken over)

    def to_json(self) -> dict[str, Any]:
        """The record as the ``fault`` line and the results database's JSON hold it."""
        return {
            "deal": self.deal,
            "seat": self.seat,
            "kind": self.kind.value,
            "detail": self.detail,
            "action": self.action,
        }


@dataclass(frozen=True)
class MatchResult:
    """What a match came to: as the referee that played it returns it, and as its finished log
    says it (:class:`barbu.matchlog.Outcome`). The one outcome type from the referee to a results
    database: whoever adds to it (where the log is, what it cost) keeps it beside, not a copy."""

    status: MatchStatus
    totals: tuple[int, ...]
    places: tuple[int, ...]
    faults: tuple[FaultRecord, ...] = ()
    forfeits: tuple[int, ...] = ()  # seats whose entrant forfeited, in the order it happened
    deals: int = 0  # deals played
    decisions: int = 0  # decisions the seats were asked for (the arbiter's automatic ones not counted)
    think_seconds: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)  # per seat
    reason: str | None = None  # why an aborted match stopped

    @property
    def complete(self) -> bool:
        """Whether every deal was played (only a complete match is rated)."""
        return self.status is MatchStatus.COMPLETE

    @property
    def strikes(self) -> tuple[int, ...]:
        """Faults per seat."""
        counts = [0, 0, 0, 0]
        for f in self.faults:
            counts[f.seat] += 1
        return tuple(counts)


@dataclass(frozen=True)
class LogLine:
    """One accepted line: its number in the log (from 1) and the object as written."""

    TYPE: ClassVar[str] = ""
    number: int
    obj: dict[str, Any]


@dataclass(frozen=True)
class Header(LogLine):
    """The ``match`` line: the rules, the seats' entrants, the first declarer."""

    TYPE: ClassVar[str] = "match"
    rules: Ruleset
    first_declarer: int
    entrants: tuple[str, str, str, str]
    match_id: str | None = None
    seed: int | None = None


@dataclass(frozen=True)
class Dealt(LogLine):
    """A ``deal`` line: the four hands (masks) and the declarer."""

    TYPE: ClassVar[str] = "deal"
    deal: int
    declarer: int
    hands: tuple[int, ...]


@dataclass(frozen=True)
class Decision(LogLine):
    """A seat's decision (``declare``, ``double``, ``play``): its think time, whether the arbiter chose."""

    deal: int
    seat: int
    ms: float | None
    auto: bool


@dataclass(frozen=True)
class Declared(Decision):
    """A ``declare`` line: the declarer's contract (with its trump suit or Domino start rank)."""

    TYPE: ClassVar[str] = "declare"
    declaration: Declaration


@dataclass(frozen=True)
class Doubled(Decision):
    """A ``double`` line: the seats it doubles or redoubles."""

    TYPE: ClassVar[str] = "double"
    targets: tuple[int, ...]  # empty: a pass


@dataclass(frozen=True)
class Played(Decision):
    """A ``play`` line: the card played."""

    TYPE: ClassVar[str] = "play"
    card: int | None  # None: a pass in Domino


@dataclass(frozen=True)
class TrickDone(LogLine):
    """A ``trick`` line: the cards in play order from the leader, and who took them."""

    TYPE: ClassVar[str] = "trick"
    deal: int
    index: int
    leader: int
    cards: tuple[int, ...]
    winner: int


@dataclass(frozen=True)
class DealEnd(LogLine):
    """A ``deal_end`` line: why the deal ended, its raw and settled scores, the running totals."""

    TYPE: ClassVar[str] = "deal_end"
    deal: int
    reason: str
    raw: tuple[int, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True)
class MatchEnd(LogLine):
    """The ``match_end`` line: ``complete`` or ``aborted`` (with its reason), totals and places."""

    TYPE: ClassVar[str] = "match_end"
    status: str
    reason: str | None
    totals: tuple[int, ...]
    places: tuple[int, ...] | None


@dataclass(frozen=True)
class Fault(LogLine):
    """A ``fault`` line: a seat's answer not used, and what the arbiter did about it."""

    TYPE: ClassVar[str] = "fault"
    deal: int
    seat: int
    kind: FaultKind
    detail: str
    action: str

    @property
    def record(self) -> FaultRecord:
        """What the line records, without its place in the log."""
        return FaultRecord(self.deal, self.seat, self.kind, self.detail, self.action)


def _ms(obj: dict[str, Any]) -> float | None:
    ms = obj.get("ms")
    return float(ms) if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def typed_line(number: int, obj: dict[str, Any], state: MatchState) -> LogLine:
    """The typed form of a line the verifier accepted; ``state`` is the match just after it."""
    kind = obj["type"]
    if kind == "match":
        seats = obj["seats"]
        entrants = (seats[0]["entrant"], seats[1]["entrant"], seats[2]["entrant"], seats[3]["entrant"])
        match_id, seed = obj.get("match_id"), obj.get("seed")
        return Header(
            number,
            obj,
            state.rules,
            state.first_declarer,
            entrants,
            match_id if isinstance(match_id, str) else None,
            seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        )
    if kind == "deal":
        return Dealt(number, obj, obj["deal"], obj["declarer"], tuple(state.dealt))
    if kind in ("declare", "double", "play"):
        return _decision(kind, number, obj)
    if kind == "trick":
        cards = tuple(parse_card(c) for c in obj["cards"])
        return TrickDone(number, obj, obj["deal"], obj["index"], obj["leader"], cards, obj["winner"])
    if kind == "deal_end":
        return DealEnd(number, obj, obj["deal"], obj["reason"], *(tuple(obj[k]) for k in ("raw", "scores", "totals")))
    if kind == "match_end":
        places = obj.get("places")
        reason = obj.get("reason")
        return MatchEnd(
            number,
            obj,
            obj["status"],
            _text(reason) if reason is not None else None,
            tuple(obj["totals"]),
            tuple(places) if isinstance(places, list) else None,
        )
    return Fault(
        number,
        obj,
        obj["deal"],
        obj["seat"],
        FaultKind(obj["kind"]),
        _text(obj.get("detail")),
        _text(obj.get("action")),
    )


def _decision(kind: str, number: int, obj: dict[str, Any]) -> Decision:
    deal, seat, ms, auto = obj["deal"], obj["seat"], _ms(obj), obj.get("auto") is True
    if kind == "declare":
        trump, start = obj.get("trump"), obj.get("start_rank")
        declaration = Declaration(
            Contract(obj["contract"]),
            parse_suit(trump) if trump is not None else None,
            parse_rank(start) if start is not None else None,
        )
        return Declared(number, obj, deal, seat, ms, auto, declaration)
    if kind == "double":
        return Doubled(number, obj, deal, seat, ms, auto, tuple(obj["targets"]))
    card = obj["card"]
    return Played(number, obj, deal, seat, ms, auto, None if card is None else parse_card(card))
