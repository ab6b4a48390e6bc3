"""A match log as a sequence of events: the table's view and each seat's.

The log is verified by :func:`barbu.matchlog.verify`, then stepped through line by line with the
rules engine, so every line becomes an :class:`Event` holding the engine state just before and
just after it. At every decision the full state is there, and :meth:`Event.view` gives any
seat's information set (:func:`barbu.rules.observe`). A log with a bad line replays up to that
line and names it; a log cut short replays as far as it goes. The names and notation here are
plain text, shared by the terminal rendering (:mod:`arbiter.cli.replay`) and the HTML viewer
(:mod:`arbiter.web.viewer`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from barbu.loglines import DealEnd, Dealt, Decision, Doubled, Fault, Header, LogLine, MatchEnd, TrickDone
from barbu.matchlog import Verification, Visitor, read_log
from barbu.rules import (
    Contract,
    Declaration,
    MatchState,
    View,
    cards_of,
    observe,
)
from barbu.rules.cards import RANKS, SUIT_SYMBOLS
from barbu.rules.ruleset import Ruleset

# ---- the replay model ------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One log line (after the ``match`` line), typed, and the engine state around it.

    ``before`` and ``after`` are the same object for lines that change nothing (``trick``,
    ``deal_end``, ``fault``, ``match_end``): treat them as read-only.
    """

    line: LogLine
    before: MatchState
    after: MatchState

    @property
    def number(self) -> int:
        """The line's number in the log, from 1."""
        return self.line.number

    @property
    def kind(self) -> str:
        """The line's ``type``."""
        return self.line.TYPE

    @property
    def deal(self) -> int | None:
        line = self.line
        if isinstance(line, (Dealt, Decision, TrickDone, DealEnd, Fault)) and not isinstance(line.deal, bool):
            return line.deal
        return None

    @property
    def seat(self) -> int | None:
        return self.line.seat if isinstance(self.line, (Decision, Fault)) else None

    @property
    def actor(self) -> int:
        """The seat of a decision line (declare, double, play), which the verifier checked."""
        assert isinstance(self.line, Decision), f"line {self.number} ({self.kind}) is no decision"
        return self.line.seat

    @property
    def is_decision(self) -> bool:
        return isinstance(self.line, Decision)

    @property
    def ms(self) -> float | None:
        return self.line.ms if isinstance(self.line, Decision) else None

    @property
    def auto(self) -> bool:
        return isinstance(self.line, Decision) and self.line.auto

    def view(self, seat: int, *, after: bool = False) -> View:
        """What ``seat`` knew just before this line (or just after, with ``after=True``)."""
        return observe(self.after if after else self.before, seat)


@dataclass
class DealRecord:
    """The events of one deal, in log order (its fault lines included)."""

    index: int
    events: list[Event] = field(default_factory=list)

    @property
    def dealt(self) -> Event | None:
        return next((e for e in self.events if e.kind == "deal"), None)

    @property
    def declarer(self) -> int | None:
        e = self.dealt
        return e.after.declarer if e else None

    @property
    def declaration(self) -> Declaration | None:
        e = next((e for e in self.events if e.kind == "declare"), None)
        return e.after.declaration if e else None

    @property
    def end(self) -> Event | None:
        return next((e for e in self.events if e.kind == "deal_end"), None)


@dataclass
class Replay:
    """A log stepped through with the engine, up to its end or its first bad line."""

    header: Header | None
    events: list[Event]
    verification: Verification
    last_line: int  # the last line replayed (0 when none)
    cut: bool = False  # the last line was cut off mid-write (a crash): ignored, log incomplete
    lines: list[str] = field(default_factory=list, repr=False)  # the log's text, line by line

    @property
    def rules(self) -> Ruleset | None:
        return self.header.rules if self.header else None

    @property
    def bad_text(self) -> str | None:
        """The offending line's text (shortened), if the log is invalid and has that line."""
        n = self.bad_line
        if n is None or not 1 <= n <= len(self.lines):
            return None
        text = self.lines[n - 1].rstrip("\r\n")
        return text if len(text) <= 160 else text[:157] + "..."

    @property
    def valid(self) -> bool:
        return self.verification.valid

    @property
    def bad_line(self) -> int | None:
        return None if self.valid else self.verification.line

    @property
    def error(self) -> str | None:
        return self.verification.error

    @property
    def first_declarer(self) -> int:
        return self.header.first_declarer if self.header else 0

    @property
    def match_end(self) -> MatchEnd | None:
        e = next((e for e in reversed(self.events) if e.kind == "match_end"), None)
        return e.line if e is not None and isinstance(e.line, MatchEnd) else None

    def entrant(self, seat: int) -> str:
        return self.header.entrants[seat] if self.header else f"seat {seat}"

    def deals(self) -> list[DealRecord]:
        """The deals the log reaches, each with its events (fault lines go to their deal)."""
        records: dict[int, DealRecord] = {}
        for e in self.events:
            d = e.deal
            if d is None:
                continue
            records.setdefault(d, DealRecord(d)).events.append(e)
        return [records[d] for d in sorted(records)]

    def decisions(self) -> list[Event]:
        return [e for e in self.events if e.is_decision]

    def verdict(self) -> str:
        """One line: valid/complete, or where the log is bad."""
        v = self.verification
        if not v.valid:
            return f"invalid: line {v.line}: {v.error}"
        if v.complete:
            state = "complete"
        elif v.status == "aborted":
            reason = self.match_end.reason if self.match_end else None
            state = "aborted" + (f" ({reason})" if reason else "")
        else:
            state = f"incomplete (cut short after line {self.last_line})"
        return f"valid: {state}, {v.deals} deals, totals {v.totals}, places {v.places}"


