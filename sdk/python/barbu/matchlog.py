"""The published match log (``barbu-match-log``, docs/match-log.md): write, read, verify.

Pure: the writer hands finished lines to a callable, the verifier reads an iterable of lines.
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
"""

from __future__ import annotations

import json
from enum import StrEnum
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, NoReturn

from .rules import (
    Action,
    BarbuError,
    Contract,
    Declaration,
    MatchState,
    Phase,
    card_name,
    hand_names,
    new_match,
    parse_card,
    parse_hand,
    parse_rank,
    parse_suit,
    ruleset_from_json,
)
from .rules.cards import RANKS, SUITS
from .rules.ruleset import Ruleset
from .rules.scoring import places

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


FAULT_KINDS = tuple(kind.value for kind in FaultKind)
"""The ``FaultKind`` values as plain strings."""


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


# ---- reading and verifying -------------------------------------------------------------
class LogError(BarbuError):
    """A log line that is malformed or contradicts the rules; ``line`` counts from 1."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass
class Verification:
    """What verifying a log found. ``valid`` false means ``line`` and ``error`` say why."""

    valid: bool
    complete: bool = False
    status: str | None = None  # "complete", "aborted", or None when the log is cut short
    deals: int = 0
    totals: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    places: list[int] = field(default_factory=lambda: [1, 1, 1, 1])
    line: int | None = None
    error: str | None = None
    header: dict[str, Any] | None = None
    faults: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The verdict as ``arbiter verify --json`` prints it."""
        if not self.valid:
            return {"valid": False, "line": self.line, "error": self.error}
        out: dict[str, Any] = {
            "valid": True,
            "complete": self.complete,
            "deals": self.deals,
            "totals": self.totals,
            "places": self.places,
        }
        if self.status == "aborted":
            out["status"] = "aborted"
        return out


def hands_from_deal_line(obj: dict[str, Any]) -> list[int]:
    """A ``deal`` line's hands as 4 masks; raises BarbuError naming what is wrong."""
    hands = obj.get("hands")
    if not isinstance(hands, list) or len(hands) != 4 or not all(isinstance(h, list) for h in hands):
        raise BarbuError("'hands' must be a list of 4 lists of cards")
    masks = []
    for seat, names in enumerate(hands):
        if len(names) != 13:
            raise BarbuError(f"hand of seat {seat} has {len(names)} cards, not 13")
        masks.append(parse_hand(names))
    seen = 0
    for seat, m in enumerate(masks):
        if seen & m:
            raise BarbuError(f"hand of seat {seat} repeats {hand_names(seen & m)[0]} from another hand")
        seen |= m
    return masks


def read_lines(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any] | None, bool]]:
    """Yield (line number, parsed object or None if unparseable, is_last_and_unterminated)."""
    pending: tuple[int, str] | None = None
    for number, text in enumerate(lines, start=1):
        if pending is not None:
            yield _parse(*pending, cut=False)
        pending = (number, text)
    if pending is not None:
        yield _parse(*pending, cut=not pending[1].endswith("\n"))


def _parse(number: int, text: str, cut: bool) -> tuple[int, dict[str, Any] | None, bool]:
    try:
        obj = json.loads(text)
    except ValueError:
        return number, None, cut
    return number, (obj if isinstance(obj, dict) else None), cut


def verify(
    lines: Iterable[str], on_line: Callable[[int, dict[str, Any], MatchState], None] | None = None
) -> Verification:
    """Rebuild the match from the log and check every line (spec: "What a verifier checks").

    ``on_line(number, line, state)`` is called after each accepted line with the match state
    it leads to (the verifier's own: clone it to keep it); replays step through logs with it.
    """
    verifier = _Verifier()
    try:
        for number, obj, cut in read_lines(lines):
            if obj is None:
                if cut:  # a line cut off by a crash mid-write: the log just ends early
                    break
                raise LogError(number, "not a JSON object")
            verifier.feed(number, obj)
            if on_line is not None:
                on_line(number, obj, verifier.game)
    except LogError as e:
        return Verification(valid=False, line=e.line, error=e.message)
    return verifier.result()


def _same(value: Any, expected: Any) -> bool:
    """JSON equality: unlike ``==`` in Python, ``true`` and ``1.0`` are not the integer 1."""
    if type(value) is not type(expected):
        return False
    if isinstance(expected, list):
        return len(value) == len(expected) and all(map(_same, value, expected))
    return bool(value == expected)


