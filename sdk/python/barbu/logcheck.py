"""The verifier's checks of a match log, line by line (docs/match-log.md, "What a verifier checks").

:class:`LogChecker` takes the lines as parsed JSON objects and rebuilds the match with the rules
engine; the first line that is malformed or contradicts the rules raises :class:`LogError`.
:func:`barbu.matchlog.read_log` drives it and hands the accepted lines on, typed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .loglines import FAULT_KINDS, FORMAT
from .rules import (
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
from .rules.scoring import places


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


def _same(value: Any, expected: Any) -> bool:
    """JSON equality: unlike ``==`` in Python, ``true`` and ``1.0`` are not the integer 1."""
    if type(value) is not type(expected):
        return False
    if isinstance(expected, list):
        return len(value) == len(expected) and all(map(_same, value, expected))
    return bool(value == expected)


class LogChecker:
    """Rebuilds the match line by line and refuses the first line the rules contradict."""

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
        """Refuse the line being checked."""
        raise LogError(self.line, message)

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        """Check line ``number`` and apply it to the match; raises :class:`LogError` if it is wrong."""
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
        if ("places" in obj or status == "complete") and not _same(obj.get("places"), places(totals)):
            self.fail(f"match_end places are {obj.get('places')!r}, but the totals give {places(totals)}")
        self.status = status

    def result(self) -> Verification:
        """The verdict on the lines fed so far (all accepted)."""
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