class Stepper(Visitor[Replay]):
    """Reads a log into a :class:`Replay`: the state after every line the verifier accepts."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.header: Header | None = None
        self.events: list[Event] = []
        self.last = 0
        self._state: MatchState | None = None  # the state after the last line

    def visit(self, line: LogLine, state: MatchState) -> None:
        self.last = line.number
        if isinstance(line, Header):
            self.header, self._state = line, state.clone()
            return
        before = self._state
        assert before is not None  # the header comes first
        after = state.clone() if isinstance(line, (Decision, Dealt)) else before
        self.events.append(Event(line, before, after))
        self._state = after

    def end(self, verification: Verification) -> Replay:
        cut = verification.valid and self.last < len(self.lines)  # a cut last line was left unread
        return Replay(self.header, self.events, verification, self.last, cut, self.lines)


def load_replay(lines: Iterable[str]) -> Replay:
    """Verify the log and keep the state after every line it accepts, up to its end or its
    first bad line. The verifier is the judge (:func:`barbu.matchlog.read_log`): its single
    pass builds the states, so the rules are not restated here."""
    lines = list(lines)
    return read_log(lines, Stepper(lines))


# ---- names and notation ----------------------------------------------------------------
CONTRACT_NAMES = {
    Contract.NO_TRICKS: "No Tricks",
    Contract.NO_HEARTS: "No Hearts",
    Contract.NO_QUEENS: "No Queens",
    Contract.BARBU: "Barbu",
    Contract.NO_LAST_TWO: "No Last Two",
    Contract.TRUMPS: "Trumps",
    Contract.DOMINO: "Domino",
    Contract.SALAD: "Salad",
}
REASONS = {
    "all_tricks": "all 13 tricks played",
    "all_queens": "all four queens taken",
    "king_taken": "the K♥ taken",
    "all_hearts": "all hearts taken",
    "domino_done": "three players out",
    "split": "undoubled: split, not played",
}


def rank_label(rank: int) -> str:
    return "10" if RANKS[rank] == "T" else RANKS[rank]


def card_label(card: int) -> str:
    """``QS`` -> ``Q♠``; the ten is written 10."""
    return rank_label(card % 13) + SUIT_SYMBOLS[card // 13]


def contract_label(decl: Declaration | None) -> str:
    if decl is None:
        return "not declared yet"
    name = CONTRACT_NAMES.get(decl.contract, decl.contract.value)
    if decl.trump is not None:
        return f"{name} {SUIT_SYMBOLS[decl.trump]}"
    if decl.start_rank is not None:
        return f"{name} from {rank_label(decl.start_rank)}"
    return name


def seat_label(seat: int) -> str:
    return f"S{seat}"


def double_words(event: Event) -> str:
    """``doubles S0, redoubles S2`` / ``passes``, from the state before the line."""
    assert isinstance(event.line, Doubled)
    seat, targets = event.actor, event.line.targets
    if not targets:
        return "passes"
    doubled = event.before.doubled
    redo = [t for t in targets if doubled[t] >> seat & 1]
    new = [t for t in targets if t not in redo]
    parts = []
    if new:
        parts.append("doubles " + ", ".join(seat_label(t) for t in new))
    if redo:
        parts.append("redoubles " + ", ".join(seat_label(t) for t in redo))
    return ", ".join(parts)


def pair_levels(state: MatchState) -> list[tuple[int, int, int]]:
    return [(a, b, state.levels[a][b]) for a in range(4) for b in range(a + 1, 4) if state.levels[a][b]]


def levels_text(state: MatchState) -> str:
    pairs = pair_levels(state)
    if not pairs:
        return "no doubles"
    parts = []
    for level, word in ((1, "doubled"), (2, "redoubled")):
        names = [f"{seat_label(a)}–{seat_label(b)}" for a, b, lv in pairs if lv == level]
        if names:
            parts.append(f"{word} {', '.join(names)}")
    return "; ".join(parts)


def layout_rows(mask: int, rules: Ruleset) -> list[list[int]]:
    """The Domino layout: per suit (C D H S), its cards low to high on the row's scale."""
    from barbu.rules.domino import ordinal

    ace = rules.domino_ace
    return [sorted((c for c in cards_of(mask) if c // 13 == s), key=lambda c: ordinal(c % 13, ace)) for s in range(4)]
