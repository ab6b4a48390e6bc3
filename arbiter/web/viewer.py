"""The HTML match viewer: one self-contained page per match log.

:func:`write_html` turns a :class:`arbiter.replay.model.Replay` into a single HTML file with its
CSS, its JavaScript and its data inline (no network access at all). The data are the log itself
plus one precomputed snapshot per step (hands left, the trick or Domino layout, pair levels,
scores), so the page only draws: stepping is instant even through a full 28-deal match. The
page is ``templates/viewer.html``, filled by :mod:`arbiter.web.html` like the report.
"""

from __future__ import annotations

import os
from typing import Any

from barbu.loglines import DealEnd, MatchEnd, Played
from barbu.rules import Contract, MatchState, Phase, cards_of
from barbu.rules.cards import HEARTS_MASK, KING_OF_HEARTS, QUEENS, SUIT_SYMBOLS
from barbu.rules.domino import ordinal

from arbiter.files import write_text_atomic
from arbiter.replay.model import (
    REASONS,
    Event,
    Replay,
    card_label,
    contract_label,
    double_words,
    seat_label,
)
from arbiter.web.html import json_for_script, render

DATA_VERSION = 1
SEAT_COLOURS = ("#2f6fdd", "#e0771b", "#1e9e55", "#8e44ad")  # a seat's own colour (as viewer.js)


def _scoring_mask(contract: Contract | None) -> int:
    """The cards whose capture scores in this contract (shown beside each seat)."""
    if contract is Contract.NO_HEARTS:
        return HEARTS_MASK
    if contract is Contract.NO_QUEENS:
        return QUEENS
    if contract is Contract.BARBU:
        return KING_OF_HEARTS
    if contract is Contract.SALAD:
        return HEARTS_MASK | QUEENS | KING_OF_HEARTS
    return 0


def _levels(state: MatchState) -> list[list[int]]:
    return [[a, b, state.levels[a][b]] for a in range(4) for b in range(a + 1, 4) if state.levels[a][b]]


def _doubles(state: MatchState) -> list[list[Any]]:
    """This deal's doubling actions so far: [seat, targets, redoubled targets]."""
    out = []
    doubled = [0, 0, 0, 0]
    for seat, targets in state.double_actions:
        redo = [t for t in targets if doubled[t] >> seat & 1]
        for t in targets:
            if t not in redo:
                doubled[seat] |= 1 << t
        out.append([seat, list(targets), redo])
    return out


def _legal(state: MatchState) -> list[int]:
    if state.phase in (Phase.PLAY, Phase.DOMINO) and state.turn >= 0:
        return list(cards_of(state.legal_mask()))
    return []