class _Verifier:
    GAME_TYPES = ("deal", "declare", "double", "play", "trick", "deal_end", "match_end")

    def __init__(self) -> None:
        self.state: MatchState | None = None
        self.header: dict[str, Any] | None = None
        self.expected: list[dict[str, Any]] = []  # derived lines owed, in order
        self.status: str | None = None
        self.end_line: dict[str, Any] | None = None
        self.faults: list[dict[str, Any]] = []
        self.line = 0
        self._deal = 0  # the deal now being played
        self._tricks_seen = 0  # its tricks already owed or checked
        self._deals_seen = 0  # deal results already owed or checked

    @property
    def game(self) -> MatchState:
        """The match being rebuilt: made by the header line, which every other line follows."""
        assert self.state is not None
        return self.state

    def fail(self, message: str) -> NoReturn:
        raise LogError(self.line, message)

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        self.line = number
        kind = obj.get("type")
        if self.header is None:
            if kind != "match":
                self.fail(f"the first line must be the 'match' line, got type {kind!r}")
            self._header(obj)
            return
        if self.status is not None:
            self.fail(f"a {kind!r} line after match_end")
        if kind == "fault":
            self._fault(obj)
            return
        if kind not in self.GAME_TYPES:
            self.fail(f"unknown line type {kind!r}" if kind != "match" else "a second 'match' line")
        if kind == "match_end":
            self._match_end(obj)
        elif self.expected:
            self._derived(kind, obj)
        else:
            self._decision(kind, obj)

    # -- header
    def _header(self, obj: dict[str, Any]) -> None:
        for key in ("format", "version", "rules", "first_declarer", "seats"):
            if key not in obj:
                self.fail(f"the match line lacks {key!r}")
        if obj["format"] != FORMAT:
            self.fail(f"format is {obj['format']!r}, expected {FORMAT!r}")
        version = obj["version"]
        if not _same(version, 1):
            self.fail(f"unsupported match-log version {version!r} (this reader knows version 1)")
        try:
            rules = ruleset_from_json(obj["rules"])
        except BarbuError as e:
            self.fail(str(e))
        first = obj["first_declarer"]
        if first not in (0, 1, 2, 3) or isinstance(first, bool):
            self.fail(f"first_declarer must be a seat 0-3, got {first!r}")
        seats = obj["seats"]
        if (
            not isinstance(seats, list)
            or len(seats) != 4
            or not all(
                isinstance(s, dict) and s.get("seat") == i and isinstance(s.get("entrant"), str)
                for i, s in enumerate(seats)
            )
        ):
            self.fail("'seats' must list seats 0-3 in order, each with 'seat' and an 'entrant' name")
        if "reused" in obj:
            self._check_reused(obj["reused"])
        self.header = obj
        self.state = new_match(rules, first)

    def _check_reused(self, reused: Any) -> None:
        """``reused``: the seats played by a bot process kept from earlier matches (docs/match-log.md)."""
        seats: set[int] = set()
        if not isinstance(reused, list):
            self.fail("'reused' must be a list of {'seat', 'matches_before'} objects")
        for item in reused:
            seat = item.get("seat") if isinstance(item, dict) else None
            before = item.get("matches_before") if isinstance(item, dict) else None
            if seat not in (0, 1, 2, 3) or isinstance(seat, bool) or seat in seats:
                self.fail(f"'reused' names seat {seat!r}: each entry needs a seat 0-3, at most once")
            if not isinstance(before, int) or isinstance(before, bool) or before < 1:
                self.fail(f"'reused' seat {seat}: matches_before must be a whole number of matches, 1 or more")
            seats.add(seat)

    # -- decisions
    def _check_deal_seat(self, obj: dict[str, Any], want_seat: bool = True) -> None:
        state = self.game
        if not _same(obj.get("deal"), state.deal_index):
            self.fail(f"expected deal {state.deal_index}, got {obj.get('deal')!r}")
        if want_seat and not _same(obj.get("seat"), state.turn):
            self.fail(f"it is seat {state.turn}'s turn, not seat {obj.get('seat')!r}'s")

    def _decision(self, kind: str, obj: dict[str, Any]) -> None:
        state = self.game
        want = {
            Phase.DEAL: "deal",
            Phase.DECLARE: "declare",
            Phase.DOUBLE: "double",
            Phase.PLAY: "play",
            Phase.DOMINO: "play",
            Phase.OVER: "match_end",
        }[state.phase]
        if kind != want:
            self.fail(f"expected a {want!r} line here, got {kind!r}")
        try:
            if kind == "deal":
                self._check_deal_seat(obj, want_seat=False)
                declarer = state.rules.declarer_of(state.first_declarer, state.deal_index)
                if not _same(obj.get("declarer"), declarer):
                    self.fail(f"deal {state.deal_index}'s declarer is seat {declarer}, not {obj.get('declarer')!r}")
                state.deal(hands_from_deal_line(obj))
                self._deal = state.deal_index
                self._tricks_seen = 0
                return
            self._check_deal_seat(obj)
            state.apply(self._action(kind, obj))
        except LogError:
            raise
        except BarbuError as e:
            self.fail(str(e))
        self._owe_derived()

    def _action(self, kind: str, obj: dict[str, Any]) -> Any:
        if kind == "declare":
            name = obj.get("contract")
            try:
                if not isinstance(name, str):
                    raise ValueError(name)
                contract = Contract(name)
            except ValueError:
                self.fail(f"unknown contract {obj.get('contract')!r}")
            trump = obj.get("trump")
            start = obj.get("start_rank")
            if (trump is not None) != (contract is Contract.TRUMPS):
                self.fail("'trump' goes with the trumps contract, and always with it")
            if (start is not None) != (contract is Contract.DOMINO):
                self.fail("'start_rank' goes with the domino contract, and always with it")
            return Declaration(
                contract,
                parse_suit(trump) if trump is not None else None,
                parse_rank(start) if start is not None else None,
            )
        if kind == "double":
            targets = obj.get("targets")
            if not isinstance(targets, list):
                self.fail(f"'targets' must be a list of seats, got {targets!r}")
            return targets
        card = obj.get("card", "missing")
        if card is None:
            if self.game.phase is not Phase.DOMINO:
                self.fail("a pass (card null) is only possible in domino")
            return None
        return parse_card(card)

    def _owe_derived(self) -> None:
        state = self.game
        for trick in state.tricks[self._tricks_seen :]:
            self.expected.append(
                {
                    "type": "trick",
                    "deal": self._deal,
                    "index": trick.index,
                    "leader": trick.leader,
                    "cards": [card_name(c) for c in trick.cards],
                    "winner": trick.winner,
                }
            )
        self._tricks_seen = len(state.tricks)
        if len(state.results) > self._deals_seen:
            r = state.results[-1]
            self.expected.append(
                {
                    "type": "deal_end",
                    "deal": r.deal,
                    "reason": r.reason,
                    "raw": list(r.raw),
                    "scores": list(r.scores),
                    "totals": list(r.totals),
                }
            )
            self._deals_seen = len(state.results)

    def _derived(self, kind: str, obj: dict[str, Any]) -> None:
        want = self.expected.pop(0)
        if kind != want["type"]:
            self.fail(f"expected the {want['type']!r} line here, got {kind!r}")
        for key, value in want.items():
            if not _same(obj.get(key), value):
                self.fail(f"{kind} {key!r} is {obj.get(key)!r}, but the rules give {value!r}")

    def _fault(self, obj: dict[str, Any]) -> None:
        if obj.get("kind") not in FAULT_KINDS:
            self.fail(f"fault kind {obj.get('kind')!r} is not one of {', '.join(FAULT_KINDS)}")
        if obj.get("seat") not in (0, 1, 2, 3):
            self.fail(f"fault seat {obj.get('seat')!r} is not a seat 0-3")
        if not isinstance(obj.get("deal"), int):
            self.fail("a fault line needs the 'deal' number")
        self.faults.append(obj)

    def _match_end(self, obj: dict[str, Any]) -> None:
        state = self.game
        status = obj.get("status")
        if status == "complete":
            if state.phase is not Phase.OVER or self.expected:
                self.fail("match_end says complete, but the match is not over")
        elif status == "aborted":
            if self.expected:
                self.fail(f"expected the {self.expected[0]['type']!r} line before match_end")
        else:
            self.fail(f"match_end status must be 'complete' or 'aborted', got {status!r}")
        totals = list(state.totals)
        if not _same(obj.get("totals"), totals):
            self.fail(f"match_end totals are {obj.get('totals')!r}, but the deals add up to {totals}")
        if "places" in obj or status == "complete":
            if not _same(obj.get("places"), places(totals)):
                self.fail(f"match_end places are {obj.get('places')!r}, but the totals give {places(totals)}")
        self.status = status

    def result(self) -> Verification:
        if self.header is None:
            return Verification(valid=False, line=1, error="the log is empty: no 'match' line")
        state = self.game
        return Verification(
            valid=True,
            complete=self.status == "complete",
            status=self.status,
            deals=len(state.results),
            totals=list(state.totals),
            places=places(state.totals),
            header=self.header,
            faults=self.faults,
        )