def _layout(state: MatchState, ace: str) -> list[list[list[int]]] | None:
    if state.contract is not Contract.DOMINO:
        return None
    rows: list[list[list[int]]] = [[], [], [], []]
    for c in cards_of(state.layout):
        rows[c // 13].append([c, ordinal(c % 13, ace)])
    return rows


def _trick(event: Event) -> dict[str, Any] | None:
    st, before = event.after, event.before
    if st.contract is Contract.DOMINO or st.declaration is None:
        return None
    if st.trick:
        return {"i": len(st.tricks), "ld": st.leader, "c": list(st.trick), "w": -1}
    completed = (event.kind == "play" and len(st.tricks) > len(before.tricks)) or event.kind == "deal_end"
    if completed and st.tricks:
        t = st.tricks[-1]
        return {"i": t.index, "ld": t.leader, "c": list(t.cards), "w": t.winner}
    return None


def _text(replay: Replay, event: Event) -> str:
    e, st = event, event.after
    who = seat_label(e.seat) if e.seat is not None else ""
    if e.kind == "deal":
        return f"Deal {e.deal} is dealt; {seat_label(st.declarer)} ({replay.entrant(st.declarer)}) declares"
    if e.kind == "declare":
        return f"{who} declares {contract_label(st.declaration)}"
    if e.kind == "double":
        text = f"{who} {double_words(e)}"
        if st.phase is not Phase.DOUBLE:
            text += " — doubling over"
        return text
    if isinstance(e.line, Played):
        if e.line.card is None:
            return f"{who} passes"
        text = f"{who} plays {card_label(e.line.card)}"
        if st.contract is Contract.DOMINO:
            if e.seat in st.finished and e.seat not in e.before.finished:
                text += f" and is out ({_place(st.finished.index(e.seat) + 1)})"
        elif len(st.tricks) > len(e.before.tricks):
            t = st.tricks[-1]
            text += f" — {seat_label(t.winner)} wins trick {t.index + 1}"
        return text
    if isinstance(e.line, DealEnd):
        return f"Deal {e.deal} ends: {_reason(e.line)}"
    if isinstance(e.line, MatchEnd):
        places = list(e.line.places) if e.line.places is not None else None
        return f"Match {e.line.status}: totals {list(e.line.totals)}, places {places}"
    return e.kind


def _reason(line: DealEnd) -> str:
    """Why a deal ended, in words (an unknown reason as it is)."""
    return REASONS.get(line.reason, line.reason)


def _place(n: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")


def build_data(
    replay: Replay, *, deal: int | None = None, seat: int | None = None, colours: dict[str, str] | None = None
) -> dict[str, Any]:
    """Everything the page shows, as plain JSON: the log, the deals, one snapshot per step.

    A step is a ``deal`` line, a decision (``declare``, ``double``, ``play``), a ``deal_end``
    or the ``match_end``; its snapshot is the table just after that line. Fault lines go with
    the step that follows them; ``trick`` lines are shown by the play that completes the trick.
    Cards are integers 0..51 (suit = c // 13 in C D H S, rank = c % 13 from the 2). ``colours``
    (entrant -> CSS colour: the report's) colour each seat as its entrant; else each seat its own.
    """
    rules = replay.rules
    walk = _Steps(replay, rules.domino_ace if rules else "high")
    for e in replay.events:
        walk.add(e)
    walk.stop()
    deals = walk.deals
    header = replay.header.obj if replay.header else {}
    start = deals[deal]["first"] if deal is not None and deal in deals else 0
    seats = [replay.entrant(s) for s in range(4)]
    match_colours = {"colours": [colours.get(e, SEAT_COLOURS[s]) for s, e in enumerate(seats)]} if colours else {}
    return {
        "version": DATA_VERSION,
        "match": {
            "id": header.get("match_id", ""),
            "seed": header.get("seed"),
            "rules": dict(header.get("rules") or {}),
            "first_declarer": header.get("first_declarer", 0),
            "deals_per_match": rules.deals_per_match if rules else 0,
            "seats": seats,
            "contracts": [c.value for c in rules.contracts] if rules else [],
            **match_colours,
        },
        "verdict": {
            "valid": replay.valid,
            "complete": replay.verification.complete,
            "text": replay.verdict(),
            "line": replay.bad_line,
            "error": replay.error,
        },
        "suits": SUIT_SYMBOLS,
        "deals": [deals[d] for d in sorted(deals)],
        "series": walk.series,
        "faults": walk.faults,
        "steps": walk.steps,
        "log": [line.rstrip("\r\n") for line in replay.lines],
        "start": {"step": start, "seat": -1 if seat is None else seat},
    }


class _Steps:
    """The page's steps, deals, faults and score series, built event by event."""

    def __init__(self, replay: Replay, ace: str):
        self.replay = replay
        self.ace = ace
        self.steps: list[dict[str, Any]] = []
        self.deals: dict[int, dict[str, Any]] = {}
        self.faults: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []  # fault lines waiting for their step
        self.series: list[list[int]] = [[0, 0, 0, 0]]

    def add(self, e: Event) -> None:
        if e.kind == "fault":
            f = dict(e.line.obj)
            f["line"] = e.number
            f["step"] = len(self.steps)
            self.pending.append(f)
            self.faults.append(f)
            return
        if e.kind == "trick":
            return
        d = e.deal if e.deal is not None else (self.steps[-1]["d"] if self.steps else 0)
        info = self._deal_info(e, d)
        step = self._snapshot(e, d)
        if isinstance(e.line, DealEnd):
            end = {
                "reason": _reason(e.line),
                "raw": list(e.line.raw),
                "sc": list(e.line.scores),
                "tot": list(e.line.totals),
            }
            step["end"] = end
            if info is not None:
                info["end"] = end
            self.series.append(list(e.line.totals))
        self.pending = []
        self.steps.append(step)

    def _deal_info(self, e: Event, d: int) -> dict[str, Any] | None:
        """The deal's entry (made by its ``deal`` line), brought up to this step."""
        st = e.after
        if e.kind == "deal":
            self.deals[d] = {
                "n": d,
                "decl": st.declarer,
                "label": "",
                "contract": None,
                "first": len(self.steps),
                "last": len(self.steps),
                "hands": [list(cards_of(h)) for h in st.dealt],
                "end": None,
            }
        info = self.deals.get(d)
        if info is not None:
            info["last"] = len(self.steps)
            if e.kind == "declare":
                assert st.declaration is not None  # a declare line declares
                info["label"] = contract_label(st.declaration)
                info["contract"] = st.declaration.contract.value
        return info

    def _snapshot(self, e: Event, d: int) -> dict[str, Any]:
        """The table just after the event's line."""
        st = e.after
        contract = st.contract
        step: dict[str, Any] = {
            "k": e.kind,
            "d": d,
            "l": e.number,
            "s": -1 if e.seat is None else e.seat,
            "t": _text(self.replay, e),
            "h": [list(cards_of(h)) for h in st.hands],
            "ph": st.phase.name.lower(),
            "turn": st.turn if st.phase not in (Phase.DEAL, Phase.OVER) else -1,
            "lg": _legal(st),
            "tr": _trick(e),
            "lay": _layout(st, self.ace) if e.kind != "deal" else None,
            "fin": list(st.finished) if contract is Contract.DOMINO else [],
            "tw": list(st.tricks_won),
            "cap": [list(cards_of(st.won[s] & _scoring_mask(contract))) for s in range(4)],
            "lv": _levels(st),
            "db": _doubles(st),
            "tot": list(st.totals),
            "f": self.pending,
        }
        if e.ms is not None:
            step["ms"] = e.ms
        if e.auto:
            step["a"] = 1
        if isinstance(e.line, Played):
            step["pc"] = e.line.card
        return step

    def stop(self) -> None:
        """A last step that says where the log stops (and carries any fault lines left over)."""
        replay, steps = self.replay, self.steps
        if replay.valid and not self.pending and replay.match_end:
            return
        last = steps[-1] if steps else None
        step = dict(last) if last else _empty_step()
        step.update(k="stop", s=-1, f=self.pending, l=replay.bad_line or replay.last_line, t=_stop_text(replay))
        step["tr"] = last["tr"] if last else None
        step.pop("ms", None)
        step.pop("a", None)
        step.pop("end", None)
        steps.append(step)
        if last and last["d"] in self.deals:
            self.deals[last["d"]]["last"] = len(steps) - 1


def _empty_step() -> dict[str, Any]:
    return {
        "d": 0,
        "h": [[], [], [], []],
        "ph": "deal",
        "turn": -1,
        "lg": [],
        "tr": None,
        "lay": None,
        "fin": [],
        "tw": [0, 0, 0, 0],
        "cap": [[], [], [], []],
        "lv": [],
        "db": [],
        "tot": [0, 0, 0, 0],
    }


def _stop_text(replay: Replay) -> str:
    if not replay.valid:
        return f"The log goes wrong at line {replay.bad_line}: {replay.error}"
    v = replay.verification
    if v.status == "aborted":
        return "The match was aborted: " + replay.verdict()
    return f"The log stops after line {replay.last_line}: the match is incomplete"


def render_html(
    replay: Replay, *, deal: int | None = None, seat: int | None = None, colours: dict[str, str] | None = None
) -> tuple[str, int]:
    """The page's text and its number of steps."""
    data = build_data(replay, deal=deal, seat=seat, colours=colours)
    title = f"Barbu replay — {data['match']['id'] or 'match'}"
    return render("viewer.html", title=title, data=json_for_script(data)), len(data["steps"])


def write_html(
    replay: Replay,
    out: str | os.PathLike[str],
    *,
    deal: int | None = None,
    seat: int | None = None,
    colours: dict[str, str] | None = None,
) -> int:
    """Write the viewer page to ``out`` (atomically); returns its number of steps."""
    page, steps = render_html(replay, deal=deal, seat=seat, colours=colours)
    write_text_atomic(out, page)
    return steps
